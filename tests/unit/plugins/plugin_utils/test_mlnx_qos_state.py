# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The mlnx_qos_state filter on the output layout of ``mlnx_qos -i`` (MLNX_OFED documentation)."""

from __future__ import annotations

import time

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.mlnx_qos_state import mlnx_qos_state

OUTPUT = """DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
        prio:0 dscp:07,06,05,04,03,02,01,00,
        prio:1 dscp:15,14,13,12,11,10,09,08,
        prio:2 dscp:23,22,21,20,19,18,17,16,
        prio:3 dscp:31,30,29,28,27,26,25,24,
        prio:4 dscp:39,38,37,36,35,34,33,32,
        prio:5 dscp:47,46,45,44,43,42,41,40,
        prio:6 dscp:55,54,53,52,51,50,49,48,
        prio:7 dscp:63,62,61,60,59,58,57,56,
default priority:
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,
Cable len: 7
PFC configuration:
        priority    0   1   2   3   4   5   6   7
        enabled     0   0   0   1   0   0   0   0
        buffer      0   0   0   1   0   0   0   0
tc: 1 ratelimit: unlimited, tsa: vendor
         priority:  0
tc: 0 ratelimit: unlimited, tsa: ets, bw: 100%
         priority:  3
"""


def test_trust_and_pfc():
    assert mlnx_qos_state(OUTPUT) == {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}


def test_pcp_and_other_priorities():
    text = OUTPUT.replace("trust state: dscp", "trust state: pcp").replace(
        "enabled     0   0   0   1   0   0   0   0", "enabled     1   0   1   0   0   0   1   1")
    assert mlnx_qos_state(text) == {"trust": "pcp", "pfc": "1,0,1,0,0,0,1,1"}


def test_missing_parts_are_none():
    assert mlnx_qos_state("DCBX mode: OS controlled\n") == {"trust": None, "pfc": None}
    with pytest.raises(AnsibleFilterError, match="expected the text"):
        mlnx_qos_state(None)


# Issue 39 item 6: the output is read in linear time (20,000 blank lines took a second, 200,000 a hundred: the
# patterns' \s at a line's start ran over every blank line after it) and one over 64 MiB is refused. Generous bounds
# for a busy 2-core machine.
@pytest.mark.parametrize("text", ["\n" * 200_000, "PFC configuration:" + "\n" * 200_000,
                                  "Priority trust state:" + " " * 200_000 + "x y\n", "\r\n" * 200_000],
                         ids=["blank-lines", "blank-pfc-section", "spaces", "crlf"])
def test_any_output_is_read_in_linear_time(text):
    started = time.process_time()
    assert mlnx_qos_state(text) == {"trust": None, "pfc": None}
    assert time.process_time() - started < 2


def test_output_with_carriage_returns_is_read():
    assert mlnx_qos_state(OUTPUT.replace("\n", "\r\n")) == {"trust": "dscp", "pfc": "0,0,0,1,0,0,0,0"}


def test_an_output_over_64_mib_is_refused_naming_the_input():
    with pytest.raises(AnsibleFilterError) as caught:
        mlnx_qos_state(OUTPUT + " " * (64 * 1024 * 1024))
    assert str(caught.value) == ("mlnx_qos_state: _input holds more than 67,108,864 characters (64 MiB), more than "
                                 "one run of the tool prints; give the log of the one run to read")
