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
    host_vars = hostvars[host] if isinstance(hostvars[host], Mapping) else {}
    ansible_facts = host_vars.get("ansible_facts") if isinstance(host_vars.get("ansible_facts"), Mapping) else {}
    facts = ansible_facts.get("gpufabric") if isinstance(ansible_facts.get("gpufabric"), Mapping) else {}
    if not isinstance(facts.get("connectx"), Mapping) or not isinstance(facts.get("gpu"), Mapping):
        raise _error(f"host {host} (node {node}) has no ansible_facts['gpufabric'] with gpu and connectx: gather "
                     "them with gpufabric.cluster.fabric_facts first")
    return facts


def _gpus(facts: Mapping) -> list:
    gpus = facts["gpu"].get("gpus")
    return gpus if isinstance(gpus, list) else []


def _gpu_indexes(port: Mapping, gpus: list) -> list[tuple[int, str]]:
    """The GPUs near the port, nearest first: behind the NIC's PCIe switch, then on its NUMA node."""
    by_address = {gpu.get("pci_address"): gpu.get("index") for gpu in gpus if isinstance(gpu, Mapping)}
    near = []
    for key, reason in (("gpus_same_switch", "same PCIe switch"), ("gpus_same_numa", "same NUMA node")):
        for address in port.get(key) or []:
            if isinstance(by_address.get(address), int) and by_address[address] not in [i for i, _r in near]:
                near.append((by_address[address], reason))
    return near


def assign_gpus(ports: Mapping[str, Mapping], gpus: list) -> dict[str, tuple[int, str]]:
    """The GPU of each rail tested at the same time on one host: ``{rail: (gpu index, reason)}``.

    Rails tested at the same time never share a GPU while the host has GPUs left: each rail takes the nearest
    free GPU (same PCIe switch, then same NUMA node, then any free GPU); rails with a GPU behind their own
    switch choose first, so a rail without one cannot take it from them. Only with more rails than GPUs does a
    rail share, and its reason says with which rail.
    """
    indexes = [gpu.get("index") for gpu in gpus if isinstance(gpu, Mapping) and isinstance(gpu.get("index"), int)]
    near = {rail: _gpu_indexes(port, gpus) for rail, port in ports.items()}
    order = sorted(ports, key=lambda rail: not any(reason == "same PCIe switch" for _i, reason in near[rail]))
    used: dict[int, str] = {}
    chosen: dict[str, tuple[int, str]] = {}
    for rail in order:
        free_near = [(index, reason) for index, reason in near[rail] if index not in used]
        free = [index for index in indexes if index not in used]
        if free_near:
            choice = free_near[0]
        elif free:
            choice = (free[0], "the GPUs near the port are taken, a free GPU" if near[rail]
                      else "no GPU near the port, a free GPU")
        else:
            index, reason = near[rail][0] if near[rail] else (indexes[0], "no GPU near the port")
            choice = (index, f"{reason}, shared with {used[index]} (more rails than GPUs)")
        used.setdefault(choice[0], rail)
        chosen[rail] = choice
    return chosen


def _port(hostvars: Mapping, node: str, host: str, rail: str) -> tuple[dict, Mapping]:
    facts = _facts(hostvars, node, host)
    ports = [port for port in facts["connectx"].get("ports") or []
             if isinstance(port, Mapping) and port.get("rdma_device") == rail]
    if not ports:
        found = sorted({str(port.get("rdma_device")) for port in facts["connectx"].get("ports") or []
                        if isinstance(port, Mapping)})
        raise _error(f"host {host} (node {node}) has no RDMA device {rail} (validate_rdma_rails); it has: "
                     f"{', '.join(found) or 'none'}")
    port = ports[0]
    rate = port.get("rate_gbps")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:
        raise _error(f"host {host} (node {node}) port {rail}/{port.get('port')}: the line rate is unknown "
                     f"({port.get('rate')!r}), so the result cannot be judged")
    return facts, port


def _side(hostvars: Mapping, node: str, host: str, rail: str, memory: str,
          gpus: dict[str, tuple[int, str]]) -> dict:
    facts, port = _port(hostvars, node, host, rail)
    side = {"node": node, "host": host, "rdma_device": rail, "port": port.get("port"), "netdev": port.get("netdev"),
            "link_layer": port.get("link_layer"), "rate_gbps": port["rate_gbps"], "gpu_index": None, "gpu_reason": "",
            "gpu_count": len(_gpus(facts)), "nic_pci_address": port.get("pci_address"),
            "nic_numa_node": port.get("numa_node"), "gpu_pci_address": None, "gpu_numa_node": None,
            "same_pcie_switch": None}
    if memory != "host":
        if rail not in gpus:
            raise _error(f"host {host} (node {node}) has no GPU for {memory} memory")
        side.update(gpu_index=gpus[rail][0], gpu_reason=gpus[rail][1])
        # Where the GPU sits against the NIC, for the report of a failed test: a pair across PCIe switches or NUMA
        # nodes is a likely cause of low bandwidth.
        gpu = next((gpu for gpu in _gpus(facts) if isinstance(gpu, Mapping) and gpu.get("index") == gpus[rail][0]), {})
        side.update(gpu_pci_address=gpu.get("pci_address"), gpu_numa_node=gpu.get("numa_node"),
                    same_pcie_switch=gpu.get("pci_address") in (port.get("gpus_same_switch") or []))
    return side


def _host_gpus(hostvars: Mapping, node: str, host: str, rails: list[str]) -> dict[str, tuple[int, str]]:
    """The GPU of each rail on one host, the rails of one pair and memory mode being tested at the same time."""
    ports = {}
    for rail in rails:
        facts, ports[rail] = _port(hostvars, node, host, rail)
    gpus = _gpus(facts)
    return assign_gpus(ports, gpus) if any(isinstance(gpu, Mapping) and isinstance(gpu.get("index"), int)
                                           for gpu in gpus) else {}


def _names(name: str, value: t.Any, what: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or not value or not all(
            isinstance(item, str) and item for item in value):
        raise _error(f"{name} must be a non-empty list of {what}, got {value!r}")
    if len(set(value)) != len(value):
        raise _error(f"{name} names {sorted({item for item in value if value.count(item) > 1})[0]!r} twice")
    return list(value)


def rdma_test_plan(hostvars: t.Any, pairs: t.Any, rails: t.Any, memory: t.Any = ("host", "cuda"),
                   node_hosts: t.Any = None) -> list[dict]:
    """One test per node pair, rail and memory mode, each side's port, rate and NUMA-near GPU from the facts.

    The rails of one node pair and memory mode are planned as tested at the same time: on each side they get
    different GPUs while the node has enough (:func:`assign_gpus`).
    """
    if not isinstance(hostvars, Mapping):
        raise _error("expected hostvars")
    if not isinstance(pairs, list) or not pairs or not all(isinstance(p, Mapping) and isinstance(p.get("server"), str)
                                                           and p.get("server") and isinstance(p.get("client"), str)
                                                           and p.get("client") for p in pairs):
        raise _error(f"validate_rdma_pairs must be a non-empty list of {{server, client}} node names, got {pairs!r}")
    rails = _names("validate_rdma_rails", rails, "RDMA device names")
    if isinstance(memory, str) or not isinstance(memory, (list, tuple)) or not memory or any(
            mode not in MEMORY_MODES for mode in memory):
        raise _error(f"validate_rdma_memory must be a list of {', '.join(MEMORY_MODES)}, got {memory!r}")
    if node_hosts is not None and not isinstance(node_hosts, Mapping):
        raise _error(f"validate_rdma_node_hosts must be a mapping of node names to inventory hosts, got {node_hosts!r}")
    node_hosts = node_hosts or {}
    tests = []
    for number, pair in enumerate(pairs):
        if pair["server"] == pair["client"]:
            raise _error(f"validate_rdma_pairs[{number}]: server and client are the same node {pair['server']}")
        hosts = {role: str(node_hosts.get(pair[role], pair[role])) for role in ("server", "client")}
        if hosts["server"] == hosts["client"]:
            raise _error(f"validate_rdma_pairs[{number}]: server node {pair['server']} and client node "
                         f"{pair['client']} are the same host {hosts['server']} (validate_rdma_node_hosts)")
        gpus = {role: _host_gpus(hostvars, pair[role], hosts[role], rails) for role in ("server", "client")}
        for rail in rails:
            for mode in memory:
                server = _side(hostvars, pair["server"], hosts["server"], rail, mode, gpus["server"])
                client = _side(hostvars, pair["client"], hosts["client"], rail, mode, gpus["client"])
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
