# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""IMEX domains on the controller: group hosts by fabric clique and resolve their IMEX addresses.

The address of each host is decided by :mod:`.imex_address` (the one rule).  Pure functions over
hostvars-like mappings, shared by the ``gpufabric.cluster.imex_domains`` filter (which
renders the nodes files of the ``nvidia_imex`` role) and the ``gpufabric.cluster.preflight_report`` filter
(which checks the nodes files found on the hosts).  Hosts whose GPUs share one clique
(``<cluster uuid>.<clique id>``, ``ansible_facts['gpufabric']['gpu']['cliques']``) form one IMEX domain.
Errors are :class:`ImexDomainError` with a message that names the host and the variable.
"""

from __future__ import annotations

import ipaddress
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import (
    FAMILIES,
    ImexAddressError,
    address_kind,
    canonical_ip,
    imex_address,
)


class ImexDomainError(ImexAddressError):
    """Input from which no IMEX domain can be derived; the message names the host and variable."""


DOMAIN_KEYS = ("name", "hosts", "nodes")


def cliques_of(host_vars: Mapping) -> list[str]:
    """The fabric cliques of a host's GPUs from its ``ansible_facts['gpufabric']['gpu']['cliques']``.

    Facts of an unexpected shape (not gathered by ``fabric_facts``) hold no clique.
    """
    facts = host_vars.get("ansible_facts") if isinstance(host_vars, Mapping) else None
    gpufabric = facts.get("gpufabric") if isinstance(facts, Mapping) else None
    gpu = gpufabric.get("gpu") if isinstance(gpufabric, Mapping) else None
    cliques = gpu.get("cliques") if isinstance(gpu, Mapping) else None
    if not isinstance(cliques, (list, tuple)):
        return []
    return sorted({str(clique) for clique in cliques if isinstance(clique, str) and clique})


def group_by_clique(cliques: Mapping[str, t.Sequence[str]]) -> dict[str, list[str]]:
    """Map each clique to the sorted hosts whose GPUs are all in it.

    ``cliques`` maps a host name to the cliques of its GPUs; hosts with no clique or with several
    (a broken fabric, reported elsewhere) belong to no domain.
    """
    by_clique: dict[str, list[str]] = {}
    for name, host_cliques in cliques.items():
        if len(host_cliques) == 1:
            by_clique.setdefault(host_cliques[0], []).append(name)
    return {clique: sorted(members) for clique, members in sorted(by_clique.items())}


def sorted_addresses(addresses: t.Iterable[str]) -> list[str]:
    """Deduplicate and sort IP addresses (IPv4 first, numerically)."""
    return sorted(set(addresses), key=address_key)


def nodes_file(addresses: t.Iterable[str], nodes: t.Iterable[str] = ()) -> list[str]:
    """The nodes file of an IMEX domain, line by line: the one rule that writes it and checks it.

    ``addresses`` are the members' IMEX addresses, ``nodes`` the explicit extra entries of the domain; the file
    lists each once, sorted (IPv4 first, numerically), the same on every member.  The ``nvidia_imex`` role
    writes it (through :func:`derive_domains`) and the preflight compares the file found on every member with it.
    """
    return sorted_addresses([*addresses, *nodes])


def unusable_nodes(addresses: t.Iterable[str]) -> list[str]:
    """Why the entries of a nodes file cannot form an IMEX domain: each address of a kind
    :func:`.imex_address.address_kind` refuses (``'127.0.0.1 (loopback)'``, ``'224.0.0.1 (multicast)'``), and one
    ``'IPv4 and IPv6 addresses mixed'`` when both families are listed.  Entries that are not IP addresses are left to
    the caller (the probe reports them)."""
    problems = []
    versions = set()
    for entry in addresses:
        try:
            parsed = ipaddress.ip_address(str(entry).strip())
        except ValueError:
            continue
        versions.add(parsed.version)
        kind = address_kind(parsed)
        if kind:
            problems.append(f"{parsed} ({kind})")
    if len(versions) > 1:
        problems.append("IPv4 and IPv6 addresses mixed")
    return problems


def address_of(name: str, host_vars: Mapping, family: str = "ipv4", interface: str | None = None,
               address_var: str = "nvidia_imex_address", address_label: str | None = None) -> str:
    """The IMEX address of host ``name``: ``host_vars[address_var]`` or the address setup found.

    The rule is :func:`...plugin_utils.imex_address.imex_address`; messages call the explicit address
    ``address_label`` (default ``address_var``), whose prefix names the interface and family variables.
    """
    label = address_label or address_var
    prefix = label[:-len("_address")] if label.endswith("_address") else label
    if not isinstance(host_vars, Mapping):
        raise ImexDomainError(f"host {name}: its hostvars must be a mapping, got {type(host_vars).__name__}")
    try:
        return imex_address(name, host_vars.get("ansible_facts") or {}, host_vars.get(address_var), interface,
                            family, prefix=prefix)
    except ImexAddressError as exc:
        raise ImexDomainError(str(exc)) from None


def _list(value: t.Any, where: str) -> list:
    """``value`` as a list (``None``: empty); a string is refused, never iterated character by character."""
    if value is None:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise ImexDomainError(f"{where} must be a list, got {_kind(value)}")
    return list(value)


def _names(value: t.Any, where: str) -> list[str]:
    """A list of host names."""
    value = _list(value, where)
    for item in value:
        if not isinstance(item, str) or not item:
            raise ImexDomainError(f"{where} must hold host names (strings), got {item!r}")
    return list(value)


def _kind(value: t.Any) -> str:
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _explicit_domains(domains: t.Any, hostvars: Mapping, variable: str, family: str,
                      family_variable: str) -> list[dict]:
    if isinstance(domains, (str, bytes)) or not isinstance(domains, (list, tuple)):
        raise ImexDomainError(f"{variable} must be a list of {{name, hosts, nodes}} mappings, got {_kind(domains)}")
    result = []
    seen: dict[str, str] = {}
    names: set[str] = set()
    for number, domain in enumerate(domains):
        where = f"{variable}[{number}]"
        if not isinstance(domain, Mapping):
            raise ImexDomainError(f"{where} must be a mapping with a name, got {_kind(domain)}")
        unknown = sorted(str(key) for key in domain if key not in DOMAIN_KEYS)
        if unknown:
            raise ImexDomainError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(DOMAIN_KEYS)})")
        name = domain.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ImexDomainError(f"{where} must be a mapping with a name (a non-empty string)")
        if name in names:
            raise ImexDomainError(f"{variable}: two domains are named {name}")
        names.add(name)
        hosts = _names(domain.get("hosts"), f"{where} ({name}).hosts")
        for host in hosts:
            if host not in hostvars:
                raise ImexDomainError(f"{where} ({name}): host {host} is not in the inventory")
            if host in seen:
                raise ImexDomainError(f"{variable}: host {host} is in two domains, {seen[host]} and {name}")
            seen[host] = name
        entries = _list(domain.get("nodes"), f"{where} ({name}).nodes")
        nodes = [canonical_ip(node, f"{where} ({name}): nodes entry", family, family_variable) for node in entries]
        result.append({"name": name, "hosts": sorted(hosts), "nodes": nodes})
    return result


def derive_domains(hostvars: Mapping, hosts: t.Sequence[str], domains: t.Any = None, family: str = "ipv4",
                   interface: str | None = None, address_var: str = "nvidia_imex_address",
                   variable: str = "nvidia_imex_domains", address_label: str | None = None) -> dict[str, dict]:
    """Return, for every host in ``hosts``, its IMEX domain and the nodes file of that domain.

    ``domains`` (``variable`` in messages) lists explicit domains ``{name, hosts, nodes}``; when empty,
    domains are derived from the fabric cliques of ``hosts``.  Each host maps to ``{domain, clique,
    address, nodes}``; ``nodes`` is :func:`nodes_file` of the domain (every member's address plus the explicit
    ``nodes``), the same on every member.  A host in no domain gets ``domain: None`` and no nodes.  Raises
    :class:`ImexDomainError` for a host whose GPUs are in two cliques, an explicit domain whose hosts are in
    different cliques, a domain definition of the wrong shape (not a list of mappings, an unknown key, hosts or
    nodes that are not lists), a nodes entry that is not a usable IP address of ``family``, a member without an
    address, or two hosts with the same address.
    """
    if not isinstance(hostvars, Mapping):
        raise ImexDomainError(f"the input must be hostvars (a mapping), got {_kind(hostvars)}")
    label = address_label or address_var
    prefix = label[:-len("_address")] if label.endswith("_address") else label
    family_variable = f"{prefix}_address_family"
    if family not in FAMILIES:
        raise ImexDomainError(f"{family_variable} must be one of {', '.join(FAMILIES)}, got {family!r}")
    cliques = {name: cliques_of(hostvars.get(name) or {}) for name in hosts}
    split = sorted(name for name, host_cliques in cliques.items() if len(host_cliques) > 1)
    if split:
        name = split[0]
        raise ImexDomainError(f"host {name}: its GPUs are in {len(cliques[name])} cliques "
                              f"({', '.join(cliques[name])}) in ansible_facts['gpufabric']['gpu']['cliques']; "
                              "one host belongs to exactly one IMEX domain (check the NVLink fabric)")
    if not (domains is None or (isinstance(domains, (str, list, tuple)) and not domains)):
        chosen = _explicit_domains(domains, hostvars, variable, family, family_variable)
        for domain in chosen:
            found = {clique for host in domain["hosts"] for clique in cliques_of(hostvars.get(host) or {})}
            if len(found) > 1:
                detail = ", ".join(f"{host} ({', '.join(cliques_of(hostvars.get(host) or {})) or 'no clique'})"
                                   for host in domain["hosts"])
                raise ImexDomainError(f"{variable} ({domain['name']}): its hosts are in different cliques: {detail}; "
                                      "hosts of one IMEX domain must share one NVLink clique")
            domain["clique"] = found.pop() if found else None
    else:
        chosen = [{"name": clique, "hosts": members, "nodes": [], "clique": clique}
                  for clique, members in group_by_clique(cliques).items()]
    result = {name: {"domain": None, "clique": (cliques[name] or [None])[0], "address": None, "nodes": []}
              for name in hosts}
    owners: dict[str, list[str]] = {}
    for domain in chosen:
        addresses = {host: address_of(host, hostvars.get(host) or {}, family, interface, address_var, address_label)
                     for host in domain["hosts"]}
        for host, address in addresses.items():
            owners.setdefault(address, []).append(host)
        nodes = nodes_file(addresses.values(), domain["nodes"])
        for host in domain["hosts"]:
            result[host] = {"domain": domain["name"], "clique": domain["clique"], "address": addresses[host],
                            "nodes": nodes}
    shared = sorted((address, sorted(names)) for address, names in owners.items() if len(names) > 1)
    if shared:
        address, names = shared[0]
        in_domains = sorted({str(result[name]["domain"]) for name in names})
        if len(in_domains) == 1:
            raise ImexDomainError(f"IMEX domain {in_domains[0]}: hosts {' and '.join(names)} have the same IMEX "
                                  f"address {address} ({label}); every member needs its own")
        where = " and ".join(f"{name} (IMEX domain {result[name]['domain']})" for name in names)
        raise ImexDomainError(f"hosts {where} have the same IMEX address {address} ({label}); "
                              "every host needs its own")
    return result
