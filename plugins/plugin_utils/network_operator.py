# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The resources of the ``network_operator`` role: NicClusterPolicy, networks and IPPools.

Pure functions over hostvars-like mappings; the filter ``gpufabric.cluster.network_operator_resources`` is
their thin entry point.  Errors are :class:`...cluster_roles.ClusterRoleError`.

The rails come from the rail plan of the ``rdma_network`` role when it ran (the cacheable fact
``rdma_network_rail_plan`` of every host: netdev, link layer, subnet and the host's own address per rail),
else from the ConnectX facts of the GPU hosts by the rules of :mod:`.rail_plan` (ports with a netdev, in PCI
order, numbered from 0; host N's address ``network + offset + N``) with the subnets of
``network_operator_rails`` or cut from ``network_operator_ipam_cidr``. Per rail: one RDMA shared device plugin
resource selecting its netdev, one secondary network (Macvlan or HostDevice on Ethernet, IPoIB on InfiniBand)
and one nv-ipam pool on the rail's subnet with the hosts' own rail addresses excluded: an IPPool (a block of
``perNodeBlockSize`` addresses per node, the default) or, with ``ipam_pool_kind: cidrpool``, a CIDRPool (a
``perNodeNetworkPrefix`` prefix per node, optionally with the prefix's address at ``ipam_gateway_index`` as the
node's gateway). The rail plan holds no gateway (rails are flat, unrouted subnets).
"""

from __future__ import annotations

import ipaddress
import json
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, rail_selection
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import (
    ClusterRoleError,
    chosen_settings,
    host_facts,
    registry_repository,
    secret_names,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import rail_address

# The role's settings the resources are derived from (network_operator_<name>); their defaults are the role's argument
# spec's.
SETTINGS = ("namespace", "network_namespace", "ofed", "ofed_driver_version", "network_type", "rails", "ipam_cidr",
            "ipam_prefix_length", "ipam_block_size", "ipam_pool_kind", "ipam_per_node_prefix_length",
            "ipam_gateway_index", "address_offset", "image_registry", "image_pull_secrets", "image_version")
CHOICES = {"ofed": ("auto", "host", "container"), "network_type": ("auto", "macvlan", "hostdevice", "ipoib"),
           "ipam_pool_kind": ("ippool", "cidrpool")}
POOL_KINDS = {"ippool": "IPPool", "cidrpool": "CIDRPool"}
NV_IPAM = "nv-ipam.nvidia.com/v1alpha1"
MELLANOX = "nvcr.io/nvidia/mellanox"
LINK_TYPES = {"Ethernet": "ether", "InfiniBand": "infiniband"}
NETWORK_KINDS = {"macvlan": "MacvlanNetwork", "hostdevice": "HostDeviceNetwork", "ipoib": "IPoIBNetwork"}
# The nodes with a Mellanox (PCI vendor 15b3) device, as Node Feature Discovery labels them.
NIC_NODE_SELECTOR = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "feature.node.kubernetes.io/pci-15b3.present", "operator": "In", "values": ["true"]}]}]}
PLAN_FACT = "rdma_network_rail_plan"


def _settings(settings: Mapping | None) -> dict:
    return chosen_settings(settings, site_settings.role_defaults("network_operator", "network_operator_", SETTINGS),
                           CHOICES, "network_operator_")


def rails_of(facts: Mapping[str, Mapping], hostvars: Mapping) -> list[dict]:
    """The rails of the hosts by the rail rule of ``rdma_network`` (:func:`.rail_selection.host_rails`: each host's
    ``rdma_network_*`` variables, else their defaults), numbered as that rule numbers them, the same on every host.

    A rail is a rail whether it is ACTIVE or not (its number stays); the ports the rule leaves out (no netdev, a
    protected interface, a BlueField DPU unless named) are none.
    """
    per_host, problems = {}, []
    for host, item in sorted(facts.items()):
        ports = [dict(port) for port in (item.get("connectx") or {}).get("ports") or [] if isinstance(port, Mapping)]
        selection, errors = rail_selection.host_rails(host, hostvars.get(host) or {}, ports)
        problems += errors
        per_host[host] = selection.rails
    if problems:
        raise ClusterRoleError("; ".join(problems))
    counts = {host: len(ports) for host, ports in per_host.items()}
    if not counts or not max(counts.values()):
        raise ClusterRoleError("no RDMA rail on any host of network_operator_hosts: no ConnectX port with a netdev "
                               "(ansible_facts['gpufabric']['connectx']['ports']) that the rail rule (the "
                               "rdma_network_* settings) selects")
    if len(set(counts.values())) != 1:
        raise ClusterRoleError("the hosts of network_operator_hosts have different numbers of RDMA rails: "
                               + ", ".join(f"{h}: {n}" for h, n in counts.items()))
    rails = []
    for position in range(next(iter(counts.values()))):
        ports = {host: ports[position] for host, ports in per_host.items()}
        numbers = sorted({int(p["rail"]) for p in ports.values()})
        index = numbers[0]
        netdevs = sorted({p["netdev"] for p in ports.values()})
        layers = sorted({str(p.get("link_layer")) for p in ports.values()})
        if len(netdevs) != 1 or len(layers) != 1 or len(numbers) != 1:
            raise ClusterRoleError(f"rail {index} is not the same port on every host: netdevs {', '.join(netdevs)}, "
                                   f"link layers {', '.join(layers)}, rail numbers "
                                   f"{', '.join(map(str, numbers))}")
        if layers[0] not in LINK_TYPES:
            raise ClusterRoleError(f"rail {index} ({netdevs[0]}): unknown link layer {layers[0]!r}")
        rails.append({
            "index": index,
            "name": f"rail{index}",
            "interface": netdevs[0],
            "link_layer": layers[0],
            "device_ids": sorted({str(p.get("device_id") or "").lower().removeprefix("0x") for p in ports.values()}
                                 - {""}),
            "mtu": min(int(p.get("mtu") or 0) for p in ports.values()) or None,
        })
    return rails


def _plan_of(host_vars: Mapping) -> Mapping | None:
    """The host's ``rdma_network_rail_plan`` (a host variable, or a fact from the fact cache)."""
    plan = host_vars.get(PLAN_FACT)
    if plan is None:
        plan = (host_vars.get("ansible_facts") or {}).get(PLAN_FACT)
    return plan if isinstance(plan, Mapping) else None


def _ranges(addresses: t.Iterable) -> list[dict]:
    """Consecutive addresses collapsed into nv-ipam exclusion ranges ``{startIP, endIP}``."""
    ranges: list[list] = []
    for address in sorted(set(addresses)):
        if ranges and int(address) == int(ranges[-1][1]) + 1:
            ranges[-1][1] = address
        else:
            ranges.append([address, address])
    return [{"startIP": str(start), "endIP": str(end)} for start, end in ranges]


def rails_of_plan(hostvars: Mapping, hosts: t.Sequence[str]) -> list[dict] | None:
    """The rails of the ``rdma_network`` rail plan of the hosts; None when ``rdma_network`` did not run."""
    plans = {str(host): _plan_of(hostvars.get(host) or {}) for host in hosts}
    without = sorted(host for host, plan in plans.items() if plan is None)
    if len(without) == len(plans):
        return None
    if without:
        raise ClusterRoleError(f"{PLAN_FACT} (the rail plan of rdma_network) is missing for {', '.join(without)}: "
                               "run gpufabric.cluster.rdma_network on every host of network_operator_hosts, or on none")
    numbers = {host: sorted(int(rail["rail"]) for rail in plan.get("rails") or []) for host, plan in plans.items()}
    if len({tuple(value) for value in numbers.values()}) != 1:
        raise ClusterRoleError(f"the hosts of network_operator_hosts have different rails in {PLAN_FACT}: "
                               + ", ".join(f"{host}: {value}" for host, value in sorted(numbers.items())))
    if not next(iter(numbers.values())):
        raise ClusterRoleError(f"{PLAN_FACT} (the rail plan of rdma_network) has no rail on any host of "
                               "network_operator_hosts")
    rails = []
    for number in next(iter(numbers.values())):
        entries = {host: next(rail for rail in plan["rails"] if int(rail["rail"]) == number)
                   for host, plan in plans.items()}
        netdevs = sorted({str(entry.get("netdev")) for entry in entries.values()})
        layers = sorted({str(entry.get("link_layer")) for entry in entries.values()})
        family = "ipv4" if any(entry.get("ipv4_network") for entry in entries.values()) else "ipv6"
        subnets = sorted({str(entry.get(f"{family}_network")) for entry in entries.values()})
        if len(netdevs) != 1 or len(layers) != 1 or len(subnets) != 1 or subnets == ["None"]:
            raise ClusterRoleError(f"rail {number} of {PLAN_FACT} is not one netdev, link layer and subnet on every "
                                   f"host: netdevs {', '.join(netdevs)}, link layers {', '.join(layers)}, "
                                   f"subnets {', '.join(subnets)}")
        if layers[0] not in LINK_TYPES:
            raise ClusterRoleError(f"rail {number} ({netdevs[0]}) of {PLAN_FACT}: unknown link layer {layers[0]!r}")
        subnet = ipaddress.ip_network(subnets[0])
        rails.append({
            "index": number,
            "name": f"rail{number}",
            "interface": netdevs[0],
            "link_layer": layers[0],
            "device_ids": sorted({str(entry.get("device_id") or "").lower().removeprefix("0x")
                                  for entry in entries.values()} - {""}),
            "mtu": min(int(entry.get("mtu") or 0) for entry in entries.values()) or None,
            "subnet": subnet,
            "host_addresses": sorted(ipaddress.ip_address(entry[family]) for entry in entries.values()),
        })
    return rails


def _agree(rails: list[dict], planned: list) -> None:
    """network_operator_rails, when given beside the rail plan, must name the plan's subnets."""
    for rail in rails:
        if rail["index"] >= len(planned):
            raise ClusterRoleError(f"network_operator_rails lists {len(planned)} rails, {PLAN_FACT} has "
                                   f"{rail['name']} ({rail['interface']}); leave network_operator_rails empty to "
                                   "follow the rail plan")
        entry = planned[rail["index"]]
        given = {str(entry.get(key)) for key in ("ipv4", "ipv6") if entry.get(key)} if isinstance(entry, Mapping) \
            else {str(entry)}
        if str(rail["subnet"]) not in given:
            raise ClusterRoleError(f"network_operator_rails[{rail['index']}] {', '.join(sorted(given))} disagrees "
                                   f"with {PLAN_FACT} (the rail plan of rdma_network): {rail['name']} "
                                   f"({rail['interface']}) is {rail['subnet']}")


def _subnets(rails: list[dict], chosen: Mapping) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    planned = chosen["rails"] or []
    if planned:
        if len(planned) < len(rails):
            raise ClusterRoleError(f"network_operator_rails (the rail plan) lists {len(planned)} rails, the hosts have "
                                   f"{len(rails)}")
        subnets = []
        for index, entry in enumerate(planned[:len(rails)]):
            cidr = entry.get("ipv4") or entry.get("ipv6") if isinstance(entry, Mapping) else entry
            try:
                subnets.append(ipaddress.ip_network(str(cidr), strict=True))
            except ValueError as exc:
                raise ClusterRoleError(f"network_operator_rails[{index}]: {cidr!r} is not a subnet ({exc})") from None
        return subnets
    try:
        base = ipaddress.ip_network(str(chosen["ipam_cidr"]), strict=True)
        pieces = list(base.subnets(new_prefix=int(chosen["ipam_prefix_length"])))
    except (ValueError, TypeError) as exc:
        raise ClusterRoleError(f"network_operator_ipam_cidr {chosen['ipam_cidr']!r} / network_operator_ipam_prefix_"
                               f"length {chosen['ipam_prefix_length']!r}: {exc}") from None
    if len(pieces) < len(rails):
        raise ClusterRoleError(f"network_operator_ipam_cidr {base} holds {len(pieces)} /{chosen['ipam_prefix_length']} "
                               f"subnets, the hosts have {len(rails)} rails")
    return pieces[:len(rails)]


def _image(chosen: Mapping, image: str, version: str, pull_secrets: list[str]) -> dict:
    item = {"image": image, "repository": registry_repository(MELLANOX, chosen["image_registry"]), "version": version}
    if pull_secrets:
        item["imagePullSecrets"] = list(pull_secrets)
    return item


def _rails(hostvars: Mapping, hosts: t.Sequence[str], facts: Mapping, chosen: Mapping) -> tuple[list[dict], str]:
    """The rails with their subnet and the hosts' own addresses, and where the subnets came from."""
    rails = rails_of_plan(hostvars, hosts)
    if rails is not None:
        if chosen["rails"]:
            _agree(rails, chosen["rails"])
        return rails, f"{PLAN_FACT} (the rail plan of rdma_network)"
    rails = rails_of(facts, hostvars)
    offset = int(chosen["address_offset"])
    if offset < 1:
        raise ClusterRoleError(f"network_operator_address_offset must be at least 1, got {offset}")
    for rail, subnet in zip(rails, _subnets(rails, chosen), strict=True):
        rail["subnet"] = subnet
        # rdma_network's addressing (rail_plan.rail_address), host index 0 .. hosts - 1.
        addresses = [rail_address(subnet, offset, index) for index in range(len(facts))]
        if None in addresses:
            raise ClusterRoleError(f"{rail['name']} subnet {subnet} is too small for {len(facts)} hosts from "
                                   f"network_operator_address_offset {offset}")
        rail["host_addresses"] = addresses
    if chosen["rails"]:
        return rails, "network_operator_rails"
    return rails, f"network_operator_ipam_cidr {chosen['ipam_cidr']}"


def _network(rail: Mapping, chosen: Mapping) -> dict:
    kind = chosen["network_type"]
    if kind == "auto":
        kind = "ipoib" if rail["link_layer"] == "InfiniBand" else "macvlan"
    if kind == "ipoib" and rail["link_layer"] != "InfiniBand":
        raise ClusterRoleError(f"network_operator_network_type is ipoib but {rail['name']} "
                               f"({rail['interface']}) is {rail['link_layer']}")
    if kind == "macvlan" and rail["link_layer"] != "Ethernet":
        raise ClusterRoleError(f"network_operator_network_type is macvlan but {rail['name']} "
                               f"({rail['interface']}) is {rail['link_layer']}: use ipoib or hostdevice")
    ipam = {"type": "nv-ipam", "poolName": rail["name"]}
    if chosen["ipam_pool_kind"] == "cidrpool":
        ipam["poolType"] = "cidrpool"
    spec: dict[str, t.Any] = {"networkNamespace": chosen["network_namespace"], "ipam": json.dumps(ipam)}
    if kind == "hostdevice":
        # The whole NIC, from the SR-IOV network device plugin resource of the rail (nvidia.com/hostdev_railN).
        spec["resourceName"] = f"hostdev_{rail['name']}"
    else:
        spec["master"] = rail["interface"]
    if kind == "macvlan":
        spec["mode"] = "bridge"
        if rail["mtu"]:
            spec["mtu"] = rail["mtu"]
    return {"apiVersion": "mellanox.com/v1alpha1", "kind": NETWORK_KINDS[kind],
            "metadata": {"name": rail["name"]}, "spec": spec}


def _integer(name: str, value: t.Any, low: int) -> int:
    """``value`` as a whole number of at least ``low``; a boolean, a string or a fraction is refused."""
    try:
        number = arguments.number(name, value)
    except arguments.ArgumentError as exc:
        raise ClusterRoleError(str(exc)) from None
    if number != int(number) or number < low:
        raise ClusterRoleError(f"{name} must be a whole number of at least {low}, got {value!r}")
    return int(number)


def _free_prefixes(subnet: ipaddress.IPv4Network | ipaddress.IPv6Network, prefix_length: int,
                   reserved: set, needed: int) -> int:
    """How many ``/prefix_length`` prefixes of ``subnet`` keep an address outside ``reserved`` (at least ``needed``
    without counting them one by one: each reserved address can take at most one prefix)."""
    total = 2 ** (prefix_length - subnet.prefixlen)
    if total - len(reserved) >= needed:
        return total - len(reserved)
    return sum(1 for prefix in subnet.subnets(new_prefix=prefix_length)
               if prefix.num_addresses > sum(1 for address in reserved if address in prefix))


def _cidr_pool(rail: Mapping, chosen: Mapping, hosts: int, subnets_from: str) -> dict:
    """The nv-ipam CIDRPool of a rail: one ``perNodeNetworkPrefix`` prefix of the rail's subnet per node."""
    subnet = rail["subnet"]
    name = "network_operator_ipam_per_node_prefix_length"
    prefix_length = _integer(name, chosen["ipam_per_node_prefix_length"], 1)
    if not subnet.prefixlen < prefix_length <= subnet.max_prefixlen:
        raise ClusterRoleError(f"{rail['name']} subnet {subnet} ({subnets_from}): {name} {prefix_length} must be "
                               f"longer than /{subnet.prefixlen} and at most /{subnet.max_prefixlen}")
    reserved = set(rail["host_addresses"])
    if subnet.version == 4 and subnet.prefixlen < 31:
        reserved |= {subnet.network_address, subnet.broadcast_address}
    free = _free_prefixes(subnet, prefix_length, reserved, hosts)
    if free < hosts:
        raise ClusterRoleError(f"{rail['name']} subnet {subnet} ({subnets_from}): {name} {prefix_length} leaves "
                               f"{free} /{prefix_length} prefixes with a free address beside the hosts' own "
                               f"addresses, {hosts} hosts need one each")
    spec: dict[str, t.Any] = {"cidr": str(subnet), "perNodeNetworkPrefix": prefix_length,
                              "exclusions": _ranges(rail["host_addresses"]), "nodeSelector": NIC_NODE_SELECTOR}
    if chosen["ipam_gateway_index"] is not None:
        gateway = _integer("network_operator_ipam_gateway_index", chosen["ipam_gateway_index"], 0)
        size = 2 ** (subnet.max_prefixlen - prefix_length)
        if gateway >= size:
            raise ClusterRoleError(f"network_operator_ipam_gateway_index {gateway} is outside a /{prefix_length} "
                                   f"prefix of {rail['name']} ({size} addresses)")
        spec["gatewayIndex"] = gateway
    return {"apiVersion": NV_IPAM, "kind": "CIDRPool",
            "metadata": {"name": rail["name"], "namespace": chosen["namespace"]}, "spec": spec}


def network_operator_resources(hostvars: Mapping, hosts: t.Sequence[str], settings: Mapping | None = None) -> dict:
    """Return ``{policy, networks, ippools, cidrpools, rails, decisions}``; see the filter documentation.

    Raises :class:`ClusterRoleError` naming the host and the variable.
    """
    chosen = _settings(settings)
    facts = host_facts(hostvars, hosts, "network_operator_hosts")
    pull_secrets = secret_names(chosen["image_pull_secrets"], "network_operator_image_pull_secrets")
    rails, subnets_from = _rails(hostvars, hosts, facts, chosen)
    with_ofed = sorted(h for h, i in facts.items() if ((i.get("peermem") or {}).get("ofed") or {}).get("installed"))
    ofed = chosen["ofed"]
    if ofed == "auto":
        ofed = "host" if len(with_ofed) == len(facts) else "container"
        ofed_reason = ("OFED is installed on every host" if ofed == "host"
                       else f"OFED is missing on {', '.join(sorted(set(facts) - set(with_ofed)))}")
    else:
        ofed_reason = f"network_operator_ofed is {ofed}"
    if ofed == "container" and not chosen["ofed_driver_version"]:
        raise ClusterRoleError(f"the OFED driver container is needed ({ofed_reason}) but "
                               "network_operator_ofed_driver_version is empty (a doca-driver image tag)")
    cidr_pools = chosen["ipam_pool_kind"] == "cidrpool"
    block = int(chosen["ipam_block_size"])
    if block < 1 and not cidr_pools:
        raise ClusterRoleError(f"network_operator_ipam_block_size must be at least 1, got {block}")
    version = str(chosen["image_version"])
    policy_spec: dict[str, t.Any] = {
        # The operator's node agents (device plugin, multus, CNI plugins, nv-ipam node) on the NIC nodes only.
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": NIC_NODE_SELECTOR},
    }
    if ofed == "container":
        policy_spec["ofedDriver"] = _image(chosen, "doca-driver", str(chosen["ofed_driver_version"]), pull_secrets)
    config = {"configList": [{
        "resourceName": f"rdma_{rail['name']}",
        "rdmaHcaMax": 63,
        "selectors": {"vendors": ["15b3"], "deviceIDs": rail["device_ids"], "ifNames": [rail["interface"]],
                      "linkTypes": [LINK_TYPES[rail["link_layer"]]]},
    } for rail in rails]}
    plugin = _image(chosen, "k8s-rdma-shared-dev-plugin", version, pull_secrets)
    policy_spec["rdmaSharedDevicePlugin"] = dict(plugin, config=json.dumps(config, indent=2, sort_keys=True))
    secondary = {"cniPlugins": _image(chosen, "plugins", version, pull_secrets),
                 "multus": _image(chosen, "multus-cni", version, pull_secrets)}
    policy_spec["nvIpam"] = dict(_image(chosen, "nvidia-k8s-ipam", version, pull_secrets), enableWebhook=False)
    networks = [_network(rail, chosen) for rail in rails]
    if any(network["kind"] == "IPoIBNetwork" for network in networks):
        secondary["ipoib"] = _image(chosen, "ipoib-cni", version, pull_secrets)
    policy_spec["secondaryNetwork"] = secondary
    hostdev = [rail for rail, network in zip(rails, networks, strict=True)
               if network["kind"] == "HostDeviceNetwork"]
    if hostdev:
        resources = {"resourceList": [{
            "resourcePrefix": "nvidia.com", "resourceName": f"hostdev_{rail['name']}",
            "selectors": {"vendors": ["15b3"], "devices": rail["device_ids"], "pfNames": [rail["interface"]],
                          "linkTypes": [LINK_TYPES[rail["link_layer"]]], "isRdma": True},
        } for rail in hostdev]}
        device_plugin = _image(chosen, "sriov-network-device-plugin", version, pull_secrets)
        policy_spec["sriovDevicePlugin"] = dict(device_plugin,
                                                config=json.dumps(resources, indent=2, sort_keys=True))
    ippools: list[dict] = []
    cidrpools = [_cidr_pool(rail, chosen, len(facts), subnets_from) for rail in rails] if cidr_pools else []
    for rail in [] if cidr_pools else rails:
        subnet = rail["subnet"]
        excluded = len(set(rail["host_addresses"]))
        usable = subnet.num_addresses - excluded - (2 if subnet.version == 4 else 1)
        if block * len(facts) > usable:
            raise ClusterRoleError(
                f"{rail['name']} subnet {subnet} ({subnets_from}): network_operator_ipam_block_size {block} for "
                f"{len(facts)} hosts needs {block * len(facts)} addresses, {usable} are left after the hosts' "
                "own addresses")
        ippools.append({"apiVersion": NV_IPAM, "kind": "IPPool",
                        "metadata": {"name": rail["name"], "namespace": chosen["namespace"]},
                        "spec": {"subnet": str(subnet), "perNodeBlockSize": block,
                                 "exclusions": _ranges(rail["host_addresses"]),
                                 "nodeSelector": NIC_NODE_SELECTOR}})
    policy = {"apiVersion": "mellanox.com/v1alpha1", "kind": "NicClusterPolicy",
              "metadata": {"name": "nic-cluster-policy"}, "spec": policy_spec}
    shown = [dict(rail, subnet=str(rail["subnet"]), host_addresses=[str(a) for a in rail["host_addresses"]])
             for rail in rails]
    return {"policy": policy, "networks": networks, "ippools": ippools, "cidrpools": cidrpools, "rails": shown,
            "decisions": {"ofed": {"mode": ofed, "reason": ofed_reason}, "subnets": subnets_from,
                          "pool_kind": POOL_KINDS[chosen["ipam_pool_kind"]]}}
