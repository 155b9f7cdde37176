# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""dcgm_diag_plan on GPU Nodes as kubernetes.core.k8s_info returns them (the validate_dcgm role's plan)."""

from __future__ import annotations

import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.dcgm_diag_plan import dcgm_diag_plan
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dcgm_diag_plan import MAX_POD_NAME, pod_name


def node(name, gpus="4", ready="True"):
    return {"metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"}},
            "status": {"allocatable": {"nvidia.com/gpu": gpus}, "conditions": [{"type": "Ready", "status": ready}]}}


NODES = [node("tray-03"), node("tray-01", gpus="8"), node("tray-02")]


def refused(message, *args, **kwargs):
    with pytest.raises(AnsibleFilterError, match=r"^dcgm_diag_plan: ") as caught:
        dcgm_diag_plan(*args, **kwargs)
    assert message in str(caught.value), str(caught.value)


def test_every_gpu_node_in_name_order_with_all_its_gpus():
    assert dcgm_diag_plan(NODES) == [
        {"node": "tray-01", "pod": "dcgm-diag-tray-01", "gpus": 8},
        {"node": "tray-02", "pod": "dcgm-diag-tray-02", "gpus": 4},
        {"node": "tray-03", "pod": "dcgm-diag-tray-03", "gpus": 4}]


def test_the_names_asked_narrow_the_run_and_empty_or_null_means_all():
    assert [entry["node"] for entry in dcgm_diag_plan(NODES, ["tray-03", " tray-02 "], "diag")] == [
        "tray-02", "tray-03"]
    assert dcgm_diag_plan(NODES, ["tray-02"], "diag")[0]["pod"] == "diag-tray-02"
    assert dcgm_diag_plan(NODES, []) == dcgm_diag_plan(NODES, None) == dcgm_diag_plan(NODES)


def test_a_node_that_cannot_run_the_pod_is_refused_only_when_asked():
    nodes = [*NODES, node("tray-04", ready="False"), node("tray-05", gpus="0")]
    assert [entry["node"] for entry in dcgm_diag_plan(nodes, ["tray-01"])] == ["tray-01"]
    refused("node(s) not Ready, where a diagnostic pod cannot run: tray-04 (leave them out with "
            "validate_dcgm_node_names)", nodes)
    refused("node(s) that allocate no nvidia.com/gpu: tray-05", nodes, ["tray-05", "tray-01"])
    refused("node(s) that allocate no nvidia.com/gpu: tray-05", nodes, ["tray-05"], resource="nvidia.com/gpu")


def test_a_node_without_the_resource_or_a_resource_that_is_no_count_allocates_none():
    bare = {"metadata": {"name": "tray-09"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    refused("allocate no nvidia.com/gpu: tray-09", [bare])
    refused("allocate no nvidia.com/gpu: tray-08", [node("tray-08", gpus="four")])
    refused("allocate no example.com/gpu: tray-01", NODES, ["tray-01"], resource="example.com/gpu")


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((NODES, ["tray-09", "tray-01", "tray-08"]), {},
     "validate_dcgm_node_names names node(s) that are not GPU nodes of the cluster (label "
     "nvidia.com/gpu.present=true): tray-09, tray-08"),
    ((NODES, ["tray-01", "tray-01"]), {}, "validate_dcgm_node_names names node tray-01 twice"),
    ((NODES, ["tray-01", " tray-01"]), {}, "validate_dcgm_node_names names node tray-01 twice"),
    ((NODES, ["tray-01", 7]), {}, "validate_dcgm_node_names[1] must be a node name (a non-empty string), got a "
                                  "number"),
    ((NODES, ["tray-01", ""]), {}, "validate_dcgm_node_names[1] must be a node name (a non-empty string)"),
    ((NODES, ["tray-01", None]), {}, "validate_dcgm_node_names[1] must be a node name (a non-empty string), got "
                                     "null"),
    ((NODES, "tray-01"), {}, "validate_dcgm_node_names must be a list, got a string"),
    ((NODES, {"tray-01": True}), {}, "validate_dcgm_node_names must be a list, got a mapping"),
    ((NODES, "true"), {}, "validate_dcgm_node_names must be a list, got a string"),
    (([],), {}, "the cluster has no GPU node (label nvidia.com/gpu.present=true"),
    (({"resources": NODES},), {}, "_input must be a list, got a mapping"),
    (([{"kind": "Node"}],), {}, "_input[0] is not a Node object with metadata.name"),
    (([node("")],), {}, "_input[0] is not a Node object with metadata.name"),
    ((NODES,), {"name": "Diag"}, "validate_dcgm_name must be a DNS label of at most 40 characters"),
    ((NODES,), {"name": "diag-"}, "got 'diag-'"),
    ((NODES,), {"name": "d" * 41}, "validate_dcgm_name must be a DNS label of at most 40 characters"),
    ((NODES,), {"name": ""}, "validate_dcgm_name must be a DNS label of at most 40 characters (lower-case letters, "
                             "digits and '-' inside), got ''"),
    ((NODES,), {"name": True}, "validate_dcgm_name must be a DNS label of at most 40 characters (lower-case "
                               "letters, digits and '-' inside), got a boolean"),
    ((NODES,), {"resource": ["nvidia.com/gpu"]}, "resource must be"),
])
def test_bad_input_is_explained_naming_the_variable(args, kwargs, message):
    refused(message, *args, **kwargs)


def test_a_long_list_of_missing_names_is_counted_after_ten():
    names = [f"gone-{index:03d}" for index in range(250)]
    refused("gone-009 and 240 more", NODES, names)


def test_a_node_name_that_is_no_dns_label_gets_a_hashed_pod_name():
    long_name = "gb200-nvl72-rack-0042-compute-tray-17.example.internal.cluster.local"
    plan = dcgm_diag_plan([node(long_name), node("tray.01"), node("tray-01")])
    pods = {entry["node"]: entry["pod"] for entry in plan}
    assert pods["tray-01"] == "dcgm-diag-tray-01"
    assert pods["tray.01"].startswith("dcgm-diag-tray-01-") and pods["tray.01"] != pods["tray-01"]
    assert len(pods[long_name]) == MAX_POD_NAME and pods[long_name].startswith("dcgm-diag-gb200-nvl72-rack-0042")


def test_many_nodes_plan_in_name_order():
    nodes = [node(f"tray-{index:04d}") for index in range(2000, 0, -1)]
    plan = dcgm_diag_plan(nodes)
    assert len(plan) == 2000 and plan[0]["node"] == "tray-0001" and plan[-1]["pod"] == "dcgm-diag-tray-2000"


_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_NODE_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=253)


@settings(max_examples=200, deadline=None)
@given(prefix=st.from_regex(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?", fullmatch=True),
       nodes=st.lists(_NODE_NAMES.filter(lambda name: name[0].isalnum() and name[-1].isalnum()), min_size=1,
                      max_size=30, unique=True))
def test_pod_names_are_distinct_dns_labels_for_any_node_names(prefix, nodes):
    plan = dcgm_diag_plan([node(name) for name in nodes], name=prefix)
    assert [entry["node"] for entry in plan] == sorted(nodes)
    pods = [entry["pod"] for entry in plan]
    assert len(set(pods)) == len(pods)
    assert all(len(pod) <= MAX_POD_NAME and _DNS_LABEL.match(pod) for pod in pods), pods
    assert pods == [pod_name(prefix, name) for name in sorted(nodes)]


@settings(max_examples=200, deadline=None)
@given(nodes=st.lists(st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5),
                                st.dictionaries(st.sampled_from(["metadata", "status"]),
                                                st.one_of(st.none(), st.text(max_size=5),
                                                          st.fixed_dictionaries({"name": st.text(max_size=8)}))),
                                st.builds(node, st.text(min_size=1, max_size=8), st.sampled_from(["0", "4", "x"]),
                                          st.sampled_from(["True", "False"]))), max_size=6),
       names=st.one_of(st.none(), st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=4)))
def test_any_input_gives_a_plan_or_a_clear_error(nodes, names):
    try:
        plan = dcgm_diag_plan(nodes, names)
    except AnsibleFilterError as error:
        assert str(error).startswith("dcgm_diag_plan: ") and "Traceback" not in str(error)
        return
    assert plan and all(entry["gpus"] >= 1 for entry in plan)
    assert [entry["node"] for entry in plan] == sorted(entry["node"] for entry in plan)
