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

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import (
    ImexAddressError,
    canonical_ip,
    imex_address,
)


class ImexDomainError(ImexAddressError):
    """Input from which no IMEX domain can be derived; the message names the host and variable."""


def cliques_of(host_vars: Mapping) -> list[str]:
    """The fabric cliques of a host's GPUs from its ``ansible_facts['gpufabric']['gpu']['cliques']``."""
    facts = host_vars.get("ansible_facts") or {}
    gpu = (facts.get("gpufabric") or {}).get("gpu") or {}
    return sorted(str(clique) for clique in gpu.get("cliques") or [])


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


def address_of(name: str, host_vars: Mapping, family: str = "ipv4", interface: str | None = None,
               address_var: str = "nvidia_imex_address", address_label: str | None = None) -> str:
    """The IMEX address of host ``name``: ``host_vars[address_var]`` or the address setup found.

    The rule is :func:`...plugin_utils.imex_address.imex_address`; messages call the explicit address
    ``address_label`` (default ``address_var``), whose prefix names the interface and family variables.
    """
    label = address_label or address_var
    prefix = label[:-len("_address")] if label.endswith("_address") else label
    try:
        return imex_address(name, host_vars.get("ansible_facts") or {}, host_vars.get(address_var), interface,
                            family, prefix=prefix)
    except ImexAddressError as exc:
        raise ImexDomainError(str(exc)) from None


def _explicit_domains(domains: t.Any, hostvars: Mapping, variable: str) -> list[dict]:
    if not isinstance(domains, (list, tuple)):
        raise ImexDomainError(f"{variable} must be a list of {{name, hosts, nodes}} mappings")
    result = []
    seen: dict[str, str] = {}
    for number, domain in enumerate(domains):
        if not isinstance(domain, Mapping) or not domain.get("name"):
            raise ImexDomainError(f"{variable}[{number}] must be a mapping with a name")
        name = str(domain["name"])
        hosts = [str(host) for host in domain.get("hosts") or []]
        for host in hosts:
            if host not in hostvars:
                raise ImexDomainError(f"{variable}[{number}] ({name}): host {host} is not in the inventory")
            if host in seen:
                raise ImexDomainError(f"{variable}: host {host} is in two domains, {seen[host]} and {name}")
            seen[host] = name
        nodes = [canonical_ip(node, f"{variable}[{number}] ({name}): nodes entry")
                 for node in domain.get("nodes") or []]
        result.append({"name": name, "hosts": sorted(hosts), "nodes": nodes})
    return result


def derive_domains(hostvars: Mapping, hosts: t.Sequence[str], domains: t.Any = None, family: str = "ipv4",
                   interface: str | None = None, address_var: str = "nvidia_imex_address",
                   variable: str = "nvidia_imex_domains", address_label: str | None = None) -> dict[str, dict]:
    """Return, for every host in ``hosts``, its IMEX domain and the nodes file of that domain.

    ``domains`` (``variable`` in messages) lists explicit domains ``{name, hosts, nodes}``; when empty,
    domains are derived from the fabric cliques of ``hosts``.  Each host maps to ``{domain, clique,
    address, nodes}``; ``nodes`` is the sorted, deduplicated address list of the domain (every member's
    address plus the explicit ``nodes``), the same on every member.  A host in no domain gets
    ``domain: None`` and no nodes.  Raises :class:`ImexDomainError` for a host whose GPUs are in two
    cliques, an explicit domain whose hosts are in different cliques, a nodes entry that is not an IP
    address, or a member without an address.
    """
    cliques = {name: cliques_of(hostvars.get(name) or {}) for name in hosts}
    split = sorted(name for name, host_cliques in cliques.items() if len(host_cliques) > 1)
    if split:
        name = split[0]
        raise ImexDomainError(f"host {name}: its GPUs are in {len(cliques[name])} cliques "
                              f"({', '.join(cliques[name])}) in ansible_facts['gpufabric']['gpu']['cliques']; "
                              "one host belongs to exactly one IMEX domain (check the NVLink fabric)")
    if domains:
        chosen = _explicit_domains(domains, hostvars, variable)
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
    for domain in chosen:
        addresses = {host: address_of(host, hostvars.get(host) or {}, family, interface, address_var, address_label)
                     for host in domain["hosts"]}
        owners: dict[str, list[str]] = {}
        for host, address in addresses.items():
            owners.setdefault(address, []).append(host)
        shared = sorted((address, hosts_) for address, hosts_ in owners.items() if len(hosts_) > 1)
        if shared:
            address, hosts_ = shared[0]
            raise ImexDomainError(f"IMEX domain {domain['name']}: hosts {' and '.join(sorted(hosts_))} have the "
                                  f"same IMEX address {address} ({address_label or address_var}); "
                                  "every member needs its own")
        nodes = sorted_addresses([*addresses.values(), *domain["nodes"]])
        for host in domain["hosts"]:
            result[host] = {"domain": domain["name"], "clique": domain["clique"], "address": addresses[host],
                            "nodes": nodes}
    return result
