# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""parse_nvbandwidth on the real samples in ../shared/reference/tools and on the documented formats."""

from __future__ import annotations

import json
import os

import pytest
from ansible.errors import AnsibleFilterError

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

Running multinode_device_to_device_bidirectional_memcpy_read_ce.
Waived: not enough GPUs in the ComputeDomain
NOTE: The reported results may not reflect the full capabilities of the platform.
"""


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
    assert waived == {"name": "multinode_device_to_device_bidirectional_memcpy_read_ce", "status": "Waived",
                      "description": None, "matrix": [], "message": "not enough GPUs in the ComputeDomain",
                      "sum": None, "min": None, "max": None, "average": None, "off_diagonal": None}


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
