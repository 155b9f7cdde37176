# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""validation_verdict (issue 43 item 5, after validation): each measured node's verdict, and its keys on the Node.

The validation as playbooks/validate.yml collects it (the parts' results shaped as the validation roles write them:
placement.nodes and verdict.status; the RDMA tests' server and client with their node), each measurement a check of
every node it ran on; the verdict goes on the nodes under keys of its own, so that the preflight's stays.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.validation_verdict import validation_verdict
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_verdict as nv
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import validation_verdict as vv
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError

DAY = "2026-11-29"


def _part(status, *nodes):
    return {"placement": {"clique": "c0", "nodes": list(nodes)}, "verdict": {"status": status, "reasons": []}}


def _rdma(status, server, client, rail="mlx5_0"):
    return {"name": f"{server}-{client}-{rail}", "rail": rail, "server": {"node": server, "host": server.upper()},
            "client": {"node": client, "host": client.upper()}, "verdict": {"status": status}}


def _node(name, labels=None):
    return {"metadata": {"name": name, "labels": labels or {}, "annotations": {}}, "spec": {}}


def test_each_measurement_is_a_check_of_every_node_it_ran_on():
    validation = {"compute_domain": _part("pass", "t1", "t2"), "nccl": _part("fail", "t1", "t2", "t3"),
                  "rdma": [_rdma("pass", "t1", "t2"), _rdma("fail", "t3", "t4", "mlx5_1")], "failures": ["nccl"]}
    assert vv.node_report(validation) == {"hosts": {
        "t1": {"status": "fail", "checks": [{"name": "compute_domain", "status": "pass"},
                                            {"name": "nccl", "status": "fail"},
                                            {"name": "rdma_mlx5_0", "status": "pass"}]},
        "t2": {"status": "fail", "checks": [{"name": "compute_domain", "status": "pass"},
                                            {"name": "nccl", "status": "fail"},
                                            {"name": "rdma_mlx5_0", "status": "pass"}]},
        "t3": {"status": "fail", "checks": [{"name": "nccl", "status": "fail"},
                                            {"name": "rdma_mlx5_1", "status": "fail"}]},
        "t4": {"status": "fail", "checks": [{"name": "rdma_mlx5_1", "status": "fail"}]},
    }}


def test_a_rail_measured_twice_on_a_node_fails_when_either_failed():
    validation = {"rdma": [_rdma("fail", "t1", "t2"), _rdma("pass", "t1", "t3")]}
    report = vv.node_report(validation)["hosts"]
    assert report["t1"] == {"status": "fail", "checks": [{"name": "rdma_mlx5_0", "status": "fail"}]}
    assert report["t3"] == {"status": "pass", "checks": [{"name": "rdma_mlx5_0", "status": "pass"}]}


def test_a_dcgm_diagnostic_is_a_check_of_its_node_and_a_warning_stays_a_warning():
    validation = {"nccl": _part("pass", "t1", "t2"),
                  "dcgm": [{"kind": "diag", "host": "t1", "status": "warn"},
                           {"kind": "diag", "host": "t2", "status": "fail"},
                           {"kind": "diag", "host": "t3", "status": "pass"}]}
    hosts = vv.node_report(validation)["hosts"]
    assert hosts["t1"] == {"status": "warn", "checks": [{"name": "nccl", "status": "pass"},
                                                        {"name": "dcgm_diag", "status": "warn"}]}
    assert hosts["t2"]["status"] == "fail" and hosts["t3"] == {"status": "pass", "checks": [
        {"name": "dcgm_diag", "status": "pass"}]}
    assert nv.problems_text(hosts["t1"]["checks"]) == "warn 1: dcgm_diag"


def test_a_part_that_failed_before_it_measured_names_no_node():
    validation = {"compute_domain": None, "rdma": [], "nccl": None,
                  "failures": ["the ComputeDomain did not become Ready in 300 s"]}
    assert vv.node_report(validation) == {"hosts": {}}


@pytest.mark.parametrize(("validation", "message"), [
    ({"compute_domain": "passed"}, "compute_domain: a result is a mapping, got a string"),
    ({"nccl": _part("passed", "t1")}, "nccl: its verdict has no status pass, fail, got passed"),
    ({"nccl": _part("warn", "t1")}, "nccl: its verdict has no status pass, fail, got warn"),
    ({"dcgm": [{"status": "Fail", "host": "t1"}]}, "dcgm[0]: its verdict has no status pass, warn, fail, got Fail"),
    ({"dcgm": [{"status": "pass"}]}, "dcgm[0]: a node name must be a string, got null"),
    ({"dcgm": ["t1"]}, "dcgm[0]: a verdict is a mapping, got a string"),
    ({"nccl": {"verdict": {"status": "pass"}}}, "nccl: its placement names no node"),
    ({"compute_domain": _part("pass", "t1", "")}, "compute_domain: a node name is empty"),
    ({"compute_domain": _part("pass", "t1", 7)}, "compute_domain: a node name must be a string, got a number"),
    ({"rdma": [_rdma("pass", "t1", "t2") | {"rail": ""}]},
     "rdma[0]: its rail must be a non-empty string, got an empty one"),
    ({"rdma": [_rdma("pass", "t1", "t2") | {"client": "t2"}]}, "rdma[0]: a node name must be a string, got null"),
    ({"rdma": ["t1"]}, "rdma[0]: a test is a mapping, got a string"),
    ({"rdma": {"t1": "t2"}}, "rdma"),
])
def test_a_part_not_shaped_as_its_role_writes_it_is_refused_naming_it(validation, message):
    with pytest.raises((vv.ValidationVerdictError, ArgumentError)) as caught:
        vv.node_report(validation)
    assert message in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(AnsibleFilterError, match=r"^validation_verdict: "):
        validation_verdict(validation)


def test_a_rail_name_becomes_a_check_name_the_annotation_can_show():
    report = vv.node_report({"rdma": [_rdma("fail", "t1", "t2", rail="mlx5_0:1 <x>")]})
    assert report["hosts"]["t1"]["checks"] == [{"name": "rdma_mlx5_0_1__x_", "status": "fail"}]
    assert nv.problems_text(report["hosts"]["t1"]["checks"]) == "fail 1: rdma_mlx5_0_1__x_"


def test_the_validation_verdict_has_keys_of_its_own_and_leaves_the_preflights():
    assert all(nv.key_problem(key) is None for key in nv.VALIDATION_NAMES.values())
    assert not set(nv.VALIDATION_NAMES.values()) & set(nv.DEFAULT_NAMES.values())
    documented = {name: site_settings.option(site_settings.SITE_ROLE, name)["default"] for name in nv.VALIDATION_NAMES}
    assert documented == nv.VALIDATION_NAMES
    preflight_labels = {"gpufabric.cluster/fabric-verdict": "pass", "gpufabric.cluster/fabric-verdict-date": DAY}
    report = vv.node_report({"nccl": _part("fail", "t1")})
    plan = nv.plan(report, {"t1": "t1"}, [_node("t1", preflight_labels)], taint=True, today=DAY, kind="validation")
    assert plan["skipped"] == []
    assert plan["nodes"] == [{"host": "t1", "node": "t1", "verdict": "fail", "problems": "fail 1: nccl", "patch": {
        "metadata": {"labels": {"gpufabric.cluster/validation-verdict": "fail",
                                "gpufabric.cluster/validation-verdict-date": DAY},
                     "annotations": {"gpufabric.cluster/validation-problems": "fail 1: nccl"}},
        "spec": {"taints": [{"key": "gpufabric.cluster/validation-failed", "value": "fail", "effect": "NoSchedule"}]},
    }}]


def test_the_preflight_keys_are_refused_as_validation_names_and_a_bad_kind_is_named():
    with pytest.raises(nv.NodeVerdictError, match=r"names: unknown setting\(s\) gpufabric_node_verdict_label; known: "
                                                  r"gpufabric_validation_verdict_label"):
        nv.plan({"hosts": {}}, {}, [], names={"gpufabric_node_verdict_label": "a/b"}, kind="validation")
    with pytest.raises(nv.NodeVerdictError, match=r"^gpufabric_validation_verdict_label and "
                                                  r"gpufabric_validation_verdict_date_label must differ"):
        nv.plan({"hosts": {}}, {}, [], names={"gpufabric_validation_verdict_date_label": nv.VALIDATION_NAMES[
            "gpufabric_validation_verdict_label"]}, kind="validation")
    with pytest.raises(nv.NodeVerdictError, match=r"^kind must be one of preflight, validation, got Validation$"):
        nv.plan({"hosts": {}}, {}, [], kind="Validation")


ANY = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                   lambda inner: st.one_of(st.lists(inner, max_size=3),
                                           st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
NODE_NAME = st.one_of(st.sampled_from(["t1", "t2", "t3"]), ANY)
VERDICT = st.one_of(ANY, st.fixed_dictionaries({"status": st.one_of(st.sampled_from(["pass", "fail"]), ANY)}))
PART = st.one_of(ANY, st.fixed_dictionaries({
    "placement": st.one_of(ANY, st.fixed_dictionaries({"nodes": st.one_of(ANY, st.lists(NODE_NAME, max_size=4))})),
    "verdict": VERDICT}))
RDMA = st.one_of(ANY, st.lists(st.one_of(ANY, st.fixed_dictionaries({
    "rail": st.one_of(st.sampled_from(["mlx5_0", "mlx5_1"]), ANY),
    "server": st.one_of(ANY, st.fixed_dictionaries({"node": NODE_NAME})),
    "client": st.one_of(ANY, st.fixed_dictionaries({"node": NODE_NAME})),
    "verdict": VERDICT})), max_size=4))


DCGM = st.one_of(ANY, st.lists(st.one_of(ANY, st.fixed_dictionaries({
    "host": NODE_NAME, "status": st.one_of(st.sampled_from(["pass", "warn", "fail"]), ANY)})), max_size=3))


VALIDATIONS = st.one_of(ANY, st.fixed_dictionaries({"compute_domain": PART, "nccl": PART, "rdma": RDMA, "dcgm": DCGM}))


@given(validation=VALIDATIONS)
def test_any_validation_gives_a_verdict_per_node_or_a_clear_error(validation):
    try:
        report = vv.node_report(validation)
    except (vv.ValidationVerdictError, ArgumentError) as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    for node, entry in report["hosts"].items():
        assert isinstance(node, str) and node
        statuses = {check["status"] for check in entry["checks"]}
        assert entry["status"] == ("fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass")
        names = [check["name"] for check in entry["checks"]]
        failed = [check for check in entry["checks"] if check["status"] == "fail"]
        assert len(names) == len(set(names)) and all(nv.problems_text([check]) for check in failed)
    plan = nv.plan(report, {node: node for node in report["hosts"]}, [_node(node) for node in report["hosts"]],
                   today=DAY, kind="validation")
    assert [entry["node"] for entry in plan["nodes"]] == sorted(report["hosts"]) and plan["skipped"] == []


@pytest.mark.parametrize(("taint", "tainted"), [("false", False), ("true", True), ("no", False), ("yes", True)])
def test_the_taint_setting_as_text_the_way_extra_vars_pass_it(taint, tainted):
    report = vv.node_report({"nccl": _part("fail", "t1")})
    plan = nv.plan(report, {"t1": "t1"}, [_node("t1")], taint=taint, today=DAY, kind="validation")
    taints = plan["nodes"][0]["patch"].get("spec", {}).get("taints", [])
    assert [item["key"] for item in taints] == (["gpufabric.cluster/validation-failed"] if tainted else [])


def test_a_node_named_twice_in_one_placement_is_one_check_and_an_empty_validation_names_none():
    report = vv.node_report({"compute_domain": _part("fail", "t1", "t1", "t2")})
    assert report["hosts"]["t1"] == {"status": "fail", "checks": [{"name": "compute_domain", "status": "fail"}]}
    assert vv.node_report({}) == {"hosts": {}}
    with pytest.raises(ArgumentError):
        vv.node_report("")
