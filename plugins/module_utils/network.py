# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's IP addresses as ``setup``'s ``network`` subset reports them, and each link's MTU limits.

``default_ipv4`` / ``default_ipv6``: the interface, source address and gateway of the route to a public
address, asked as ``setup`` asks (``route get 8.8.8.8``, ``route get 2404:6800:400a:800::1012``);
``interfaces``: per interface its primary IPv4 address (``address``, ``netmask``, ``network``, ``prefix``,
``broadcast``), its other IPv4 addresses (``ipv4_secondaries``, the same keys), its IPv6 addresses
(``address``, ``prefix``, ``scope``) from ``addr show``, and the link's ``mtu`` and ``max_mtu``.  The three
questions go to one ``ip -json -details -force -batch -`` process (one JSON list per answered line; a route
that does not exist prints nothing).  The ``ip`` tool is the one below ``root`` (host_commands); one that
leads outside ``root`` is refused.  Read by the IMEX address rule and by the ``rdma_network`` role (default
routes' interfaces, every live address, the maximum MTU of each link).
Pure parsers over the tool's text; nothing raises out of :func:`collect_network`.
"""

from __future__ import annotations

import ipaddress
import json
import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import (
    CommandError,
    ParseError,
    ProbeRootError,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import Runner, find_command, run_found
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import check_root

# The destinations setup's network collector asks the route to (ansible.module_utils.facts.network.linux).
ROUTE_PROBES = {"ipv4": ("-4", "8.8.8.8"), "ipv6": ("-6", "2404:6800:400a:800::1012")}
BATCH = "".join(["addr show\n"] + [f"route get {destination}\n" for _flag, destination in ROUTE_PROBES.values()])
IP_ARGV = ["ip", "-json", "-details", "-force", "-batch", "-"]
# The kernel keeps a link's MTU and its limits as unsigned 32-bit numbers.
MTU_LIMIT = 2**32 - 1


def empty_payload() -> dict:
    """The payload with nothing found."""
    return {"default_ipv4": {}, "default_ipv6": {}, "interfaces": {}, "errors": [], "warnings": []}


def _json_list(text: str, what: str) -> list:
    try:
        data = json.loads(text or "[]")
    except ValueError as exc:
        raise ParseError(f"{what}: not JSON ({exc})") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ParseError(f"{what}: expected a JSON list of objects")
    return data


def _prefix(value: t.Any, family: str, what: str) -> int:
    limit = 32 if family == "ipv4" else 128
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= limit:
        raise ParseError(f"{what}: prefix length {value!r} is not an integer from 0 to {limit}")
    return value


def _mtu(link: dict, key: str, what: str) -> int | None:
    """A link's ``mtu`` / ``max_mtu`` (``None`` when the tool gives none); anything but a 32-bit count is an error."""
    value = link.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MTU_LIMIT:
        raise ParseError(f"{what}: {key} {value!r} is not an integer from 0 to {MTU_LIMIT}")
    return value


def parse_ip_addr(text: str) -> dict[str, dict]:
    """Parse ``ip -json [-details] addr show`` into ``{interface: {'ipv4': {...}, 'ipv6': [...], ...}}``.

    ``ipv4`` is the first address that is not ``secondary`` (what setup calls the primary address), with
    ``address``, ``netmask``, ``network``, ``prefix`` (text, as setup gives it) and ``broadcast`` (``''`` when
    none); an interface without one has no ``ipv4`` key.  ``ipv4_secondaries`` lists the other IPv4 addresses
    in the tool's order, with the same keys (absent when there are none, as in setup: a second address of
    another subnet is listed there too, as setup does).  ``ipv6`` lists every IPv6 address in the tool's order
    with ``address``, ``prefix`` (text) and ``scope``.  ``mtu`` and ``max_mtu`` are the link's MTU and the
    largest its driver takes (integers; ``-details`` gives ``max_mtu``, where ``0`` means the driver sets no
    maximum), absent when the tool gives none.  Raises :class:`ParseError` on output that is not the tool's
    JSON (not a list of objects, an interface without a name or twice, a malformed address, an MTU that is not
    an integer from 0 to 2**32 - 1).
    """
    interfaces: dict[str, dict] = {}
    for link in _json_list(text, "ip -json addr show"):
        name = link.get("ifname")
        if not isinstance(name, str) or not name:
            raise ParseError(f"ip -json addr show: an interface without a name: {link!r}")
        if name in interfaces:
            raise ParseError(f"ip -json addr show: interface {name} listed twice")
        entry: dict[str, t.Any] = {}
        for key in ("mtu", "max_mtu"):
            value = _mtu(link, key, f"ip -json addr show: {name}")
            if value is not None:
                entry[key] = value
        addr_info = link.get("addr_info", [])
        if not isinstance(addr_info, list):
            raise ParseError(f"ip -json addr show: {name}: addr_info is not a list")
        for info in addr_info:
            if not isinstance(info, dict):
                raise ParseError(f"ip -json addr show: {name}: an address entry is not an object")
            family = {"inet": "ipv4", "inet6": "ipv6"}.get(info.get("family"))
            if family is None:
                continue
            what = f"ip -json addr show: {name}"
            try:
                address = ipaddress.ip_address(str(info.get("local")))
            except ValueError:
                raise ParseError(f"{what}: {info.get('local')!r} is not an IP address") from None
            if address.version != (4 if family == "ipv4" else 6):
                raise ParseError(f"{what}: {address} is not an {family} address")
            prefix = _prefix(info.get("prefixlen"), family, what)
            if family == "ipv4":
                network = ipaddress.ip_network(f"{address}/{prefix}", strict=False)
                details = {"address": str(address), "broadcast": str(info.get("broadcast") or ""),
                           "netmask": str(network.netmask), "network": str(network.network_address),
                           "prefix": str(prefix)}
                if info.get("secondary") is True or "ipv4" in entry:
                    entry.setdefault("ipv4_secondaries", []).append(details)
                else:
                    entry["ipv4"] = details
            else:
                entry.setdefault("ipv6", []).append({"address": str(address), "prefix": str(prefix),
                                                     "scope": str(info.get("scope") or "global")})
        interfaces[name] = entry
    return interfaces


def parse_route_get(text: str, family: str) -> dict:
    """Parse ``ip -json -4|-6 route get <address>`` into ``{'interface', 'address', 'gateway'}`` (those found).

    An empty output (no route in that family) is ``{}``.  Raises :class:`ParseError` on output that is not
    the tool's JSON or holds an address of the other family.
    """
    if family not in ROUTE_PROBES:
        raise ParseError(f"family must be one of {', '.join(ROUTE_PROBES)}, got {family!r}")
    routes = _json_list(text, f"ip -json {ROUTE_PROBES[family][0]} route get")
    if not routes:
        return {}
    route = routes[0]
    found: dict[str, str] = {}
    for key, field in (("interface", "dev"), ("address", "prefsrc"), ("gateway", "gateway")):
        value = route.get(field)
        if value in (None, ""):
            continue
        if key == "interface":
            if not isinstance(value, str):
                raise ParseError(f"route {family}: dev {value!r} is not an interface name")
        else:
            try:
                parsed = ipaddress.ip_address(str(value))
            except ValueError:
                raise ParseError(f"route {family}: {field} {value!r} is not an IP address") from None
            if parsed.version != (4 if family == "ipv4" else 6):
                raise ParseError(f"route {family}: {field} {parsed} is not an {family} address")
            value = str(parsed)
        found[key] = str(value)
    return found


def split_batch(text: str) -> tuple[str | None, dict[str, str]]:
    """Split the output of ``ip -json -batch`` over :data:`BATCH` into the ``addr show`` answer (``None`` when
    it is missing) and the route answers by family (a family without a route is absent).

    Raises :class:`ParseError` on a line that is not a JSON list, or a route to an address not asked for.
    """
    addresses: str | None = None
    routes: dict[str, str] = {}
    by_destination = {destination: family for family, (_flag, destination) in ROUTE_PROBES.items()}
    for line in (text or "").splitlines():
        if not line.strip():
            continue
        items = _json_list(line, "ip -json -batch")
        if items and "dst" in items[0]:
            family = by_destination.get(str(items[0].get("dst")))
            if family is None:
                raise ParseError(f"ip -json -batch: a route to {items[0].get('dst')!r}, which was not asked for")
            routes[family] = line
        elif addresses is None:
            addresses = line
        else:
            raise ParseError("ip -json -batch: two address lists")
    return addresses, routes


def default_interface(route: dict, interfaces: dict[str, dict], family: str) -> dict:
    """``default_ipv4`` / ``default_ipv6`` as setup builds them: the route, plus the details of its address."""
    if not route:
        return {}
    result = dict(route)
    entry = interfaces.get(route.get("interface", ""), {})
    if family == "ipv4":
        primary = entry.get("ipv4") or {}
        if primary.get("address") == route.get("address"):
            result.update({key: primary[key] for key in ("broadcast", "netmask", "network", "prefix")})
    else:
        for item in entry.get("ipv6") or []:
            if item["address"] == route.get("address"):
                result.update(prefix=item["prefix"], scope=item["scope"])
                break
    return result


def collect_network(root: str, runner: Runner) -> dict:
    """Read the addresses with the ``ip`` tool below ``root``; return the ``network`` payload.

    Nothing raises: an absent tool, a tool that leads outside ``root``, a failing command or unparsable
    output become ``errors`` entries (and empty results).
    """
    payload = empty_payload()
    errors: list[str] = payload["errors"]
    try:
        root = check_root(root)
    except ProbeRootError as exc:
        errors.append(str(exc))
        return payload
    if find_command(root, "ip") is None:
        errors.append("ip: not found below the probe root")
        errors.extend(root.refusal_errors(errors))
        return payload
    try:
        rc, out, err = run_found(runner, root, IP_ARGV, data=BATCH)
        addresses, routes = split_batch(out)
        if addresses is None:  # rc is 1 also when only a route is missing; the address list never is
            detail = (err or "").strip().splitlines()
            raise CommandError(f"ip -json addr show exited {rc}: {detail[0] if detail else 'no output'}")
        payload["interfaces"] = parse_ip_addr(addresses)
    except (CommandError, ParseError) as exc:
        errors.append(str(exc))
        return payload
    for family, text in routes.items():
        try:
            route = parse_route_get(text, family)
        except ParseError as exc:
            errors.append(str(exc))
            continue
        payload[f"default_{family}"] = default_interface(route, payload["interfaces"], family)
    return payload
