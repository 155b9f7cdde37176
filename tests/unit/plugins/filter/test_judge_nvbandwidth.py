# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""judge_nvbandwidth on the real single-node sample and on a multinode ComputeDomain result."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.judge_nvbandwidth import judge_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nvbandwidth import parse_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.judge_nvbandwidth import default_threshold
from ansible_collections.gpufabric.cluster.tests.unit.plugins.filter.test_parse_nvbandwidth import MULTINODE


@pytest.fixture
def single_node(shared_reference):
    with open(os.path.join(shared_reference, "tools", "nvbandwidth-single-node-write-ce.txt"), encoding="utf-8") as f:
        return parse_nvbandwidth(f.read())


def test_filter_is_registered():
    from ansible_collections.gpufabric.cluster.plugins.filter.judge_nvbandwidth import FilterModule
    assert FilterModule().filters()["judge_nvbandwidth"] is judge_nvbandwidth


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
    assert waived["status"] == "fail"
    assert verdict["reasons"] == ["testcase multinode_device_to_device_bidirectional_memcpy_read_ce: Waived: "
                                  "not enough GPUs in the ComputeDomain"]


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
    wanted = ["multinode_device_to_device_memcpy_read_ce", "multinode_device_to_device_memcpy_write_ce"]
    verdict = judge_nvbandwidth(parsed, 2, 2, threshold_gbps=1, testcases=wanted)
    assert verdict["status"] == "fail"
    assert verdict["reasons"] == [
        "testcase(s) not in the output: multinode_device_to_device_memcpy_write_ce",
        "testcase multinode_device_to_device_memcpy_read_ce: 1 GPU pair(s) without a result (N/A): 1->3",
    ]


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (({"testcases": []}, 2, 4), {"gpu_model": "NVIDIA L40S"},
     "no default bandwidth threshold for GPU model 'NVIDIA L40S'; give threshold_gbps"),
    (("not nvbandwidth", 2, 4), {}, "expected the result of gpufabric.cluster.parse_nvbandwidth"),
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
                       "threshold_source": "given", "gpus": 1, "testcases": []}
