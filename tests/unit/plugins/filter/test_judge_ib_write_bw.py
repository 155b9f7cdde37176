# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_ib_write_bw on the real GPU-memory RoCE sample."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.judge_ib_write_bw import judge_ib_write_bw
from ansible_collections.gpufabric.cluster.plugins.filter.parse_ib_write_bw import parse_ib_write_bw


@pytest.fixture
def parsed(shared_reference):
    with open(os.path.join(shared_reference, "tools", "ib_write_bw-gpu-dmabuf-roce.txt"), encoding="utf-8") as f:
        return parse_ib_write_bw(f.read())


def test_filter_is_registered():
    from ansible_collections.gpufabric.cluster.plugins.filter.judge_ib_write_bw import FilterModule
    assert FilterModule().filters()["judge_ib_write_bw"] is judge_ib_write_bw


def test_real_sample_passes_ninety_percent_of_100g(parsed):
    verdict = judge_ib_write_bw(parsed, 100, port="mlx5_0/1")
    best = parsed["best_average_gbps"]
    assert 90 <= best < 100
    assert verdict == {"status": "pass", "reasons": [], "best_average_gbps": best, "line_rate_gbps": 100.0,
                       "required_gbps": 90.0, "fraction_of_line_rate": round(best / 100, 4)}


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
    (400, 1.5, "min_fraction must be in (0, 1], got 1.5"),
])
def test_bad_input_is_an_error(parsed, rate, fraction, message):
    with pytest.raises(AnsibleFilterError, match=r"^judge_ib_write_bw: ") as caught:
        judge_ib_write_bw(parsed, rate, fraction, port="mlx5_3/1")
    assert message in str(caught.value)


def test_not_parsed_output_is_an_error():
    with pytest.raises(AnsibleFilterError, match=r"expected the result of gpufabric\.cluster\.parse_ib_write_bw"):
        judge_ib_write_bw("RDMA_Write BW Test", 100)
