# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_dcgm_diag on the DCGM 4.6 documents of tests/fixtures/dcgm: fail, warn and skip, each named."""

from __future__ import annotations

import copy
import json
import pathlib

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.judge_dcgm_diag import judge_dcgm_diag as judge_filter
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.judge_dcgm_diag import (
    MAX_LISTED,
    DcgmDiagJudgeError,
    judge_dcgm_diag,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.parse_dcgm_diag import (
    DcgmDiagParseError,
    parse_dcgm_diag,
)

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "dcgm"


def document(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def judged(doc: dict, **kwargs) -> dict:
    kwargs.setdefault("host", "gpu-node-7")
    return judge_dcgm_diag(parse_dcgm_diag(doc), **kwargs)


def set_result(doc: dict, test: str, gpu: int, status: str, warning: str | None = None) -> dict:
    doc = copy.deepcopy(doc)
    for category in doc["DCGM Diagnostic"]["test_categories"]:
        for entry in category["tests"]:
            if entry["name"] == test:
                result = entry["results"][gpu]
                result["status"] = status
                if warning:
                    result["warnings"] = [{"warning": warning, "error_id": 3, "error_category": 13,
                                           "error_severity": 1}]
    return doc


def test_a_clean_run_passes_and_says_what_ran():
    verdict = judged(document("diag-r2-pass-h100x8.json"), run_level=2)
    assert verdict["status"] == "pass"
    assert (verdict["failures"], verdict["warnings"], verdict["notes"], verdict["failed_hosts"]) == ([], [], [], [])
    assert (verdict["kind"], verdict["host"], verdict["run_level"], verdict["version"], verdict["driver_version"]) == \
        ("diag", "gpu-node-7", "2", "4.6.0", "580.95.05")
    assert [(test["name"], test["status"]) for test in verdict["tests"]] == [
        ("software", "Pass"), ("pcie", "Pass"), ("memory", "Pass")]


def test_a_failed_gpu_fails_the_run_naming_host_gpu_test_and_dcgm_message():
    verdict = judged(document("diag-r2-fail-gpu3-h100x8.json"))
    assert verdict["status"] == "fail"
    assert verdict["failures"] == ["host gpu-node-7: GPU 3: memory (Hardware) failed: "
                                   "Found 4 faulty memory elements on GPU 3"]
    assert verdict["failed_gpus"] == [{"host": "gpu-node-7", "gpu": 3, "test": "memory"}]
    assert verdict["failed_hosts"] == ["gpu-node-7"]
    # the skipped GPU is a note, not a failure
    assert verdict["notes"] == ["host gpu-node-7: GPU 7: pcie (Integration) skipped: Test pcie was skipped."]


def test_a_warning_makes_the_run_warn_not_fail():
    doc = set_result(document("diag-r2-pass-h100x8.json"), "pcie", 5, "Warn",
                     "Detected more than 8 PCIe replays per minute for GPU 5 : 11")
    verdict = judged(doc)
    assert verdict["status"] == "warn" and verdict["failures"] == []
    assert verdict["warnings"] == ["host gpu-node-7: GPU 5: pcie (Integration) warned: "
                                   "Detected more than 8 PCIe replays per minute for GPU 5 : 11"]


def test_gpus_with_the_same_problem_share_one_line():
    doc = document("diag-r2-pass-h100x8.json")
    for gpu in (1, 4):
        doc = set_result(doc, "memory", gpu, "Fail", "Found 1 faulty memory elements")
    assert judged(doc)["failures"] == ["host gpu-node-7: GPU 1, GPU 4: memory (Hardware) failed: "
                                       "Found 1 faulty memory elements"]


def test_a_run_that_did_not_start_fails_with_dcgm_reason():
    verdict = judged(document("diag-runtime-error.json"))
    assert verdict["status"] == "fail"
    assert verdict["failures"] == ["host gpu-node-7: dcgmi diag did not run: Error: Unable to complete diagnostic "
                                   "for group 0. Return: (-33) : This request is serviced by a module of DCGM that "
                                   "is not currently loaded"]


def test_a_run_where_every_test_was_skipped_fails_as_nothing_was_shown():
    doc = document("diag-r2-pass-h100x8.json")
    for category in doc["DCGM Diagnostic"]["test_categories"]:
        for test in category["tests"]:
            test["test_summary"]["status"] = "Skip"
            for result in test["results"]:
                result["status"] = "Skip"
    verdict = judged(doc)
    assert verdict["status"] == "fail"
    assert verdict["failures"] == ["host gpu-node-7: no test ran to a result: every test was skipped or not run "
                                   "(memory, pcie, software)"]
    assert verdict["notes"][0] == ("host gpu-node-7: GPU 0, GPU 1, GPU 2, GPU 3, GPU 4, GPU 5, GPU 6, GPU 7: "
                                   "software (Deployment) skipped")
    assert len(verdict["notes"]) == 3


def test_a_test_summary_failure_without_a_failed_gpu_still_fails():
    doc = document("diag-r2-fail-gpu3-h100x8.json")
    memory = doc["DCGM Diagnostic"]["test_categories"][2]["tests"][0]
    memory["results"][3]["status"] = "Pass"
    del memory["results"][3]["warnings"]
    verdict = judged(doc)
    assert verdict["failures"] == ["host gpu-node-7: memory (Hardware) failed: Found 4 faulty memory elements on "
                                   "GPU 3"]


def test_a_status_dcgm_does_not_write_fails():
    doc = set_result(document("diag-r2-pass-h100x8.json"), "software", 0, "Inconclusive")
    assert judged(doc)["failures"] == ["host gpu-node-7: GPU 0: software (Deployment) ended with status "
                                       "'Inconclusive', which DCGM 4.6 does not write"]


def test_mndiag_is_judged_per_domain_naming_the_failing_host():
    verdict = judge_dcgm_diag(parse_dcgm_diag(document("mndiag-fail-gb200-two-trays.json")), domain="rack1.0")
    assert verdict["status"] == "fail" and verdict["kind"] == "mndiag" and verdict["domain"] == "rack1.0"
    assert verdict["failures"] == ["domain rack1.0: host gb200-rack1-tray2: GPU 2: MNUBERGEMM (Multi-Node Tests) "
                                   "failed: GPU 2's NvLink link 7 is currently down"]
    assert verdict["failed_hosts"] == ["gb200-rack1-tray2"]


def test_mndiag_global_and_mpi_errors_fail_naming_the_host():
    doc = document("mndiag-fail-gb200-two-trays.json")
    test = doc["test_categories"][0]["tests"][0]
    for result in test["results"]:
        result["status"] = "Pass"
        result.pop("warnings", None)
    test["mpi_error"] = {"warning": "Error: mpirun exited with 1", "error_category": "MPI"}
    doc["global_errors"] = [{"warning": "Host engine is not reachable", "error_id": 1, "error_category": 16,
                             "error_severity": 3, "host_id": 0}]
    verdict = judge_dcgm_diag(parse_dcgm_diag(doc), domain="rack1.0")
    assert verdict["failures"] == [
        "domain rack1.0: host gb200-rack1-tray1: Host engine is not reachable",
        "domain rack1.0: MNUBERGEMM (Multi-Node Tests) failed: Error: mpirun exited with 1"]
    assert verdict["failed_hosts"] == ["gb200-rack1-tray1"]


def test_iterations_that_failed_without_a_failed_test_fail():
    run = document("diag-r2-pass-h100x8.json")
    parsed = parse_dcgm_diag({"Overall Result": "Fail", "iterations": [run], "warning": "The diagnostic was killed"})
    assert judge_dcgm_diag(parsed, host="n1")["failures"] == [
        "host n1: dcgmi diag --iterations ended with Fail: The diagnostic was killed"]


def test_many_problems_are_capped():
    doc = document("diag-r2-pass-h100x8.json")
    doc["DCGM Diagnostic"]["test_categories"][0]["tests"] = [
        {"name": f"test{index}", "results": [{"entity_group": "GPU", "entity_id": 0, "status": "Fail"}],
         "test_summary": {"status": "Fail"}} for index in range(MAX_LISTED + 5)]
    failures = judged(doc)["failures"]
    assert len(failures) == MAX_LISTED + 1 and failures[-1] == "and 5 more"


@pytest.mark.parametrize(("call", "message"), [
    (lambda: judge_dcgm_diag({"tests": []}, host="n"),
     "_input must be the result of gpufabric.cluster.parse_dcgm_diag"),
    (lambda: judge_dcgm_diag(parse_dcgm_diag(document("diag-r2-pass-h100x8.json"))),
     "host must name the node dcgmi diag ran on"),
    (lambda: judge_dcgm_diag(parse_dcgm_diag(document("diag-r2-pass-h100x8.json")), host="n", run_level=True),
     "run_level must be dcgmi diag's -r value"),
])
def test_wrong_input_is_a_clear_error(call, message):
    with pytest.raises(DcgmDiagJudgeError) as error:
        call()
    assert message in str(error.value)


def test_the_filter_names_itself():
    with pytest.raises(AnsibleFilterError, match=r"^judge_dcgm_diag: host must be a string"):
        judge_filter(parse_dcgm_diag(document("diag-r2-pass-h100x8.json")), host=7)


_STATUS = st.sampled_from(["Pass", "Fail", "Warn", "Skip", "Not Run", "odd", None, 3])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.text(min_size=1, max_size=8), _STATUS, st.lists(_STATUS, max_size=4)), max_size=6),
       st.one_of(st.none(), st.text(max_size=20)))
def test_any_parsed_run_gives_a_verdict_or_the_clear_error(tests, runtime_error):
    doc = {"DCGM Diagnostic": {"runtime_error": runtime_error, "test_categories": [{"category": "c", "tests": [
        {"name": name, "test_summary": {"status": status},
         "results": [{"entity_group": "GPU", "entity_id": gpu, "status": result} for gpu, result in enumerate(results)]}
        for name, status, results in tests]}]}}
    try:
        parsed = parse_dcgm_diag(doc)
    except DcgmDiagParseError:
        return
    verdict = judge_dcgm_diag(parsed, host="n")
    assert verdict["status"] in ("pass", "warn", "fail")
    assert (verdict["status"] == "fail") == bool(verdict["failures"])
    assert verdict["status"] != "pass" or not verdict["warnings"]
    if any(test["status"] == "Fail" for test in parsed["tests"]) or parsed["runtime_error"]:
        assert verdict["status"] == "fail"
    assert all(line.startswith("host n: ") for line in verdict["failures"] + verdict["warnings"] + verdict["notes"]
               if not line.startswith("and "))
