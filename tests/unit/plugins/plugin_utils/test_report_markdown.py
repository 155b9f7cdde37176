# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reports of the roles validate_rdma and validate_compute_domain (rdma_markdown, compute_domain_markdown):
the same text the roles' report.md.j2 templates rendered, under a one-line managed marker."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_markdown import compute_domain_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_markdown import rdma_markdown

RDMA_RESULTS = [
    {"name": "0-mlx5-0-cuda", "pair": "a -> b", "rail": "mlx5_0", "memory": "cuda",
     "server": {"gpu_index": 0}, "client": {"gpu_index": None},
     "verdict": {"best_average_gbps": 92.44, "line_rate_gbps": 400.0, "status": "fail",
                 "reasons": ["below 90 % of line rate", "retry"]}},
    {"name": "1-mlx5-1-host", "pair": "a -> b", "rail": "mlx5_1", "memory": "host",
     "server": {"gpu_index": None}, "client": {},
     "verdict": {"best_average_gbps": 392.57, "line_rate_gbps": 400.0, "status": "pass", "reasons": []}},
]

COMPUTE_DOMAIN = {
    "namespace": "gpufabric-validate", "name": "nvbandwidth", "compute_domain_status": {"status": "Ready"},
    "placement": {"clique": "clique-1", "nodes": ["tray-01", "tray-02"], "gpu_model": "NVIDIA GB200"},
    "verdict": {"status": "fail", "gpus": 8, "threshold_gbps": 600, "threshold_source": "gpu model",
                "reasons": ["multinode_device_to_device_memcpy_read_ce: worst pair 12.5 GB/s"],
                "testcases": [
                    {"name": "multinode_device_to_device_memcpy_read_ce", "status": "fail",
                     "worst": {"gbps": 12.5, "from": 0, "to": 5}, "best": {"gbps": 790.1}, "spread_percent": 98.4},
                    {"name": "multinode_bisect", "status": "skip", "worst": None, "best": None,
                     "spread_percent": None}]},
}


def test_rdma_report_rows_and_reasons():
    assert rdma_markdown(RDMA_RESULTS) == (
        "<!-- Ansible managed -->\n# GPUDirect RDMA validation\n\n"
        "| test | pair | rail | memory | GPU (server/client) | best average | line rate | status |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| 0-mlx5-0-cuda | a -> b | mlx5_0 | cuda | 0/- | 92.44 Gb/s | 400.0 Gb/s | fail |\n"
        "| 1-mlx5-1-host | a -> b | mlx5_1 | host | -/- | 392.57 Gb/s | 400.0 Gb/s | pass |\n"
        "\n- 0-mlx5-0-cuda: below 90 % of line rate; retry\n")
    assert rdma_markdown([]).endswith("|---|---|---|---|---|---|---|---|\n")


def test_compute_domain_report():
    assert compute_domain_markdown(COMPUTE_DOMAIN) == (
        "<!-- Ansible managed -->\n# ComputeDomain validation: FAIL\n\n"
        "- ComputeDomain `gpufabric-validate/nvbandwidth`: Ready\n"
        "- Nodes (clique-1): tray-01, tray-02\n"
        "- GPUs: 8 (NVIDIA GB200), threshold 600 GB/s (gpu model)\n\n"
        "| testcase | status | worst pair (GB/s) | best pair (GB/s) | spread |\n|---|---|---|---|---|\n"
        "| multinode_device_to_device_memcpy_read_ce | fail | 12.5 (0->5) | 790.1 | 98.4 % |\n"
        "| multinode_bisect | skip | - | - | - |\n\n"
        "## Reasons\n- multinode_device_to_device_memcpy_read_ce: worst pair 12.5 GB/s\n")


def test_compute_domain_report_without_status_or_reasons():
    result = dict(COMPUTE_DOMAIN, compute_domain_status=None,
                  verdict=dict(COMPUTE_DOMAIN["verdict"], status="pass", reasons=[], testcases=[]))
    text = compute_domain_markdown(result)
    assert "# ComputeDomain validation: PASS\n" in text
    assert "`gpufabric-validate/nvbandwidth`: unknown\n" in text
    assert text.endswith("|---|---|---|---|---|\n")


@pytest.mark.parametrize(("call", "message"), [
    (lambda: rdma_markdown({"name": "x"}), "rdma_markdown: expected the list of test results"),
    (lambda: rdma_markdown(["x"]), "rdma_markdown: expected the list of test results"),
    (lambda: compute_domain_markdown({}), "compute_domain_markdown: expected the result of validate_compute_domain"),
    (lambda: compute_domain_markdown([]), "compute_domain_markdown: expected the result of validate_compute_domain"),
])
def test_bad_input(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()


def test_compute_domain_report_names_the_isolation_verdict():
    result = {**COMPUTE_DOMAIN, "isolation": {"status": "broken", "admitted": [], "probes": [],
                                              "message": "isolation: broken, admitted from the second namespace: "
                                                         "nvbandwidth-probe-claim on tray-01"}}
    assert ("- Nodes (clique-1): tray-01, tray-02\n- isolation: broken, admitted from the second namespace: "
            "nvbandwidth-probe-claim on tray-01\n") in compute_domain_markdown(result)
