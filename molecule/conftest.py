# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared testinfra fixtures of the host-role scenarios (molecule/<role>/tests), found by pytest from the repository's
pytest.ini rootdir.

Also puts the TEST FIXTURE backend of tests/molecule/testinfra_nsenter.py in place of testinfra's podman backend:
the scenarios' ``podman://<container>`` checks run through nsenter, as their Ansible tasks do, instead of one
``podman exec`` each.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import testinfra.backend

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "molecule"))
testinfra.backend.BACKENDS["podman"] = "testinfra_nsenter.NsenterPodmanBackend"


@pytest.fixture
def converge_check_diff():
    """Run the scenario's converge playbook with ``--check --diff`` on the converged hosts.

    Returns a function taking the number of hosts; it asserts that the run succeeds and that every host's recap says
    ``changed=0``, and returns the output with whitespace folded (the YAML callback folds long messages).
    """

    def run(host_count: int) -> str:
        playbook = os.path.join(os.environ["MOLECULE_SCENARIO_DIRECTORY"], "converge.yml")
        completed = subprocess.run(
            ["ansible-playbook", "--check", "--diff", "-i", os.environ["MOLECULE_INVENTORY_FILE"], playbook],
            capture_output=True, text=True, check=False)
        assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
        recap = [line for line in completed.stdout.splitlines() if "changed=" in line]
        assert len(recap) == host_count and all("changed=0" in line for line in recap), recap
        return " ".join(completed.stdout.split())

    return run
