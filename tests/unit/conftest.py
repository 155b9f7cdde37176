# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared fixtures of the unit tier: recorded host trees and a runner for modules through AnsibleModule."""

from __future__ import annotations

import os

import pytest
from fixtures import build_trees
from fixtures.recorded_nvml import load_recording, recorded_facts
from hypothesis import settings

# The property tests draw the same examples on every run unless GPUFABRIC_HYPOTHESIS_EXPLORE is set: a test tier
# must pass or fail on the code, not on the draw (CI once failed on an example no earlier run had drawn). Set
# GPUFABRIC_HYPOTHESIS_EXPLORE=1 to draw new examples while working on a parser or filter, and keep what it finds
# as an explicit case.
# No per-example deadline: on a busy 2-core machine an example of a playbook-running or file-building property took
# longer than hypothesis' 200 ms and failed the tier for the machine's load, not the code. The tests that guard
# against slow code assert CPU-time bounds of their own (time.process_time()).
settings.register_profile("gpufabric", derandomize=not os.environ.get("GPUFABRIC_HYPOTHESIS_EXPLORE"), database=None,
                          deadline=None)
settings.load_profile("gpufabric")

SHARED_REFERENCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference"))
HOST_NAMES = ("hgx_h100", "gb200_tray", "gb200_tray_degraded", "no_nvidia", "broken_node")


@pytest.fixture(scope="session")
def tree_builder():
    """The fixture-tree builder module (tests/fixtures/build_trees.py)."""
    return build_trees


@pytest.fixture(scope="session")
def host_trees(tmp_path_factory, tree_builder):
    """Build every recorded host once; map host name to its root path."""
    dest = str(tmp_path_factory.mktemp("hosts"))
    return {name: tree_builder.build_tree(name, dest) for name in HOST_NAMES}


@pytest.fixture
def fresh_tree(tmp_path, tree_builder):
    """Build one host into a per-test directory, for tests that alter the tree."""
    def build(name):
        return tree_builder.build_tree(name, str(tmp_path))
    return build


@pytest.fixture(scope="session")
def nvml_recording(host_trees):
    """Return the recorded NVML answers of a host, as written beside its tree."""
    def load(name):
        return load_recording(host_trees[name])
    return load


@pytest.fixture(scope="session")
def shared_reference():
    """Path of ../shared/reference beside the checkout (upstream samples, read in place)."""
    if not os.path.isdir(SHARED_REFERENCE):
        pytest.fail(f"{SHARED_REFERENCE} is missing: the tests read upstream samples from ../shared "
                    "beside the checkout", pytrace=False)
    return SHARED_REFERENCE


@pytest.fixture(scope="session")
def fleet_facts(host_trees, command_runner):
    """``ansible_facts['gpufabric']`` of every recorded host, gathered by the real collectors."""
    facts = {}
    for name, root in host_trees.items():
        gathered = recorded_facts(root, command_runner)
        gathered.pop("warnings")
        facts[name] = gathered
    return facts
