# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_nccl_tests on real outputs (data/README.md names their sources), on runs laid out as nccl-tests prints them
(labelled synthetic), the derived thresholds, and wrong arguments."""

from __future__ import annotations

import math
import os
import time

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.judge_nccl_tests import judge_nccl_tests
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nccl_tests import parse_nccl_tests
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.judge_nccl_tests import NVLINK_FLOORS_GBPS

DATA = os.path.join(os.path.dirname(__file__), "data")
GIB = 1024 ** 3
GB200 = {"shape": "nvlink", "gpu_model": "NVIDIA GB200"}


def _read(name: str) -> str:
    with open(os.path.join(DATA, name), encoding="utf-8") as handle:
        return handle.read()


def _synthetic_run(ranks=8, busbw=840.0, wrong=0, drop_rank=None, oob="0 OK", sizes=(GIB, 2 * GIB, 4 * GIB, 8 * GIB)):
    """SYNTHETIC: an all_reduce_perf text output laid out as nccl-tests src/util.cu prints it (two trays of 4)."""
    lines = ["# Collective test starting: all_reduce_perf", "# Using devices"]
    for rank in range(ranks):
        if rank != drop_rank:
            lines.append(f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {'tray-' + str(rank // 4):>10s} device "
                         f"{rank % 4:2d} [0008:01:00] NVIDIA GB200")
    for index, size in enumerate(sizes):
        value = busbw - 10 * (len(sizes) - 1 - index)
        bad = wrong if index == 1 else 0
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1   9000.0  {value / 1.75:.2f}  {value:.2f}"
                     f"  {bad}   9001.0  {value / 1.75:.2f}  {value - 1:.2f}  0")
    lines += [f"# Out of bounds values : {oob}", f"# Avg bus bandwidth    : {busbw - 20:.2f}"]
    return "\n".join(lines) + "\n"


def test_rccl_tail_real_output_against_a_given_threshold():
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_rccl_tail.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=300)
    assert verdict["passed"] is True and verdict["failures"] == []
    assert (verdict["peak_busbw_gbps"], verdict["peak_size_bytes"]) == (361.17, 17179869184)
    assert (verdict["worst_busbw_gbps"], verdict["worst_size_bytes"]) == (359.35, 4294967296)
    assert (verdict["large_sizes"], verdict["threshold_source"], verdict["ranks"], verdict["hosts"]) == (
        4, "given", 0, {})
    failed = judge_nccl_tests(parsed, threshold_gbps=400)
    assert failed["failures"] == ["peak busbw 361.17 GB/s (at 17179869184 B) below the threshold 400 GB/s"]


def test_device_lines_only_real_output_names_hosts_and_fails_as_truncated():
    parsed = parse_nccl_tests(_read("nccl_tests_devices_h100_two_hosts.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=100)
    assert verdict["hosts"] == {"h100-2": list(range(8)), "h100-4": [8, 9, 10, 11]}
    assert verdict["passed"] is False
    assert verdict["failures"] == [
        "no 'Out of bounds values' line: the run did not finish (truncated output)",
        "no row at or above 1073741824 B with a busbw: the run did not reach the large sizes"]
    assert judge_nccl_tests(parsed, threshold_gbps=100, ranks=16)["failures"][1] == \
        "rank(s) missing from the device lines: 12, 13, 14, 15"


def test_complete_real_two_host_output_passes_and_names_its_hosts():
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_h200_two_hosts.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=450, ranks=16)
    assert verdict["passed"] is True, verdict["failures"]
    assert (verdict["peak_busbw_gbps"], verdict["peak_size_bytes"]) == (486.49, 17179869184)
    assert (verdict["worst_busbw_gbps"], verdict["worst_size_bytes"]) == (459.43, 1073741824)
    assert (verdict["large_sizes"], verdict["ranks"], verdict["out_of_bounds"]) == (5, 16, 0)
    assert verdict["hosts"] == {"GPU-6550": list(range(8)), "GPU-3841": list(range(8, 16))}
    # Against the GB200 NVLink domain floor an H200 pair over the network is far below.
    assert judge_nccl_tests(parsed, facts=GB200, ranks=16)["failures"] == [
        "peak busbw 486.49 GB/s (at 17179869184 B) below the threshold 600 GB/s"]


@pytest.mark.parametrize("cut", ["# Out of bounds", "  8589934592", "#       size", "#  Rank  9"])
def test_the_complete_real_run_cut_short_never_passes(cut):
    # A launcher log cut where the pod died or the log rotated: before the footer, inside the table, before it, or
    # inside the device lines.
    text = _read("nccl_tests_all_reduce_h200_two_hosts.txt")
    verdict = judge_nccl_tests(parse_nccl_tests(text[:text.index(cut)]), threshold_gbps=450, ranks=16)
    assert verdict["passed"] is False
    assert "no 'Out of bounds values' line: the run did not finish (truncated output)" in verdict["failures"]
    with pytest.raises(AnsibleFilterError, match="parse_nccl_tests: the output is empty"):
        parse_nccl_tests("")


def test_an_output_with_more_ranks_than_the_job_is_not_its_output():
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_h200_two_hosts.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=450, ranks=8)
    assert verdict["failures"] == ["rank(s) the job of 8 did not have: 8, 9, 10, 11, 12, 13, 14, 15"]


def test_the_same_rank_printed_twice_fails_naming_the_hosts():
    # The real output of two processes that each ran alone (no MPI between them): both are rank 0.
    parsed = parse_nccl_tests(_read("nccl_tests_devices_v100_old.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=1)
    assert "rank(s) on more than one device line: 0 (ip-172-31-20-228, ip-172-31-22-230)" in verdict["failures"]
    assert verdict["passed"] is False


def test_a_log_holding_the_run_twice_fails_and_the_list_is_cut_short():
    # The same real run printed twice (a wrapper that retried mpirun): every rank is on two device lines.
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_h200_two_hosts.txt") * 2)
    failures = judge_nccl_tests(parsed, threshold_gbps=450, ranks=16)["failures"]
    assert failures == ["rank(s) on more than one device line: 0 (GPU-6550, GPU-6550); 1 (GPU-6550, GPU-6550); "
                        "2 (GPU-6550, GPU-6550); 3 (GPU-6550, GPU-6550); 4 (GPU-6550, GPU-6550); "
                        "5 (GPU-6550, GPU-6550); 6 (GPU-6550, GPU-6550); 7 (GPU-6550, GPU-6550) and 8 more"]
    assert judge_nccl_tests(parsed, threshold_gbps=450, ranks=4)["failures"][0] == \
        "rank(s) the job of 4 did not have: 4, 5, 6, 7, 8, 9, 10, 11 and 4 more"


def test_small_sizes_only_real_output_never_passes():
    parsed = parse_nccl_tests(_read("nccl_tests_all_reduce_p5_tagged.txt"))
    verdict = judge_nccl_tests(parsed, threshold_gbps=1, min_size_bytes=1024)
    assert verdict["large_sizes"] == 0 and verdict["passed"] is False


def test_gb200_domain_passes_on_the_derived_floor():
    log = ("tray-0:1:1 [0] NCCL INFO NCCL_MNNVL_ENABLE set by environment to 1.\n"
           "tray-0:1:1 [0] NCCL INFO MNNVL busId 0x8010 fabric UUID 3c1a5f2e.9b7d cliqueId 0x1 state 3\n"
           "tray-0:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0\n")
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts=GB200, ranks=8, log=log)
    assert verdict["passed"] is True, verdict["failures"]
    assert (verdict["threshold_gbps"], verdict["peak_busbw_gbps"], verdict["worst_size_bytes"]) == (600.0, 840.0, GIB)
    assert verdict["threshold_source"].startswith("GB200 NVLink domain all_reduce floor 600 GB/s")
    assert verdict["hosts"] == {"tray-0": [0, 1, 2, 3], "tray-1": [4, 5, 6, 7]}
    assert (verdict["transport"], verdict["transport_known"]) == (["mnnvl", "nvls"], True)


def test_network_path_is_named():
    log = "node1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run(busbw=370)), threshold_gbps=300, log=log)
    assert verdict["transport"] == ["network"]
    assert judge_nccl_tests(parse_nccl_tests(_synthetic_run()), threshold_gbps=300)["transport_known"] is False


@pytest.mark.parametrize(("kwargs", "failure"), [
    ({"wrong": 3}, "3 wrong value(s) (#wrong) at size(s) 2147483648 B"),
    ({"oob": "2 FAILED"}, "2 out-of-bounds value(s)"),
    ({"drop_rank": 5}, "rank(s) missing from the device lines: 5"),
    ({"busbw": 540.0}, "peak busbw 540 GB/s (at 8589934592 B) below the threshold 600 GB/s"),
])
def test_each_failure_is_named(kwargs, failure):
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run(**kwargs)), facts=GB200, ranks=8)
    assert verdict["passed"] is False
    assert verdict["failures"] == [failure]


@pytest.mark.parametrize(("facts", "threshold"), [
    ({"shape": "rdma", "nic_rate_gbps": 400, "nics": 8}, 368.0),
    ({"shape": "rdma", "nic_rate_gbps": 200, "nics": 2}, 48.0),
    ({"shape": "nvlink", "gpu_model": "NVIDIA GB200"}, 600.0),
])
def test_derived_thresholds(facts, threshold):
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts=facts)
    assert verdict["threshold_gbps"] == threshold


# Issue 43 item 4: each GPU model gets its own NVLink floor, by the name NVML reports (the hosts' facts) or GPU
# Feature Discovery's nvidia.com/gpu.product label (the same with hyphens: what validate_nccl's placement reads).
@pytest.mark.parametrize(("model", "floor", "source"), [
    ("NVIDIA GB300", 700.0, "GB300 NVL72 NVLink domain all_reduce floor 700 GB/s (NVIDIA aicr issue 2640"),
    ("NVIDIA-GB300", 700.0, "GB300 NVL72 NVLink domain all_reduce floor 700 GB/s (NVIDIA aicr issue 2640"),
    ("NVIDIA GB200", 600.0, "GB200 NVLink domain all_reduce floor 600 GB/s (NVL72 peak about 835-847 GB/s)"),
    ("NVIDIA-GB200", 600.0, "GB200 NVLink domain all_reduce floor 600 GB/s (NVL72 peak about 835-847 GB/s)"),
    ("NVIDIA H100 80GB HBM3", 340.0, "HGX H100 8-GPU NVLink all_reduce floor 340 GB/s (peak about 480 GB/s"),
    ("NVIDIA-H100-80GB-HBM3", 340.0, "HGX H100 8-GPU NVLink all_reduce floor 340 GB/s (peak about 480 GB/s"),
    ("NVIDIA H100 SXM5 80GB", 340.0, "HGX H100 8-GPU NVLink all_reduce floor 340 GB/s"),
    ("NVIDIA H200", 340.0, "HGX H200 8-GPU NVLink all_reduce floor 340 GB/s (475 GB/s measured, nccl-tests issue 272)"),
    ("NVIDIA-H200", 340.0, "HGX H200 8-GPU NVLink all_reduce floor 340 GB/s"),
])
def test_each_model_gets_its_own_nvlink_floor_and_says_where_it_comes_from(model, floor, source):
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts={"shape": "nvlink", "gpu_model": model})
    assert verdict["threshold_gbps"] == floor
    assert verdict["threshold_source"].startswith(source)


def test_a_gb300_run_below_its_floor_fails_where_the_gb200_floor_would_pass_it():
    parsed = parse_nccl_tests(_synthetic_run(busbw=650.0))
    gb300 = judge_nccl_tests(parsed, facts={"shape": "nvlink", "gpu_model": "NVIDIA GB300"}, ranks=8)
    assert gb300["failures"] == ["peak busbw 650 GB/s (at 8589934592 B) below the threshold 700 GB/s"]
    assert judge_nccl_tests(parsed, facts=GB200, ranks=8)["passed"] is True


# An H100 PCIe has no NVSwitch, and the H100 NVL and H200 NVL are PCIe cards paired by NVLink bridges: eight of them
# all_reduce over PCIe, far below an HGX baseboard, so they never get the HGX floor. B200 has no public calibration
# point; the other models none at all. Each asks for threshold_gbps.
@pytest.mark.parametrize("model", ["NVIDIA H100 PCIe", "NVIDIA-H100-PCIe", "NVIDIA H100 NVL", "NVIDIA-H100-NVL",
                                   "NVIDIA H200 NVL", "NVIDIA B200", "NVIDIA-B200", "NVIDIA GH200 480GB", "NVIDIA H800",
                                   "NVIDIA A100-SXM4-80GB", "NVIDIA B300 SXM6 AC", "NVIDIA GB20", "NVIDIA GB2000"])
def test_a_model_without_a_calibration_point_asks_for_the_threshold(model):
    no_floor = r"^judge_nccl_tests: no public all_reduce calibration for GPU model .*; give threshold_gbps$"
    with pytest.raises(AnsibleFilterError, match=no_floor):
        judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts={"shape": "nvlink", "gpu_model": model})


def test_a_name_of_two_models_is_no_one_models_floor():
    two = r"names more than one GPU model \(GB300, GB200\); give one model's name or threshold_gbps$"
    with pytest.raises(AnsibleFilterError, match=two):
        judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts={"shape": "nvlink", "gpu_model": "GB200 or GB300"})


MODEL_WORDS = st.sampled_from(["NVIDIA", "GB300", "GB200", "H100", "H200", "B200", "GH200", "PCIe", "NVL", "NVL72",
                               "80GB", "HBM3", "SXM5", "-", " ", "x", "gb300", "h100"])


@settings(deadline=None)
@given(model=st.lists(MODEL_WORDS | st.text(max_size=6), max_size=6).map("".join))
def test_any_model_name_gives_a_floor_of_the_table_or_the_clear_error(model):
    try:
        verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts={"shape": "nvlink", "gpu_model": model})
    except AnsibleFilterError as exc:
        assert str(exc).startswith("judge_nccl_tests: ")
        assert str(exc).endswith("give threshold_gbps") or "names more than one GPU model" in str(exc) \
            or "facts.gpu_model must not be empty" in str(exc), str(exc)
        return
    family = next(family for family in NVLINK_FLOORS_GBPS if verdict["threshold_source"].startswith(
        (f"{family} ", f"HGX {family} ")))
    assert family.lower() in model.lower()
    assert verdict["threshold_gbps"] == NVLINK_FLOORS_GBPS[family]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({}, "give threshold_gbps or facts to derive it from"),
    ({"threshold_gbps": "600"}, "threshold_gbps must be a number"),
    ({"threshold_gbps": True}, "threshold_gbps must be a number"),
    ({"threshold_gbps": 0}, "threshold_gbps must be greater than 0"),
    ({"threshold_gbps": 1, "min_size_bytes": -1}, "min_size_bytes must be greater than 0"),
    ({"threshold_gbps": 1, "ranks": 2.5}, "ranks must be a whole number"),
    ({"threshold_gbps": 1, "log": 7}, "log must be a string"),
    ({"facts": "GB200"}, "facts must be a mapping"),
    ({"facts": {"shape": "nvlink", "gpu_model": "NVIDIA B200"}}, "no public all_reduce calibration"),
    ({"facts": {"shape": "rdma", "nic_rate_gbps": 800, "nics": 8}}, "no public all_reduce calibration for 800 Gb/s"),
    ({"facts": {"shape": "rdma", "nic_rate_gbps": 400, "nics": 1.5}}, "facts.nics must be a whole number"),
    ({"facts": {"shape": "ethernet"}}, "facts.shape must be 'nvlink' or 'rdma'"),
    ({"facts": {"shape": "rdma", "nic_rate_gbps": "400", "nics": 8}}, "facts.nic_rate_gbps must be a number"),
])
def test_wrong_arguments_are_errors(kwargs, message):
    with pytest.raises(AnsibleFilterError, match=r"^judge_nccl_tests: ") as caught:
        judge_nccl_tests(parse_nccl_tests(_synthetic_run()), **kwargs)
    assert message in str(caught.value)


@pytest.mark.parametrize("parsed", ["text", None, [], {"rows": []}, {"rows": [{"size_bytes": "1"}], "devices": []},
                                    {"rows": [], "devices": [], "out_of_bounds": "0"},
                                    {"rows": [], "devices": [], "errors": "boom"}])
def test_input_that_is_not_parse_output_is_an_error(parsed):
    with pytest.raises(AnsibleFilterError, match=r"^judge_nccl_tests: "):
        judge_nccl_tests(parsed, threshold_gbps=1)


PLACEMENT = st.none() | st.fixed_dictionaries({
    "time_us": st.none() | st.floats(0, 1e6), "algbw_gbps": st.none() | st.floats(0, 1e4),
    "busbw_gbps": st.none() | st.floats(0, 1e4) | st.booleans() | st.text(max_size=3),
    "wrong": st.none() | st.integers(-1, 5) | st.text(max_size=2)})
ROW = st.fixed_dictionaries({"size_bytes": st.integers(0, 2 ** 34), "out_of_place": PLACEMENT, "in_place": PLACEMENT})
DEVICE = st.fixed_dictionaries({"rank": st.integers(0, 9) | st.none() | st.text(max_size=2),
                                "host": st.none() | st.sampled_from(["a", "b"])})


@settings(deadline=None)
@given(rows=st.lists(ROW, max_size=6), devices=st.lists(DEVICE, max_size=6),
       oob=st.none() | st.integers(-1, 3) | st.booleans(), threshold=st.floats(-1, 2000) | st.text(max_size=3),
       ranks=st.none() | st.integers(-1, 12) | st.floats(0, 12, allow_nan=False), log=st.none() | st.text(max_size=40))
def test_any_parsed_shape_gives_a_verdict_or_an_error(rows, devices, oob, threshold, ranks, log):
    parsed = {"rows": rows, "devices": devices, "out_of_bounds": oob, "errors": []}
    try:
        verdict = judge_nccl_tests(parsed, threshold_gbps=threshold, ranks=ranks, log=log)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("judge_nccl_tests: ")
        return
    assert verdict["passed"] is (not verdict["failures"])
    if verdict["passed"]:
        assert verdict["wrong_total"] == 0 and verdict["out_of_bounds"] == 0
        assert verdict["peak_busbw_gbps"] >= verdict["threshold_gbps"]
        assert verdict["peak_size_bytes"] >= verdict["min_size_bytes"]


# Issue 39 item 6: a rank number in the log never makes the judge count up to it (# Rank 200000000 took 32 s and
# 7.7 GB); a rank above what a job can have fails the run by name. Generous bounds for a busy 2-core machine.

def _device_line(rank):
    return f"#  Rank {rank} Group  0 Pid   1234 on     tray-0 device  0 [0008:01:00] NVIDIA GB200\n"


def test_a_rank_above_what_a_job_can_have_fails_the_run_at_once():
    text = _synthetic_run(ranks=2) + _device_line(200_000_000)
    started = time.process_time()
    verdict = judge_nccl_tests(parse_nccl_tests(text), facts=GB200)
    assert time.process_time() - started < 1
    assert verdict["failures"] == [
        "rank(s) above the 1,048,576 a job can have: 200000000 (the log is not of one job's run)"]


def test_a_high_rank_within_the_bound_lists_the_first_missing_ranks_without_counting_them_all():
    started = time.process_time()
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run(ranks=2) + _device_line(1_048_575)), facts=GB200)
    assert time.process_time() - started < 1
    assert verdict["failures"] == [
        "rank(s) missing from the device lines: 2, 3, 4, 5, 6, 7, 8, 9 and 1048565 more"]


def test_ranks_above_what_a_job_can_have_are_refused():
    with pytest.raises(AnsibleFilterError) as caught:
        judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts=GB200, ranks=200_000_000)
    assert str(caught.value) == ("judge_nccl_tests: ranks must be at most 1,048,576, the most ranks a job can have, "
                                 "got 200,000,000")


def test_a_log_over_64_mib_is_refused_naming_it():
    with pytest.raises(AnsibleFilterError) as caught:
        judge_nccl_tests(parse_nccl_tests(_synthetic_run()), facts=GB200, log="x" * (64 * 1024 * 1024 + 1))
    assert str(caught.value) == ("judge_nccl_tests: log holds more than 67,108,864 characters (64 MiB), more than "
                                 "one run of the tool prints; give the log of the one run to read")


@settings(deadline=None, max_examples=60)
@given(st.lists(st.integers(0, 10 ** 18 - 1), min_size=1, max_size=8), st.none() | st.integers(1, 1_048_576))
def test_any_rank_numbers_give_a_verdict_in_time(ranks, expected):
    text = _synthetic_run(ranks=0) + "".join(_device_line(rank) for rank in ranks)
    started = time.process_time()
    verdict = judge_nccl_tests(parse_nccl_tests(text), threshold_gbps=600, ranks=expected)
    assert time.process_time() - started < 1
    impossible = sorted({rank for rank in ranks if rank >= 1_048_576})
    assert any(failure.startswith("rank(s) above the 1,048,576") for failure in verdict["failures"]) == \
        bool(impossible)
    assert verdict["passed"] is (not verdict["failures"])


# Issue 39 item 9: a busbw no GPU can reach fails as physically impossible (1e9 GB/s passed); the ceiling is twice
# what NVLink 5 carries in one direction (900 GB/s), the same over the NVLink domain and over the rails.

def test_a_busbw_above_what_a_gpu_can_move_fails_as_physically_impossible():
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run(busbw=1e9)), facts=GB200, ranks=8)
    assert verdict["passed"] is False
    assert verdict["failures"] == [
        "busbw 1e+09 GB/s (at 8589934592 B) is above 1,800 GB/s, what one GPU's NVLink 5 carries in both directions: "
        "physically impossible, a parse or unit error, not a measurement"]
    rails = judge_nccl_tests(parse_nccl_tests(_synthetic_run(busbw=2000)), ranks=8,
                             facts={"shape": "rdma", "nic_rate_gbps": 400, "nics": 8})
    assert rails["failures"] == [
        "busbw 2000 GB/s (at 8589934592 B) is above 1,800 GB/s, what one GPU's NVLink 5 carries in both directions: "
        "physically impossible, a parse or unit error, not a measurement"]


def test_a_busbw_at_the_ceiling_is_judged_as_a_measurement():
    verdict = judge_nccl_tests(parse_nccl_tests(_synthetic_run(busbw=1800)), facts=GB200, ranks=8)
    assert verdict["passed"] is True, verdict["failures"]


@pytest.mark.parametrize(("placement", "message"), [
    ({"busbw_gbps": float("nan")}, "rows[0].in_place.busbw_gbps is nan, not a finite number (a figure "
                                   "parse_nccl_tests refuses)"),
    ({"busbw_gbps": float("inf")}, "rows[0].in_place.busbw_gbps is inf, not a finite number (a figure "
                                   "parse_nccl_tests refuses)"),
    ({"wrong": float("inf")}, "rows[0].in_place.wrong must be a count or null (not checked), got inf"),
    ({"wrong": "nan"}, "rows[0].in_place.wrong must be a count or null (not checked), got 'nan'"),
])
def test_a_figure_that_is_no_finite_number_cannot_be_judged(placement, message):
    parsed = parse_nccl_tests(_synthetic_run())
    parsed["rows"][0]["in_place"].update(placement)
    with pytest.raises(AnsibleFilterError) as caught:
        judge_nccl_tests(parsed, facts=GB200, ranks=8)
    assert str(caught.value) == f"judge_nccl_tests: {message}"


@settings(deadline=None, max_examples=60)
@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(["out_of_place", "in_place"]))
def test_no_busbw_passes_unless_it_is_a_finite_figure_within_the_ceiling(busbw, placement):
    parsed = parse_nccl_tests(_synthetic_run())
    for row in parsed["rows"]:
        row[placement]["busbw_gbps"] = busbw
    try:
        verdict = judge_nccl_tests(parsed, threshold_gbps=1)
    except AnsibleFilterError as exc:
        assert not math.isfinite(busbw)
        assert str(exc).startswith("judge_nccl_tests: rows[0].")
        return
    assert math.isfinite(busbw)
    if verdict["passed"]:
        assert busbw <= 1800
