# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_nvbandwidth on the real single-node sample and on a multinode ComputeDomain result."""

from __future__ import annotations

import math
import os

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.judge_nvbandwidth import judge_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nvbandwidth import parse_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.judge_nvbandwidth import default_threshold
from ansible_collections.gpufabric.cluster.tests.unit.plugins.plugin_utils.test_parse_nvbandwidth import (
    BIDIRECTIONAL,
    MULTINODE,
)


@pytest.fixture
def single_node(shared_reference):
    with open(os.path.join(shared_reference, "tools", "nvbandwidth-single-node-write-ce.txt"), encoding="utf-8") as f:
        return parse_nvbandwidth(f.read())


@pytest.mark.parametrize(("model", "threshold"), [
    ("NVIDIA GB200", 630.0), ("NVIDIA GB300", 630.0), ("NVIDIA B200", 630.0),
    ("NVIDIA H100 80GB HBM3", 315.0), ("NVIDIA H200", 315.0), ("NVIDIA GH200 480GB", 315.0),
    ("NVIDIA A100-SXM4-80GB", 210.0), ("NVIDIA L40S", None), (None, None),
])
def test_default_threshold_per_model(model, threshold):
    assert default_threshold(model) == threshold


def test_real_sample_passes_at_a_threshold_below_its_worst_pair(single_node):
    verdict = judge_nvbandwidth(single_node, 1, 8, threshold_gbps=270)
    assert verdict["status"] == "pass" and verdict["reasons"] == []
    [case] = verdict["testcases"]
    assert case["worst"] == {"from": 6, "to": 0, "gbps": 274.89}
    assert case["best"] == {"from": 4, "to": 3, "gbps": 276.76}
    assert case["spread_gbps"] == 1.87
    assert case["spread_percent"] == round(1.87 / 276.76 * 100, 2)
    assert verdict["threshold_source"] == "given"


def test_real_sample_fails_pairs_below_the_threshold(single_node):
    verdict = judge_nvbandwidth(single_node, 1, 8, threshold_gbps=276.1)
    assert verdict["status"] == "fail"
    [case] = verdict["testcases"]
    assert case["below_threshold"] == [{"from": 0, "to": 1, "gbps": 276.07}, {"from": 4, "to": 0, "gbps": 276.03},
                                       {"from": 6, "to": 0, "gbps": 274.89}, {"from": 7, "to": 4, "gbps": 276.0}]
    assert verdict["reasons"] == ["testcase device_to_device_memcpy_write_ce: 4 GPU pair(s) below 276.1 GB/s: "
                                  "0->1 276.07, 4->0 276.03, 6->0 274.89, 7->4 276.0"]


def test_many_slow_pairs_are_counted_not_all_listed(single_node):
    verdict = judge_nvbandwidth(single_node, 1, 8, threshold_gbps=300)
    assert len(verdict["testcases"][0]["below_threshold"]) == 56
    assert verdict["reasons"][0].endswith("and 46 more")


def test_multinode_default_threshold_finds_the_slow_pair_and_the_waived_testcase():
    verdict = judge_nvbandwidth(parse_nvbandwidth(MULTINODE), 2, 2, gpu_model="NVIDIA GB200")
    assert verdict["threshold_gbps"] == 630.0
    assert verdict["threshold_source"] == "70% of the NVLink peak of NVIDIA GB200"
    first, waived = verdict["testcases"]
    assert first["worst"] == {"from": 2, "to": 3, "gbps": 700.0}
    assert first["status"] == "pass"
    # a waived testcase was not measured: reported as waived, neither passed nor failed
    assert (waived["name"], waived["status"], waived["worst"]) == (None, "waived", None)
    assert (verdict["status"], verdict["reasons"], verdict["waived"]) == ("pass", [], [None])


def test_selected_testcase_only_and_threshold_above_the_slow_pair():
    verdict = judge_nvbandwidth(parse_nvbandwidth(MULTINODE), 2, 2, threshold_gbps=750,
                                testcases=["multinode_device_to_device_memcpy_read_ce"])
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == ["testcase multinode_device_to_device_memcpy_read_ce: 1 GPU pair(s) below 750.0 "
                                  "GB/s: 2->3 700.0"]


def test_matrix_smaller_than_the_job_fails():
    verdict = judge_nvbandwidth(parse_nvbandwidth(MULTINODE), 3, 2, threshold_gbps=1,
                                testcases=["multinode_device_to_device_memcpy_read_ce"])
    assert verdict["reasons"] == ["testcase multinode_device_to_device_memcpy_read_ce: the matrix is 4x4, expected "
                                  "6x6 (nodes x GPUs per node): the job did not span every GPU of the ComputeDomain"]


def test_missing_pair_and_absent_testcase_fail():
    parsed = parse_nvbandwidth(MULTINODE)
    parsed["testcases"][0]["matrix"][1][3] = None
    wanted = ["multinode_device_to_device_memcpy_read_ce", "multinode_device_to_device_memcpy_write_ce",
              "multinode_bisect_write_ce"]
    verdict = judge_nvbandwidth(parsed, 2, 2, threshold_gbps=1, testcases=wanted)
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == [
        "testcase(s) not in the output: multinode_bisect_write_ce, multinode_device_to_device_memcpy_write_ce "
        "(1 testcase(s) were waived, which nvbandwidth's text output does not name; run it with -j to see which)",
        "testcase multinode_device_to_device_memcpy_read_ce: 1 GPU pair(s) without a result (N/A): 1->3",
    ]


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (({"testcases": []}, 2, 4), {"gpu_model": "NVIDIA L40S"},
     "no default bandwidth threshold for GPU model 'NVIDIA L40S'; give threshold_gbps"),
    (("not nvbandwidth", 2, 4), {}, "_input must be a mapping, got a string"),
    (({"testcases": "x"}, 2, 4), {}, "_input must be the result of gpufabric.cluster.parse_nvbandwidth"),
    (({"testcases": []}, 0, 4), {"threshold_gbps": 1}, "nodes must be a positive integer, got 0"),
    (({"testcases": []}, 2, "4"), {"threshold_gbps": 1}, "gpus_per_node must be a positive integer, got '4'"),
])
def test_bad_input_is_an_error(args, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=r"^judge_nvbandwidth: ") as caught:
        judge_nvbandwidth(*args, **kwargs)
    assert message in str(caught.value)


def test_output_without_testcases_fails():
    verdict = judge_nvbandwidth({"testcases": []}, 1, 1, threshold_gbps=1)
    assert verdict == {"status": "fail", "reasons": ["the output holds no testcase"], "threshold_gbps": 1.0,
                       "threshold_source": "given", "gpus": 1, "testcases": [], "waived": []}


def test_bidirectional_directions_are_judged_and_the_total_reported():
    verdict = judge_nvbandwidth(parse_nvbandwidth(BIDIRECTIONAL), 1, 2, threshold_gbps=385,
                                testcases=["device_to_device_bidirectional_memcpy_read_ce"])
    [case] = verdict["testcases"]
    assert case["status"] == "fail"
    assert case["worst"] == {"from": 0, "to": 1, "gbps": 380.0,
                             "matrix": "device_to_device_bidirectional_memcpy_read_ce_read2"}
    assert case["best"] == {"from": 1, "to": 0, "gbps": 391.0,
                            "matrix": "device_to_device_bidirectional_memcpy_read_ce_read1"}
    assert verdict["reasons"] == ["testcase device_to_device_bidirectional_memcpy_read_ce (read2): 2 GPU pair(s) "
                                  "below 385.0 GB/s: 0->1 380.0, 1->0 381.0"]


def test_waived_testcases_are_named_by_position_and_reported_as_waived():
    wanted = ["device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce",
              "device_to_device_bidirectional_memcpy_read_ce", "bogus"]
    verdict = judge_nvbandwidth(parse_nvbandwidth(BIDIRECTIONAL), 1, 2, threshold_gbps=100, testcases=wanted)
    assert [(case["name"], case["status"]) for case in verdict["testcases"]] == [
        ("device_to_device_memcpy_read_ce", "pass"), ("device_to_device_memcpy_write_ce", "waived"),
        ("device_to_device_bidirectional_memcpy_read_ce", "pass"), ("bogus", "fail")]
    assert verdict["waived"] == ["device_to_device_memcpy_write_ce"]
    assert verdict["reasons"] == ["testcase bogus: Not Found: Testcase bogus not found!"]


def test_a_run_where_every_testcase_was_waived_measured_nothing_and_fails():
    parsed = parse_nvbandwidth("Waived: \n")
    verdict = judge_nvbandwidth(parsed, 2, 4, threshold_gbps=100,
                                testcases=["multinode_device_to_device_memcpy_read_ce"])
    assert verdict["testcases"][0]["status"] == "waived"
    assert (verdict["status"], verdict["reasons"]) == (
        "fail", ["no testcase was measured: nvbandwidth waived multinode_device_to_device_memcpy_read_ce"])


def test_a_latency_testcase_is_not_judged_as_bandwidth():
    text = ("Running device_to_device_latency_sm.\nDevice to Device Latency SM GPU(row) <-> GPU(column) (ns)\n"
            "           0         1\n 0       N/A    700.10\n 1    701.20       N/A\n\n"
            "SUM device_to_device_latency_sm 1401\n")
    verdict = judge_nvbandwidth(parse_nvbandwidth(text), 1, 2, threshold_gbps=100)
    assert verdict["reasons"] == ["testcase device_to_device_latency_sm measures ns, not bandwidth in GB/s"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"threshold_gbps": 0}, "threshold_gbps must be greater than 0, got 0"),
    ({"threshold_gbps": -5.0}, "threshold_gbps must be greater than 0, got -5.0"),
    ({"threshold_gbps": "600"}, "threshold_gbps must be a number, got '600'"),
    ({"gpu_model": "NVIDIA GB200", "peak_fraction": 0}, "peak_fraction must be greater than 0 and at most 1, got 0"),
    ({"gpu_model": "NVIDIA GB200", "peak_fraction": 1.5},
     "peak_fraction must be greater than 0 and at most 1, got 1.5"),
    ({"gpu_model": "NVIDIA GB200", "peak_fraction": "0.7"}, "peak_fraction must be a number, got '0.7'"),
    ({"gpu_model": ["NVIDIA GB200"]}, "gpu_model must be a string, got a list"),
    ({"threshold_gbps": 1, "testcases": "multinode_device_to_device_memcpy_read_ce"},
     "testcases must be a list, got a string"),
    ({"threshold_gbps": 1, "testcases": [1]}, "testcases must be a list of testcase names, got [1]"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(AnsibleFilterError) as caught:
        judge_nvbandwidth(parse_nvbandwidth(MULTINODE), 2, 2, **kwargs)
    assert str(caught.value) == f"judge_nvbandwidth: {message}"


_CELLS = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False, min_value=0, max_value=2000),
                   st.text(max_size=3), st.booleans())
_PARSED = st.fixed_dictionaries({"testcases": st.lists(st.fixed_dictionaries({
    "name": st.one_of(st.none(), st.sampled_from(["a", "b", "c_total"])),
    "status": st.sampled_from(["Passed", "Waived", "Error", "Not Found", None, 3]),
    "unit": st.sampled_from([None, "GB/s", "ns"]),
    "matrix": st.lists(st.lists(_CELLS, max_size=3), max_size=3),
    "matrices": st.lists(st.fixed_dictionaries({"key": st.sampled_from(["a_read1", "a_total", None]),
                                                "matrix": st.lists(st.lists(_CELLS, max_size=3), max_size=3)}),
                         max_size=3),
}), max_size=4)})


@settings(max_examples=150, deadline=None)
@given(_PARSED, st.integers(min_value=-1, max_value=3),
       st.one_of(st.none(), st.lists(st.sampled_from(["a", "b"]), max_size=3)),
       st.one_of(st.none(), st.floats(), st.integers(), st.text(max_size=3)))
def test_any_parsed_result_gives_a_verdict_or_a_filter_error(parsed, gpus, testcases, threshold):
    try:
        verdict = judge_nvbandwidth(parsed, 1, gpus, gpu_model="NVIDIA H100", threshold_gbps=threshold,
                                    testcases=testcases)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("judge_nvbandwidth: ")
        return
    assert verdict["status"] in ("pass", "fail")
    assert (verdict["status"] == "pass") == (not verdict["reasons"])
    assert all(case["status"] in ("pass", "fail", "waived") for case in verdict["testcases"])
    measured = [case for case in verdict["testcases"] if case["status"] != "waived"]
    assert verdict["status"] == "fail" or measured


# Issue 39 item 9: a NaN cell passed (NaN < threshold is false); a cell above what NVLink 5 carries in one
# direction (900 GB/s) is physically impossible.

def _two_gpus(cell):
    return {"testcases": [{"name": "device_to_device_memcpy_read_ce", "status": "Passed", "unit": "GB/s",
                           "matrix": [[None, cell], [800.0, None]]}]}


@pytest.mark.parametrize("cell", [float("nan"), float("inf"), float("-inf")])
def test_a_cell_that_is_no_finite_number_cannot_be_judged(cell):
    with pytest.raises(AnsibleFilterError) as caught:
        judge_nvbandwidth(_two_gpus(cell), 1, 2, threshold_gbps=600)
    assert str(caught.value) == ("judge_nvbandwidth: testcase device_to_device_memcpy_read_ce: the matrix must be rows "
                                 "of finite numbers or null (the result of gpufabric.cluster.parse_nvbandwidth)")


def test_a_cell_above_what_nvlink_5_carries_in_one_direction_fails_as_physically_impossible():
    verdict = judge_nvbandwidth(_two_gpus(1e9), 1, 2, threshold_gbps=600)
    assert (verdict["status"], verdict["testcases"][0]["status"]) == ("fail", "fail")
    assert verdict["reasons"] == [
        "testcase device_to_device_memcpy_read_ce: 1 GPU pair(s) above 900 GB/s, what NVLink 5 carries in one "
        "direction: 0->1 1000000000.0; physically impossible, a parse or unit error, not a measurement"]
    assert judge_nvbandwidth(_two_gpus(900.0), 1, 2, threshold_gbps=600)["status"] == "pass"


def test_each_direction_of_a_bidirectional_testcase_has_the_ceiling_and_the_total_does_not():
    output = BIDIRECTIONAL.replace("770.00", "1700.00").replace(" 0       N/A    390.00", " 0       N/A    950.00")
    parsed = parse_nvbandwidth(output)
    verdict = judge_nvbandwidth(parsed, 1, 2, threshold_gbps=300,
                                testcases=["device_to_device_bidirectional_memcpy_read_ce"])
    assert verdict["reasons"] == [
        "testcase device_to_device_bidirectional_memcpy_read_ce (read1): 1 GPU pair(s) above 900 GB/s, what NVLink 5 "
        "carries in one direction: 0->1 950.0; physically impossible, a parse or unit error, not a measurement"]


@settings(max_examples=100, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_no_cell_passes_unless_it_is_a_finite_figure_within_the_ceiling(cell):
    try:
        verdict = judge_nvbandwidth(_two_gpus(cell), 1, 2, threshold_gbps=1)
    except AnsibleFilterError:
        assert not math.isfinite(cell)
        return
    assert verdict["status"] == ("pass" if 1 <= cell <= 900 else "fail")


# Issue 39 item 10: a matrix whose rows differ in length said "the matrix is 2x2, expected 2x2".
@pytest.mark.parametrize(("matrix", "message"), [
    ([[None, 800.0], [800.0, None, 800.0]], "the matrix has 2 rows of 2 and 3 cells, not one length, expected 2x2 "
                                            "(nodes x GPUs per node): the output is cut short or mangled"),
    ([[None, 800.0], [800.0]], "the matrix has 2 rows of 1 and 2 cells, not one length, expected 2x2 (nodes x GPUs "
                               "per node): the output is cut short or mangled"),
    ([[None, 800.0, 1.0], [800.0, None, 1.0]], "the matrix is 2x3, expected 2x2 (nodes x GPUs per node): the job did "
                                               "not span every GPU of the ComputeDomain"),
    ([], "the matrix is 0x0, expected 2x2 (nodes x GPUs per node): the job did not span every GPU of the "
         "ComputeDomain"),
])
def test_a_matrix_of_another_size_says_what_differs(matrix, message):
    parsed = {"testcases": [{"name": "device_to_device_memcpy_read_ce", "status": "Passed", "unit": "GB/s",
                             "matrix": matrix}]}
    verdict = judge_nvbandwidth(parsed, 1, 2, threshold_gbps=600)
    assert verdict["reasons"] == [f"testcase device_to_device_memcpy_read_ce: {message}"]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda gpus: st.tuples(st.just(gpus), st.lists(st.integers(0, 5), min_size=gpus - 1,
                                                                                max_size=gpus - 1))))
def test_a_size_reason_never_says_the_size_it_expects(case):
    gpus, lengths = case
    # one row per GPU, the first of the expected length, the others of any length
    matrix = [[800.0] * length for length in (gpus, *lengths)]
    parsed = {"testcases": [{"name": "t", "status": "Passed", "unit": "GB/s", "matrix": matrix}]}
    verdict = judge_nvbandwidth(parsed, 1, gpus, threshold_gbps=600)
    for reason in verdict["reasons"]:
        if "expected" in reason:
            assert f"is {gpus}x{gpus}," not in reason
