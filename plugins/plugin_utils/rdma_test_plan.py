# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan GPUDirect RDMA bandwidth tests from the hosts' ConnectX and GPU facts, and check the nodes they need.

Pure functions, the entry points of the filters ``gpufabric.cluster.rdma_test_plan`` and
``gpufabric.cluster.rdma_test_nodes`` (the ``validate_rdma`` role).  Errors are :class:`RdmaTestPlanError`
with a message that names the variable and the host.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.k8s_nodes import GPU_RESOURCE, allocatable, node_ready

MEMORY_MODES = ("host", "cuda", "cuda_dmabuf")


class RdmaTestPlanError(ValueError):
    """Input from which no test plan can be made; the message names the variable and the host."""


def _error(message: str) -> RdmaTestPlanError:
    return RdmaTestPlanError(message)


def _facts(hostvars: Mapping, node: str, host: str) -> dict:
    if host not in hostvars:
        raise _error(f"node {node}: host {host} is not in the inventory (set validate_rdma_node_hosts)")
    facts = (hostvars[host].get("ansible_facts") or {}).get("gpufabric") or {}
    if "connectx" not in facts or "gpu" not in facts:
        raise _error(f"host {host} (node {node}) has no ansible_facts['gpufabric'] with gpu and connectx: gather "
                     "them with gpufabric.cluster.fabric_facts first")
    return facts


def _gpu_for(port: Mapping, gpus: list[dict]) -> tuple[int | None, str]:
    """The GPU to put the buffer on: one behind the NIC's PCIe switch, else one on its NUMA node, else none."""
    by_address = {gpu.get("pci_address"): gpu.get("index") for gpu in gpus}
    for key, reason in (("gpus_same_switch", "same PCIe switch"), ("gpus_same_numa", "same NUMA node")):
        for address in port.get(key) or []:
            if by_address.get(address) is not None:
                return by_address[address], reason
    return None, "no GPU near the port"


def _side(hostvars: Mapping, node: str, host: str, rail: str, memory: str) -> dict:
    facts = _facts(hostvars, node, host)
    ports = [port for port in facts["connectx"].get("ports") or [] if port.get("rdma_device") == rail]
    if not ports:
        found = sorted({port.get("rdma_device") for port in facts["connectx"].get("ports") or []})
        raise _error(f"host {host} (node {node}) has no RDMA device {rail} (validate_rdma_rails); it has: "
                     f"{', '.join(found) or 'none'}")
    port = ports[0]
    if not port.get("rate_gbps"):
        raise _error(f"host {host} (node {node}) port {rail}/{port.get('port')}: the line rate is unknown "
                     f"({port.get('rate')!r}), so the result cannot be judged")
    side = {"node": node, "host": host, "rdma_device": rail, "port": port.get("port"), "netdev": port.get("netdev"),
            "link_layer": port.get("link_layer"), "rate_gbps": port["rate_gbps"], "gpu_index": None, "gpu_reason": "",
            "gpu_count": len(facts["gpu"].get("gpus") or [])}
    if memory != "host":
        index, reason = _gpu_for(port, (facts["gpu"].get("gpus") or []))
        if index is None:
            if not facts["gpu"].get("gpus"):
                raise _error(f"host {host} (node {node}) has no GPU for {memory} memory")
            index, reason = facts["gpu"]["gpus"][0].get("index", 0), "no GPU near the port, the first GPU"
        side.update(gpu_index=index, gpu_reason=reason)
    return side


def rdma_test_plan(hostvars: t.Any, pairs: t.Any, rails: t.Any, memory: t.Any = ("host", "cuda"),
                   node_hosts: Mapping | None = None) -> list[dict]:
    """One test per node pair, rail and memory mode, each side's port, rate and NUMA-near GPU from the facts."""
    if not isinstance(hostvars, Mapping):
        raise _error("expected hostvars")
    if not isinstance(pairs, list) or not pairs or not all(isinstance(p, Mapping) and p.get("server") and
                                                           p.get("client") for p in pairs):
        raise _error(f"validate_rdma_pairs must be a non-empty list of {{server, client}} node names, got {pairs!r}")
    if not isinstance(rails, list) or not rails or not all(isinstance(rail, str) and rail for rail in rails):
        raise _error(f"validate_rdma_rails must be a non-empty list of RDMA device names, got {rails!r}")
    unknown = [mode for mode in memory if mode not in MEMORY_MODES]
    if isinstance(memory, str) or unknown or not memory:
        raise _error(f"validate_rdma_memory must be a list of {', '.join(MEMORY_MODES)}, got {memory!r}")
    node_hosts = node_hosts or {}
    tests = []
    for number, pair in enumerate(pairs):
        if pair["server"] == pair["client"]:
            raise _error(f"validate_rdma_pairs[{number}]: server and client are the same node {pair['server']}")
        for rail in rails:
            for mode in memory:
                server = _side(hostvars, pair["server"], node_hosts.get(pair["server"], pair["server"]), rail, mode)
                client = _side(hostvars, pair["client"], node_hosts.get(pair["client"], pair["client"]), rail, mode)
                tests.append({"name": f"{number}-{rail.replace('_', '-')}-{mode.replace('_', '-')}".lower(),
                              "pair": f"{server['node']} -> {client['node']}", "rail": rail, "memory": mode,
                              "rate_gbps": min(server["rate_gbps"], client["rate_gbps"]),
                              "server": server, "client": client})
    return tests


def test_nodes(plan: t.Sequence[Mapping], nodes: Mapping[str, Mapping | None], resource: str) -> dict[str, list[str]]:
    """What keeps the nodes of ``plan`` from running it: ``{not_ready, short}``, both empty when nothing does.

    ``nodes`` maps each node name of the plan to its Node object (None when the cluster has none).
    ``not_ready`` lists the nodes missing or not Ready; ``short`` says, per node, which allocatable resource is
    missing: ``resource`` (the RDMA shared device plugin's), or the GPUs the tests with GPU memory put on it.
    """
    gpus_needed: dict[str, int] = {}
    for test in plan:
        if test.get("memory") != "host":
            for side in (test["server"], test["client"]):
                gpus_needed[side["node"]] = int(side.get("gpu_count") or 0)
    names = list(dict.fromkeys([*(test["server"]["node"] for test in plan),
                                *(test["client"]["node"] for test in plan)]))
    not_ready, short = [], []
    for name in names:
        node = nodes.get(name)
        if not node or not node_ready(node):
            not_ready.append(name)
        if allocatable(node or {}, resource) < 1:
            short.append(f"{name}: no {resource}")
        elif allocatable(node or {}, GPU_RESOURCE) < gpus_needed.get(name, 0):
            found = (((node or {}).get("status") or {}).get("allocatable") or {}).get(GPU_RESOURCE) or "0"
            short.append(f"{name}: {found} {GPU_RESOURCE}, {gpus_needed[name]} needed")
    return {"not_ready": not_ready, "short": short}
