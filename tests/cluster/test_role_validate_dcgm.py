# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.validate_dcgm on the harness: one pod per GB200 tray asks for its four GPUs, its log is read back,
parsed and judged, the run passes or fails naming the node, the GPU and the test, and the pods go.

No container runs under kwok: each pod logs a TEST FIXTURE of ``tests/fixtures/dcgm`` (``dcgmi diag -j`` output built
from DCGM 4.6.0's sources, see its SOURCE.md), served by pod name, and finishes once Running, as a container that
printed it would. Everything else is real: the API server, the scheduler placing the pods on the trays by their
allocatable ``nvidia.com/gpu``, the role's reads, waits and deletes. About 60 s beyond the harness's start.
"""

from __future__ import annotations

import json

import pytest
import role_runner
from kubernetes import client
from kubernetes.client.rest import ApiException

DCGM = role_runner.ROOT / "tests" / "fixtures" / "dcgm"
NODES = ["gb200-tray-01", "gb200-tray-02"]


@pytest.fixture(scope="module")
def runner(cluster, tmp_path_factory):
    return role_runner.Runner(cluster, tmp_path_factory.mktemp("dcgm"), {})


def role_vars(namespace: str, **extra) -> dict:
    return {"validate_dcgm_namespace": namespace, "validate_dcgm_node_names": NODES, "validate_dcgm_timeout": 60,
            "validate_dcgm_report_dir": f"reports-{namespace}", **extra}


def serve(served, namespace: str, logs: dict[str, str]):
    """Each node's pod (dcgm-diag-<node>) in ``namespace`` logs its fixture and finishes once Running."""
    for node, fixture in logs.items():
        served(f"{namespace}-{node}", DCGM / fixture, namespaces=[namespace], pods=[f"dcgm-diag-{node}"],
               complete=True)


def run(runner, namespace: str, *args: str, **extra):
    result = runner.run(runner.role_playbook("validate_dcgm", role_vars(namespace, **extra)), *args)
    report = runner.directory / f"reports-{namespace}" / "dcgm.json"
    return result, " ".join(result.output.split()), json.loads(report.read_text()) if report.is_file() else None


def pods(api_client, namespace: str) -> list:
    try:
        return client.CoreV1Api(api_client).list_namespaced_pod(
            namespace, label_selector="gpufabric.cluster/validation=dcgm-diag").items
    except ApiException as error:
        if error.status == 404:
            return []
        raise


def active(api_client, name: str) -> bool:
    try:
        return client.CoreV1Api(api_client).read_namespace(name).status.phase == "Active"
    except ApiException as error:
        if error.status == 404:
            return False
        raise


def test_every_gpu_passes_then_again_in_the_validate_playbook_whose_report_shows_it(runner, served, api_client,
                                                                                    cluster):
    serve(served, "dcgm-pass", dict.fromkeys(NODES, "diag-r2-pass-h100x8.json"))
    try:
        first, output, report = run(runner, "dcgm-pass", validate_dcgm_cleanup=False)
        assert first.rc == 0, output[-4000:]
        assert "DCGM diagnostics (dcgmi diag -r 2) passed on 2 node(s)" in output
        assert "dcgmi diag -r 2 on 2 node(s): gb200-tray-01 (4 GPUs), gb200-tray-02 (4 GPUs)" in output
        assert [(verdict["host"], verdict["status"], verdict["run_level"], verdict["version"])
                for verdict in report["results"]] == [(node, "pass", "2", "4.6.0") for node in NODES]
        assert report["problems"] == [] and report["nodes"][0] == {
            "node": NODES[0], "pod": "dcgm-diag-gb200-tray-01", "gpus": 4}
        markdown = (runner.directory / "reports-dcgm-pass" / "dcgm.md").read_text()
        assert "- DCGM dcgmi diag on host gb200-tray-02: PASS (run level 2, DCGM 4.6.0" in markdown
        assert "DCGM diagnostics" in (runner.directory / "reports-dcgm-pass" / "dcgm.html").read_text()
        # The pods as the role wrote them: every GPU of the node, on that node, dcgmi diag at the run level.
        kept = {pod.spec.node_name: pod for pod in pods(api_client, "dcgm-pass")}
        assert sorted(kept) == NODES
        [term] = kept[NODES[0]].spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution \
            .node_selector_terms
        assert [(item.key, item.values) for item in term.match_expressions] == [("kubernetes.io/hostname", NODES[:1])]
        container = kept[NODES[0]].spec.containers[0]
        assert container.resources.limits == {"nvidia.com/gpu": "4"}
        assert container.image == "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"
        assert "exec dcgmi diag -r 2 -j" in container.args[0]
        assert kept[NODES[0]].spec.restart_policy == "Never"

        # Again through the validate playbook's DCGM stage: the kept pods are replaced, the verdicts are the same,
        # the validation report shows them, and this time no pod is left.
        second = runner.run("gpufabric.cluster.validate", extra_vars={
            **role_vars("dcgm-pass"), "gpufabric_validate_dcgm": True, "gpufabric_validate_compute_domain": False,
            "gpufabric_report_dir": str(runner.directory / "reports-validate")})
        again = " ".join(second.output.split())
        assert second.rc == 0 and "passed on 2 node(s)" in again, again[-4000:]
        validation = json.loads((runner.directory / "reports-validate" / "validation.json").read_text())
        assert validation["dcgm"] == report["results"] and validation["failures"] == []
        summary = (runner.directory / "reports-validate" / "validation.md").read_text()
        assert "- DCGM dcgmi diag on host gb200-tray-01: PASS (run level 2, DCGM 4.6.0, " in summary, summary
        assert '<section id="dcgm">' in (runner.directory / "reports-validate" / "validation.html").read_text()
        assert pods(api_client, "dcgm-pass") == []
    finally:
        cluster.run("kubectl", "delete", "namespace", "dcgm-pass", "--wait=false", check=False)


def test_a_failing_gpu_a_diagnostic_that_did_not_run_a_log_that_is_none_and_a_pod_that_never_ends_are_named(
        runner, served, api_client):
    # tray-01: memory fails on GPU 3; tray-02: dcgmi's runtime error; tray-03: text that is no dcgmi JSON; tray-04:
    # no log served, so its pod runs on past the timeout.
    nodes = [*NODES, "gb200-tray-03", "gb200-tray-04"]
    serve(served, "dcgm-fail", dict(zip(nodes[:3], ["diag-r2-fail-gpu3-h100x8.json", "diag-runtime-error.json",
                                                    "SOURCE.md"], strict=True)))
    result, output, report = run(runner, "dcgm-fail", validate_dcgm_timeout=8, validate_dcgm_node_names=nodes)
    assert result.rc != 0
    shown = output[output.find("DCGM diagnostics (dcgmi diag -r 2) failed"):][:3000]
    problems = ("DCGM diagnostics (dcgmi diag -r 2) failed: host gb200-tray-04: pod dcgm-diag-gb200-tray-04 did not "
                "finish within validate_dcgm_timeout (8 s): Running; host gb200-tray-03: pod dcgm-diag-gb200-tray-03 "
                "printed no dcgmi diag result (parse_dcgm_diag: no DCGM diagnostic JSON document in the output")
    assert problems in output, shown or output[-4000:]
    assert ("host gb200-tray-01: GPU 3: memory (Hardware) failed: Found 4 faulty memory elements on GPU 3; "
            "host gb200-tray-02: dcgmi diag did not run: Error: Unable to complete diagnostic for group 0. "
            "Return: (-33)") in output, shown
    assert [(verdict["host"], verdict["status"]) for verdict in report["results"]] == [
        (nodes[0], "fail"), (nodes[1], "fail")]
    assert report["results"][0]["failed_gpus"] == [{"host": nodes[0], "gpu": 3, "test": "memory"}]
    assert report["results"][0]["notes"] == ["host gb200-tray-01: GPU 7: pcie (Integration) skipped: Test pcie was "
                                             "skipped."]
    assert len(report["problems"]) == 2
    assert pods(api_client, "dcgm-fail") == [] and not active(api_client, "dcgm-fail")


def test_check_mode_says_what_would_run_and_creates_nothing(runner, api_client):
    result, output, report = run(runner, "dcgm-check", "--check")
    assert result.rc == 0, output[-4000:]
    assert ("would create 2 pod(s) in dcgm-check, one per node (gb200-tray-01, gb200-tray-02) holding every GPU of "
            "it, run dcgmi diag -r 2 -j") in output
    assert report is None and not active(api_client, "dcgm-check")


def test_a_name_that_is_no_gpu_node_is_refused_before_anything_is_created(runner, api_client):
    result, output, _report = run(runner, "dcgm-refused", validate_dcgm_node_names=["gb200-tray-01", "cpu-01"])
    assert result.rc != 0
    assert ("validate_dcgm_node_names names node(s) that are not GPU nodes of the cluster (label "
            "nvidia.com/gpu.present=true): cpu-01") in output, output[-4000:]
    assert not active(api_client, "dcgm-refused")
