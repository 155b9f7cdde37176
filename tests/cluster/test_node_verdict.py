# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's verdict on the Kubernetes nodes (issue 43 item 5), on the real control plane.

The real ``gpufabric.cluster.preflight`` playbook runs over local hosts named after the harness's trays, each probing a
recorded tree (tests/fixtures): ``broken_node`` fails, ``hgx_h100`` warns (NVML is not replayed, so its fabric state
is unknown), ``no_nvidia`` has nothing to judge, and one host has no node in the cluster. With
``gpufabric_node_verdict`` and ``gpufabric_node_verdict_taint``, check mode changes no node; the run labels,
annotates and taints the failing node, labels and annotates the warning one, leaves the others and says why; a second
run changes nothing; a label and a taint someone else put on the failing node survive. Then the failing host passes
(the verdict tasks, ``roles/gpufabric/tasks/node_verdict.yml``, run as the preflight runs them, with a report in which
it passes): the taint and the annotation go, the label says pass, the others' marks stay.
"""

from __future__ import annotations

import re
import sys

import pytest
import role_runner
import yaml
from fixtures import build_trees
from kubernetes import client

LABEL = "gpufabric.cluster/fabric-verdict"
DATE = "gpufabric.cluster/fabric-verdict-date"
ANNOTATION = "gpufabric.cluster/fabric-problems"
TAINT = "gpufabric.cluster/fabric-unhealthy"
THEIR_LABEL = "example.com/owner"
THEIR_TAINT = {"key": "example.com/maintenance", "value": "planned", "effect": "NoSchedule"}
MISSING = "gb200-tray-99"
EXTRA = {"gpufabric_node_verdict": True, "gpufabric_node_verdict_taint": True}


def marks(core, node: str) -> dict:
    """The node's labels and annotations of the verdict (and the others' label), and its taints."""
    read = core.read_node(node)
    labels, annotations = read.metadata.labels or {}, read.metadata.annotations or {}
    return {"labels": {key: labels[key] for key in (LABEL, DATE, THEIR_LABEL) if key in labels},
            "annotation": annotations.get(ANNOTATION),
            "taints": [{"key": taint.key, "value": taint.value, "effect": taint.effect}
                       for taint in read.spec.taints or [] if taint.key in (TAINT, THEIR_TAINT["key"])]}


def changed(output: str) -> dict[str, int]:
    """The recap's changed count of every host."""
    return {host: int(count) for host, count in re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)", output, re.M)}


@pytest.fixture(scope="module")
def runs(api_client, cluster, tmp_path_factory):
    core = client.CoreV1Api(api_client)
    failing, warning, idle = cluster.gpu_nodes[:3]
    trees = tmp_path_factory.mktemp("trees")
    roots = {name: build_trees.build_tree(name, str(trees)) for name in ("broken_node", "hgx_h100", "no_nvidia")}
    local = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    hosts = {failing: roots["broken_node"], warning: roots["hgx_h100"], idle: roots["no_nvidia"],
             MISSING: roots["hgx_h100"]}
    directory = tmp_path_factory.mktemp("node-verdict")
    runner = role_runner.Runner(cluster, directory, {}, {})
    inventory = {"all": {"hosts": {"localhost": local},
                         "children": {"gpu_nodes": {"hosts": {name: {**local, "gpufabric_probe_root": root}
                                                              for name, root in hosts.items()}}}}}
    runner.inventory.write_text(yaml.safe_dump(inventory))
    extra = {**EXTRA, "gpufabric_report_dir": str(directory / "reports"), "gpufabric_preflight_hosts": "gpu_nodes"}
    before = {node: core.read_node(node).spec.taints or [] for node in (failing, warning, idle)}
    core.patch_node(failing, {"metadata": {"labels": {THEIR_LABEL: "ops"}},
                              "spec": {"taints": [*map(client.ApiClient().sanitize_for_serialization,
                                                       before[failing]), THEIR_TAINT]}})
    # The verdict tasks as the preflight's judging play runs them, with a report in which the failing host passes.
    passing = directory / "pass.yml"
    report = {"hosts": {failing: {"status": "pass", "gpus": 4, "connectx_ports": 4,
                                  "checks": [{"name": "driver", "status": "pass", "message": "ok"}]}}}
    settings = {"name": "Apply the site-wide settings",
                "ansible.builtin.import_role": {"name": "gpufabric.cluster.gpufabric", "tasks_from": "settings"}}
    verdict = {"name": "Leave the verdict",
               "ansible.builtin.include_role": {"name": "gpufabric.cluster.gpufabric", "tasks_from": "node_verdict"},
               "vars": {"__gpufabric_verdict_report": report}}
    passing.write_text(yaml.safe_dump([{
        "name": "The verdict of a preflight in which every host passes", "hosts": "gpu_nodes", "gather_facts": False,
        "tasks": [settings, verdict]}], sort_keys=False))
    try:
        checked = runner.run("gpufabric.cluster.preflight", "--check", extra_vars=extra, timeout=300)
        after_check = {node: marks(core, node) for node in (failing, warning, idle)}
        first = runner.run("gpufabric.cluster.preflight", extra_vars=extra, timeout=300)
        after_first = {node: marks(core, node) for node in (failing, warning, idle)}
        again = runner.run("gpufabric.cluster.preflight", extra_vars=extra, timeout=300)
        passed = runner.run(passing, "--limit", failing, extra_vars=EXTRA, timeout=300)
        after_pass = marks(core, failing)
        yield {"nodes": (failing, warning, idle), "checked": checked, "after_check": after_check, "first": first,
               "after_first": after_first, "again": again, "passed": passed, "after_pass": after_pass}
    finally:
        for node, taints in before.items():
            core.patch_node(node, {"metadata": {"labels": {LABEL: None, DATE: None, THEIR_LABEL: None},
                                                "annotations": {ANNOTATION: None}},
                                   "spec": {"taints": [client.ApiClient().sanitize_for_serialization(taint)
                                                       for taint in taints] or None}})


def test_check_mode_says_what_would_change_and_changes_no_node(runs):
    failing, warning, idle = runs["nodes"]
    assert runs["checked"].rc == 0, runs["checked"].output
    assert f"changed: [{failing} -> localhost] => (item={failing}: fail (fail " in runs["checked"].output
    assert runs["after_check"] == {failing: {"labels": {THEIR_LABEL: "ops"}, "annotation": None,
                                             "taints": [THEIR_TAINT]},
                                   warning: {"labels": {}, "annotation": None, "taints": []},
                                   idle: {"labels": {}, "annotation": None, "taints": []}}


def test_the_failing_node_is_labelled_annotated_and_tainted_and_keeps_the_others_marks(runs):
    failing, warning, idle = runs["nodes"]
    first = runs["first"]
    assert first.rc == 0, first.output
    after = runs["after_first"]
    day = after[failing]["labels"][DATE]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", day)
    assert after[failing]["labels"] == {LABEL: "fail", DATE: day, THEIR_LABEL: "ops"}
    assert after[failing]["annotation"].startswith("fail ") and "driver" in after[failing]["annotation"]
    assert after[failing]["taints"] == [THEIR_TAINT, {"key": TAINT, "value": "fail", "effect": "NoSchedule"}]
    assert after[warning]["labels"] == {LABEL: "warn", DATE: day}
    assert after[warning]["annotation"].startswith("warn ") and after[warning]["taints"] == []
    assert after[idle] == {"labels": {}, "annotation": None, "taints": []}


def test_hosts_without_a_node_or_a_verdict_are_skipped_with_one_line(runs):
    idle = runs["nodes"][2]
    output = " ".join(runs["first"].output.split())
    assert f"{idle}: no NVIDIA GPU or ConnectX port; Kubernetes node {idle} is left as it is" in output
    assert f"{MISSING}: no Kubernetes node {MISSING} in the cluster (gpufabric_kubernetes_node); its verdict " \
           f"warn is not put on a node" in output


def test_a_second_run_changes_nothing(runs):
    again = runs["again"]
    assert again.rc == 0, again.output
    counts = changed(again.output)
    assert counts and set(counts.values()) == {0}, again.output


def test_a_node_that_passes_again_loses_taint_and_annotation_and_says_pass(runs):
    failing = runs["nodes"][0]
    assert runs["passed"].rc == 0, runs["passed"].output
    after = runs["after_pass"]
    assert after["labels"] == {LABEL: "pass", DATE: runs["after_first"][failing]["labels"][DATE],
                               THEIR_LABEL: "ops"}
    assert after["annotation"] is None
    assert after["taints"] == [THEIR_TAINT]


# The validation's verdict (playbooks/validate.yml's judging play includes roles/gpufabric/tasks/validation_verdict.yml
# with gpufabric_validation as it collects it): the keys of its own, beside the preflight's.
V_LABEL = "gpufabric.cluster/validation-verdict"
V_DATE = "gpufabric.cluster/validation-verdict-date"
V_ANNOTATION = "gpufabric.cluster/validation-problems"
V_TAINT = "gpufabric.cluster/validation-failed"


def validation_marks(core, node: str) -> dict:
    read = core.read_node(node)
    labels, annotations = read.metadata.labels or {}, read.metadata.annotations or {}
    return {"labels": {key: labels[key] for key in (V_LABEL, LABEL) if key in labels},
            "annotation": annotations.get(V_ANNOTATION),
            "taints": sorted(taint.key for taint in read.spec.taints or [] if taint.key in (V_TAINT, TAINT))}


def _measured(status: str, *nodes: str) -> dict:
    return {"placement": {"nodes": list(nodes)}, "verdict": {"status": status}}


@pytest.fixture(scope="module")
def validation_runs(runs, api_client, cluster, tmp_path_factory):
    core = client.CoreV1Api(api_client)
    failing, warning, idle = runs["nodes"]
    directory = tmp_path_factory.mktemp("validation-verdict")
    runner = role_runner.Runner(cluster, directory, {}, {})
    runner.inventory.write_text(yaml.safe_dump({"all": {"hosts": {"localhost": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}))

    def playbook(name: str, validation: dict):
        path = directory / f"{name}.yml"
        path.write_text(yaml.safe_dump([{
            "name": f"The validation's verdict: {name}", "hosts": "localhost", "gather_facts": False,
            "vars": {"gpufabric_validation": validation},
            "tasks": [{"name": "Apply the site-wide settings", "ansible.builtin.import_role": {
                "name": "gpufabric.cluster.gpufabric", "tasks_from": "settings"}},
                {"name": "Leave the verdict", "ansible.builtin.include_role": {
                    "name": "gpufabric.cluster.gpufabric", "tasks_from": "validation_verdict"}}]}], sort_keys=False))
        return path

    rdma = {"rail": "mlx5_0", "server": {"node": warning}, "client": {"node": idle}, "verdict": {"status": "pass"}}
    failed = playbook("failed", {"compute_domain": None, "nccl": _measured("fail", failing, warning), "rdma": [rdma]})
    passed = playbook("passed", {"compute_domain": _measured("pass", failing, warning), "nccl": None, "rdma": []})
    extra = {"gpufabric_validation_verdict": True, "gpufabric_validation_verdict_taint": True}
    nodes = (failing, warning, idle)
    try:
        checked = runner.run(failed, "--check", extra_vars=extra, timeout=120)
        after_check = {node: validation_marks(core, node) for node in nodes}
        first = runner.run(failed, extra_vars=extra, timeout=120)
        after_first = {node: validation_marks(core, node) for node in nodes}
        again = runner.run(failed, extra_vars=extra, timeout=120)
        recovered = runner.run(passed, extra_vars=extra, timeout=120)
        after_pass = {node: validation_marks(core, node) for node in nodes}
        yield {"nodes": nodes, "checked": checked, "after_check": after_check, "first": first,
               "after_first": after_first, "again": again, "recovered": recovered, "after_pass": after_pass}
    finally:
        for node in nodes:
            read = core.read_node(node)
            core.patch_node(node, {"metadata": {"labels": {V_LABEL: None, V_DATE: None},
                                                "annotations": {V_ANNOTATION: None}},
                                   "spec": {"taints": [client.ApiClient().sanitize_for_serialization(taint)
                                                       for taint in read.spec.taints or [] if taint.key != V_TAINT]
                                            or None}})


def test_the_validation_verdict_goes_on_the_measured_nodes_beside_the_preflights(validation_runs, runs):
    failing, warning, idle = validation_runs["nodes"]
    assert validation_runs["checked"].rc == 0, validation_runs["checked"].output
    preflight = {node: runs["after_pass"]["labels"][LABEL] if node == failing else
                 runs["after_first"][node]["labels"].get(LABEL) for node in validation_runs["nodes"]}
    assert validation_runs["after_check"] == {
        node: {"labels": {LABEL: preflight[node]} if preflight[node] else {}, "annotation": None,
               "taints": []} for node in validation_runs["nodes"]}
    first = validation_runs["first"]
    assert first.rc == 0, first.output
    after = validation_runs["after_first"]
    assert after[failing] == {"labels": {V_LABEL: "fail", LABEL: "pass"}, "annotation": "fail 1: nccl",
                              "taints": [V_TAINT]}
    assert after[warning] == {"labels": {V_LABEL: "fail", LABEL: "warn"}, "annotation": "fail 1: nccl",
                              "taints": [V_TAINT]}
    assert after[idle] == {"labels": {V_LABEL: "pass"}, "annotation": None, "taints": []}
    counts = changed(validation_runs["again"].output)
    assert validation_runs["again"].rc == 0 and counts == {"localhost": 0}, validation_runs["again"].output


def test_a_node_that_passes_a_later_validation_loses_taint_and_annotation(validation_runs):
    failing, warning, idle = validation_runs["nodes"]
    assert validation_runs["recovered"].rc == 0, validation_runs["recovered"].output
    after = validation_runs["after_pass"]
    assert after[failing] == {"labels": {V_LABEL: "pass", LABEL: "pass"}, "annotation": None, "taints": []}
    assert after[warning] == {"labels": {V_LABEL: "pass", LABEL: "warn"}, "annotation": None, "taints": []}
    # not measured this time: left as the last validation left it
    assert after[idle] == {"labels": {V_LABEL: "pass"}, "annotation": None, "taints": []}
