# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plan the RDMA shape of the nccl-tests validation (``validate_nccl``) from the hosts' fabric facts.

The logic of the ``gpufabric.cluster.nccl_rdma_plan`` filter; errors are :class:`NcclRdmaPlanError` (and
:class:`...arguments.ArgumentError` for an argument of the wrong type).  From each node's
``ansible_facts['gpufabric']`` (``gpufabric.cluster.fabric_facts``): the rails every node has ACTIVE (the ConnectX
ports with an RDMA device, in rail order, as ``gpufabric.cluster.rail_plan`` numbers them), their slowest rate, the
GPUs per node (one rank per GPU), the GPUDirect RDMA mode every node supports (``peermem.gpudirect_rdma``), and the
NCCL environment that follows: ``NCCL_IB_HCA`` (exact names, ``=mlx5_0:1,...``), ``NCCL_SOCKET_IFNAME`` (the
rails' netdevs on the host network, else the pod's ``eth0``) and the GPUDirect switches.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import port_order


class NcclRdmaPlanError(ValueError):
    """Facts from which no RDMA nccl-tests job can be planned; the message names the host and what is missing."""


# NCCL's switches for each GPUDirect RDMA mode (NCCL docs, Environment Variables): DMA-BUF is NCCL's default where
# the kernel and the driver support it; nvidia_peermem is used when DMA-BUF is off; NCCL_NET_GDR_LEVEL=LOC never
# lets the NIC read GPU memory (the data is staged through host memory).
GPUDIRECT_ENV = {
    "dma_buf": {"NCCL_DMABUF_ENABLE": "1"},
    "nvidia_peermem": {"NCCL_DMABUF_ENABLE": "0"},
    "off": {"NCCL_NET_GDR_LEVEL": "LOC"},
}


def _facts(hostvars: Mapping, node: str, host: str) -> Mapping:
    if host not in hostvars:
        raise NcclRdmaPlanError(f"node {node}: host {host} is not in the inventory (set validate_nccl_node_hosts)")
    host_vars = hostvars[host] if isinstance(hostvars[host], Mapping) else {}
    ansible_facts = host_vars.get("ansible_facts") if isinstance(host_vars.get("ansible_facts"), Mapping) else {}
    facts = ansible_facts.get("gpufabric") if isinstance(ansible_facts.get("gpufabric"), Mapping) else {}
    if not all(isinstance(facts.get(key), Mapping) for key in ("gpu", "connectx", "peermem")):
        raise NcclRdmaPlanError(f"host {host} (node {node}) has no ansible_facts['gpufabric'] with gpu, connectx and "
                                "peermem: gather them with gpufabric.cluster.fabric_facts first")
    return facts


def _active_ports(facts: Mapping) -> dict[str, Mapping]:
    ports = [port for port in facts["connectx"].get("ports") or [] if isinstance(port, Mapping)
             and isinstance(port.get("rdma_device"), str) and port.get("rdma_device") and port.get("state") == "ACTIVE"]
    return {f"{port['rdma_device']}:{port.get('port', 1)}": port for port in sorted(ports, key=port_order)}


def _rate(port: Mapping) -> float | None:
    rate = port.get("rate_gbps")
    return float(rate) if isinstance(rate, (int, float)) and not isinstance(rate, bool) and rate > 0 else None


def nccl_rdma_plan(hostvars: t.Any, nodes: t.Any, node_hosts: t.Any = None, rails: t.Any = None,
                   gpus_per_node: t.Any = 0, host_network: t.Any = False) -> dict:
    """The RDMA shape of the job over ``nodes`` (Kubernetes node names, two or more); see the module docstring.

    ``node_hosts`` maps node names to inventory hosts where they differ; ``rails`` keeps only these RDMA devices
    (``mlx5_0``) or ``device:port`` names; ``gpus_per_node`` 0 takes every GPU of the node with the fewest.
    """
    hostvars = arguments.mapping("the input", hostvars)
    nodes = arguments.sequence("nodes", nodes)
    if len(nodes) < 2 or not all(isinstance(node, str) and node for node in nodes):
        raise arguments.ArgumentError(f"nodes must list two or more node names, got {nodes!r}")
    if len(set(nodes)) != len(nodes):
        raise arguments.ArgumentError(f"nodes names {sorted({n for n in nodes if nodes.count(n) > 1})[0]!r} twice")
    node_hosts = arguments.mapping("node_hosts", node_hosts) if node_hosts is not None else {}
    wanted = None
    if rails is not None and rails != []:
        wanted = arguments.sequence("rails", rails)
        if not all(isinstance(rail, str) and rail for rail in wanted) or len(set(wanted)) != len(wanted):
            raise arguments.ArgumentError(f"rails must list distinct RDMA device names, got {wanted!r}")
    if isinstance(gpus_per_node, bool) or not isinstance(gpus_per_node, int) or gpus_per_node < 0:
        raise arguments.ArgumentError(f"gpus_per_node must be 0 or a positive whole number, got {gpus_per_node!r}")
    host_network = arguments.boolean("host_network", host_network)

    hosts = {node: str(node_hosts.get(node, node)) for node in nodes}
    for host in dict.fromkeys(hosts.values()):
        shared = [node for node in nodes if hosts[node] == host]
        if len(shared) > 1:
            raise arguments.ArgumentError(f"nodes {', '.join(shared)} are the same host {host} "
                                          "(validate_nccl_node_hosts)")
    facts = {node: _facts(hostvars, node, hosts[node]) for node in nodes}
    ports = {node: _active_ports(facts[node]) for node in nodes}
    for node in nodes:
        if wanted is not None:
            ports[node] = {key: port for key, port in ports[node].items()
                           if key in wanted or port["rdma_device"] in wanted}
            missing = [rail for rail in wanted if not any(rail in (key, port["rdma_device"])
                                                          for key, port in ports[node].items())]
            if missing:
                raise NcclRdmaPlanError(f"host {hosts[node]} (node {node}) has no ACTIVE RDMA port "
                                        f"{', '.join(missing)} (validate_nccl_rails)")
        if not ports[node]:
            raise NcclRdmaPlanError(f"host {hosts[node]} (node {node}) has no ACTIVE ConnectX port with an RDMA device")
    common = [key for key in ports[nodes[0]] if all(key in ports[node] for node in nodes)]
    if not common:
        listed = "; ".join(f"{node}: {', '.join(ports[node])}" for node in nodes)
        raise NcclRdmaPlanError(f"the nodes have no ACTIVE RDMA port in common ({listed})")
    if wanted is None:
        # Without a rail list, the rails are the ports of the link layer most of them have (InfiniBand on a tie):
        # a host's Ethernet port beside eight InfiniBand rails is not a rail of the job.
        layers: dict[str, list[str]] = {}
        for key in common:
            layers.setdefault(str(ports[nodes[0]][key].get("link_layer")), []).append(key)
        common = min(layers.items(), key=lambda item: (-len(item[1]), item[0] != "InfiniBand", item[0]))[1]
    rates = [_rate(ports[node][key]) for node in nodes for key in common]
    if any(rate is None for rate in rates):
        raise NcclRdmaPlanError("the line rate of a port is unknown, so the result cannot be judged: "
                                + ", ".join(f"{node}/{key}" for node in nodes for key in common
                                            if _rate(ports[node][key]) is None))
    counts = {node: len([gpu for gpu in facts[node]["gpu"].get("gpus") or [] if isinstance(gpu, Mapping)])
              for node in nodes}
    fewest = min(counts.values())
    if fewest == 0:
        raise NcclRdmaPlanError("node(s) without GPUs in their facts: "
                                + ", ".join(node for node in nodes if counts[node] == 0))
    if gpus_per_node > fewest:
        short = [f"{node} ({counts[node]})" for node in nodes if counts[node] < gpus_per_node]
        raise NcclRdmaPlanError(f"{gpus_per_node} GPUs per node asked, more than these nodes have: {', '.join(short)}")
    methods = {node: ((facts[node]["peermem"].get("gpudirect_rdma") or {}).get("method")
                      if (facts[node]["peermem"].get("gpudirect_rdma") or {}).get("ready") else None) for node in nodes}
    if all(method == "dma_buf" for method in methods.values()):
        gpudirect = "dma_buf"
    elif all(method in ("dma_buf", "nvidia_peermem") for method in methods.values()):
        gpudirect = "nvidia_peermem" if all((facts[node]["peermem"].get("nvidia_peermem") or {}).get("loaded")
                                            for node in nodes) else "off"
    else:
        gpudirect = "off"
    not_ready = [node for node in nodes if methods[node] is None]
    link_layers = sorted({str(ports[node][key].get("link_layer")) for node in nodes for key in common})
    netdevs = sorted({str(ports[node][key]["netdev"]) for node in nodes for key in common
                      if ports[node][key].get("netdev")})
    env = {"NCCL_IB_HCA": "=" + ",".join(common),
           "NCCL_SOCKET_IFNAME": ("=" + ",".join(netdevs)) if host_network and netdevs else "eth0",
           **GPUDIRECT_ENV[gpudirect]}
    return {
        "nodes": list(nodes),
        "hosts": hosts,
        "rails": [{"name": key, "rdma_device": ports[nodes[0]][key]["rdma_device"],
                   "port": ports[nodes[0]][key].get("port"), "netdev": ports[nodes[0]][key].get("netdev"),
                   "rate_gbps": min(_rate(ports[node][key]) for node in nodes)} for key in common],
        "nics": len(common),
        "rate_gbps": min(rates),
        "link_layer": link_layers[0] if len(link_layers) == 1 else "mixed",
        "gpus_per_node": gpus_per_node or fewest,
        "np": (gpus_per_node or fewest) * len(nodes),
        "gpudirect": gpudirect,
        "gpudirect_not_ready": not_ready,
        "env": env,
        "threshold_facts": {"shape": "rdma", "nic_rate_gbps": min(rates), "nics": len(common)},
    }
