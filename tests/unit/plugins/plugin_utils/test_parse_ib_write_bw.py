# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_ib_write_bw on the real perftest sample in ../shared/reference/tools and on its documented variants."""

from __future__ import annotations

import os
import time

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.parse_ib_write_bw import parse_ib_write_bw

MIB_TO_GBPS = 1048576 * 8 / 1e9


@pytest.fixture(scope="module")
def sample(shared_reference):
    with open(os.path.join(shared_reference, "tools", "ib_write_bw-gpu-dmabuf-roce.txt"), encoding="utf-8") as handle:
        return handle.read()


def test_real_sample(sample):
    parsed = parse_ib_write_bw(sample)
    assert parsed["test"] == "RDMA_Write BW Test"
    assert parsed["unit"] == "Gb/sec"
    assert parsed["settings"]["Device"] == "mlx5_0"
    assert parsed["settings"]["Dual-port"] == "OFF"
    assert parsed["settings"]["Link type"] == "Ethernet"
    assert parsed["settings"]["PCIe relax order"] == "ON"
    assert parsed["settings"]["Mtu"] == "1024[B]"
    assert parsed["settings"]["Data ex. method"] == "Ethernet"
    # two pairs on one line, the first with a one-character value (read as one pair before issue 39)
    assert (parsed["settings"]["Number of qps"], parsed["settings"]["Transport type"]) == ("1", "IB")
    assert len(parsed["settings"]) == 16
    assert len(parsed["rows"]) == 23
    assert parsed["rows"][0] == {"bytes": 2, "iterations": 5000, "bw_peak_gbps": 0.11, "bw_average_gbps": 0.11,
                                 "msg_rate_mpps": 6.897101}
    assert parsed["rows"][-1]["bytes"] == 8388608
    assert parsed["best_average_gbps"] == 92.44  # 262144 B; the 16384 B row (92.46) is below 64 KiB


def test_launcher_noise_is_ignored(sample):
    noisy = ("Warning: Permanently added '10.0.0.2' (ED25519) to the list of known hosts.\n"
             "[gpu-0:00012] MCW rank 0 bound to socket 0[core 0[hwt 0]]\n" + sample + "\nclient finished\n")
    assert parse_ib_write_bw(noisy) == parse_ib_write_bw(sample)


def test_mib_units_are_converted_and_missing_peak():
    text = """
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_1
---------------------------------------------------------------------------------------
 WARNING: BW peak won't be measured in this run.
 #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]
 65536      5000             0.00               11000.50            0.176008
---------------------------------------------------------------------------------------
"""
    parsed = parse_ib_write_bw(text)
    assert parsed["unit"] == "MiB/sec"
    assert parsed["rows"] == [{"bytes": 65536, "iterations": 5000, "bw_peak_gbps": None,
                               "bw_average_gbps": round(11000.50 * MIB_TO_GBPS, 4), "msg_rate_mpps": 0.176008}]
    assert parsed["best_average_gbps"] == round(11000.50 * MIB_TO_GBPS, 4)


def test_qos_column_and_small_messages_only():
    text = """ RDMA_Write BW Test
 #bytes #sl   #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 4096   3     5000           92.130000          92.060000            2.809574
"""
    parsed = parse_ib_write_bw(text)
    assert parsed["rows"] == [{"bytes": 4096, "iterations": 5000, "bw_peak_gbps": 92.13, "bw_average_gbps": 92.06,
                               "msg_rate_mpps": 2.809574, "sl": 3}]
    assert parsed["best_average_gbps"] is None


@pytest.mark.parametrize(("output", "message"), [
    ("Couldn't connect to 10.0.0.2:18515\n", "no '#bytes ...' bandwidth table"),
    (" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n", "has no rows"),
    (" #bytes  #iterations  BW peak[KB/sec]  BW average[KB/sec]  MsgRate[Mpps]\n 65536 10 1 1 1\n",
     "unknown bandwidth unit 'KB/sec'"),
    (42, "expected the tool's output as text, got int"),
])
def test_bad_output_is_explained(output, message):
    with pytest.raises(AnsibleFilterError, match=message):
        parse_ib_write_bw(output)


def _bidirectional(sample):
    """The sample as perftest prints it for -b: 'Bidirectional' in the banner (perftest_parameters.c)."""
    return sample.replace("RDMA_Write BW Test", "RDMA_Write Bidirectional BW Test")


def test_bidirectional_banner(sample):
    assert parse_ib_write_bw(sample)["bidirectional"] is False
    parsed = parse_ib_write_bw(_bidirectional(sample))
    assert (parsed["test"], parsed["bidirectional"]) == ("RDMA_Write Bidirectional BW Test", True)


def test_a_row_with_a_fractional_byte_count_is_not_perftest_s(sample):
    parsed = parse_ib_write_bw(sample.replace("65536      5000 ", "65536.5    5000 "))
    assert 65536 not in [row["bytes"] for row in parsed["rows"]] and len(parsed["rows"]) == 22


_PERFTEST_LINES = st.sampled_from([
    "-" * 87, "                   RDMA_Write BW Test", "                   RDMA_Write Bidirectional BW Test",
    "Dual-port       : OFF          Device         : mlx5_0", "Link type       : Ethernet",
    " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]",
    " #bytes     #iterations    BW peak[Kb/sec]    BW average[Kb/sec]   MsgRate[Mpps]",
    " #bytes #sl #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
    " 65536      5000             92.39              92.38                 0.176196",
    " 65536      3     5000       92.39              92.38                 0.176196",
    " 65536.5    5000             92.39              92.38                 0.176196",
    " 2      -5000             1e5              92.38                 0.1", "",
    " WARNING: BW peak won't be measured in this run.",
])


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.lists(_PERFTEST_LINES, max_size=12).map("\n".join), st.text(max_size=200),
                 st.lists(st.text(max_size=20), max_size=4), st.integers(), st.none(), st.dictionaries(
                     st.text(max_size=4), st.integers(), max_size=2)))
def test_any_input_gives_the_documented_shape_or_a_filter_error(output):
    try:
        parsed = parse_ib_write_bw(output)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_ib_write_bw: ")
        return
    assert set(parsed) == {"test", "bidirectional", "settings", "unit", "rows", "best_average_gbps"}
    assert isinstance(parsed["bidirectional"], bool) and parsed["rows"]
    for row in parsed["rows"]:
        assert isinstance(row["bytes"], int) and isinstance(row["iterations"], int)
        assert isinstance(row["bw_average_gbps"], float)


# Issue 39 item 6: every line is read in time linear in its length. The old header pattern looked ahead for the next
# key from every position of a value, and the column pattern scanned to the line's end from every unclosed "BW
# peak[" (20,000 repeats: 25 to 40 s); the bounds below are generous for a busy 2-core machine.
@pytest.mark.parametrize("line", [
    "Dual-port : " + "OFF  " * 20_000,
    "Dual-port :" + " OFF  Device" * 20_000,
    "Dual-port : OFF" + " " * 50_000 + "x",
    " #bytes " + "BW peak[" * 20_000,
], ids=["values", "keys", "spaces", "columns"])
def test_a_long_header_or_column_line_is_read_in_linear_time(sample, line):
    banner = "                   RDMA_Write BW Test\n"
    started = time.process_time()
    try:
        parse_ib_write_bw(banner + line + "\n" + sample.split(banner, 1)[1])
    except AnsibleFilterError as exc:
        assert str(exc).startswith("parse_ib_write_bw: ")
    assert time.process_time() - started < 2


@pytest.mark.parametrize(("line", "settings"), [
    ("Dual-port       : OFF          Device         : mlx5_0", {"Dual-port": "OFF", "Device": "mlx5_0"}),
    ("Number of qps   : 1            Transport type : IB", {"Number of qps": "1", "Transport type": "IB"}),
    ("Mtu             : 1024[B]", {"Mtu": "1024[B]"}),
    ("Some key : a value with: a colon  Next : 2", {"Some key": "a value with: a colon", "Next": "2"}),
    ("Empty :   Next : 2", {"Next": "2"}),
    ("  : no key", {}),
])
def test_header_pairs(line, settings):
    parsed = parse_ib_write_bw(f"RDMA_Write BW Test\n{line}\n #bytes  #iterations  BW peak[Gb/sec]  "
                               "BW average[Gb/sec]  MsgRate[Mpps]\n 65536  10  1.0  1.0  1.0\n")
    assert parsed["settings"] == settings


def test_an_output_over_64_mib_is_refused_naming_the_input():
    with pytest.raises(AnsibleFilterError) as caught:
        parse_ib_write_bw(["x" * (32 * 1024 * 1024)] * 2 + ["x"])
    assert str(caught.value) == ("parse_ib_write_bw: _input holds more than 67,108,864 characters (64 MiB), more "
                                 "than one run of the tool prints; give the log of the one run to read")


# Issue 39 item 9: a column that is no finite number is a parse error naming the line and the column, never a row
# skipped as noise.
@pytest.mark.parametrize(("column", "cell", "message"), [
    (3, "nan", "BW average is 'nan'"),
    (2, "inf", "BW peak is 'inf'"),
    (4, "-inf", "MsgRate is '-inf'"),
    (3, "1" * 400, "BW average is a number of 400 characters"),
])
def test_a_figure_that_is_no_finite_number_is_a_parse_error(sample, column, cell, message):
    row = "65536      5000             92.39              92.38              0.176196"
    cells = row.split()
    cells[column] = cell
    assert row in sample
    with pytest.raises(AnsibleFilterError) as caught:
        parse_ib_write_bw(sample.replace(row, "   ".join(cells)))
    assert str(caught.value) == f"parse_ib_write_bw: line 38: {message}, not a finite number"


def test_a_byte_count_of_5000_digits_is_a_parse_error(sample):
    with pytest.raises(AnsibleFilterError) as caught:
        parse_ib_write_bw(sample.replace("65536      5000 ", "9" * 5000 + "      5000 "))
    assert str(caught.value) == "parse_ib_write_bw: line 38: #bytes has 5000 digits, more than a count perftest prints"


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "Infinity"]), st.integers(2, 4))
def test_no_row_with_a_non_finite_figure_is_read_or_skipped(token, column):
    cells = ["65536", "5000", "92.39", "92.38", "0.176196"]
    cells[column] = token
    output = ("RDMA_Write BW Test\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
              + "  ".join(cells) + "\n")
    with pytest.raises(AnsibleFilterError, match=r"^parse_ib_write_bw: line 3: .*, not a finite number$"):
        parse_ib_write_bw(output)
