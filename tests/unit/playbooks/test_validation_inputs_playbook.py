# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inputs of the validation roles as ``-e`` passes them (strings), refused before anything reaches the cluster.

No kubeconfig is set: the roles' default, the site-wide ``gpufabric_kubeconfig`` of their dependency, must resolve.
"""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook


def run_role(workdir, role: str, extra_vars: str) -> tuple[int, str]:
    play = [{"name": "Validation inputs", "hosts": "localhost", "gather_facts": False,
             "tasks": [{"name": f"Run {role}", "ansible.builtin.include_role": {"name": f"gpufabric.cluster.{role}"}}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e", extra_vars,
                                  str(workdir / "play.yml")], workdir)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.mark.parametrize(("role", "extra_vars", "message"), [
    pytest.param("validate_compute_domain", "validate_compute_domain_threshold_gbps=fast",
                 "argument 'validate_compute_domain_threshold_gbps' is of type str and we were unable to convert to "
                 "float", id="threshold-text"),
    pytest.param("validate_compute_domain", "validate_compute_domain_threshold_gbps=-5",
                 "validate_compute_domain_threshold_gbps must be greater than 0 GB/s", id="threshold-negative"),
    pytest.param("validate_rdma", "validate_rdma_min_fraction=most",
                 "argument 'validate_rdma_min_fraction' is of type str and we were unable to convert to float",
                 id="fraction-text"),
    pytest.param("validate_rdma", "validate_rdma_min_fraction=1.5",
                 "validate_rdma_min_fraction must be greater than 0 and at most 1, got 1.5 on localhost",
                 id="fraction-above-1"),
])
def test_a_threshold_from_extra_vars_that_is_no_number_is_refused_by_name(tmp_path, role, extra_vars, message):
    """Text is refused by the argument spec, a number out of range by the role's first checks, both by name."""
    returncode, output = run_role(tmp_path, role, extra_vars)
    assert returncode == 2, output
    assert message in output


@pytest.mark.parametrize(("value", "runs"), [("false", False), ("no", False), ("true", True)])
def test_the_nccl_switch_as_a_string_from_extra_vars(tmp_path, value, runs):
    """``-e gpufabric_validate_nccl=false`` is the string "false": it must not turn the NCCL run on. "true" runs it,
    and with no cluster here its first API call fails and is recorded as the NCCL failure."""
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e",
                                  f"gpufabric_validate_nccl={value}", "-e", "gpufabric_validate_compute_domain=false",
                                  "-e", f"gpufabric_report_dir={tmp_path / 'reports'}", "gpufabric.cluster.validate"],
                                 tmp_path, env={"KUBECONFIG": str(tmp_path / "no-kubeconfig")})
    output = " ".join((completed.stdout + completed.stderr).split())
    validation = yaml.safe_load((tmp_path / "reports" / "validation.json").read_text())
    assert ("TASK [gpufabric.cluster.validate_nccl" in output) is runs, output[-2000:]
    assert (completed.returncode != 0) is runs, output[-2000:]
    assert bool(validation["failures"]) is runs, validation


def test_the_validation_result_is_job_data(tmp_path):
    """Issue 44: the validation's result is returned with set_stats under gpufabric_stats (here the NCCL run and the
    DCGM diagnostics, with no cluster, fail at their first API call: two failures, nothing measured)."""
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e", "gpufabric_validate_nccl=true",
                                  "-e", "gpufabric_validate_dcgm=true",
                                  "-e", "gpufabric_validate_compute_domain=false",
                                  "-e", f"gpufabric_report_dir={tmp_path / 'reports'}", "gpufabric.cluster.validate"],
                                 tmp_path, env={"KUBECONFIG": str(tmp_path / "no-kubeconfig"),
                                                "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                                "ANSIBLE_SHOW_CUSTOM_STATS": "true"})
    assert completed.returncode != 0
    assert json.loads(completed.stdout)["global_custom_stats"]["gpufabric_stats"] == {"validation": {
        "result": "fail", "failures": 2, "compute_domain": False, "rdma_pairs": 0, "nccl": False, "dcgm_nodes": 0,
        "report": f"{tmp_path / 'reports'}/validation.json"}}
    validation = json.loads((tmp_path / "reports" / "validation.json").read_text())
    assert validation["dcgm"] == [] and len(validation["failures"]) == 2, validation


@pytest.mark.parametrize(("value", "probes"), [("false", False), ("no", False), ("true", True)])
def test_the_isolation_switch_as_a_string_from_extra_vars(tmp_path, value, probes):
    """``-e validate_compute_domain_isolation=false`` is the string "false": the probe is skipped and says why.
    "true" probes (the domain taken as ready); with no cluster here its first API read fails the run."""
    play = [{"name": "Isolation switch", "hosts": "localhost", "gather_facts": False,
             "tasks": [{"name": "Probe the isolation", "ansible.builtin.include_role": {
                 "name": "gpufabric.cluster.validate_compute_domain", "tasks_from": "isolation.yml"},
                 "vars": {"__validate_compute_domain_ready": True}}]}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    completed = ansible_playbook(["-i", "localhost,", "-c", "local", "-e",
                                  f"ansible_python_interpreter={sys.executable}", "-e",
                                  f"validate_compute_domain_isolation={value}", str(tmp_path / "play.yml")], tmp_path,
                                 env={"KUBECONFIG": str(tmp_path / "no-kubeconfig")})
    output = " ".join((completed.stdout + completed.stderr).split())
    skipped_read = re.search(r"Read the domain's channel claim template\] \*+ skipping", output)
    assert (skipped_read is None) is probes, output[-2000:]
    assert (completed.returncode != 0) is probes, output[-2000:]
    turned_off = "isolation: skipped (turned off by validate_compute_domain_isolation)" in output
    assert turned_off is not probes, output[-2000:]
