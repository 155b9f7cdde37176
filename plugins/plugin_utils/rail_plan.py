# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The RDMA rail plan on the controller: which ConnectX netdev is which rail, and its addresses and MTU.

Pure functions over hostvars-like mappings, used by the ``gpufabric.cluster.rail_plan`` filter (the
``rdma_network`` role).  Every host publishes its inputs as one mapping (``__rdma_network_input``: the
port selection, the per-rail subnets, its explicit host index, the MTU settings, the interfaces that must not be
touched, and the record of its rail addresses read on the host); the ports come from
``ansible_facts['gpufabric']['connectx']['ports']`` and the default routes' interfaces, the live addresses and the
maximum MTU of the links from ``ansible_facts['gpufabric']['network']`` (``gpufabric.cluster.fabric_facts``; ``setup``'s
network facts when that subset was not gathered, :mod:`...plugin_utils.network_facts`).

Rails: the ports the rail rule chooses (:mod:`...plugin_utils.rail_selection`, shared with the preflight: the static
selectors, then, unless a selector names them, not the protected interfaces nor the BlueField DPU ports) in PCI
order, numbered from 0; a down port keeps its number, so rail N is the same NIC on every run.  Rail N
takes subnet ``rails[N]``; a host's address on it is ``network + offset + host index``, always inside the
subnet: from network + 1 to the last address before the broadcast (IPv4) or to the last address (IPv6); a
/31 (RFC 3021) or /127 (RFC 6164) point-to-point rail has both of its addresses (network + 0 and + 1); a /32 or
/128 is a single address, not a rail subnet, and is refused.  Every host of the play must give each rail the
same subnets; hosts that disagree are named.  The host index is stable: explicit, else the one the host holds (its
record, its live addresses, its plan in the facts), else the lowest free index of the fleet; a plan that moves an
address a host holds, or gives one address to two hosts of the fleet, is refused (:mod:`...plugin_utils.rail_indices`).

Every problem is collected as a message that names the host and the variable; :class:`RailPlanError`
carries them all, so that one run shows every mistake.
"""

from __future__ import annotations

import ipaddress
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, rail_indices, rail_selection
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import with_outside
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.network_facts import FABRIC_FACT, interface_entry
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_selection import (
    interface_addresses,
    network_of,
    port_order,
    protected_reasons,
)

IPOIB_MODES = ("datagram", "connected")
# Default MTU per link layer / IPoIB mode, and the largest the hardware takes.
# mlx5 Ethernet (RoCE) ports accept up to 9978; IPoIB: 4092 in datagram mode (4K IB MTU minus the
# 4-byte IPoIB header), 65520 in connected mode.
DEFAULT_MTU = {"Ethernet": 9000, "datagram": 4092, "connected": 65520}
MAX_MTU = {"Ethernet": 9978, "datagram": 4092, "connected": 65520}
RESERVED_TABLES = (0, 253, 254, 255)

DEFAULT_LABELS = {
    "rails": "rdma_network_rails",
    "host_index": "rdma_network_host_index",
    "mtu": "rdma_network_mtu",
    "ipoib_mode": "rdma_network_ipoib_mode",
    "link_layers": "rdma_network_link_layers",
    "device_ids": "rdma_network_device_ids",
    "pci_addresses": "rdma_network_pci_addresses",
    "netdev_pattern": "rdma_network_netdev_pattern",
    "rail_indices": "rdma_network_rail_indices",
    "include_inactive": "rdma_network_include_inactive",
    "exclude_device_ids": "rdma_network_exclude_device_ids",
    "address_offset": "rdma_network_address_offset",
    "table_base": "rdma_network_table_base",
    "rule_priority_base": "rdma_network_rule_priority_base",
    "protected_interfaces": "rdma_network_protected_interfaces",
    "allow_readdress": "rdma_network_allow_readdress",
    "fleet": "rdma_network_fleet",
}


class RailPlanError(ValueError):
    """Input from which no rail plan can be made; ``errors`` lists every problem (host and variable named)."""

    def __init__(self, errors: t.Sequence[str]):
        self.errors = list(errors)
        super().__init__("; ".join(self.errors))


def _facts(host_vars: Mapping) -> Mapping:
    facts = host_vars.get("ansible_facts")
    return facts if isinstance(facts, Mapping) else {}


def ports_of(host_vars: Mapping, host: str = "", errors: list[str] | None = None) -> list[dict] | None:
    """The ConnectX ports of a host's ``ansible_facts['gpufabric']['connectx']``; None when not gathered.

    Entries of the wrong shape (not a mapping, a netdev that is not a string) are left out, each recorded in
    ``errors`` when given.
    """
    errors = [] if errors is None else errors
    gpufabric = _facts(host_vars).get("gpufabric")
    connectx = gpufabric.get("connectx") if isinstance(gpufabric, Mapping) else None
    if connectx is None:
        return None
    where = f"host {host}: ansible_facts['gpufabric']['connectx']"
    if not isinstance(connectx, Mapping):
        errors.append(f"{where} must be a mapping with a list of ports, got {type(connectx).__name__}")
        return []
    ports = connectx.get("ports") or []
    if isinstance(ports, (str, bytes)) or not isinstance(ports, (list, tuple)):
        errors.append(f"{where}['ports'] must be a list of ports, got {type(ports).__name__}")
        return []
    found = []
    for number, port in enumerate(ports):
        if not isinstance(port, Mapping):
            errors.append(f"{where}['ports'][{number}] must be a mapping, got {type(port).__name__}")
        elif port.get("netdev") is not None and not isinstance(port.get("netdev"), str):
            errors.append(f"{where}['ports'][{number}]['netdev'] must be a string, got {port.get('netdev')!r}")
        else:
            found.append(dict(port))
    return found


def _as_list(value: t.Any) -> list:
    if value is None or value == "":
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _mapping(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def select_ports(ports: t.Sequence[Mapping], selector: Mapping, labels: Mapping[str, str], host: str,
                 errors: list[str], protected: Mapping[str, str] | None = None) -> tuple[list[dict], list[dict]]:
    """Return ``(chosen, skipped)`` ports by the rail rule (:func:`.rail_selection.select_rails`); append problems to
    ``errors``.

    ``selector`` holds the rule's settings (:data:`.rail_selection.KEYS`; a key it lacks has the role's default),
    ``protected`` the host's protected interfaces with why (:func:`.rail_selection.protected_reasons`). ``chosen``:
    the rails to configure, each with its ``rail`` number; ``skipped``: the rails that are not ACTIVE (unless
    ``include_inactive``) and the ports a default exclusion left out (a protected interface, a BlueField DPU:
    ``rail`` None), each with its ``reason``. A selection that chooses nothing is an error.
    """
    labels = {**rail_selection.LABELS, **{key: value for key, value in labels.items() if key in rail_selection.KEYS}}
    before = len(errors)
    selection = rail_selection.select_rails(ports, selector, protected or {}, host, errors, labels)
    chosen, skipped = rail_selection.configured(selection)
    skipped += [port for port in selection.left_out if port["excluded"]]
    if not chosen and len(errors) == before:
        found = ", ".join(f"{port.get('netdev')} ({port.get('link_layer')}, {port.get('device_id')}, "
                          f"{port.get('pci_address')}, {port.get('state')})"
                          for port in sorted((port for port in ports if isinstance(port, Mapping)), key=port_order)
                          if port.get("netdev")) or "none"
        used = [f"{labels[key]}={selector.get(key)!r}" for key in
                ("link_layers", "device_ids", "pci_addresses", "netdev_pattern", "rail_indices")
                if _as_list(selector.get(key))]
        why = " and ".join(used) if used else "the default selection (every port with a netdev)"
        excluded = [port for port in selection.left_out if port["excluded"]]
        left = (f"; {len(excluded)} port(s) left out by the default exclusions ("
                + ", ".join(f"{port['netdev']}: {port['reason']}" for port in excluded)
                + f"; name a port in {labels['netdev_pattern']}, {labels['device_ids']} or "
                f"{labels['pci_addresses']} to make it a rail)") if excluded else ""
        inactive = (f"; {len(selection.rails)} matching port(s) are not ACTIVE (set "
                    f"{labels['include_inactive']} to "
                    "configure them anyway)") if selection.rails else ""
        errors.append(f"host {host}: no ConnectX port matches {why}{left}{inactive}; ports in "
                      f"ansible_facts['gpufabric']['connectx']: {found}")
    return chosen, skipped


def parse_subnet(value: t.Any, version: int, where: str, errors: list[str]):
    """Parse a rail subnet (strict: no host bits); return None and record an error when it is invalid."""
    try:
        network = ipaddress.ip_network(str(value).strip(), strict=True)
    except ValueError as exc:
        errors.append(f"{where}: {value!r} is not an IPv{version} subnet ({exc})")
        return None
    if network.version != version:
        errors.append(f"{where}: {value!r} is an IPv{network.version} subnet, expected IPv{version}")
        return None
    if network.num_addresses == 1:
        errors.append(f"{where}: {value!r} is a single address, not a rail subnet; a rail needs at least a "
                      f"/{network.max_prefixlen - 1} (RFC {3021 if version == 4 else 6164}, point to point)")
        return None
    return network


def point_to_point(network) -> bool:
    """A /31 (RFC 3021) or /127 (RFC 6164): both addresses are host addresses, there is no broadcast."""
    return network.num_addresses == 2


def host_positions(network) -> tuple[int, int]:
    """The first and last host number of a subnet (address = network address + number).

    /31 and /127: 0 and 1 (RFC 3021, RFC 6164); other IPv4 subnets: 1 to the one before the broadcast address;
    other IPv6 subnets: 1 to the last address (the subnet-router anycast address, all zeros, is not a host's).
    A single address (/32, /128) has none: ``(1, 0)``.
    """
    if network.num_addresses == 1:
        return 1, 0
    if point_to_point(network):
        return 0, 1
    return 1, network.num_addresses - (2 if network.version == 4 else 1)


def host_capacity(network) -> int:
    """How many host addresses a subnet offers (2 on a /31 or /127, none on a /32 or /128)."""
    first, last = host_positions(network)
    return max(0, last - first + 1)


def rail_address(network, offset: int, host_index: int):
    """A host's address on a rail: ``network + offset + host index``; None when it is not a host address of
    the subnet (beyond its last host number, the network or broadcast address, outside the subnet)."""
    first, last = host_positions(network)
    position = offset + host_index
    if not first <= position <= last:
        return None
    address = network.network_address + position
    return address if address in network else None


def _int(value: t.Any, where: str, errors: list[str], minimum: int = 0) -> int | None:
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        errors.append(f"{where}: {value!r} is not an integer")
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        errors.append(f"{where}: {value!r} is not an integer")
        return None
    if number < minimum:
        errors.append(f"{where}: {number} is below {minimum}")
        return None
    return number


def parse_rails(rails: t.Any, label: str, host: str, errors: list[str]) -> list[dict]:
    """Validate the per-rail list ``[{ipv4, ipv6, mtu, table}]``; report overlapping subnets."""
    if not isinstance(rails, (list, tuple)):
        errors.append(f"host {host}: {label} must be a list of {{ipv4, ipv6, mtu, table}} mappings, one per rail")
        return []
    parsed = []
    for number, entry in enumerate(rails):
        where = f"host {host}: {label}[{number}]"
        if not isinstance(entry, Mapping):
            errors.append(f"{where} must be a mapping with ipv4 and/or ipv6")
            parsed.append({})
            continue
        unknown = sorted({str(key) for key in entry} - {"ipv4", "ipv6", "mtu", "table"})
        if unknown:
            errors.append(f"{where}: unknown key(s) {', '.join(unknown)}; use ipv4, ipv6, mtu, table")
        item: dict[str, t.Any] = {}
        if not entry.get("ipv4") and not entry.get("ipv6"):
            errors.append(f"{where} has neither ipv4 nor ipv6")
        for key, version in (("ipv4", 4), ("ipv6", 6)):
            if entry.get(key):
                item[key] = parse_subnet(entry[key], version, f"{where}.{key}", errors)
        if entry.get("mtu") not in (None, "", 0):
            item["mtu"] = _int(entry["mtu"], f"{where}.mtu", errors, minimum=68)
        if entry.get("table") not in (None, "", 0):
            item["table"] = _int(entry["table"], f"{where}.table", errors, minimum=1)
        parsed.append(item)
    for key in ("ipv4", "ipv6"):
        seen: list[tuple[int, t.Any]] = []
        for number, item in enumerate(parsed):
            network = item.get(key)
            if network is None:
                continue
            for other_number, other in seen:
                if network.overlaps(other):
                    errors.append(f"host {host}: {label}[{number}].{key} {network} overlaps "
                                  f"{label}[{other_number}].{key} {other}; every rail needs its own subnet")
            seen.append((number, network))
    return parsed


def protected_interfaces(host_vars: Mapping, extra: t.Sequence[str]) -> list[str]:
    """Interfaces never to touch: the default routes', the one holding ``ansible_host``, and ``extra``."""
    return list(protected_reasons(host_vars, extra))


def _mtu_of(port: Mapping, rail: Mapping, settings: Mapping, labels: Mapping[str, str], host: str,
            errors: list[str], network: Mapping | None = None) -> tuple[int | None, int | None, str | None]:
    """Return ``(mtu, maximum, ipoib_mode)`` for a port; ``network``: the host's network facts (its ``max_mtu``)."""
    link_layer = port.get("link_layer")
    mode = None
    if link_layer == "InfiniBand":
        mode = str(settings.get("ipoib_mode") or "datagram")
        if mode not in IPOIB_MODES:
            errors.append(f"host {host}: {labels['ipoib_mode']}: {mode!r} is not one of {', '.join(IPOIB_MODES)}")
            return None, None, None
        kind = mode
    elif link_layer == "Ethernet":
        kind = "Ethernet"
    else:
        errors.append(f"host {host}: {port.get('netdev')}: unknown link layer {link_layer!r} in "
                      "ansible_facts['gpufabric']['connectx']")
        return None, None, None
    maximum = MAX_MTU[kind]
    live = interface_entry(network or {}, port["netdev"]).get("max_mtu")
    if live:
        live = _int(live, f"host {host}: the maximum MTU of {port['netdev']} "
                          f"({FABRIC_FACT}['interfaces']['{port['netdev']}']['max_mtu'])", errors, minimum=1)
        maximum = min(maximum, live or maximum)
    if rail.get("mtu"):
        mtu, source = rail["mtu"], f"{labels['rails']}[{port['rail']}].mtu"
    elif settings.get("mtu"):
        mtu, source = _int(settings["mtu"], f"host {host}: {labels['mtu']}", errors, minimum=68), labels["mtu"]
    else:
        mtu, source = DEFAULT_MTU[kind], None
    if mtu is not None and mtu > maximum:
        what = f"IPoIB {mode} mode" if mode else "RoCE (Ethernet)"
        errors.append(f"host {host}: {source or 'the default MTU'} {mtu} is above the maximum MTU {maximum} of "
                      f"{port['netdev']} ({what})")
    return mtu, maximum, mode


def lay_out_host(host: str, host_vars: Mapping, settings: Mapping, labels: Mapping[str, str],
                 errors: list[str]) -> dict:
    """The rails of one host before its index is known (errors appended, never raised).

    ``{rails, skipped, networks, offset}``: each rail entry without addresses, the parsed subnets of each rail
    (family to network), and the address offset (None when it is not an integer).
    """
    layout: dict[str, t.Any] = {"rails": [], "skipped": [], "networks": {}, "offset": None}
    ports = ports_of(host_vars, host, errors)
    if ports is None:
        errors.append(f"host {host}: ansible_facts['gpufabric']['connectx'] is missing; gather it with "
                      "gpufabric.cluster.fabric_facts (gather_subset: [connectx])")
        return layout
    rails = parse_rails(settings.get("rails") or [], labels["rails"], host, errors)
    reasons = protected_reasons(host_vars, [name for name in _as_list(settings.get("protected_interfaces"))
                                            if isinstance(name, str)])
    chosen, skipped = select_ports(ports, settings, labels, host, errors, reasons)
    offset = _int(settings.get("address_offset", 1), f"host {host}: {labels['address_offset']}", errors)
    table_base = _int(settings.get("table_base", 100), f"host {host}: {labels['table_base']}", errors, minimum=1)
    priority_base = _int(settings.get("rule_priority_base", 1000), f"host {host}: {labels['rule_priority_base']}",
                         errors, minimum=1)
    protected = list(reasons)
    live = network_of(host_vars)
    protected_addresses = {name: interface_addresses(live, name) for name in protected}
    live_netdevs = live.get("interfaces")
    if live_netdevs is not None and not isinstance(live_netdevs, list):
        errors.append(f"host {host}: ansible_facts['interfaces'] (the names of the links) must be a list, got "
                      f"{type(live_netdevs).__name__}")
    for port in chosen:
        number = port["rail"]
        netdev = port["netdev"]
        if netdev in protected:  # only a selection that names it (the default leaves it out)
            errors.append(f"host {host}: rail {number} is {netdev}, an interface the role must not touch "
                          f"(default route, ansible_host or {labels['protected_interfaces']}); narrow the "
                          f"selection ({labels['netdev_pattern']}, {labels['device_ids']}, "
                          f"{labels['pci_addresses']}, {labels['rail_indices']})")
            continue
        if isinstance(live_netdevs, list) and live_netdevs and netdev not in live_netdevs:
            errors.append(f"host {host}: rail {number}: netdev {netdev} from ansible_facts['gpufabric']['connectx'] "
                          f"does not exist on the host ({FABRIC_FACT}['interfaces']); is the probe root right?")
        if number >= len(rails):
            errors.append(f"host {host}: {labels['rails']} has {len(rails)} entr{'y' if len(rails) == 1 else 'ies'}, "
                          f"so rail {number} ({netdev}) has no subnet; add {labels['rails']}[{number}] or narrow "
                          f"the selection ({labels['rail_indices']})")
            continue
        rail = rails[number]
        mtu, maximum, mode = _mtu_of(port, rail, settings, labels, host, errors, live)
        table = rail.get("table") or ((table_base or 0) + number)
        if table in RESERVED_TABLES:
            errors.append(f"host {host}: rail {number}: routing table {table} is reserved (local/main/default); "
                          f"change {labels['table_base']} or {labels['rails']}[{number}].table")
        layout["rails"].append({
            "rail": number, "netdev": netdev, "rdma_device": port.get("rdma_device"), "port": port.get("port"),
            "pci_address": port.get("pci_address"), "device_id": port.get("device_id"), "model": port.get("model"),
            "link_layer": port.get("link_layer"), "state": port.get("state"), "numa_node": port.get("numa_node"),
            "gpus_same_switch": [str(item) for item in _as_list(port.get("gpus_same_switch"))],
            "mtu": mtu, "max_mtu": maximum, "ipoib_mode": mode, "table": table,
            "priority": (priority_base or 0) + number,
            "ipv4": None, "ipv4_network": None, "ipv4_prefix": None,
            "ipv6": None, "ipv6_network": None, "ipv6_prefix": None,
        })
        networks = {key: rail[key] for key in ("ipv4", "ipv6") if rail.get(key) is not None}
        layout["networks"][number] = networks
        for key, network in networks.items():
            for name, addresses in protected_addresses.items():
                clash = [str(item) for item in addresses if item.ip in network or network.overlaps(item.network)]
                if clash:
                    errors.append(f"host {host}: {labels['rails']}[{number}].{key} {network} overlaps the network of "
                                  f"{name} ({', '.join(clash)}), an interface the role must not touch; choose "
                                  "another subnet")
    layout["skipped"] = [{"rail": port["rail"], "netdev": port["netdev"], "reason": port["reason"]} for port in skipped]
    layout["offset"] = offset
    return layout


def address_host(host: str, layout: Mapping, host_index: int | None, labels: Mapping[str, str],
                 errors: list[str]) -> dict:
    """The rail plan of one host, ``{host, host_index, rails, skipped}``: its layout with the addresses of
    ``host_index`` (none when the index or the offset is unknown; a subnet too small for it is an error)."""
    offset = layout["offset"]
    planned = []
    for entry in layout["rails"]:
        entry = dict(entry)
        for key, network in layout["networks"][entry["rail"]].items():
            if offset is None or host_index is None:
                continue
            address = rail_address(network, offset, host_index)
            if address is None:
                rfc = (f" (numbers 0 and 1, RFC {3021 if network.version == 4 else 6164})"
                       if point_to_point(network) else "")
                errors.append(f"host {host}: {labels['rails']}[{entry['rail']}].{key} {network} holds "
                              f"{host_capacity(network)} host address(es){rfc} but this host needs number "
                              f"{offset + host_index} ({labels['host_index']} {host_index} + "
                              f"{labels['address_offset']} {offset}); use a larger subnet")
                continue
            entry[key] = str(address)
            entry[f"{key}_network"] = str(network)
            entry[f"{key}_prefix"] = network.prefixlen
        planned.append(entry)
    return {"host": host, "host_index": host_index, "rails": planned, "skipped": list(layout["skipped"])}


def subnet_disagreements(inputs: Mapping[str, Mapping], label: str) -> list[str]:
    """One message per rail subnet (rail and family) that the hosts give differently, naming the hosts of each.

    Every host's address on a rail is computed from its own ``rails`` list, so hosts that disagree would sit in
    different subnets of one rail and never reach each other. Entries that do not parse are reported by
    :func:`parse_rails`; a host whose list is shorter is compared on the rails it has.
    """
    subnets: dict[tuple[int, str], dict[str, list[str]]] = {}
    for host in sorted(inputs, key=natural_key):
        for number, entry in enumerate(parse_rails(inputs[host].get("rails") or [], label, host, [])):
            for key in ("ipv4", "ipv6"):
                if key in entry and entry[key] is None:
                    continue  # given but not a subnet: reported by parse_rails
                subnet = str(entry[key]) if key in entry else "none"
                subnets.setdefault((number, key), {}).setdefault(subnet, []).append(host)
    messages = []
    for (number, key), by_subnet in sorted(subnets.items()):
        if len(by_subnet) > 1:
            listed = "; ".join(f"{subnet} on {', '.join(hosts)}" for subnet, hosts in by_subnet.items())
            messages.append(f"{label}[{number}].{key} differs between the hosts: {listed}; every host of a fabric "
                            "needs the same rail subnets")
    return messages


def _record_exists(record: t.Any) -> bool:
    return isinstance(record, Mapping) and bool(record.get("exists"))


def _flag(settings: Mapping, key: str, label: str, host: str, errors: list[str]) -> bool:
    try:
        return arguments.boolean(label, settings.get(key) or False)
    except arguments.ArgumentError as exc:
        errors.append(f"host {host}: {exc}")
        return False


def _claim_of_run_host(host: str, host_vars: Mapping, settings: Mapping, layout: Mapping, labels: Mapping[str, str],
                       errors: list[str]) -> rail_indices.Claim:
    """Explicit index, and what the host holds: its record, else its live addresses, else its plan in the facts."""
    explicit = rail_indices.explicit_index(settings.get("host_index"), host, labels["host_index"], errors)
    before = len(errors)
    held = rail_indices.parse_record(settings.get("record"), host, labels, errors)
    if held is None and not _record_exists(settings.get("record")):
        rails = [{"rail": rail["rail"], "netdev": rail["netdev"], "networks": layout["networks"][rail["rail"]]}
                 for rail in layout["rails"]]
        held = rail_indices.held_of_addresses(rails, network_of(host_vars) or None, layout["offset"], host, labels,
                                              errors)
    if held is None and len(errors) == before:
        held = rail_indices.held_of_plan_fact(_facts(host_vars).get(rail_indices.PLAN_FACT), host, labels, errors)
    return rail_indices.Claim(explicit, held)


def derive_rail_plan(hostvars: Mapping, hosts: t.Sequence[str], input_var: str = "__rdma_network_input",
                     labels: Mapping[str, str] | None = None,
                     fleet: t.Sequence[str] | None = None, outside: t.Any = None) -> dict[str, dict]:
    """Return ``{host: {host, host_index, host_index_source, rails, skipped, record, moved}}`` for ``hosts``.

    Each host's settings are ``hostvars[host][input_var]``, with what it holds (``record``, the record file read on
    the host); its live addresses and its links' maximum MTU are its network facts (:func:`network_of`).  ``fleet``
    (default ``hosts``) is every host whose addresses are kept apart; a fleet host outside ``hosts`` is known by its
    hostvar named ``labels['host_index']`` and its rail plan in
    ``ansible_facts`` (see :mod:`...plugin_utils.rail_indices` for the order of the index sources).  Raises
    :class:`RailPlanError` listing every problem of every host (each message names the host and the variable).

    ``outside`` (:func:`.fleet_facts.outside_members`: the recorded members of the run's IMEX domains that the
    inventory does not hold, a job slice) adds those members to the fleet: the ones the fact cache holds with their
    cached facts (their rail plan), the ones found nowhere unknown, so that a new host gets no index another slice's
    host may hold.
    """
    names = {**DEFAULT_LABELS, **(labels or {})}
    if outside is not None:
        hostvars, fleet, missing = with_outside(hostvars, list(hosts) if fleet is None else list(fleet), outside)
        fleet = [*fleet, *(name for members in missing.values() for name in members if name not in fleet)]
    errors: list[str] = []
    inputs = {}
    for host in hosts:
        value = _mapping(hostvars.get(host)).get(input_var)
        if not isinstance(value, Mapping):
            errors.append(f"host {host}: {input_var} (the role's published input) is missing")
            value = {}
        inputs[host] = value
    run = sorted(inputs, key=natural_key)
    fleet_hosts = rail_indices.fleet_of(run, None if fleet is None else list(fleet), names, errors)
    layouts = {host: lay_out_host(host, _mapping(hostvars.get(host)), inputs[host], names, errors) for host in run}
    claims = {}
    for host in fleet_hosts:
        host_vars = _mapping(hostvars.get(host))
        if host in layouts:
            claims[host] = _claim_of_run_host(host, host_vars, inputs[host], layouts[host], names, errors)
        else:
            claims[host] = rail_indices.Claim(
                rail_indices.explicit_index(host_vars.get(names["host_index"]), host, names["host_index"], errors),
                rail_indices.held_of_plan_fact(_facts(host_vars).get(rail_indices.PLAN_FACT), host, names, errors))
    chosen = rail_indices.choose_indices(run, claims, names, errors)
    # what every host holds after this run: those outside it as they are, then the run's hosts in natural order
    owned = {host: rail_indices.record_of(claim.held.host_index, claim.held.address_offset, [], claim.held, (), False)
             for host, claim in claims.items() if host not in layouts and claim.held is not None}
    descriptions = {host: rail_indices.describe_index(claim.held.host_index, claim.held.source, names)
                    for host, claim in claims.items() if host not in layouts and claim.held is not None}
    plan = {}
    for host in run:
        index, source = chosen.get(host, (None, None))
        layout = layouts[host]
        host_plan = address_host(host, layout, index, names, errors)
        held = claims[host].held
        allow = _flag(inputs[host], "allow_readdress", names["allow_readdress"], host, errors)
        prune = _flag(inputs[host], "prune", "prune", host, errors)
        moved = [] if index is None else rail_indices.moves(host, host_plan["rails"], held, index, source,
                                                            layout["offset"], names)
        if not allow:
            errors.extend(rail_indices.move_errors(host, moved, names))
        kept = ({rail["rail"] for rail in host_plan["rails"]}
                | {rail["rail"] for rail in host_plan["skipped"] if rail["rail"] is not None})
        record = (None if index is None or layout["offset"] is None
                  else rail_indices.record_of(index, layout["offset"], host_plan["rails"], held, kept, prune))
        host_plan.update(host_index_source=source, record=record, moved=moved if allow else [])
        if record is not None:
            owned[host] = record
            descriptions[host] = rail_indices.describe_index(index, source, names)
        plan[host] = host_plan
    errors.extend(subnet_disagreements(inputs, names["rails"]))
    errors.extend(rail_indices.duplicate_errors(owned, set(run), descriptions, names))
    if errors:
        raise RailPlanError(list(dict.fromkeys(errors)))
    return plan
