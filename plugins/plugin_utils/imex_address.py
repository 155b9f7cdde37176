# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one rule that decides a host's IMEX address, shared by preflight and the ``nvidia_imex`` role.

A host's IMEX address is, in this order: the explicit address setting; else the address of the
``interface`` setting in the ``family`` setting (``ansible_facts[interface][family]``); else the address of
the default route's interface in that family (``ansible_facts['default_' + family]``).  Pure functions over
the ``ansible_facts`` of one host: the ``network`` subset of ``setup`` when it was gathered, else the
``network`` subset of ``gpufabric.cluster.fabric_facts`` (the same values, read the way setup reads them;
:func:`...plugin_utils.network_facts.network_facts`);
errors are :class:`ImexAddressError` with a message that names the host and the variable to set.
"""

from __future__ import annotations

import ipaddress
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.network_facts import interface_entry, network_facts

FAMILIES = ("ipv4", "ipv6")


class ImexAddressError(ValueError):
    """No IMEX address can be decided for a host; the message names the host and the variable."""


_BROADCAST = ipaddress.IPv4Address("255.255.255.255")


def address_kind(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """The kind of an address that is no unicast address of one host IMEX peers on other hosts can reach, or ``None``.

    ``loopback`` (127.0.0.0/8, ::1), ``unspecified`` (0.0.0.0, ::), ``link-local`` (169.254.0.0/16, fe80::/10),
    ``multicast`` (224.0.0.0/4, ff00::/8), ``broadcast`` (255.255.255.255) and ``reserved`` (240.0.0.0/4 and the
    IPv6 ranges IANA has not allocated, as Python's ipaddress lists them; an IPv4-mapped IPv6 address, which
    ipaddress counts there, is not refused as reserved).
    """
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified:
        return "unspecified"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address == _BROADCAST:
        return "broadcast"
    if address.is_reserved and not (isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped):
        return "reserved"
    return None


def canonical_ip(value: t.Any, where: str, family: str | None = None, family_variable: str = "") -> str:
    """Return ``value`` as a canonical IP address text; raise :class:`ImexAddressError` naming ``where``.

    With ``family`` (``ipv4``/``ipv6``) an address of the other family is refused, naming ``family_variable``.
    """
    if not isinstance(value, (str, int)) or isinstance(value, bool):
        raise ImexAddressError(f"{where}: must be an IP address as a string, got {type(value).__name__}")
    try:
        parsed = ipaddress.ip_address(str(value).strip())
    except ValueError:
        raise ImexAddressError(f"{where}: {value!r} is not an IP address (IMEX nodes files hold IP addresses "
                               f"only, never host names)") from None
    kind = address_kind(parsed)
    if kind:
        raise ImexAddressError(f"{where}: {parsed} is a {kind} address, which IMEX peers on other hosts cannot reach")
    if family and f"ipv{parsed.version}" != family:
        raise ImexAddressError(f"{where}: {parsed} is an IPv{parsed.version} address but "
                               f"{family_variable or 'the address family'} is {family} "
                               "(one nodes file holds addresses of one family)")
    return str(parsed)


def where_of(interface: str | None, family: str) -> str:
    """The fact an address is read from, for messages."""
    return f"ansible_facts['{interface}']['{family}']" if interface else f"ansible_facts['default_{family}']"


def fact_address(facts: Mapping, family: str, interface: str | None) -> t.Any:
    """The address the facts hold for ``interface`` (or the default route's interface) in ``family``.

    Facts of an unexpected shape hold no address (``None``); what is found is checked by the caller.
    """
    facts = network_facts(facts)
    if interface:
        entry = interface_entry(facts, interface).get(family)
        if isinstance(entry, list):  # ipv6: a list of {address, prefix, scope}
            found = [item.get("address") for item in entry
                     if isinstance(item, Mapping) and item.get("scope", "global") == "global"]
            return found[0] if found else None
        return entry.get("address") if isinstance(entry, Mapping) else None
    default = facts.get(f"default_{family}")
    return default.get("address") if isinstance(default, Mapping) else None


def imex_address(host: str, facts: Mapping | None, address: t.Any = "", interface: t.Any = "",
                 family: t.Any = "ipv4", prefix: str = "gpufabric_imex") -> str:
    """The IMEX address of ``host`` from its ``ansible_facts`` and the settings ``address``/``interface``/``family``.

    ``prefix`` names the variables the settings come from in messages: ``<prefix>_address``,
    ``<prefix>_interface`` and ``<prefix>_address_family``.  Raises :class:`ImexAddressError` when the family
    is unknown, the explicit address is not an IP address, or the facts hold no address.
    """
    family = "ipv4" if family in (None, "") else family
    if family not in FAMILIES:
        raise ImexAddressError(f"host {host}: {prefix}_address_family must be one of {', '.join(FAMILIES)}, "
                               f"got {family!r}")
    label = f"{prefix}_address"
    family_variable = f"{prefix}_address_family"
    if address not in (None, ""):
        return canonical_ip(address, f"host {host}: {label}", family, family_variable)
    if interface not in (None, "") and not isinstance(interface, str):
        raise ImexAddressError(f"host {host}: {prefix}_interface must be an interface name, "
                               f"got {type(interface).__name__}")
    interface = interface or None
    where = where_of(interface, family)
    found = fact_address(facts or {}, family, interface)
    if not found:
        choose = f"{prefix}_interface or {prefix}_address_family"
        raise ImexAddressError(f"host {host}: no IMEX address found: {label} is not set and {where} is empty "
                               f"(gather setup facts, choose another {choose}, or set {label})")
    return canonical_ip(found, f"host {host}: {where}", family, family_variable)
