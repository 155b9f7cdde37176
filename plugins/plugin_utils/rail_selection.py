# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which ConnectX ports of a host are its RDMA rails: the one rule of the ``rdma_network`` role, the
``gpufabric.cluster.rail_plan`` filter and the preflight's ``rdma_ports`` check.

The selection is the ``rdma_network_*`` settings (:data:`KEYS`; per group or host through the inventory), their
defaults read from the argument spec of ``roles/rdma_network`` (:func:`defaults`), never written here.
:func:`select_rails` applies them to a host's ports (``ansible_facts['gpufabric']['connectx']['ports']``) in PCI
order:

1. a port without a netdev carries no IP traffic and is no rail;
2. the static selectors keep the ports of ``link_layers``, ``device_ids``, ``pci_addresses`` and whose netdev fully
   matches ``netdev_pattern`` (each empty: any);
3. unless one of ``device_ids``, ``pci_addresses`` or ``netdev_pattern`` names the port (an explicit selection wins),
   the default exclusions leave out the protected interfaces (the default routes' interface, the one holding
   ``ansible_host``, ``protected_interfaces``: :func:`protected_reasons`) and the ports of ``exclude_device_ids``
   (BlueField DPUs by default: a DPU port is the host's frontend, not a rail; a Spectrum-X BlueField-3 SuperNIC
   rail is selected by naming it);
4. the ports left are the rails, numbered from 0 in PCI order (a port that is down keeps its number, so rail N is
   the same NIC on every run); ``rail_indices`` narrows them to those numbers.

A rail that is not ACTIVE is still a rail: preflight judges it (and fails it), the plan skips it unless
``include_inactive`` (:func:`configured`). Each problem of the settings is one line naming the variable and the host.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t
from collections.abc import Mapping
from dataclasses import dataclass, field

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key, pci_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as collection_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.network_facts import interface_entry, network_facts

ROLE = "rdma_network"
PREFIX = "rdma_network_"
LINK_LAYERS = ("Ethernet", "InfiniBand")
# The settings of the rule, each the role variable PREFIX + key.
KEYS = ("link_layers", "device_ids", "pci_addresses", "netdev_pattern", "rail_indices", "include_inactive",
        "exclude_device_ids", "protected_interfaces")
LABELS = {key: PREFIX + key for key in KEYS}
# The selectors that name a port: a port they select is a rail whatever the default exclusions say.
NAMING = ("device_ids", "pci_addresses", "netdev_pattern")


def defaults() -> dict:
    """``{key: default}`` of the rule's settings, from the argument spec of ``roles/rdma_network``."""
    return collection_settings.role_defaults(ROLE, PREFIX, KEYS)


def selection_of(host_vars: Mapping) -> dict:
    """A host's selection: its ``rdma_network_*`` variables (inventory, group or extra vars), else their defaults."""
    found = defaults()
    for key in KEYS:
        if PREFIX + key in host_vars:
            found[key] = host_vars[PREFIX + key]
    return found


def port_order(port: Mapping) -> tuple:
    """Rail order: PCI address, then port number (a port number that is not a number sorts as 0)."""
    try:
        number = int(port.get("port") or 0)
    except (TypeError, ValueError, OverflowError):
        number = 0
    return pci_key(str(port.get("pci_address") or "")), number


def network_of(host_vars: Mapping) -> Mapping:
    """A host's network facts in ``setup``'s layout, ``fabric_facts``' network subset first (it alone has
    ``max_mtu``); ``{}`` when no network facts were gathered."""
    facts = host_vars.get("ansible_facts")
    network = network_facts(facts if isinstance(facts, Mapping) else {}, prefer="fabric")
    return network if "interfaces" in network else {}


def interface_addresses(facts: Mapping, name: str) -> list:
    """Every address of interface ``name`` (primary and secondary IPv4, IPv6) with its prefix."""
    iface = interface_entry(facts, name)
    found = []
    for entry in [iface.get("ipv4"), *_items(iface.get("ipv4_secondaries")), *_items(iface.get("ipv6"))]:
        if isinstance(entry, Mapping) and entry.get("address"):
            prefix = entry.get("netmask") or entry.get("prefix")
            try:
                found.append(ipaddress.ip_interface(f"{entry['address']}/{prefix}" if prefix else entry["address"]))
            except ValueError:
                continue
    return found


def protected_reasons(host_vars: Mapping, extra: t.Iterable[t.Any] = ()) -> dict[str, str]:
    """``{interface: why}`` of the interfaces never to touch: the default routes' (``default route``), the one
    holding ``ansible_host`` and ``extra`` (``rdma_network_protected_interfaces``)."""
    facts = network_of(host_vars)
    reasons: dict[str, list[str]] = {}
    for name in extra:
        if name:
            reasons.setdefault(str(name), []).append(LABELS["protected_interfaces"])
    for family in ("ipv4", "ipv6"):
        route = facts.get(f"default_{family}")
        interface = route.get("interface") if isinstance(route, Mapping) else None
        if interface:
            reasons.setdefault(str(interface), []).append("default route")
    target = str(host_vars.get("ansible_host") or "")
    try:
        target_ip = ipaddress.ip_address(target)
    except ValueError:
        target_ip = None
    if target_ip is not None:
        for name in _items(facts.get("interfaces")):
            if any(address.ip == target_ip for address in interface_addresses(facts, str(name))):
                reasons.setdefault(str(name), []).append("holds ansible_host")
    return {name: ", ".join(dict.fromkeys(reasons[name])) for name in sorted(reasons, key=natural_key)}


@dataclass
class Selection:
    """What the rule chose on one host.

    ``rails``: the rail ports in PCI order, each a copy with its ``rail`` number; ``left_out``: every other port,
    each with its ``reason`` and ``excluded`` (True: a default exclusion left it out, a port the plan lists as
    skipped); ``include_inactive``: configure rails that are not ACTIVE too.
    """

    rails: list[dict] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)
    include_inactive: bool = False


def _items(value: t.Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _names(value: t.Any, key: str, labels: Mapping[str, str], host: str, errors: list[str],
           device_ids: bool = False, lower: bool = True) -> list[str]:
    """A list setting of names: null or ``''`` is empty, a string is a comma-separated list (as Ansible converts a
    string to a list); a device id written without quotes (YAML reads ``0x1021`` as 4129) is that id."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        value = [item.strip() for item in value.split(",")]
    if not isinstance(value, (list, tuple)):
        errors.append(f"host {host}: {labels[key]} must be a list, got {arguments.type_name(value)}")
        return []
    names = []
    for item in value:
        if device_ids and isinstance(item, int) and not isinstance(item, bool) and 0 <= item <= 0xFFFF:
            names.append(f"0x{item:04x}")
        elif isinstance(item, str) and item.strip():
            names.append(item.strip().lower() if lower else item.strip())
        else:
            shown = repr(item) if isinstance(item, (bool, int, float)) else arguments.type_name(item)
            errors.append(f"host {host}: {labels[key]} must hold non-empty strings, got {shown}")
    return names


def read_selection(selection: Mapping, host: str, errors: list[str],
                   labels: Mapping[str, str] | None = None) -> dict:
    """The selection checked: every key of :data:`KEYS` (its default where ``selection`` has none), each problem
    one line in ``errors`` naming the variable (``labels``) and the host; a bad value counts as its empty value."""
    labels = {**LABELS, **(labels or {})}
    given = {**defaults(), **{key: selection[key] for key in KEYS if key in selection}}
    read: dict[str, t.Any] = {}
    link_layers = []
    for item in _names(given["link_layers"], "link_layers", labels, host, errors, lower=False):
        if item not in LINK_LAYERS:
            errors.append(f"host {host}: {labels['link_layers']}: {item!r} is not one of {', '.join(LINK_LAYERS)}")
        else:
            link_layers.append(item)
    read["link_layers"] = link_layers
    for key in ("device_ids", "exclude_device_ids"):
        read[key] = _names(given[key], key, labels, host, errors, device_ids=True)
    read["pci_addresses"] = _names(given["pci_addresses"], "pci_addresses", labels, host, errors)
    read["protected_interfaces"] = _names(given["protected_interfaces"], "protected_interfaces", labels, host, errors,
                                          lower=False)
    pattern = given["netdev_pattern"]
    read["netdev_pattern"] = None
    if pattern is not None and not isinstance(pattern, str):
        errors.append(f"host {host}: {labels['netdev_pattern']} must be a regular expression (a string), got "
                      f"{arguments.type_name(pattern)}")
    elif pattern and not pattern.strip():
        errors.append(f"host {host}: {labels['netdev_pattern']} is blank; leave it empty ('') to keep any netdev")
    elif pattern:
        try:
            read["netdev_pattern"] = re.compile(pattern)
        except re.error as exc:
            errors.append(f"host {host}: {labels['netdev_pattern']}: {pattern!r} is not a regular expression ({exc})")
    indices = []
    raw = given["rail_indices"]
    for item in ([] if raw is None or raw == "" else _items(raw) if isinstance(raw, (list, tuple)) else [raw]):
        number = None
        if not isinstance(item, bool):
            try:
                number = int(item) if isinstance(item, (int, str)) else None
            except ValueError:
                number = None
        if number is None:
            errors.append(f"host {host}: {labels['rail_indices']}: {item!r} is not a rail number")
        else:
            indices.append(number)
    read["rail_indices"] = indices
    read["include_inactive"] = False
    try:
        inactive = False if given["include_inactive"] is None else given["include_inactive"]
        read["include_inactive"] = arguments.boolean(labels["include_inactive"], inactive)
    except arguments.ArgumentError as exc:
        errors.append(f"host {host}: {exc}")
    return read


def select_rails(ports: t.Sequence[Mapping], selection: Mapping, protected: Mapping[str, str], host: str,
                 errors: list[str], labels: Mapping[str, str] | None = None) -> Selection:
    """The rails of one host by the rule (see the module's documentation); problems of ``selection`` appended to
    ``errors``, one line each naming the variable and the host.

    ``ports``: the host's ConnectX ports (entries that are not mappings are no rails); ``selection``: the settings
    (:data:`KEYS`; a key it lacks has its default); ``protected``: ``{interface: why}`` (:func:`protected_reasons`)
    besides ``selection['protected_interfaces']``; ``labels``: the name of each setting in messages.
    """
    labels = {**LABELS, **(labels or {})}
    read = read_selection(selection, host, errors, labels)
    protected = {**dict.fromkeys(read["protected_interfaces"], labels["protected_interfaces"]), **protected}
    named = bool(read["device_ids"] or read["pci_addresses"] or read["netdev_pattern"])
    result = Selection(include_inactive=read["include_inactive"])
    candidates = []
    for port in sorted((dict(port) for port in ports if isinstance(port, Mapping)), key=port_order):
        netdev = port.get("netdev")
        device_id = str(port.get("device_id") or "").lower()
        reason, excluded = None, False
        if not netdev:
            reason = "no netdev"
        elif read["link_layers"] and port.get("link_layer") not in read["link_layers"]:
            reason = f"link layer {port.get('link_layer')} not in {labels['link_layers']}"
        elif read["device_ids"] and device_id not in read["device_ids"]:
            reason = f"device id {port.get('device_id')} not in {labels['device_ids']}"
        elif read["pci_addresses"] and str(port.get("pci_address") or "").lower() not in read["pci_addresses"]:
            reason = f"PCI address {port.get('pci_address')} not in {labels['pci_addresses']}"
        elif read["netdev_pattern"] and not read["netdev_pattern"].fullmatch(str(netdev)):
            reason = f"netdev does not match {labels['netdev_pattern']}"
        elif not named and str(netdev) in protected:
            reason, excluded = f"protected: {protected[str(netdev)]}", True
        elif not named and device_id and device_id in read["exclude_device_ids"]:
            model = f"{port.get('model')}, " if port.get("model") else ""
            reason, excluded = f"{model}device id {device_id} in {labels['exclude_device_ids']}", True
        if reason is None:
            candidates.append(port)
        else:
            result.left_out.append({**port, "rail": None, "reason": reason, "excluded": excluded})
    for number, port in enumerate(candidates):
        port["rail"] = number
    for index in read["rail_indices"]:
        if not 0 <= index < len(candidates):
            errors.append(f"host {host}: {labels['rail_indices']}: rail {index} does not exist; "
                          f"the selection has {len(candidates)} rail(s) (0 to {len(candidates) - 1})")
    for port in candidates:
        if read["rail_indices"] and port["rail"] not in read["rail_indices"]:
            result.left_out.append({**port, "reason": f"rail {port['rail']} not in {labels['rail_indices']}",
                                    "excluded": False})
        else:
            result.rails.append(port)
    return result


def configured(selection: Selection) -> tuple[list[dict], list[dict]]:
    """``(chosen, skipped)``: the rails to configure, and those that are not ACTIVE (with their ``reason``) unless
    ``include_inactive``."""
    chosen, skipped = [], []
    for port in selection.rails:
        if port.get("state") != "ACTIVE" and not selection.include_inactive:
            skipped.append({**port, "reason": f"state {port.get('state')}, not ACTIVE"})
        else:
            chosen.append(port)
    return chosen, skipped


def host_rails(host: str, host_vars: Mapping, ports: t.Sequence[Mapping]) -> tuple[Selection, list[str]]:
    """The rails of ``host`` by its ``rdma_network_*`` variables in ``host_vars`` (defaults from the role's argument
    spec) and its protected interfaces (network facts, ``ansible_host``); ``(selection, problems)``."""
    errors: list[str] = []
    selection = selection_of(host_vars)
    extra = _names(selection.get("protected_interfaces"), "protected_interfaces", LABELS, host, [], lower=False)
    return select_rails(ports, selection, protected_reasons(host_vars, extra), host, errors), errors
