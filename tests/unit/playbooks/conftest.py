# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures of the playbook tests: the fixture helm of ``fake_helm.py``, the recorded GB200 tray's facts."""

from __future__ import annotations

import pytest
from fixtures.recorded_nvml import recorded_facts

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.fake_helm import FakeHelm, make_fake_helm


@pytest.fixture
def fake_helm(tmp_path) -> FakeHelm:
    """A fixture helm in its own directory of ``tmp_path``, answering for gpu-operator v26.7.0 until configured."""
    return make_fake_helm(tmp_path / "fake-helm")


@pytest.fixture(scope="module")
def tray_facts(host_trees, command_runner) -> dict:
    """``ansible_facts['gpufabric']`` of the recorded GB200 tray, every subset, from the real collectors."""
    facts = recorded_facts(host_trees["gb200_tray"], command_runner)
    facts.pop("warnings")
    assert len(facts["gpu"]["cliques"]) == 1
    return facts
