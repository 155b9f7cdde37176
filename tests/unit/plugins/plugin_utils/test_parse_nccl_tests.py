# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nccl_tests on real outputs (sources in data/README.md), JSON laid out as nccl-tests writes it, edge cases."""

from __future__ import annotations

import json
import os
import re
import time

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.parse_nccl_tests import parse_nccl_tests

DATA = os.path.join(os.path.dirname(__file__), "data")
KEYS = {"format", "test", "devices", "rows", "out_of_bounds", "out_of_bounds_ok", "avg_busbw_gbps", "peak_busbw_gbps",
        "wrong_total", "complete", "errors", "skipped_lines"}
ROW_KEYS = {"size_bytes", "count", "type", "redop", "root", "out_of_place", "in_place"}
PLACEMENT_KEYS = {"time_us", "algbw_gbps", "busbw_gbps", "wrong"}
DEVICE_KEYS = {"rank", "group", "pid", "host", "gpu_index", "pci_bus", "name"}


def _read(name: str) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return handle.read()


def _check_shape(parsed: dict) -> None:
    assert set(parsed) == KEYS
    assert parsed["format"] in ("text", "json")
    for device in parsed["devices"]:
        assert set(device) == DEVICE_KEYS
        assert isinstance(device["rank"], int)
    for row in parsed["rows"]:
        assert set(row) == ROW_KEYS
        assert isinstance(row["size_bytes"], int) and row["size_bytes"] >= 0
        for placement in (row["out_of_place"], row["in_place"]):
            assert placement is None or set(placement) == PLACEMENT_KEYS
            if placement is not None:
                assert placement["wrong"] is None or (isinstance(placement["wrong"], int) and placement["wrong"] >= 0)
    assert isinstance(parsed["wrong_total"], int)
    assert isinstance(parsed["complete"], bool)
    assert parsed["out_of_bounds_ok"] in (None, True, False)
    assert all(isinstance(line, str) for line in parsed["skipped_lines"] + parsed["errors"])


def test_real_alltoall_with_na():
    # NVIDIA/nccl-tests issue #287: one row, in-place #wrong printed as N/A.
    parsed = parse_nccl_tests(_read("nccl_tests_alltoall_rtx5090.txt"))
    _check_shape(parsed)
    assert parsed["format"] == "text"
    assert parsed["devices"] == [{"rank": 0, "group": 0, "pid": 2181762, "host": "GENOA-01", "gpu_index": 0,
                                  "pci_bus": "0x01", "name": "NVIDIA GeForce RTX 5090"}]
    assert parsed["rows"] == [{
        "size_bytes": 33554432, "count": 8388608, "type": "float", "redop": "none", "root": -1,
        "out_of_place": {"time_us": 19.56, "algbw_gbps": 1715.44, "busbw_gbps": 0.0, "wrong": 0},
        "in_place": {"time_us": 0.78, "algbw_gbps": 43046.10, "busbw_gbps": 0.0, "wrong": None}}]
    assert parsed["out_of_bounds"] == 0 and parsed["out_of_bounds_ok"] is True
    assert parsed["avg_busbw_gbps"] == 0.0
    assert parsed["peak_busbw_gbps"] == 0.0
    assert parsed["complete"] is True
    assert parsed["skipped_lines"] == [] and parsed["errors"] == []


def test_real_rows_and_footer():
    # ROCm/rccl pull request #2078: the large all_reduce rows and the footer, with RCCL's asterisk note.
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_rccl_tail.txt"))
    _check_shape(parsed)
    assert [row["size_bytes"] for row in parsed["rows"]] == [2147483648, 4294967296, 8589934592, 17179869184]
    assert parsed["rows"][0]["out_of_place"] == {"time_us": 11186.0, "algbw_gbps": 191.99, "busbw_gbps": 359.98,
                                                 "wrong": 0}
    assert parsed["peak_busbw_gbps"] == 361.17
    assert parsed["avg_busbw_gbps"] == 142.652
    assert parsed["complete"] is True
    assert parsed["devices"] == []


def test_real_complete_run_of_two_hosts():
    # argonne-lcf/oci-howto 4_jobscript.md: a whole all_reduce_perf run, 16 ranks over two H200 nodes.
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_h200_two_hosts.txt"))
    _check_shape(parsed)
    assert [device["rank"] for device in parsed["devices"]] == list(range(16))
    assert parsed["devices"][15] == {"rank": 15, "group": 0, "pid": 287777, "host": "GPU-3841", "gpu_index": 7,
                                     "pci_bus": "0xd8", "name": "NVIDIA H200"}
    assert [row["size_bytes"] for row in parsed["rows"]] == [2 ** n for n in range(30, 35)]
    assert parsed["rows"][-1]["in_place"] == {"time_us": 66226.0, "algbw_gbps": 259.41, "busbw_gbps": 486.4,
                                              "wrong": 0}
    assert (parsed["out_of_bounds"], parsed["avg_busbw_gbps"], parsed["complete"]) == (0, 476.572, True)


def test_real_device_lines_of_two_hosts():
    # NVIDIA/nccl-tests issue #294: twelve ranks over two hosts, PCI addresses in the newer format.
    parsed = parse_nccl_tests(_read("nccl_tests_devices_h100_two_hosts.txt"))
    _check_shape(parsed)
    assert [device["rank"] for device in parsed["devices"]] == list(range(12))
    assert {device["host"] for device in parsed["devices"]} == {"h100-2", "h100-4"}
    assert parsed["devices"][8] == {"rank": 8, "group": 0, "pid": 739786, "host": "h100-4", "gpu_index": 0,
                                    "pci_bus": "0002:00:01", "name": "NVIDIA H100 80GB HBM3"}
    assert parsed["rows"] == [] and parsed["complete"] is False and parsed["avg_busbw_gbps"] is None


def test_real_old_device_lines_without_group():
    # NVIDIA/nccl-tests issue #107: an old build prints no Group.
    parsed = parse_nccl_tests(_read("nccl_tests_devices_v100_old.txt"))
    assert [(device["host"], device["group"], device["name"]) for device in parsed["devices"]] == [
        ("ip-172-31-20-228", None, "Tesla V100-SXM2-16GB"), ("ip-172-31-22-230", None, "Tesla V100-SXM2-16GB")]


def test_duplicates_are_kept_as_printed():
    text = _read("nccl_tests_alltoall_rtx5090.txt")
    parsed = parse_nccl_tests(text + text)
    assert len(parsed["devices"]) == 2 and parsed["devices"][0] == parsed["devices"][1]
    assert len(parsed["rows"]) == 2 and parsed["rows"][0] == parsed["rows"][1]


def test_real_mpirun_tagged_lines():
    # aws/aws-k8s-tester pull request #503: mpirun --tag-output prefixes; truncated (no footer).
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_p5_tagged.txt"))
    _check_shape(parsed)
    assert [row["size_bytes"] for row in parsed["rows"]] == [8, 16, 32]
    assert parsed["rows"][2]["out_of_place"]["time_us"] == 22.25
    assert parsed["complete"] is False and parsed["out_of_bounds"] is None


# SYNTHETIC (labelled): edge cases in the layout src/util.cu prints.
SYNTHETIC_FAILED = """\
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid   1234 on     node-a device  0 [0000:19:00] NVIDIA GB200
#  Rank  1 Group  0 Pid   1235 on     node-b device  0 [0000:19:00] NVIDIA GB200
node-a:1234:1234 [0] NCCL INFO NCCL_MNNVL_ENABLE set by environment to 1.
     1048576        262144     float     sum      -1    20.00   52.43   52.43      3    19.00   55.19   55.19  1e+06
# Out of bounds values : 7 FAILED
# Avg bus bandwidth    : 53.81 FAILED
# error: unhandled cuda error
"""


def test_synthetic_wrong_and_out_of_bounds():
    parsed = parse_nccl_tests(SYNTHETIC_FAILED)
    _check_shape(parsed)
    assert parsed["test"] == "all_reduce_perf"
    assert parsed["rows"][0]["out_of_place"]["wrong"] == 3
    assert parsed["rows"][0]["in_place"]["wrong"] == 1000000
    assert parsed["wrong_total"] == 1000003
    assert parsed["out_of_bounds"] == 7 and parsed["out_of_bounds_ok"] is False
    assert parsed["avg_busbw_gbps"] == 53.81
    assert parsed["errors"] == ["unhandled cuda error"]
    assert [device["host"] for device in parsed["devices"]] == ["node-a", "node-b"]


def test_synthetic_truncated_row_is_listed_not_guessed():
    text = SYNTHETIC_FAILED.splitlines()[0] + "\n" + "     2097152        524288     float     sum      -1    30.0"
    parsed = parse_nccl_tests(text)
    assert parsed["rows"] == []
    assert len(parsed["skipped_lines"]) == 1 and "not the columns" in parsed["skipped_lines"][0]
    assert parsed["complete"] is False


def test_synthetic_per_iteration_timestamp_and_replay_rows():
    per_iter = ("  1024  256  float  sum  -1  10.0  0.10  0.19  0  9.0  11.0  10.9  2.1"
                "  11.0  0.09  0.17  0  10.0  12.0  11.9  2.0  2026-11-24 04:50:00")
    replay = "  1024  256  float  sum  -1  11.0  0.09  0.17  N/A"
    no_root = "  1024  256  float  sum  10.0  0.10  0.19  0  11.0  0.09  0.17  0"
    parsed = parse_nccl_tests("\n".join((per_iter, replay, no_root)))
    assert parsed["rows"][0]["in_place"] == {"time_us": 11.0, "algbw_gbps": 0.09, "busbw_gbps": 0.17, "wrong": 0}
    assert parsed["rows"][1]["out_of_place"] is None and parsed["rows"][1]["in_place"]["wrong"] is None
    assert parsed["rows"][2]["root"] is None and parsed["rows"][2]["out_of_place"]["busbw_gbps"] == 0.19
    assert parsed["peak_busbw_gbps"] == 0.19


def _synthetic_json() -> dict:
    # SYNTHETIC (labelled): the keys and layout of jsonOutputInit / writeDeviceReport / writeResultFooter in
    # NVIDIA/nccl-tests src/util.cu (JSON_FILE_VERSION 3); root is written as the padded text "%6i".
    return {
        "version": 3, "start_time": "2026-11-24 04:50:00", "args": ["all_reduce_perf", "-J", "out.json"], "env": [],
        "nccl_version": 22803,
        "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 8, "maximum_bytes": 16, "step_factor": 2,
                   "devices": [{"rank": 0, "group": 0, "pid": 10, "hostname": "node-a", "device": 0,
                                "device_hex": "0000:19:00", "device_info": "NVIDIA GB200"}]},
        "results": [
            {"size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
             "out_of_place": {"time": 12.9, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": 0.0},
             "in_place": {"time": 12.87, "alg_bw": 0.0, "bus_bw": None, "nwrong": None},
             "actual_iterations": 20, "experiment_name": "all_reduce_perf"},
            {"size": 16, "count": 4, "type": "float", "redop": "sum", "root": "    -1",
             "out_of_place": None,
             "in_place": {"cpu_time": 12.83, "alg_bw": 0.01, "bus_bw": 0.02, "nwrong": 2.0}}],
        "out_of_bounds": {"count": 0, "okay": True},
        "average_bus_bandwidth": {"bandwidth": 0.01, "okay": "unchecked"},
        "errors": [], "end_time": "2026-11-24 04:50:01"}


def test_synthetic_json_text_and_object_agree():
    data = _synthetic_json()
    parsed = parse_nccl_tests(json.dumps(data))
    assert parsed == parse_nccl_tests(data)
    _check_shape(parsed)
    assert parsed["format"] == "json"
    assert parsed["test"] == "all_reduce_perf"
    assert parsed["devices"][0]["host"] == "node-a" and parsed["devices"][0]["pci_bus"] == "0000:19:00"
    assert parsed["rows"][0]["root"] == -1
    assert parsed["rows"][0]["in_place"]["busbw_gbps"] is None
    assert parsed["rows"][1]["out_of_place"] is None and parsed["rows"][1]["in_place"]["time_us"] == 12.83
    assert parsed["wrong_total"] == 2
    assert parsed["peak_busbw_gbps"] == 0.02
    assert parsed["complete"] is True and parsed["out_of_bounds_ok"] is True


@pytest.mark.parametrize("bad, message", [
    ("", "empty"),
    ("   \n", "empty"),
    (None, "got NoneType"),
    (42, "got int"),
    (["# Out of bounds values : 0 OK"], "got list"),
    (b"\xff\xfe", "not UTF-8"),
    ("hello\nworld", "no nccl-tests"),
    ("{not json", "not JSON"),
    ("[1, 2]", "no nccl-tests"),
    ('{"results": 3}', "no 'results' list"),
    ({"results": [{"size": "eight", "count": 2}]}, "results[0].size"),
    ({"results": [{"size": 8, "count": 2, "in_place": {"bus_bw": "fast"}}]}, "in_place.bus_bw"),
    ({"results": [{"size": 8, "count": 2, "in_place": {"nwrong": 1.5}}]}, "not a count"),
    ({"results": [], "config": {"devices": ["x"]}}, "devices[0]"),
    ({"results": [{"size": True, "count": 2}]}, "results[0].size"),
])
def test_bad_input_is_a_clear_error(bad, message):
    with pytest.raises(AnsibleFilterError, match=r"^parse_nccl_tests: .*" + re.escape(message)):
        parse_nccl_tests(bad)


_LINES = st.sampled_from([
    "#  Rank  0 Group  0 Pid   1234 on     node-a device  0 [0000:19:00] NVIDIA GB200",
    "  1048576  262144  float  sum  -1  20.00  52.43  52.43  0  19.00  55.19  55.19  N/A",
    "     1048576        262144     float     sum      -1    20.00",
    "  8  2  float  sum  -1  1  2  3  -4  5  6  7  8",
    "  8  2  float  sum  -1  1  x  3  0  5  6  7  8",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 1.5",
    "# Avg bus bandwidth    : nan",
    "# error: boom",
    "node-a:1:1 [0] NCCL INFO Bootstrap",
    "",
])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(st.one_of(_LINES, st.text(max_size=40)), max_size=12).map("\n".join),
                 st.text(max_size=200), st.binary(max_size=40), st.integers(), st.none(), st.booleans(),
                 st.dictionaries(st.sampled_from(["results", "config", "out_of_bounds", "errors"]),
                                 st.one_of(st.none(), st.integers(), st.text(max_size=5),
                                           st.lists(st.dictionaries(st.sampled_from(["size", "count", "in_place"]),
                                                                    st.one_of(st.integers(), st.text(max_size=3)),
                                                                    max_size=3), max_size=3)),
                                 max_size=4)))
def test_any_input_gives_the_documented_shape_or_a_clear_error(value):
    try:
        parsed = parse_nccl_tests(value)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_nccl_tests: ")
        return
    _check_shape(parsed)


# Issue 39 item 6: every line is read in time linear in its length. The old device, footer and error patterns tried
# every position of a run of spaces against the rest of the run (50,000 spaces: about 20 s); the bounds below are
# generous for a busy 2-core machine.
_RUN = " " * 50_000


@pytest.mark.parametrize("line", [
    f"#  Rank  0 Group  0 Pid   1234 on     node-a device  0 [0000:19:00] NVIDIA{_RUN}GB200",
    f"# Out of bounds values : 0{_RUN}x",
    f"# Avg bus bandwidth    : 53.81{_RUN}x",
    f"# error: unhandled{_RUN}cuda error",
], ids=["device", "out-of-bounds", "average", "error"])
def test_a_line_with_a_long_run_of_spaces_is_read_in_linear_time(line):
    started = time.process_time()
    parsed = parse_nccl_tests("# Collective test starting: all_reduce_perf\n" + line + "\n")
    assert time.process_time() - started < 2
    _check_shape(parsed)


def test_the_device_name_and_the_error_message_are_kept_whole():
    parsed = parse_nccl_tests("#  Rank  0 Group  0 Pid   1234 on     node-a device  0 [0000:19:00] NVIDIA  GB200\n"
                              "# error: unhandled   cuda error\n")
    assert (parsed["devices"][0]["name"], parsed["errors"]) == ("NVIDIA  GB200", ["unhandled   cuda error"])


def test_a_rank_of_5000_digits_is_a_parse_error_not_a_python_error():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests(f"#  Rank {'9' * 5000} Group  0 Pid   1234 on     node-a device  0 [0000:19:00] GB200\n")
    assert str(caught.value) == "parse_nccl_tests: a device line's rank has 5000 digits, more than a count " \
                                "nccl-tests prints"


def test_json_nested_100k_deep_is_a_parse_error():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests('{"results": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert str(caught.value) == ("parse_nccl_tests: the output's JSON nests lists and mappings deeper than a JSON "
                                 "reader follows (nccl-tests -J nests four levels)")


@pytest.mark.parametrize("output", ["#" * (64 * 1024 * 1024 + 1), b"#" * (64 * 1024 * 1024 + 1)],
                         ids=["text", "bytes"])
def test_an_output_over_64_mib_is_refused_naming_the_input(output):
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests(output)
    assert str(caught.value) == ("parse_nccl_tests: _input holds more than 67,108,864 characters (64 MiB), more "
                                 "than one run of the tool prints; give the log of the one run to read")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([" ", "  ", "#", "Rank", "0", "Pid", "on", "h", "device", "[", "]", ":", "error:",
                                 "Out of bounds values", "Avg bus bandwidth", "OK", "x"]), max_size=60),
       st.integers(1, 3000))
def test_lines_of_device_and_footer_words_with_long_space_runs_are_read_fast(words, width):
    line = (" " * width).join(words)
    started = time.process_time()
    try:
        _check_shape(parse_nccl_tests(line))
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_nccl_tests: ")
    assert time.process_time() - started < 2


# Issue 39 item 9: a figure that is no finite number is a parse error naming the line and the field, never "not
# checked" (a #wrong of inf passed) or a skipped row.
_ROW = "  1073741824  268435456  float  sum  -1  {}  {}  {}  {}  {}  {}  {}  {}"
_FIGURES = ["9000.0", "119.30", "208.78", "0", "9001.0", "119.29", "208.76", "0"]
_FIELDS = ["out-of-place time", "out-of-place algbw", "out-of-place busbw", "out-of-place #wrong",
           "in-place time", "in-place algbw", "in-place busbw", "in-place #wrong"]


def _row_with(position, token):
    figures = list(_FIGURES)
    figures[position] = token
    return _ROW.format(*figures)


@pytest.mark.parametrize("token", ["inf", "nan", "-inf", "-nan", "1" * 400])
@pytest.mark.parametrize("position", range(8), ids=_FIELDS)
def test_a_figure_that_is_no_finite_number_is_a_parse_error_naming_the_line_and_field(position, token):
    text = "# Collective test starting: all_reduce_perf\n" + _row_with(position, token) + "\n"
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests(text)
    shown = repr(token) if len(token) <= 20 else "a figure of 400 characters"
    assert str(caught.value) == f"parse_nccl_tests: line 2: the {_FIELDS[position]} is {shown}, not a finite number"


def test_an_average_bus_bandwidth_of_nan_is_a_parse_error():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : nan\n")
    assert str(caught.value) == "parse_nccl_tests: line 2: the average bus bandwidth is 'nan', not a finite number"


@pytest.mark.parametrize(("placement", "value", "field"), [
    ("in_place", {"bus_bw": "nan"}, "results[0].in_place.bus_bw is 'nan'"),
    ("in_place", {"nwrong": "inf"}, "results[0].in_place.nwrong is 'inf'"),
    ("out_of_place", {"alg_bw": float("inf")}, "results[0].out_of_place.alg_bw is inf"),
    ("out_of_place", {"time": float("nan")}, "results[0].out_of_place.time is nan"),
])
def test_a_json_figure_that_is_no_finite_number_is_a_parse_error(placement, value, field):
    data = _synthetic_json()
    data["results"][0][placement].update(value)
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests(data)
    assert str(caught.value) == f"parse_nccl_tests: {field}, not a finite number"
    with pytest.raises(AnsibleFilterError) as caught:
        parse_nccl_tests(json.dumps(data))  # json writes NaN and Infinity, and reads them back
    assert str(caught.value) == f"parse_nccl_tests: {field}, not a finite number"


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 7), st.sampled_from(["inf", "-inf", "nan", "NaN", "Infinity", "1e999", "-1e400"]),
       st.lists(st.sampled_from(_FIGURES), min_size=0, max_size=3))
def test_a_row_with_any_non_finite_figure_never_parses(position, token, noise):
    text = "\n".join(["# Collective test starting: all_reduce_perf", *noise, _row_with(position, token),
                      "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 100.0"])
    with pytest.raises(AnsibleFilterError, match=r"^parse_nccl_tests: line \d+: the .* is .*, not a finite number$"):
        parse_nccl_tests(text)
