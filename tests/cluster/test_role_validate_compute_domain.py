# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.validate_compute_domain end to end on the harness: the domain comes up, the job runs, the
verdict and the isolation check are judged from what happened.

What acts is real except the GPUs: the dra-driver-nvidia-gpu 0.4.1 chart and its compute-domain controller
(``compute_domain_stack``), the Kubeflow MPI operator v0.6.0 (started at ``up``; the role applies its manifest from
``../shared/manifests``), the kube-scheduler's DRA allocator; the kubelet plugin's prepare is the harness's stand-in
(TEST FIXTURE). The launcher's log is real nvbandwidth output: ``nvbandwidth-single-node-write-ce.txt`` of
``../shared/reference/tools``, eight GPUs at about 276 GB/s (one node of eight; here two trays of four give the same
eight ranks), judged against a given threshold.
"""

from __future__ import annotations

import json
from pathlib import Path

import cluster_harness as harness
import compute_domain_stack
import pytest
import role_runner
from kubernetes import client

NVBANDWIDTH = "nvbandwidth-single-node-write-ce.txt"
TESTCASE = "device_to_device_memcpy_write_ce"
MANIFEST = role_runner.SHARED / "manifests" / "mpi-operator-v0.6.0.yaml"


@pytest.fixture(scope="module")
def controller(cluster, api_client, shared_dir, waiter):
    with compute_domain_stack.installed(cluster, api_client, shared_dir, waiter) as process:
        yield process


@pytest.fixture(scope="module")
def runner(cluster, tmp_path_factory):
    return role_runner.Runner(cluster, tmp_path_factory.mktemp("compute-domain"), {})


def role_vars(namespace: str, **extra) -> dict:
    return {
        "validate_compute_domain_namespace": namespace,
        "validate_compute_domain_testcases": [TESTCASE],
        "validate_compute_domain_threshold_gbps": 250,
        "validate_compute_domain_timeout": 120,
        "validate_compute_domain_isolation_timeout": 10,
        "validate_compute_domain_mpi_operator_manifest": str(MANIFEST),
        "validate_compute_domain_report_dir": f"reports-{namespace}",
        **extra,
    }


def run_role(runner, served, shared_dir, namespace: str, **extra):
    """Serve the launcher's log in ``namespace`` (it finishes once Running) and run the role; return the result
    and the JSON report."""
    served(f"{namespace}-launcher", shared_dir / "reference" / "tools" / NVBANDWIDTH, namespaces=[namespace],
           containers=["mpi-launcher"], complete=True)
    result = runner.run(runner.role_playbook("validate_compute_domain", role_vars(namespace, **extra)))
    report = runner.directory / f"reports-{namespace}" / "compute-domain.json"
    return result, (json.loads(report.read_text()) if report.is_file() else None)


def namespaces_left(api_client, *names) -> list[str]:
    present = {item.metadata.name for item in client.CoreV1Api(api_client).list_namespace().items
               if item.status.phase == "Active"}
    return sorted(set(names) & present)


def test_the_domain_comes_up_the_job_passes_and_isolation_holds(runner, served, shared_dir, controller, api_client,
                                                                waiter):
    result, report = run_role(runner, served, shared_dir, "cd-pass")
    output = " ".join(result.output.split())
    assert result.rc == 0, output[-4000:]
    assert "ComputeDomain validation passed: worst pair 274.89 GB/s, threshold" in output, output[-4000:]
    # The job is short here: its pods may be gone by the time a poll reads them, and then the started launcher
    # proves every worker was Ready (launcherCreationPolicy WaitForWorkersReady).
    status = report["compute_domain_status"]
    assert status["status"] == "Ready", status
    assert status["judged_from"] in ("pods", "launcher"), status
    if status["judged_from"] == "pods":
        assert [row["daemon"] for row in status["nodes"]] == ["Ready", "Ready"]
    assert report["verdict"]["status"] == "pass"
    assert report["verdict"]["threshold_gbps"] == 250
    # The probe by the template's name is never scheduled (templates are namespaced); the copied claim is allocated
    # once the job's workers freed their channels, and refused at prepare: it never starts.
    isolation = report["isolation"]
    assert isolation["status"] == "held", isolation
    assert {probe["pod"]: probe["stage"] for probe in isolation["probes"]} == {
        "nvbandwidth-probe-template": "not scheduled",
        "nvbandwidth-probe-claim": "scheduled, not started",
    }
    waiter("the namespaces to go", lambda: not namespaces_left(api_client, "cd-pass", "cd-pass-isolation"), 120)


def test_a_driver_without_the_namespace_check_and_a_slow_pair_fail_the_run(runner, served, shared_dir, controller,
                                                                           cluster, api_client, waiter):
    run_dir = Path(cluster.state["run_dir"])
    harness.set_namespace_assertion(run_dir, False)
    try:
        result, report = run_role(runner, served, shared_dir, "cd-broken", validate_compute_domain_threshold_gbps=276)
    finally:
        harness.set_namespace_assertion(run_dir, True)
    output = " ".join(result.output.split())
    assert result.rc != 0
    assert "ComputeDomain validation failed:" in output, output[-4000:]
    assert "testcase device_to_device_memcpy_write_ce: 1 GPU pair(s) below 276.0 GB/s: 6->0 274.89" in output, (
        output[-4000:])
    assert "isolation: broken, admitted from the second namespace: nvbandwidth-probe-claim on gb200-tray-0" in output
    assert report["isolation"]["status"] == "broken"
    assert report["verdict"]["status"] == "fail"
    waiter("the namespaces to go", lambda: not namespaces_left(api_client, "cd-broken", "cd-broken-isolation"), 120)
