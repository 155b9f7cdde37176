# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_dcgm_diag on the DCGM 4.6 documents in tests/fixtures/dcgm (see their SOURCE.md) and on broken input."""

from __future__ import annotations

import json
import pathlib

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.parse_dcgm_diag import parse_dcgm_diag as parse_filter
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.parse_dcgm_diag import (
    MAX_MESSAGES,
    MAX_TEXT,
    STATUSES,
    DcgmDiagParseError,
    parse_dcgm_diag,
)

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "dcgm"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_a_passing_level_2_run_on_eight_gpus():
    parsed = parse_dcgm_diag(fixture("diag-r2-pass-h100x8.json"))
    assert (parsed["kind"], parsed["version"], parsed["driver_version"], parsed["runtime_error"]) == \
        ("diag", "4.6.0", "580.95.05", None)
    assert [(test["name"], test["category"], test["status"]) for test in parsed["tests"]] == [
        ("software", "Deployment", "Pass"), ("pcie", "Integration", "Pass"), ("memory", "Hardware", "Pass")]
    assert [gpu["index"] for gpu in parsed["gpus"]] == list(range(8))
    assert parsed["gpus"][0] == {"index": 0, "serial": "1652323001000", "device_id": "2330"}
    pcie = parsed["tests"][1]
    assert [result["gpu"] for result in pcie["results"]] == list(range(8))
    # the plugin's tab-separated figures read as one line
    assert pcie["results"][0]["info"] == ["GPU 0 GPU to Host bandwidth: 53.41 GB/s",
                                          "GPU 0 Host to GPU bandwidth: 54.87 GB/s"]


def test_a_failing_gpu_and_a_skipped_one_keep_their_index_and_dcgm_error():
    parsed = parse_dcgm_diag(fixture("diag-r2-fail-gpu3-h100x8.json"))
    memory = parsed["tests"][2]
    assert memory["status"] == "Fail"
    [failed] = [result for result in memory["results"] if result["status"] == "Fail"]
    assert failed["gpu"] == 3 and failed["entity_group"] == "GPU"
    assert failed["warnings"] == [{"message": "Found 4 faulty memory elements on GPU 3", "error_id": 52,
                                   "category": 10, "severity": 2}]
    assert memory["warnings"] == failed["warnings"]  # the test summary holds every warning of the test
    pcie = parsed["tests"][1]
    assert pcie["status"] == "Pass"
    assert [(result["gpu"], result["status"]) for result in pcie["results"] if result["status"] != "Pass"] == \
        [(7, "Skip")]


def test_a_diagnostic_that_did_not_start_keeps_why():
    parsed = parse_dcgm_diag(fixture("diag-runtime-error.json"))
    assert parsed["tests"] == [] and parsed["version"] == "4.6.0"
    assert parsed["runtime_error"].startswith("Error: Unable to complete diagnostic for group 0. Return: (-33)")
    assert "\n" not in parsed["runtime_error"]


def test_mndiag_names_the_host_of_each_result():
    parsed = parse_dcgm_diag(fixture("mndiag-fail-gb200-two-trays.json"))
    assert (parsed["kind"], parsed["version"], parsed["driver_version"]) == ("mndiag", "4.6.0", "580.95.05")
    assert [(host["host_id"], host["hostname"], host["gpus"]) for host in parsed["hosts"]] == [
        (0, "gb200-rack1-tray1", [0, 1, 2, 3]), (1, "gb200-rack1-tray2", [0, 1, 2, 3])]
    [test] = parsed["tests"]
    assert (test["name"], test["category"], test["status"]) == ("MNUBERGEMM", "Multi-Node Tests", "Fail")
    [failed] = [result for result in test["results"] if result["status"] == "Fail"]
    assert (failed["hostname"], failed["host_id"], failed["gpu"]) == ("gb200-rack1-tray2", 1, 2)
    assert failed["warnings"][0]["message"] == "GPU 2's NvLink link 7 is currently down"


def test_the_document_is_found_in_a_pod_log_and_read_from_a_dict_or_lines():
    text = fixture("diag-r2-pass-h100x8.json")
    expected = parse_dcgm_diag(text)
    assert parse_dcgm_diag("Defaulted container \"dcgm\" out of: dcgm\n" + text + "\ncommand terminated\n") == expected
    assert parse_dcgm_diag(json.loads(text)) == expected
    assert parse_dcgm_diag(text.splitlines()) == expected


def test_iterations_keep_every_run_with_its_index():
    run = json.loads(fixture("diag-r2-fail-gpu3-h100x8.json"))
    parsed = parse_dcgm_diag("noise\n" + json.dumps({"Overall Result": "Fail", "iterations": [run, run],
                                                     "warning": "The diagnostic failed"}, indent="\t"))
    assert [(test["name"], test["iteration"]) for test in parsed["tests"]] == [
        (name, index) for index in (0, 1) for name in ("software", "pcie", "memory")]
    assert (parsed["overall_result"], parsed["overall_message"]) == ("Fail", "The diagnostic failed")


def test_a_test_without_summary_was_not_run_and_an_unknown_status_is_kept_as_unknown():
    document = {"DCGM Diagnostic": {"test_categories": [{"category": "Stress", "tests": [
        {"name": "targeted_stress"},
        {"name": "pulse_test", "results": [{"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0,
                                            "status": "Inconclusive"}], "test_summary": {"status": "PASS"}}]}]}}
    parsed = parse_dcgm_diag(document)
    assert [test["status"] for test in parsed["tests"]] == ["Not Run", "Pass"]
    assert parsed["tests"][1]["results"][0]["status"] == "Unknown"
    assert parsed["tests"][1]["results"][0]["status_text"] == "Inconclusive"


def test_long_and_many_messages_are_capped():
    warning = {"warning": "x" * 5000, "error_id": 1, "error_category": 1, "error_severity": 1}
    document = {"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "memory", "results": [{"entity_group": "GPU", "entity_id": 0, "status": "Fail",
                                        "warnings": [warning] * 50, "info": ["y" * 900] * 50}],
         "test_summary": {"status": "Fail"}}]}]}}
    result = parse_dcgm_diag(document)["tests"][0]["results"][0]
    assert len(result["warnings"]) == MAX_MESSAGES and len(result["info"]) == MAX_MESSAGES
    assert all(len(warning["message"]) == MAX_TEXT and warning["message"].endswith("...")
               for warning in result["warnings"])


@pytest.mark.parametrize(("output", "message"), [
    ("", "no DCGM diagnostic JSON document in the output"),
    ("Error: unable to connect to host engine at 127.0.0.1", "no DCGM diagnostic JSON document in the output"),
    (fixture("diag-r2-pass-h100x8.json")[:900], "cannot be read: it is cut short or not valid JSON"),
    ('{"DCGM GPU Diagnostic" : {"test_categories" : []}}', "DCGM 3.x's"),
    ('{"DCGM Diagnostic" : {}}', "holds neither test_categories nor runtime_error: the output is cut short"),
    ('{"DCGM Multi-Node Diagnostic" : "DCGM Multi-Node Diagnostic", "metadata": {"num_hosts": 0}}',
     "holds neither test_categories nor runtime_error"),
    ('{"DCGM Diagnostic" : {"test_categories" : {"category": "x"}}}', "test_categories must be a list, got a mapping"),
    ('{"DCGM Diagnostic" : {"test_categories" : [{"tests": [{"results": []}]}]}}',
     "test_categories[0].tests[0] has no name"),
    ('{"DCGM Diagnostic" : {"test_categories" : [{"tests": [{"name": "pcie", "results": '
     '[{"entity_id": "GPU0", "status": "Pass"}]}]}]}}',
     "test 'pcie' (test_categories[0].tests[0]).results[0].entity_id must be a whole number, got a string"),
    ('{"DCGM Diagnostic" : {"test_categories" : [{"tests": [{"name": "pcie", "results": [{"entity_id": 0}], '
     '"test_summary": {"status": "Pass"}}]}]}}', "results[0] has no status"),
    ('{"metadata": {"version": "4.6.0"}}', "neither 'DCGM Diagnostic' nor 'DCGM Multi-Node Diagnostic'"),
    (42, "expected the output of dcgmi diag -j or dcgmi mndiag -j as text or as its JSON document (a mapping), "
         "got a number"),
], ids=["empty", "no-document", "truncated", "dcgm3", "empty-diag", "empty-mndiag", "categories-dict", "no-name",
        "entity-text", "no-status", "other-document", "int"])
def test_broken_input_is_a_clear_error(output, message):
    with pytest.raises(DcgmDiagParseError) as error:
        parse_dcgm_diag(output)
    assert message in str(error.value)


def test_the_filter_names_itself():
    with pytest.raises(AnsibleFilterError, match=r"^parse_dcgm_diag: no DCGM diagnostic JSON document"):
        parse_filter("nothing here")


def test_a_document_nested_in_an_iteration_is_not_taken_for_the_output():
    run = fixture("diag-r2-pass-h100x8.json")
    cut = '{\n\t"Overall Result" : "Pass",\n\t"iterations" : [\n' + run + ",\n" + run[:400]
    with pytest.raises(DcgmDiagParseError, match="cut short or not valid JSON"):
        parse_dcgm_diag(cut)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                         st.sampled_from(["DCGM Diagnostic", "DCGM Multi-Node Diagnostic", "test_categories", "tests",
                                          "category", "name", "results", "status", "test_summary", "warnings", "info",
                                          "entity_id", "entity_group", "host_id", "hosts", "hostname",
                                          "runtime_error", "metadata", "version", "iterations", "global_errors",
                                          "entity_groups", "entities", "mpi_error", "warning", "error_id"]),
                         inner, max_size=5), max_leaves=30)


def _check(parsed: dict) -> None:
    assert parsed["kind"] in ("diag", "mndiag")
    for test in parsed["tests"]:
        assert test["status"] in STATUSES and isinstance(test["name"], str)
        for result in test["results"]:
            assert result["status"] in STATUSES
            assert result["gpu"] is None or isinstance(result["gpu"], int)
            assert all(len(warning["message"] or "") <= MAX_TEXT for warning in result["warnings"])


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_any_json_value_gives_a_result_or_the_clear_error(value):
    multi_node = {"DCGM Multi-Node Diagnostic": "x", "test_categories": value}
    for given_value in (value, json.dumps(value), {"DCGM Diagnostic": value}, multi_node):
        try:
            _check(parse_dcgm_diag(given_value))
        except DcgmDiagParseError as error:
            assert str(error) and "\n" not in str(error)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300), st.integers(0, 6000))
def test_any_text_or_a_cut_document_gives_a_result_or_the_clear_error(text, cut):
    for output in (text, fixture("diag-r2-fail-gpu3-h100x8.json")[:cut] + text):
        try:
            _check(parse_dcgm_diag(output))
        except DcgmDiagParseError as error:
            assert str(error)
