# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_ib_write_bw on the real GPU-memory RoCE sample."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.judge_ib_write_bw import judge_ib_write_bw
from ansible_collections.gpufabric.cluster.plugins.filter.parse_ib_write_bw import parse_ib_write_bw


@pytest.fixture
def parsed(shared_reference):
    with open(os.path.join(shared_reference, "tools", "ib_write_bw-gpu-dmabuf-roce.txt"), encoding="utf-8") as f:
        return parse_ib_write_bw(f.read())


def test_real_sample_passes_ninety_percent_of_100g(parsed):
    verdict = judge_ib_write_bw(parsed, 100, port="mlx5_0/1")
    best = parsed["best_average_gbps"]
    assert 90 <= best < 100
    assert verdict == {"status": "pass", "reasons": [], "best_average_gbps": best, "line_rate_gbps": 100.0,
                       "bidirectional": False, "capacity_gbps": 100.0, "required_gbps": 90.0,
                       "fraction_of_line_rate": round(best / 100, 4)}


def test_real_sample_fails_on_a_200g_port(parsed):
    verdict = judge_ib_write_bw(parsed, 200, port="mlx5_0/1")
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == [
        f"port mlx5_0/1: best average {parsed['best_average_gbps']} Gb/s is "
        f"{parsed['best_average_gbps'] / 200:.1%} of the 200 Gb/s line rate, below the required 90% (180.0 Gb/s)"]


def test_no_large_message_fails(parsed):
    verdict = judge_ib_write_bw(dict(parsed, best_average_gbps=None), 100)
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == ["no message of 64 KiB or more was measured (run ib_write_bw with -a or -s 65536+)"]


@pytest.mark.parametrize(("rate", "fraction", "message"), [
    (None, 0.9, "port mlx5_3/1: the line rate is unknown (None)"),
    (0, 0.9, "port mlx5_3/1: the line rate is unknown (0)"),
    ("400 Gb/sec", 0.9, "the line rate is unknown ('400 Gb/sec')"),
    (400, 1.5, "min_fraction must be greater than 0 and at most 1, got 1.5"),
])
def test_bad_input_is_an_error(parsed, rate, fraction, message):
    with pytest.raises(AnsibleFilterError, match=r"^judge_ib_write_bw: ") as caught:
        judge_ib_write_bw(parsed, rate, fraction, port="mlx5_3/1")
    assert message in str(caught.value)


def test_not_parsed_output_is_an_error():
    with pytest.raises(AnsibleFilterError, match=r"^judge_ib_write_bw: _input must be a mapping, got a string$"):
        judge_ib_write_bw("RDMA_Write BW Test", 100)
    with pytest.raises(AnsibleFilterError, match=r"expected the result of gpufabric\.cluster\.parse_ib_write_bw"):
        judge_ib_write_bw({"rows": []}, 100)


def _bidirectional(parsed, factor):
    """The sample as a -b run reports it: the banner says so and each figure is both directions' sum."""
    rows = [dict(row, bw_average_gbps=round(row["bw_average_gbps"] * factor, 4)) for row in parsed["rows"]]
    return dict(parsed, test="RDMA_Write Bidirectional BW Test", bidirectional=True, rows=rows,
                best_average_gbps=round(parsed["best_average_gbps"] * factor, 4))


def test_a_bidirectional_run_is_judged_against_twice_the_line_rate_and_says_so(parsed):
    doubled = _bidirectional(parsed, 2)
    verdict = judge_ib_write_bw(doubled, 100, port="mlx5_0/1")
    assert (verdict["status"], verdict["bidirectional"], verdict["capacity_gbps"], verdict["required_gbps"]) == \
        ("pass", True, 200.0, 180.0)
    verdict = judge_ib_write_bw(_bidirectional(parsed, 1.5), 100, port="mlx5_0/1")
    best = round(parsed["best_average_gbps"] * 1.5, 4)
    assert verdict["reasons"] == [f"port mlx5_0/1: best average {best} Gb/s is {best / 200:.1%} of the 2 x 100 Gb/s "
                                  "line rate (bidirectional run), below the required 90% (180.0 Gb/s)"]


def test_a_figure_above_what_the_link_carries_is_a_unit_error_never_a_pass(parsed):
    verdict = judge_ib_write_bw(_bidirectional(parsed, 1.5), 100, port="mlx5_0/1", bidirectional=False)
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == [
        "port mlx5_0/1: bidirectional is false but the output is of a bidirectional run "
        "('RDMA_Write Bidirectional BW Test')",
        "port mlx5_0/1: average 138.69 Gb/s at 16384 bytes is above the 100 Gb/s the link can carry (100 Gb/s line "
        "rate, +3%): a parse or unit error (unit 'Gb/sec'), not a measurement"]
    # a unidirectional run above its line rate (MiB/sec read as Gb/sec) fails, also on a slower port
    verdict = judge_ib_write_bw(parsed, 50, port="mlx5_0/1")
    assert verdict["status"] == "fail" and "is above the 50 Gb/s the link can carry" in verdict["reasons"][0]
    # within the documented tolerance (3 %) a figure at the line rate is a measurement
    assert judge_ib_write_bw(parsed, 90, port="mlx5_0/1")["status"] == "pass"


@pytest.mark.parametrize(("value", "expected"), [("false", False), ("no", False), (0, False), ("yes", True)])
def test_bidirectional_is_an_ansible_boolean(parsed, value, expected):
    verdict = judge_ib_write_bw(_bidirectional(parsed, 2) if expected else parsed, 100, bidirectional=value)
    assert (verdict["status"], verdict["bidirectional"]) == ("pass", expected)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"bidirectional": "maybe"}, 'bidirectional must be a boolean (true/false, "yes"/"no", 1/0), got \'maybe\''),
    ({"min_fraction": "0.9"}, "min_fraction must be a number, got '0.9'"),
    ({"min_fraction": 0}, "min_fraction must be greater than 0 and at most 1, got 0"),
    ({"port": 5}, "port must be a string, got a number"),
])
def test_bad_arguments_are_named(parsed, kwargs, message):
    with pytest.raises(AnsibleFilterError) as caught:
        judge_ib_write_bw(parsed, 100, **kwargs)
    assert str(caught.value) == f"judge_ib_write_bw: {message}"


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4)),
       st.one_of(st.floats(), st.integers(), st.text(max_size=4), st.none()),
       st.one_of(st.none(), st.booleans(), st.sampled_from(["yes", "no", "false", "x", 2])),
       st.lists(st.fixed_dictionaries({"bytes": st.integers(0, 1 << 23),
                                       "bw_average_gbps": st.floats(0, 1000, allow_nan=False)}), max_size=3),
       st.one_of(st.none(), st.floats(0, 1000, allow_nan=False), st.text(max_size=3),
                 st.sampled_from([float("nan"), float("inf")])))
def test_any_arguments_give_a_verdict_or_a_filter_error(rate, fraction, bidirectional, rows, best):
    parsed = {"test": "RDMA_Write BW Test", "bidirectional": False, "unit": "Gb/sec", "rows": rows,
              "best_average_gbps": best}
    try:
        verdict = judge_ib_write_bw(parsed, rate, fraction, bidirectional=bidirectional)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("judge_ib_write_bw: ")
        return
    assert verdict["status"] in ("pass", "fail") and (verdict["status"] == "pass") == (not verdict["reasons"])
    if verdict["status"] == "pass":
        assert all(row["bw_average_gbps"] <= verdict["capacity_gbps"] * 1.03 for row in rows)


def test_a_best_average_that_is_not_a_number_is_never_a_pass(parsed):
    with pytest.raises(AnsibleFilterError) as caught:
        judge_ib_write_bw(dict(parsed, best_average_gbps=float("nan")), 100)
    assert str(caught.value) == "judge_ib_write_bw: best_average_gbps must be a number or null, got nan"


# Issue 39 item 9: a row that is no finite number cannot be judged (NaN is above no ceiling and below no floor).
@pytest.mark.parametrize("average", [float("nan"), float("inf")])
def test_a_row_that_is_no_finite_number_cannot_be_judged(parsed, average):
    parsed = dict(parsed, rows=[dict(row) for row in parsed["rows"]])
    parsed["rows"][3]["bw_average_gbps"] = average
    with pytest.raises(AnsibleFilterError) as caught:
        judge_ib_write_bw(parsed, 100, port="mlx5_0/1")
    assert str(caught.value) == (f"judge_ib_write_bw: port mlx5_0/1: rows[3].bw_average_gbps is {average!r}, not a "
                                 "finite number (a figure parse_ib_write_bw refuses)")
