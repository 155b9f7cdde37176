# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""validate_nccl results for the report tests, from runs laid out as nccl-tests prints them (SYNTHETIC)."""

from __future__ import annotations

from ansible_collections.gpufabric.cluster.plugins.filter.judge_nccl_tests import judge_nccl_tests
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nccl_tests import parse_nccl_tests

GIB = 1024 ** 3

# NCCL_DEBUG=INFO lines as NCCL 2.26 prints them on a GB200 NVL72 tray (SYNTHETIC, NCCL's own words).
MNNVL_LOG = ("tray-0:1:1 [0] NCCL INFO MNNVL busId 0x8000 fabric UUID 3c1a5f2e.9b7d cliqueId 0x1 state 3 "
             "healthMask 0x0\n"
             "tray-0:1:1 [0] NCCL INFO NVLS multicast support is available on dev 0\n")
NET_LOG = ("node-a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; "
           "OOB eth0:10.0.0.1<0>\n")


def synthetic_log(ranks: int = 8, peak: float = 840.0, hosts: tuple = ("tray-0", "tray-1"), wrong: int = 0,
                  top_exponent: int = 33) -> str:
    """SYNTHETIC: all_reduce_perf from 8 B to 2**top_exponent B, doubling, laid out as nccl-tests src/util.cu prints
    it; busbw grows with the size up to ``peak`` at the largest."""
    per_host = ranks // len(hosts)
    lines = ["# Collective test starting: all_reduce_perf", "# Using devices"]
    lines += [f"#  Rank {rank:2d} Group  0 Pid {1000 + rank:6d} on {hosts[rank // per_host]:>10s} device "
              f"{rank % per_host:2d} [0008:01:00] NVIDIA GB200" for rank in range(ranks)]
    for exponent in range(3, top_exponent + 1):
        size = 2 ** exponent
        busbw = round(peak * exponent / top_exponent, 2)
        bad = wrong if exponent == 31 else 0
        lines.append(f"{size:12d} {size // 4:13d}     float     sum      -1   100.0  {busbw / 1.75:.2f}  {busbw:.2f}"
                     f"  {bad}   101.0  {busbw / 1.75:.2f}  {busbw - 1:.2f}  0")
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {peak / 2:.2f}"]
    return "\n".join(lines) + "\n"


def nccl_result(shape: str = "nvlink", peak: float = 840.0, wrong: int = 0) -> dict:
    """A ``validate_nccl_result`` as the role sets it."""
    hosts = ("tray-0", "tray-1") if shape == "nvlink" else ("node-a", "node-b")
    log = (MNNVL_LOG if shape == "nvlink" else NET_LOG) + synthetic_log(8, peak, hosts, wrong)
    parsed = parse_nccl_tests(log)
    facts = {"shape": "nvlink", "gpu_model": "NVIDIA GB200"} if shape == "nvlink" else \
        {"shape": "rdma", "nic_rate_gbps": 400, "nics": 2}
    verdict = judge_nccl_tests(parsed, facts=facts, ranks=8, log=log)
    placement = {"shape": shape, "nodes": list(hosts), "np": 8, "slots_per_worker": 4, "ppr": "ppr:4:node"}
    if shape == "nvlink":
        placement.update(clique="3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1", gpu_model="NVIDIA GB200",
                         env={"NCCL_MNNVL_ENABLE": "1"})
    else:
        placement.update(clique=None, gpu_model="", gpudirect="dma_buf",
                         env={"NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_SOCKET_IFNAME": "eth0"})
    return {"namespace": "gpufabric-validation", "name": "nccl-tests", "shape": shape, "placement": placement,
            "conditions": [{"type": "Succeeded", "status": "True"}], "launcher": "nccl-tests-launcher-abcde",
            "nccl_tests": parsed, "verdict": {**verdict, "status": "pass" if verdict["passed"] else "fail"}}
