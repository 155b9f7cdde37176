# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17, filters: Ansible's booleans everywhere, and a wrong type refused naming the filter and the argument.

Each filter below either returns its documented result or raises AnsibleFilterError "<filter>: <argument> ...";
never a Python error ('str' object has no attribute ..., could not convert string to float), and never a
string "false" that turns an option on.
"""

from __future__ import annotations

import importlib
import inspect
import os

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins import filter as filter_package
from ansible_collections.gpufabric.cluster.plugins.filter.chart_source import chart_source
from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_placement import compute_domain_placement
from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_prerequisites import dra_driver_prerequisites
from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_values import dra_driver_values
from ansible_collections.gpufabric.cluster.plugins.filter.gpu_operator_values import gpu_operator_values
from ansible_collections.gpufabric.cluster.plugins.filter.mlnx_qos_state import mlnx_qos_state
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_markdown import rdma_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_nodes import rdma_test_nodes
from ansible_collections.gpufabric.cluster.plugins.filter.settings_problems import settings_problems
from ansible_collections.gpufabric.cluster.plugins.filter.site_summary import site_summary
from ansible_collections.gpufabric.cluster.plugins.filter.validation_report_html import validation_report_html
from ansible_collections.gpufabric.cluster.tests.unit.plugins.plugin_utils.test_compute_domain_placement import NODES
from ansible_collections.gpufabric.cluster.tests.unit.plugins.plugin_utils.test_dra_driver_prerequisites import (
    CLUSTER,
    TRAY,
)

BOOLEAN_ERROR = 'must be a boolean (true/false, "yes"/"no", 1/0), got '


@pytest.mark.parametrize("false", ["false", "no", "False", "0", 0, "off"])
def test_string_false_turns_dra_driver_options_off(false):
    values = dra_driver_values({}, {"compute_domains": false, "webhook": false, "chart_version": "0.4.1"})["values"]
    assert values["resources"]["computeDomains"] == {"enabled": False}
    assert values["webhook"] == {"enabled": False}
    # the GPU Operator's ClusterPolicy flags read the same way
    values = dra_driver_values({"device_plugin": false, "driver_enabled": false}, {"chart_version": "0.4.1"})["values"]
    assert (values["resources"]["gpus"], values["nvidiaDriverRoot"]) == ({"enabled": True}, "/")


@pytest.mark.parametrize("true", ["true", "yes", "on", 1, "1"])
def test_string_true_turns_dra_driver_options_on(true):
    values = dra_driver_values({}, {"webhook": true, "chart_version": "0.4.1"})["values"]
    assert values["webhook"] == {"enabled": True}


def test_string_false_compute_domains_skips_the_compute_domain_prerequisites():
    hostvars = {"t1": {"ansible_facts": {"gpufabric": TRAY}}}
    checks = dra_driver_prerequisites(hostvars, ["t1"], CLUSTER, {"compute_domains": "false"})["checks"]
    assert [check["name"] for check in checks] == ["kubernetes", "driver"]


def test_a_string_false_driver_enabled_of_the_gpu_operator_is_false():
    hostvars = {"t1": {"ansible_facts": {"gpufabric": dict(TRAY, gpu={"driver_loaded": False})}}}
    cluster = dict(CLUSTER, gpu_operator={"driver_enabled": "false", "driver_version": "580.65.06"})
    result = dra_driver_prerequisites(hostvars, ["t1"], cluster, {"compute_domains": False})
    assert result["problems"] == ["host t1 has no NVIDIA driver loaded and the GPU Operator does not install one"]


@pytest.mark.parametrize(("call", "message"), [
    pytest.param(lambda: dra_driver_values({}, {"webhook": "maybe"}),
                 f"dra_driver_values: dra_driver_webhook {BOOLEAN_ERROR}'maybe'", id="values-bool"),
    pytest.param(lambda: dra_driver_values({}, "webhook=false"),
                 "dra_driver_values: settings must be a mapping of dra_driver_* settings, got str",
                 id="values-settings-string"),
    pytest.param(lambda: dra_driver_values("device_plugin: true"),
                 "dra_driver_values: _input must be the GPU Operator's settings (a mapping) or null, got str",
                 id="values-input-string"),
    pytest.param(lambda: dra_driver_values({"device_plugin": "sometimes"}),
                 f"dra_driver_values: _input.device_plugin {BOOLEAN_ERROR}'sometimes'", id="values-operator-bool"),
    pytest.param(lambda: dra_driver_values({}, {"driver_root": ["/run/nvidia/driver"]}),
                 "dra_driver_values: dra_driver_driver_root must be a string, got list", id="values-root-list"),
    pytest.param(lambda: dra_driver_prerequisites({"t1": {}}, ["t1"], dict(CLUSTER, nodes="t1")),
                 "dra_driver_prerequisites: cluster.nodes must be a list of mappings, got str", id="prereq-nodes"),
    pytest.param(lambda: dra_driver_prerequisites({"t1": {}}, ["t1"], dict(CLUSTER, gpu_operator=["x"])),
                 "dra_driver_prerequisites: cluster.gpu_operator must be a mapping, got list", id="prereq-operator"),
    pytest.param(lambda: dra_driver_prerequisites("t1", ["t1"], CLUSTER),
                 "dra_driver_prerequisites: _input must be hostvars (a mapping of hosts), got str",
                 id="prereq-hostvars"),
    pytest.param(lambda: dra_driver_prerequisites({"t1": "x"}, ["t1"], CLUSTER, {"compute_domains": "nope"}),
                 f"dra_driver_prerequisites: dra_driver_compute_domains {BOOLEAN_ERROR}'nope'", id="prereq-bool"),
    pytest.param(lambda: gpu_operator_values({"a": "not a host"}, ["a"]),
                 "gpu_operator_values: no ansible_facts['gpufabric'] for a (hosts of gpu_operator_hosts): gather "
                 "them first with gpufabric.cluster.fabric_facts in the same run or from a fact cache",
                 id="operator-host-string"),
    pytest.param(lambda: gpu_operator_values({}, ["a"], {"cdi": "perhaps"}),
                 f"gpu_operator_values: gpu_operator_cdi {BOOLEAN_ERROR}'perhaps'", id="operator-bool"),
    pytest.param(lambda: gpu_operator_values({}, ["a"], ["cdi"]),
                 "gpu_operator_values: settings must be a mapping of gpu_operator_* settings, got list",
                 id="operator-settings-list"),
    pytest.param(lambda: dra_driver_values({}, {"image_registry": True}),
                 "dra_driver_values: dra_driver_image_registry must be a string, got bool", id="values-registry-bool"),
    pytest.param(lambda: gpu_operator_values({}, ["a"], {"image_registry": ["r.example.com"]}),
                 "gpu_operator_values: gpu_operator_image_registry must be a string, got list",
                 id="operator-registry-list"),
    pytest.param(lambda: compute_domain_placement(NODES, 2, 4, node_names="tray-01"),
                 "compute_domain_placement: node_names must be a list, got a string", id="placement-names"),
    pytest.param(lambda: compute_domain_placement(NODES, 2, 4, clique=7),
                 "compute_domain_placement: clique must be a string, got a number", id="placement-clique"),
    pytest.param(lambda: compute_domain_placement(NODES, 2, 4, node_names=[1]),
                 "compute_domain_placement: node_names must be a list of node names, got [1]", id="placement-1"),
    pytest.param(lambda: compute_domain_placement(["tray-01"], 2, 4),
                 "compute_domain_placement: expected the resources list of k8s_info for Nodes", id="placement-nodes"),
    pytest.param(lambda: rdma_test_nodes([], [], 5), "rdma_test_nodes: resource must be a string, got a number",
                 id="nodes-resource"),
    pytest.param(lambda: rdma_test_nodes([{"server": "a"}], [], "rdma/x"),
                 "rdma_test_nodes: _input must be the plan of rdma_test_plan (tests with a server and a client node)",
                 id="nodes-plan"),
    pytest.param(lambda: chart_source({}, {"name": "gpu_operator"}),
                 "chart_source: prefix must be a string, got a mapping", id="chart-source-prefix"),
    pytest.param(lambda: validation_report_html({"rdma": [{}]}, title=["x"]),
                 "validation_report_html: title must be a string, got a list", id="html-title"),
])
def test_a_wrong_type_is_refused_naming_the_filter_and_the_argument(call, message):
    with pytest.raises(AnsibleFilterError) as caught:
        call()
    assert str(caught.value) == message


_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                    lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.text(max_size=6), children, max_size=3), max_leaves=8)
_SETTINGS = st.one_of(_ANY, st.dictionaries(st.sampled_from(["gpus", "compute_domains", "webhook", "driver_root",
                                                             "image_registry", "image_pull_secrets"]), _ANY,
                                            max_size=3))
_OPERATOR_SETTINGS = st.one_of(_ANY, st.dictionaries(st.sampled_from(["driver", "cdi", "nfd", "device_plugin",
                                                                      "legacy_peermem", "gpudirect_rdma"]), _ANY,
                                                     max_size=3))


def _filter_error_or(call, name):
    try:
        return call()
    except AnsibleFilterError as exc:
        assert str(exc).startswith(f"{name}: ")
        return None


@settings(max_examples=120, deadline=None)
@given(st.one_of(_ANY, st.fixed_dictionaries({}, optional={"device_plugin": _ANY, "driver_enabled": _ANY,
                                                           "driver_install_dir": _ANY})), _SETTINGS)
def test_dra_driver_values_any_input(operator, chosen):
    result = _filter_error_or(lambda: dra_driver_values(operator, chosen), "dra_driver_values")
    if result is not None:
        assert isinstance(result["values"]["resources"]["gpus"]["enabled"], bool)
        assert isinstance(result["values"]["webhook"]["enabled"], bool)


@settings(max_examples=120, deadline=None)
@given(_ANY, st.one_of(_ANY, st.lists(st.sampled_from(["t1", "t2"]), max_size=2)),
       st.one_of(_ANY, st.fixed_dictionaries({}, optional={"version": _ANY, "apis": _ANY, "nodes": _ANY,
                                                           "gpu_operator": _ANY})), _SETTINGS)
def test_dra_driver_prerequisites_any_input(hostvars, hosts, cluster, chosen):
    hostvars = {"t1": {"ansible_facts": {"gpufabric": TRAY}}} if hostvars is None else hostvars
    result = _filter_error_or(lambda: dra_driver_prerequisites(hostvars, hosts, cluster, chosen),
                              "dra_driver_prerequisites")
    if result is not None:
        assert isinstance(result["ok"], bool) and isinstance(result["problems"], list)


@settings(max_examples=80, deadline=None)
@given(_ANY, _ANY, _OPERATOR_SETTINGS)
def test_gpu_operator_values_any_input(hostvars, hosts, chosen):
    result = _filter_error_or(lambda: gpu_operator_values(hostvars, hosts, chosen), "gpu_operator_values")
    if result is not None:
        assert set(result) >= {"values", "decisions"}


@settings(max_examples=120, deadline=None)
@given(st.one_of(_ANY, st.just(NODES)), st.one_of(_ANY, st.integers(0, 3)), st.one_of(_ANY, st.integers(0, 5)),
       st.one_of(_ANY, st.sampled_from(["rack-1", ""])), st.one_of(_ANY, st.lists(st.sampled_from(
           ["tray-01", "tray-03", "tray-04"]), max_size=3)))
def test_compute_domain_placement_any_input(nodes_info, nodes, gpus, clique, node_names):
    result = _filter_error_or(lambda: compute_domain_placement(nodes_info, nodes, gpus, clique, node_names),
                              "compute_domain_placement")
    if result is not None:
        assert len(result["nodes"]) == nodes and result["np"] == nodes * gpus


@settings(max_examples=80, deadline=None)
@given(_ANY, _ANY, _ANY)
def test_rdma_test_nodes_settings_problems_mlnx_qos_and_html_any_input(first, second, third):
    for name, call in (("rdma_test_nodes", lambda: rdma_test_nodes(first, second, third)),
                       ("settings_problems", lambda: settings_problems(first, second, third)),
                       ("mlnx_qos_state", lambda: mlnx_qos_state(first)),
                       ("validation_report_html", lambda: validation_report_html(first, third))):
        _filter_error_or(call, name)


# Issue 39 item 10: every filter of the collection, any argument of any shape, even nested beyond Python's recursion
# limit: its documented result or its AnsibleFilterError "<filter>: ...", never a TypeError or a RecursionError.

def _all_filters():
    folder = next(iter(filter_package.__path__))
    found = []
    for file_name in sorted(os.listdir(folder)):
        if file_name.endswith(".py") and not file_name.startswith("_"):
            module = importlib.import_module(f"{filter_package.__name__}.{file_name[:-3]}")
            found.extend(sorted(module.FilterModule().filters().items()))
    return found


FILTERS = _all_filters()


def _deeply_nested(levels):
    outer = []
    inner = outer
    for _level in range(levels - 1):
        inner.append({"key": []})
        inner = inner[0]["key"]
    return outer


def _prefixes(name, kwargs):
    """How the errors of filter ``name`` begin: its name; chart_source's own errors name the role (its prefix) and
    network_operator_resources' the role network_operator."""
    if name == "chart_source" and isinstance(kwargs.get("prefix"), str):
        return (f"{name}: ", f"{kwargs['prefix']}: ")
    if name == "network_operator_resources":
        return (f"{name}: ", "network_operator: ")
    return (f"{name}: ",)


def _error_or_result(name, kwargs, function):
    try:
        return function(**kwargs)
    except AnsibleFilterError as exc:
        assert str(exc).startswith(_prefixes(name, kwargs)), str(exc)
        return None


def _calls(function, value):
    """Each required parameter in turn set to ``value``, the other required ones an empty mapping."""
    parameters = [parameter for parameter in inspect.signature(function).parameters.values()
                  if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)]
    for chosen in parameters:
        arguments = {parameter.name: value if parameter is chosen else {} for parameter in parameters
                     if parameter is chosen or parameter.default is inspect.Parameter.empty}
        yield chosen.name, arguments


def test_every_filter_of_the_collection_is_checked_here():
    assert len(FILTERS) == len([name for name in os.listdir(next(iter(filter_package.__path__)))
                                if name.endswith(".yml")])


@pytest.mark.parametrize(("name", "function"), FILTERS, ids=[name for name, _function in FILTERS])
def test_an_argument_nested_beyond_the_recursion_limit_is_the_filter_s_error(name, function):
    for _parameter, kwargs in _calls(function, _deeply_nested(5_000)):
        _error_or_result(name, kwargs, function)


@pytest.mark.parametrize(("name", "function"), FILTERS, ids=[name for name, _function in FILTERS])
@settings(max_examples=25, deadline=None)
@given(value=_ANY)
def test_any_argument_of_any_shape_is_the_filter_s_result_or_its_error(name, function, value):
    for _parameter, kwargs in _calls(function, value):
        _error_or_result(name, kwargs, function)


def test_a_wrong_shape_deep_inside_names_the_arguments():
    with pytest.raises(AnsibleFilterError) as caught:
        site_summary({}, [], validation=1, report_dir="reports")
    assert str(caught.value) == (
        "site_summary: one of _input, converged, validation and report_dir does not have the shape the filter "
        "documents (a value of another type than documented); see ansible-doc -t filter gpufabric.cluster.site_summary")
    with pytest.raises(AnsibleFilterError) as caught:
        rdma_markdown([{"pair": "a-b"}])
    assert str(caught.value) == (
        "rdma_markdown: _input does not have the shape the filter documents (a mapping without a key the filter "
        "needs); see ansible-doc -t filter gpufabric.cluster.rdma_markdown")
