# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_verdict (issue 43 item 5): the preflight verdict as labels, an annotation and a taint on each host's Node.

What each node gets (verdict and date labels, the problems annotation while it does not pass, the NoSchedule taint
while it fails when tainting is on), that nothing else on the node changes, that a node holding its verdict gets no
patch (a second run changes nothing), the skipped hosts, the label-key checks of the name settings (also in the
settings check), and that any report shape gives valid label values or a clear error, never a crash.
"""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_verdict as nv
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError

LABEL = "gpufabric.cluster/fabric-verdict"
DATE = "gpufabric.cluster/fabric-verdict-date"
ANNOTATION = "gpufabric.cluster/fabric-problems"
TAINT = "gpufabric.cluster/fabric-unhealthy"
DAY = "2026-11-29"
# Kubernetes' label value rule (apimachinery validation.IsValidLabelValue).
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")


def _entry(status, *checks):
    return {"status": status, "gpus": 4, "connectx_ports": 4,
            "checks": [{"name": name, "status": state, "message": f"/etc/secret text of {name}"}
                       for name, state in checks]}


def _report(**hosts):
    return {"hosts": hosts}


def _node(name, labels=None, annotations=None, taints=None):
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {},
                                                             "annotations": annotations or {}}, "spec": {}}
    if taints is not None:
        node["spec"]["taints"] = taints
    return node


def _apply(node, patch):
    """The node after a JSON merge patch (RFC 7386), as the API server applies it."""
    def merge(target, change):
        if not isinstance(change, dict):
            return change
        result = dict(target) if isinstance(target, dict) else {}
        for key, value in change.items():
            if value is None:
                result.pop(key, None)
            else:
                result[key] = merge(result.get(key), value)
        return result
    return merge(copy.deepcopy(node), patch)


def test_the_default_names_are_kubernetes_label_keys_under_one_prefix():
    assert all(nv.key_problem(key) is None for key in nv.DEFAULT_NAMES.values())
    assert {key.split("/")[0] for key in nv.DEFAULT_NAMES.values()} == {"gpufabric.cluster"}
    documented = {name: site_settings.option(site_settings.SITE_ROLE, name)["default"] for name in nv.DEFAULT_NAMES}
    assert documented == nv.DEFAULT_NAMES


def test_a_failing_node_gets_labels_annotation_and_taint_and_keeps_what_others_put():
    other_taint = {"key": "example.com/maintenance", "value": "yes", "effect": "NoExecute"}
    node = _node("gpu-01", labels={"team": "a"}, annotations={"note": "keep"}, taints=[other_taint])
    report = _report(**{"gpu-01": _entry("fail", ("gpu_health", "fail"), ("imex_domain", "fail"),
                                         ("port_counters", "warn"), ("driver", "pass"))})
    plan = nv.plan(report, {"gpu-01": "gpu-01"}, [node], taint=True, today=DAY)
    (entry,) = plan["nodes"]
    assert entry["verdict"] == "fail" and entry["problems"] == "fail 2: gpu_health, imex_domain; warn 1: port_counters"
    after = _apply(node, entry["patch"])
    assert after["metadata"]["labels"] == {"team": "a", LABEL: "fail", DATE: DAY}
    assert after["metadata"]["annotations"] == {"note": "keep", ANNOTATION: entry["problems"]}
    assert after["spec"]["taints"] == [other_taint, {"key": TAINT, "value": "fail", "effect": "NoSchedule"}]
    assert "secret" not in str(entry)
    # applied, the plan is empty: a second run changes nothing
    assert nv.plan(report, {"gpu-01": "gpu-01"}, [after], taint=True, today=DAY)["nodes"][0]["patch"] == {}


def test_a_node_that_passes_again_loses_annotation_and_taint_and_says_pass():
    other_taint = {"key": "example.com/maintenance", "effect": "NoSchedule"}
    node = _node("gpu-01", labels={LABEL: "fail", DATE: "2026-11-01"}, annotations={ANNOTATION: "fail 1: x"},
                 taints=[{"key": TAINT, "value": "fail", "effect": "NoSchedule"}, other_taint])
    plan = nv.plan(_report(**{"gpu-01": _entry("pass", ("driver", "pass"))}), {"gpu-01": "gpu-01"}, [node],
                   taint=True, today=DAY)
    after = _apply(node, plan["nodes"][0]["patch"])
    assert after["metadata"]["labels"] == {LABEL: "pass", DATE: DAY}
    assert after["metadata"]["annotations"] == {}
    assert after["spec"]["taints"] == [other_taint]


def test_a_warning_is_annotated_never_tainted():
    plan = nv.plan(_report(h=_entry("warn", ("port_counters", "warn"))), {"h": "n"}, [_node("n")], taint=True,
                   today=DAY)
    assert plan["nodes"][0]["patch"] == {"metadata": {"labels": {LABEL: "warn", DATE: DAY},
                                                      "annotations": {ANNOTATION: "warn 1: port_counters"}}}


def test_taint_off_leaves_no_taint_and_removes_ours():
    ours = {"key": TAINT, "value": "fail", "effect": "NoSchedule"}
    report = _report(h=_entry("fail", ("gpu_health", "fail")))
    assert "spec" not in nv.plan(report, {"h": "n"}, [_node("n")], today=DAY)["nodes"][0]["patch"]
    patch = nv.plan(report, {"h": "n"}, [_node("n", taints=[ours])], today=DAY)["nodes"][0]["patch"]
    assert patch["spec"] == {"taints": []}


@pytest.mark.parametrize(("taint", "tainted"), [("false", False), ("no", False), ("true", True), ("yes", True)])
def test_taint_given_as_text_the_way_extra_vars_pass_it(taint, tainted):
    """-e gpufabric_node_verdict_taint=false reaches the filter as the string 'false': it must not taint."""
    report = _report(h=_entry("fail", ("gpu_health", "fail")))
    patch = nv.plan(report, {"h": "n"}, [_node("n")], taint=taint, today=DAY)["nodes"][0]["patch"]
    assert ("spec" in patch) is tainted


def test_a_taint_setting_that_is_no_boolean_is_refused():
    with pytest.raises(ArgumentError, match=r"^taint"):
        nv.plan(_report(h=_entry("fail", ("gpu_health", "fail"))), {"h": "n"}, [_node("n")], taint="maybe", today=DAY)


def test_names_are_settings():
    names = {"gpufabric_node_verdict_label": "example.com/fabric", "gpufabric_node_verdict_taint_key": "bad-fabric"}
    plan = nv.plan(_report(h=_entry("fail", ("probe", "fail"))), {"h": "n"}, [_node("n")], names=names, taint=True,
                   today=DAY)
    after = _apply(_node("n"), plan["nodes"][0]["patch"])
    assert after["metadata"]["labels"] == {"example.com/fabric": "fail", DATE: DAY}
    assert after["spec"]["taints"] == [{"key": "bad-fabric", "value": "fail", "effect": "NoSchedule"}]


def test_hosts_without_a_verdict_or_a_node_are_skipped_with_one_line_each():
    report = _report(idle={"status": "no_hardware", "gpus": 0, "checks": []},
                     lost={"status": "fail", "summary": "no gpufabric facts", "checks": [
                         {"name": "probe", "status": "fail", "message": "no gpufabric facts"}]},
                     gone=_entry("fail", ("gpu_health", "fail")), ok=_entry("pass"))
    plan = nv.plan(report, {"idle": "idle", "lost": "lost", "gone": "gone", "ok": "ok", "other": "other"},
                   [_node(name) for name in ("idle", "lost", "ok", "other")], today=DAY)
    assert [entry["host"] for entry in plan["nodes"]] == ["ok"]
    assert plan["skipped"] == [
        "gone: no Kubernetes node gone in the cluster (nodes); its verdict fail is not put on a node",
        "idle: no NVIDIA GPU or ConnectX port; Kubernetes node idle is left as it is",
        "lost: no fabric facts (unreachable, or the probe failed), so no verdict on its fabric; Kubernetes node lost "
        "is left as it is",
        "other: not in the report; Kubernetes node other is left as it is",
    ]


def test_two_hosts_with_one_node_are_refused_naming_the_variable():
    with pytest.raises(nv.NodeVerdictError, match=r"^nvidia_driver_kubernetes_node must name one Kubernetes node "
                                                  r"per host: a, b all name n$"):
        nv.plan(_report(), {"a": "n", "b": "n"}, [], nodes_variable="nvidia_driver_kubernetes_node")


def test_the_annotation_is_capped():
    checks = [(f"check_{number:02d}", "fail") for number in range(20)]
    text = nv.problems_text(_entry("fail", *checks)["checks"])
    assert text == "fail 20: " + ", ".join(f"check_{number:02d}" for number in range(8)) + " and 12 more"
    odd = nv.problems_text([{"name": "x" * 300, "status": "fail"}, {"name": "a b\n", "status": "warn"}])
    assert odd == "fail 1: ?; warn 1: ?"
    # a status of the wrong type (a list, a dict: unhashable) is no verdict, never a TypeError (found by the property
    # test below in a batch run)
    assert nv.problems_text([{"name": "a", "status": ["fail"]}, {"name": "b", "status": {"x": 1}}]) == ""
    assert len(nv.problems_text([{"name": f"c{n}", "status": s} for n in range(2000) for s in ("fail", "warn")])) \
        <= nv.ANNOTATION_MAX


@pytest.mark.parametrize(("key", "why"), [
    ("", "it must be a non-empty string"),
    ("Example.com/x", "the prefix must be a DNS subdomain"),
    ("example.com/", "the name after / is empty"),
    ("/x", "the prefix before / is empty"),
    ("a/" + "x" * 64, "the name is longer than 63 characters"),
    ("-x", "the name must be letters, digits"),
    ("a/b/c", "the prefix must be a DNS subdomain"),
    ("x" * 254 + "/y", "the prefix is longer than 253 characters"),
])
def test_a_bad_key_is_refused_naming_the_setting(key, why):
    assert why in nv.key_problem(key)
    with pytest.raises(nv.NodeVerdictError, match=r"^gpufabric_node_verdict_label .* is not a Kubernetes label key: "):
        nv.plan(_report(), {}, [], names={"gpufabric_node_verdict_label": key})


def test_the_settings_check_refuses_a_bad_key_in_one_line():
    problems = site_settings.settings_problems({"h": {"gpufabric_node_verdict_taint_key": "Bad/x"}}, ["h"],
                                               ["gpufabric"])
    assert problems == ["host h: gpufabric_node_verdict_taint_key 'Bad/x' is not a Kubernetes label key: the prefix "
                        "must be a DNS subdomain (lower-case letters, digits, '-' and '.')"]
    assert site_settings.settings_problems({"h": {"gpufabric_node_verdict_label": "example.com/v"}}, ["h"],
                                           ["gpufabric"]) == []


@pytest.mark.parametrize(("arguments", "message"), [
    ({"names": {"gpufabric_node_verdict_labl": "x"}}, "names: unknown setting(s) gpufabric_node_verdict_labl"),
    ({"names": {"gpufabric_node_verdict_date_label": LABEL}}, "must differ"),
    ({"today": "29.11.2026"}, "today must be a date (YYYY-MM-DD)"),
    ({"today": "2026-02-30"}, "today must be a date (YYYY-MM-DD)"),
    ({"nodes": {"h": ""}}, "nodes must map each host to its Kubernetes node name"),
])
def test_bad_arguments_are_refused_in_one_line(arguments, message):
    given_args = {"report": _report(), "nodes": {}, "existing": [], "today": DAY, **arguments}
    with pytest.raises((nv.NodeVerdictError, ArgumentError)) as caught:
        nv.plan(**given_args)
    assert message in str(caught.value) and "\n" not in str(caught.value)


ANY = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8)),
                   lambda inner: st.one_of(st.lists(inner, max_size=3),
                                           st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
ENTRY = st.one_of(ANY, st.fixed_dictionaries({
    "status": st.one_of(st.sampled_from(["pass", "warn", "fail", "no_hardware", "skip"]), ANY),
    "gpus": ANY,
    "checks": st.one_of(ANY, st.lists(st.fixed_dictionaries({"name": ANY, "status": st.one_of(
        st.sampled_from(["pass", "warn", "fail", "skip"]), ANY), "message": ANY}), max_size=12)),
}))
NODE = st.one_of(ANY, st.fixed_dictionaries({
    "metadata": st.fixed_dictionaries({"name": st.sampled_from(["n0", "n1", "n2"]), "labels": ANY,
                                       "annotations": ANY}),
    "spec": st.one_of(ANY, st.fixed_dictionaries({"taints": st.one_of(ANY, st.lists(st.fixed_dictionaries({
        "key": st.one_of(st.just(TAINT), st.text(max_size=4)), "effect": ANY}), max_size=3))})),
}))


REPORTS = st.one_of(ANY, st.fixed_dictionaries({"hosts": st.one_of(
    ANY, st.dictionaries(st.sampled_from(["h0", "h1", "h2", "h3"]), ENTRY, max_size=4))}))


@given(report=REPORTS, existing=st.one_of(ANY, st.lists(NODE, max_size=4)), taint=st.booleans())
def test_any_report_gives_valid_label_values_or_a_clear_error(report, existing, taint):
    nodes = {"h0": "n0", "h1": "n1", "h2": "n2", "h3": "n3"}
    try:
        plan = nv.plan(report, nodes, existing, taint=taint, today=DAY)
    except (nv.NodeVerdictError, ArgumentError) as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    for entry in plan["nodes"]:
        labels = entry["patch"].get("metadata", {}).get("labels", {})
        assert all(len(value) <= 63 and LABEL_VALUE.fullmatch(value) for value in labels.values())
        assert set(labels.values()) <= {"pass", "warn", "fail", DAY}
        annotation = entry["patch"].get("metadata", {}).get("annotations", {}).get(ANNOTATION)
        assert annotation is None or len(annotation) <= nv.ANNOTATION_MAX
        taints = entry["patch"].get("spec", {}).get("taints")
        assert taints is None or [item for item in taints if item.get("key") == TAINT] == (
            [{"key": TAINT, "value": "fail", "effect": "NoSchedule"}] if taint and entry["verdict"] == "fail" else [])
    assert all(isinstance(line, str) and "\n" not in line for line in plan["skipped"])
