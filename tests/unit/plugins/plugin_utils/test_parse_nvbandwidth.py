# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nvbandwidth on the real samples in ../shared/reference/tools and on the documented formats."""

from __future__ import annotations

import json
import os
import time

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.parse_nvbandwidth import parse_nvbandwidth

MULTINODE = """Warning: Permanently added 'nvbandwidth-test-worker-0.nvbandwidth-test' (ED25519) to the list.
nvbandwidth Version: v0.8
Built from Git version: v0.8

MPI version: Open MPI v4.1.4, package: Debian OpenMPI
CUDA Runtime Version: 12080
CUDA Driver Version: 12080
Driver Version: 570.172.08

Process 0 (nvbandwidth-test-worker-0): device 0: NVIDIA GB200 (00000008:01:00)
Process 1 (nvbandwidth-test-worker-0): device 1: NVIDIA GB200 (00000009:01:00)
Process 2 (nvbandwidth-test-worker-1): device 0: NVIDIA GB200 (00000008:01:00)
Process 3 (nvbandwidth-test-worker-1): device 1: NVIDIA GB200 (00000009:01:00)
[nvbandwidth-test-worker-0:00042] MCW rank 0 bound to socket 0[core 0[hwt 0]]

Running multinode_device_to_device_memcpy_read_ce.
memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
           0         1         2         3
 0       N/A    821.33    820.10    819.88
 1    821.02       N/A    820.44    818.97
 2    820.76    821.15       N/A    700.00
 3    819.50    820.02    821.40       N/A

SUM multinode_device_to_device_memcpy_read_ce 9724.57

Waived:
NOTE: The reported results may not reflect the full capabilities of the platform.
""".replace("Waived:\n", "Waived: \n")  # nvbandwidth prints "Waived: " and an empty message


def read_sample(shared_reference, name):
    with open(os.path.join(shared_reference, "tools", name), encoding="utf-8") as handle:
        return handle.read()


def test_real_single_node_sample(shared_reference):
    parsed = parse_nvbandwidth(read_sample(shared_reference, "nvbandwidth-single-node-write-ce.txt"))
    [case] = parsed["testcases"]
    assert case["name"] == "device_to_device_memcpy_write_ce"
    assert case["status"] == "Passed"
    assert case["description"] == "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)"
    assert len(case["matrix"]) == 8 and all(len(row) == 8 for row in case["matrix"])
    assert case["matrix"][0][:3] == [0.0, 276.07, 276.36]
    assert case["matrix"][6][0] == 274.89
    assert case["min"] == 0.0
    assert case["max"] == 276.76
    assert case["off_diagonal"] == {"min": 274.89, "max": 276.76, "average": 276.34, "cells": 56}
    assert case["sum"] == round(sum(cell for row in case["matrix"] for cell in row), 2)


def test_real_host_to_device_sample(shared_reference):
    parsed = parse_nvbandwidth(read_sample(shared_reference, "nvbandwidth-host-to-device-ce.txt"))
    [case] = parsed["testcases"]
    assert case["name"] == "host_to_device_memcpy_ce"
    assert case["matrix"] == [[26.03, 25.94, 25.97, 26.0, 26.19, 25.95, 26.0, 25.97]]
    assert case["off_diagonal"] is None
    assert (case["min"], case["max"]) == (25.94, 26.19)


def test_multinode_text_with_launcher_noise_and_waived_testcase():
    parsed = parse_nvbandwidth(MULTINODE)
    assert (parsed["version"], parsed["driver_version"], parsed["cuda_runtime_version"]) == \
        ("v0.8", "570.172.08", "12080")
    first, waived = parsed["testcases"]
    assert first["name"] == "multinode_device_to_device_memcpy_read_ce"
    assert first["status"] == "Passed"
    assert first["matrix"][0] == [None, 821.33, 820.1, 819.88]
    assert first["sum"] == 9724.57
    assert first["off_diagonal"] == {"min": 700.0, "max": 821.4, "average": 810.38, "cells": 12}
    # nvbandwidth prints "Waived: " in place of "Running <name>.", without the name (nvbandwidth.cpp runTestcase)
    assert waived == {"name": None, "status": "Waived", "description": None, "unit": None, "matrix": [],
                      "message": None, "sum": None, "min": None, "max": None, "average": None,
                      "off_diagonal": None, "matrices": []}


def test_json_output_with_noise():
    document = {"nvbandwidth": {
        "version": "v0.8", "git_version": "v0.8", "CUDA Runtime Version": 12080, "Driver Version": "570.172.08",
        "GPU Device list": ["0: NVIDIA GB200", "1: NVIDIA GB200"],
        "testcases": [
            {"name": "multinode_device_to_device_memcpy_write_ce", "status": "Passed",
             "bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)",
             "bandwidth_matrix": [["N/A", "820.50"], ["819.25", "N/A"]],
             "sum": 1639.75, "max": 820.5, "min": 819.25, "average": 819.875,
             "bufferSize": 536870912, "testSamples": 3, "useMean": False},
            {"name": "multinode_bisect_write_ce", "status": "Error", "error": "cudaErrorPeerAccessUnsupported"},
        ]}}
    text = "[worker-0:00042] MCW rank 0 bound to socket 0\n" + json.dumps(document, indent=2) + "\n"
    parsed = parse_nvbandwidth(text)
    assert parsed["format"] == "json"
    assert parsed["driver_version"] == "570.172.08"
    passed, failed = parsed["testcases"]
    assert passed["matrix"] == [[None, 820.5], [819.25, None]]
    assert (passed["sum"], passed["min"], passed["max"], passed["average"]) == (1639.75, 819.25, 820.5, 819.875)
    assert passed["off_diagonal"] == {"min": 819.25, "max": 820.5, "average": 819.88, "cells": 2}
    assert (failed["status"], failed["message"], failed["matrix"]) == \
        ("Error", "cudaErrorPeerAccessUnsupported", [])


def test_lines_list_is_accepted():
    assert parse_nvbandwidth(MULTINODE.splitlines()) == parse_nvbandwidth(MULTINODE)


@pytest.mark.parametrize(("output", "message"), [
    ("mpirun: command not found\n", "no testcase found"),
    ({"nvbandwidth": {}}, "expected the tool's output as text, got dict"),
])
def test_bad_output_is_explained(output, message):
    with pytest.raises(AnsibleFilterError, match=message):
        parse_nvbandwidth(output)


# How nvbandwidth v0.8 prints testcases (nvbandwidth.cpp runTestcase, output.cpp, inline_common.h operator<<):
# a waived testcase prints "Waived: " in place of "Running <name>."; a bidirectional device-to-device testcase
# prints three matrices, each followed by its own SUM line keyed <name>_read1/_read2/_total.
BIDIRECTIONAL = """nvbandwidth Version: v0.8
Built from Git version: v0.8

Running device_to_device_memcpy_read_ce.
memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    400.00
 1    401.00       N/A

SUM device_to_device_memcpy_read_ce 801.00
Waived:
Running device_to_device_bidirectional_memcpy_read_ce.
memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)
           0         1
 0       N/A    390.00
 1    391.00       N/A

SUM device_to_device_bidirectional_memcpy_read_ce_read1 781.00
memcpy CE GPU(row) <-> GPU(column) Read2 bandwidth (GB/s)
           0         1
 0       N/A    380.00
 1    381.00       N/A

SUM device_to_device_bidirectional_memcpy_read_ce_read2 761.00
memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)
           0         1
 0       N/A    770.00
 1    772.00       N/A

SUM device_to_device_bidirectional_memcpy_read_ce_total 1542.00
ERROR: Testcase bogus not found!
NOTE: The reported results may not reflect the full capabilities of the platform.
""".replace("Waived:\n", "Waived: \n")  # nvbandwidth prints "Waived: " and an empty message


def test_a_waived_testcase_never_takes_over_the_matrix_before_it():
    measured, waived, _bidirectional, _missing = parse_nvbandwidth(BIDIRECTIONAL)["testcases"]
    assert (measured["name"], measured["status"], measured["sum"]) == ("device_to_device_memcpy_read_ce", "Passed",
                                                                       801.0)
    assert measured["matrix"] == [[None, 400.0], [401.0, None]]
    assert (waived["name"], waived["status"], waived["matrix"], waived["matrices"]) == (None, "Waived", [], [])


def test_a_bidirectional_testcase_keeps_each_matrix_with_its_own_sum():
    case = parse_nvbandwidth(BIDIRECTIONAL)["testcases"][2]
    assert case["status"] == "Passed"
    assert [(entry["key"], entry["matrix"], entry["sum"]) for entry in case["matrices"]] == [
        ("device_to_device_bidirectional_memcpy_read_ce_read1", [[None, 390.0], [391.0, None]], 781.0),
        ("device_to_device_bidirectional_memcpy_read_ce_read2", [[None, 380.0], [381.0, None]], 761.0),
        ("device_to_device_bidirectional_memcpy_read_ce_total", [[None, 770.0], [772.0, None]], 1542.0),
    ]
    # the testcase's own fields are its total, as in nvbandwidth's JSON output
    assert (case["description"], case["matrix"], case["sum"]) == (
        "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)", [[None, 770.0], [772.0, None]], 1542.0)
    assert case["matrices"][0]["description"] == "memcpy CE GPU(row) <-> GPU(column) Read1 bandwidth (GB/s)"


def test_an_unknown_testcase_name_is_not_found():
    case = parse_nvbandwidth(BIDIRECTIONAL)["testcases"][3]
    assert (case["name"], case["status"], case["message"]) == ("bogus", "Not Found", "Testcase bogus not found!")


def test_old_nvbandwidth_names_the_waived_testcase():
    [case] = parse_nvbandwidth("Waiving device_to_device_memcpy_read_ce.\n\n")["testcases"]
    assert (case["name"], case["status"]) == ("device_to_device_memcpy_read_ce", "Waived")


def test_perf_formatter_sums_and_a_latency_unit():
    text = ("Running device_to_device_latency_sm.\n"
            "Device to Device Latency SM GPU(row) <-> GPU(column) (ns)\n"
            "           0         1\n 0       N/A    700.10\n 1    701.20       N/A\n\n"
            "&&&& PERF device_to_device_latency_sm 1401.30ns\n")
    [case] = parse_nvbandwidth(text)["testcases"]
    assert (case["status"], case["unit"], case["sum"], case["matrix"]) == ("Passed", "ns", 1401.3,
                                                                           [[None, 700.1], [701.2, None]])


def test_json_bidirectional_rows_are_split_into_their_three_matrices():
    rows = [["N/A", "390"], ["391", "N/A"], ["N/A", "380"], ["381", "N/A"], ["N/A", "770"], ["772", "N/A"]]
    document = {"nvbandwidth": {"version": "v0.8", "testcases": [
        {"name": "device_to_device_bidirectional_memcpy_write_ce", "status": "Passed",
         "bandwidth_description": "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
         "bandwidth_matrix": rows, "sum": 1542},
        {"name": "device_to_device_memcpy_read_ce", "status": "Waived"},
        {"name": "bogus", "status": "ERROR"},
    ]}}
    bidirectional, waived, missing = parse_nvbandwidth(json.dumps(document))["testcases"]
    assert [(entry["key"], entry["matrix"]) for entry in bidirectional["matrices"]] == [
        ("device_to_device_bidirectional_memcpy_write_ce_write1", [[None, 390.0], [391.0, None]]),
        ("device_to_device_bidirectional_memcpy_write_ce_write2", [[None, 380.0], [381.0, None]]),
        ("device_to_device_bidirectional_memcpy_write_ce_total", [[None, 770.0], [772.0, None]]),
    ]
    assert (bidirectional["sum"], bidirectional["matrix"]) == (1542.0, [[None, 770.0], [772.0, None]])
    assert (waived["name"], waived["status"]) == ("device_to_device_memcpy_read_ce", "Waived")
    assert (missing["name"], missing["status"]) == ("bogus", "Not Found")


@pytest.mark.parametrize(("document", "message"), [
    ({"nvbandwidth": []}, "the JSON document's 'nvbandwidth' must be a mapping, got list"),
    ({"nvbandwidth": {"testcases": "x"}}, "the JSON document's 'testcases' must be a list of mappings"),
    ({"nvbandwidth": {"testcases": [{"name": "a", "status": "Passed", "bandwidth_matrix": "1 2"}]}},
     "testcase a: bandwidth_matrix must be a list of rows"),
])
def test_json_of_the_wrong_shape_is_explained(document, message):
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth(json.dumps(document))
    assert str(caught.value) == f"parse_nvbandwidth: {message}"


_TESTCASE_KEYS = {"name", "status", "description", "unit", "matrix", "message", "sum", "min", "max", "average",
                  "off_diagonal", "matrices"}
_NVBANDWIDTH_LINES = st.sampled_from([
    "Running device_to_device_memcpy_read_ce.", "Running device_to_device_bidirectional_memcpy_read_ce.",
    "Waived: ", "Waived: no peer access", "Waiving host_to_device_memcpy_ce.", "ERROR: Testcase x not found!",
    "Error: cudaErrorPeerAccessUnsupported", "Not Found: x",
    "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "memory latency SM CPU(row) <-> GPU(column) (ns)",
    "           0         1", " 0       N/A    400.00", " 1    401.00       N/A", " 0    1e400", "",
    "SUM device_to_device_memcpy_read_ce 801.00", "SUM device_to_device_bidirectional_memcpy_read_ce_read1 7",
    "&&&& PERF device_to_device_memcpy_read_ce 801.00GB/s", "nvbandwidth Version: v0.8", "{", "}",
    '{"nvbandwidth": {"testcases": [{"name": "a", "status": "Passed", "bandwidth_matrix": [["1"]]}]}}',
    '{"nvbandwidth": {"testcases": [{"name": 1, "status": null, "bandwidth_matrix": [[true, "x"]]}]}}',
])


def _check_shape(parsed):
    assert parsed["format"] in ("text", "json") and parsed["testcases"]
    for case in parsed["testcases"]:
        assert set(case) == _TESTCASE_KEYS
        assert case["status"] in ("Passed", "Waived", "Not Found", "Error")
        assert case["name"] is None or isinstance(case["name"], str)
        for row in case["matrix"]:
            assert all(cell is None or isinstance(cell, float) for cell in row)


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.lists(_NVBANDWIDTH_LINES, max_size=25).map("\n".join), st.text(max_size=200),
                 st.lists(st.text(max_size=20), max_size=5), st.integers(), st.none(),
                 st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)))
def test_any_input_gives_the_documented_shape_or_a_filter_error(output):
    try:
        parsed = parse_nvbandwidth(output)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_nvbandwidth: ")
        return
    _check_shape(parsed)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(),
                    lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.sampled_from(["name", "status", "bandwidth_matrix", "sum", "error"]),
                                      children, max_size=4), max_leaves=12))
def test_any_json_document_gives_the_documented_shape_or_a_filter_error(testcases):
    try:
        parsed = parse_nvbandwidth(json.dumps({"nvbandwidth": {"testcases": testcases}}))
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_nvbandwidth: ")
        return
    _check_shape(parsed)


# Issue 39 item 6: the controller never stalls on a pod's log. The old scan tried a JSON decode at every "{", each
# failure costing a pass over the text before it: 400,000 "{" took 51 s. The bounds below are generous (a busy
# 2-core machine); the linear scan takes milliseconds.

def test_400k_braces_before_the_output_are_read_in_linear_time():
    started = time.process_time()
    parsed = parse_nvbandwidth("{" * 400_000 + "\n" + MULTINODE)
    assert time.process_time() - started < 3
    assert parsed == parse_nvbandwidth(MULTINODE)


def test_broken_document_starts_are_tried_a_bounded_number_of_times():
    broken = '{"nvbandwidth": {"testcases": [\n' * 50_000
    started = time.process_time()
    parsed = parse_nvbandwidth(broken + MULTINODE)
    assert time.process_time() - started < 3
    assert parsed == parse_nvbandwidth(MULTINODE)


def test_the_json_document_after_launcher_braces_is_found():
    document = {"nvbandwidth": {"version": "v0.8", "testcases": [
        {"name": "multinode_device_to_device_memcpy_read_ce", "status": "Passed",
         "bandwidth_matrix": [["N/A", "820.50"], ["819.25", "N/A"]]}]}}
    parsed = parse_nvbandwidth("{ not json } {{ [rank 0] {\n" + json.dumps(document, indent=2))
    assert (parsed["format"], parsed["testcases"][0]["matrix"]) == ("json", [[None, 820.5], [819.25, None]])


def test_a_json_document_nested_100k_deep_is_a_parse_error():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth('{"nvbandwidth": {"testcases": ' + "[" * 100_000 + "]" * 100_000 + "}}")
    assert str(caught.value) == ("parse_nvbandwidth: no testcase found in the output: its JSON document nests lists "
                                 "and mappings deeper than a JSON reader follows (nvbandwidth -j nests six levels)")


def test_an_output_over_64_mib_is_refused_naming_the_input():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth(MULTINODE + "x" * (64 * 1024 * 1024))
    assert str(caught.value) == ("parse_nvbandwidth: _input holds more than 67,108,864 characters (64 MiB), more "
                                 "than one run of the tool prints; give the log of the one run to read")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["{", "[", '"', ":", ",", " ", "\n", '"nvbandwidth":', '{"nvbandwidth": ',
                                 '{"nvbandwidth": {"testcases": [']), max_size=400).map("".join))
def test_noise_that_holds_no_whole_document_never_changes_the_text_result(noise):
    # without a "}" no JSON object closes, so the output is read as text whatever the noise holds
    assert parse_nvbandwidth(noise + "\n" + MULTINODE) == parse_nvbandwidth(MULTINODE)


# Issue 39 item 9: a cell, sum or statistic that is no finite number is a parse error naming the line or the field,
# never N/A (a NaN cell passed the judge) and never a row skipped as noise.
@pytest.mark.parametrize("cell", ["nan", "-nan", "inf", "-inf", "1" * 400])
def test_a_text_cell_that_is_no_finite_number_is_a_parse_error(cell):
    text = MULTINODE.replace(" 2    820.76    821.15       N/A    700.00",
                             f" 2    820.76    821.15       N/A    {cell}")
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth(text)
    shown = repr(cell) if len(cell) <= 20 else "a number of 400 characters"
    assert str(caught.value) == (f"parse_nvbandwidth: line 21: testcase multinode_device_to_device_memcpy_read_ce, "
                                 f"row 2 column 3 is {shown}, not a finite number")


def test_a_sum_of_nan_is_a_parse_error():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth(MULTINODE.replace("SUM multinode_device_to_device_memcpy_read_ce 9724.57",
                                            "SUM multinode_device_to_device_memcpy_read_ce nan"))
    assert str(caught.value) == ("parse_nvbandwidth: line 24: the sum of multinode_device_to_device_memcpy_read_ce is "
                                 "'nan', not a finite number")


@pytest.mark.parametrize(("case", "field", "shown"), [
    ({"bandwidth_matrix": [["N/A", "nan"], ["1.0", "N/A"]]}, "bandwidth_matrix[0][1]", "'nan'"),
    ({"bandwidth_matrix": [["N/A", 1.0], [float("inf"), "N/A"]]}, "bandwidth_matrix[1][0]", "inf"),
    ({"bandwidth_matrix": [["N/A", "1"], ["1", "N/A"]], "sum": "Infinity"}, "sum", "'Infinity'"),
    ({"bandwidth_matrix": [["N/A", "1"], ["1", "N/A"]], "max": float("nan")}, "max", "nan"),
])
def test_a_json_cell_or_statistic_that_is_no_finite_number_is_a_parse_error(case, field, shown):
    document = {"nvbandwidth": {"testcases": [dict(case, name="device_to_device_memcpy_read_ce", status="Passed")]}}
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nvbandwidth(json.dumps(document))
    assert str(caught.value) == (f"parse_nvbandwidth: testcase device_to_device_memcpy_read_ce: {field} is {shown}, "
                                 "not a finite number")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["nan", "NaN", "inf", "-inf", "Infinity", "1e999"]), st.integers(0, 1), st.booleans())
def test_no_non_finite_cell_is_ever_read_as_a_number_or_as_n_a(token, row, as_json):
    rows = [["N/A", "400.00"], ["401.00", "N/A"]]
    rows[row][1 - row] = token
    if as_json:
        output = json.dumps({"nvbandwidth": {"testcases": [
            {"name": "device_to_device_memcpy_read_ce", "status": "Passed", "bandwidth_matrix": rows}]}})
    else:
        lines = "".join(f" {index}  {'  '.join(cells)}\n" for index, cells in enumerate(rows))
        output = ("Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n"
                  "           0         1\n" + lines)
    try:
        parsed = parse_nvbandwidth(output)
    except AnsibleFilterError as exc:
        assert str(exc).endswith("not a finite number")
        return
    # only a text cell the table does not print ("1e999": nvbandwidth prints fixed-point) leaves its row unread
    assert not as_json and token == "1e999" and len(parsed["testcases"][0]["matrix"]) == 1
