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

Membership is decided here, over the fleet (issue 41): the hosts of a host pattern resolved against the whole
inventory (``nvidia_imex_fleet``: ``--limit`` and a play batch do not narrow it), never over the hosts of one run.
A domain's nodes file lists every member the facts place in it, the run's hosts and the others; a member outside the
run is known by the facts it holds (an earlier play, a fact cache, or the probe the role runs for exactly the members
:func:`members_to_probe` names).  While a host of the fleet has no fabric facts, no domain of the run is derived:
any of them might be that host's, so :func:`derive_domains` refuses, naming every such host.
"""

from __future__ import annotations

import ipaddress
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key, natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fleet_facts import FleetHostvars, missing_text
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
# The variables a host's IMEX address and probe root are read from when the run did not decide them (a member
# outside the run): the role's variable where the host's inventory or the extra vars set it, else the site's, else
# the run's own value (the caller's ``interface``, ``family`` and ``root``).  The explicit address is never the run's.
MEMBER_SETTINGS = {
    "address": ("nvidia_imex_address", "gpufabric_imex_address"),
    "interface": ("nvidia_imex_interface", "gpufabric_imex_interface"),
    "family": ("nvidia_imex_address_family", "gpufabric_imex_address_family"),
    "root": ("nvidia_imex_probe_root", "gpufabric_probe_root"),
}
# The subsets of gpufabric.cluster.fabric_facts; of a member the derivation reads ``gpu`` (its cliques) and, unless
# its address is explicit, ``network`` (or setup's network facts).
SUBSETS = ("gpu", "connectx", "imex", "peermem", "network")


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


def member_setting(host_vars: Mapping, key: str, fallback: t.Any = None) -> t.Any:
    """A member's setting ``key`` of :data:`MEMBER_SETTINGS`: the first of its variables the host's vars set (not
    null or empty), else ``fallback``."""
    for variable in MEMBER_SETTINGS[key]:
        value = host_vars.get(variable) if isinstance(host_vars, Mapping) else None
        if value not in (None, ""):
            return value
    return fallback


def address_of(name: str, host_vars: Mapping, family: str = "ipv4", interface: str | None = None,
               address_var: str = "nvidia_imex_address", address_label: str | None = None) -> str:
    """The IMEX address of host ``name``: ``host_vars[address_var]`` or the address its settings and facts give.

    The rule is :func:`...plugin_utils.imex_address.imex_address`; messages call the explicit address
    ``address_label`` (default ``address_var``), whose prefix names the interface and family variables.  A host
    that holds no ``address_var`` (the ``nvidia_imex`` role publishes it for the hosts of its run) is read by
    :data:`MEMBER_SETTINGS`, with ``interface`` and ``family`` where its vars set neither; its address must be of
    ``family`` (one nodes file holds one family).
    """
    label = address_label or address_var
    prefix = label[:-len("_address")] if label.endswith("_address") else label
    if not isinstance(host_vars, Mapping):
        raise ImexDomainError(f"host {name}: its hostvars must be a mapping, got {type(host_vars).__name__}")
    facts = host_vars.get("ansible_facts") or {}
    try:
        if host_vars.get(address_var) not in (None, ""):
            return imex_address(name, facts, host_vars.get(address_var), interface, family, prefix=prefix)
        found = imex_address(name, facts, member_setting(host_vars, "address", ""),
                             member_setting(host_vars, "interface", interface),
                             member_setting(host_vars, "family", family), prefix=prefix)
        return canonical_ip(found, f"host {name}: {label}", family, f"{prefix}_address_family")
    except ImexAddressError as exc:
        raise ImexDomainError(str(exc)) from None


def _fabric(host_vars: t.Any) -> tuple[Mapping, Mapping]:
    """``(ansible_facts, ansible_facts['gpufabric'])`` of a host, empty where absent or of another shape."""
    facts = host_vars.get("ansible_facts") if isinstance(host_vars, Mapping) else None
    facts = facts if isinstance(facts, Mapping) else {}
    gpufabric = facts.get("gpufabric")
    return facts, gpufabric if isinstance(gpufabric, Mapping) else {}


def lacking_subsets(host_vars: t.Any, address_var: str = "nvidia_imex_address", cliques: bool = True) -> list[str]:
    """The fabric facts subsets a member's facts lack for the derivation: ``gpu`` (its cliques; only with
    ``cliques``) and ``network`` (its address), unless its address is explicit (``address_var`` or
    :data:`MEMBER_SETTINGS`) or setup's network facts are there."""
    facts, gpufabric = _fabric(host_vars)
    lacking = []
    if cliques and not isinstance(gpufabric.get("gpu"), Mapping):
        lacking.append("gpu")
    explicit = isinstance(host_vars, Mapping) and (host_vars.get(address_var) not in (None, "")
                                                   or member_setting(host_vars, "address") is not None)
    setup_network = any(key in facts for key in ("interfaces", "default_ipv4", "default_ipv6"))
    if not explicit and not setup_network and not isinstance(gpufabric.get("network"), Mapping):
        lacking.append("network")
    return lacking


def _explicit(domains: t.Any) -> bool:
    return not (domains is None or (isinstance(domains, (str, list, tuple)) and not domains))


def members_to_probe(hostvars: Mapping, fleet: t.Sequence[str], domains: t.Any = None, root: str = "/",
                     address_var: str = "nvidia_imex_address", subsets: t.Sequence[str] = ()) -> list[dict]:
    """The members whose fabric facts the derivation needs and their vars lack: ``[{name, root, gather_subset}]``.

    Without explicit ``domains``, every host of ``fleet`` (any may be a member of the run's domains) lacking
    :func:`lacking_subsets`; with them, every host they list that lacks an address.  ``subsets`` are further subsets
    the caller reads of each of them (the preflight judges every subset).  ``root`` is the probe root of a member
    whose vars set none (:data:`MEMBER_SETTINGS`); ``gather_subset`` holds the subsets it has too, since a facts
    module replaces ``ansible_facts['gpufabric']`` as a whole.  In natural name order; empty when every member's
    facts are there (a full run, an earlier play, a fact cache).
    """
    if _explicit(domains):
        names = [host for domain in (domains if isinstance(domains, (list, tuple)) else [])
                 if isinstance(domain, Mapping) for host in _list_or_empty(domain.get("hosts"))]
        cliques = False
    else:
        names = list(fleet)
        cliques = True
    probes = []
    for name in sorted({name for name in names if isinstance(name, str) and name in hostvars}, key=natural_key):
        host_vars = hostvars.get(name) or {}
        lacking = lacking_subsets(host_vars, address_var, cliques)
        lacking += [subset for subset in subsets if subset in SUBSETS and subset not in _fabric(host_vars)[1]]
        if lacking:
            present = [subset for subset in SUBSETS if subset in _fabric(host_vars)[1]]
            probes.append({"name": name, "root": member_setting(host_vars, "root", root),
                           "gather_subset": [subset for subset in SUBSETS if subset in present + lacking]})
    return probes


def with_outside(hostvars: Mapping, fleet: t.Sequence[str] | None,
                 outside: t.Any) -> tuple[Mapping, list | None, dict[str, list[str]]]:
    """``(hostvars, fleet, missing)`` with the members outside the inventory of ``outside`` (what
    :func:`.fleet_facts.outside_members` returns, or None) added to both, and its missing members per clique."""
    if outside is None:
        return hostvars, (None if fleet is None else list(fleet)), {}
    if not isinstance(outside, Mapping) or not isinstance(outside.get("hostvars"), Mapping) \
            or not isinstance(outside.get("missing"), Mapping):
        raise ImexDomainError("outside must be what gpufabric.cluster.imex_outside_members returns "
                              f"({{hostvars, missing}}), got {_kind(outside)}")
    view = FleetHostvars(hostvars, outside["hostvars"])
    missing = {str(clique): [str(name) for name in _list(names, f"outside.missing[{clique}]")]
               for clique, names in outside["missing"].items()}
    return view, (None if fleet is None else [*fleet, *view.outside]), missing


REFUSED_WHY = ("(recorded in gpufabric_imex_membership by the run that judged the whole domain; not in the inventory, "
               "e.g. outside this job slice, nor in the fact cache): such a domain is refused, its nodes file is "
               "written from all of its members or not at all; run unsliced, or keep a fact cache that holds their "
               "facts")


def refused_domains(hostvars: Mapping, hosts: t.Sequence[str],
                    missing: Mapping[str, t.Sequence[str]]) -> dict[str, str]:
    """``{clique: reason}`` for the domains of ``hosts`` with recorded members whose facts are missing."""
    run_cliques = {clique for name in hosts for clique in cliques_of(hostvars.get(name) or {})}
    return {clique: f"{missing_text({clique: names})} {REFUSED_WHY}"
            for clique, names in sorted(missing.items()) if clique in run_cliques and names}


def domain_peers(hostvars: Mapping, hosts: t.Sequence[str], fleet: t.Sequence[str],
                 outside: t.Any = None) -> dict[str, list[str]]:
    """The other members of the IMEX domains of ``hosts``, from the facts of ``fleet``: ``{members, unknown}``.

    ``members`` are the hosts of ``fleet`` outside ``hosts`` whose GPUs are in one clique with a host of ``hosts``
    (as :func:`derive_domains` places them), and those whose GPUs name several cliques, one of them a clique of
    ``hosts`` (a broken fabric: the preflight judges and names them); ``unknown`` those without fabric facts
    (``gpu``) while a host of ``hosts`` is in a clique: any of them might be a member.  Natural name order.  For the
    preflight, which judges whole domains (a run limited to part of one included) and reports rather than refuses.
    ``outside`` (:func:`.fleet_facts.outside_members`) adds the recorded members outside the inventory to the fleet.
    """
    hostvars, fleet, _missing = with_outside(hostvars, fleet, outside)
    run_cliques = set()
    for name in hosts:
        host_cliques = cliques_of(hostvars.get(name) or {})
        if len(host_cliques) == 1:
            run_cliques.add(host_cliques[0])
    others = sorted(set(fleet) - set(hosts), key=natural_key)
    members = []
    for name in others:
        host_cliques = cliques_of(hostvars.get(name) or {})
        if run_cliques.intersection(host_cliques):
            members.append(name)
    unknown = [name for name in others if not isinstance(_fabric(hostvars.get(name))[1].get("gpu"), Mapping)]
    return {"members": members, "unknown": unknown if run_cliques else []}


def _list_or_empty(value: t.Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


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


def _shown_names(names: t.Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _fleet(hosts: t.Sequence[str], fleet: t.Any, fleet_variable: str) -> list[str]:
    """The fleet's hosts in natural name order; refuses a host of the run outside it (membership would then depend on
    the run)."""
    fleet = sorted(set(_names(fleet, fleet_variable)), key=natural_key)
    outside = sorted(set(hosts) - set(fleet), key=natural_key)
    if outside:
        raise ImexDomainError(f"host(s) {_shown_names(outside)} of this run are not in {fleet_variable} "
                              f"({len(fleet)} host(s)): the IMEX domains are derived over that fleet, whatever the run "
                              f"holds; add them to the host pattern {fleet_variable} (default gpufabric_host_targets)")
    return fleet


def derive_domains(hostvars: Mapping, hosts: t.Sequence[str], domains: t.Any = None, family: str = "ipv4",
                   interface: str | None = None, address_var: str = "nvidia_imex_address",
                   variable: str = "nvidia_imex_domains", address_label: str | None = None,
                   fleet: t.Sequence[str] | None = None, fleet_variable: str = "nvidia_imex_fleet",
                   outside: t.Any = None) -> dict[str, dict]:
    """Return, for every host in ``hosts``, its IMEX domain and the nodes file of that domain.

    ``domains`` (``variable`` in messages) lists explicit domains ``{name, hosts, nodes}``; when empty,
    domains are derived from the fabric cliques of ``fleet`` (``fleet_variable`` in messages: every host that may be a
    member, the run's and the others), or of ``hosts`` alone without one.  Each host maps to ``{domain, clique,
    address, nodes}``; ``nodes`` is :func:`nodes_file` of the domain (every member's address plus the explicit
    ``nodes``), the same on every member, whichever of them the run holds; the members outside ``hosts`` of the run's
    domains are in the result too.  A host in no domain gets ``domain: None`` and no nodes.  Raises
    :class:`ImexDomainError` for a host whose GPUs are in two cliques, an explicit domain whose hosts are in
    different cliques, a domain definition of the wrong shape (not a list of mappings, an unknown key, hosts or
    nodes that are not lists), a nodes entry that is not a usable IP address of ``family``, a member without an
    address, or two hosts with the same address; with ``fleet``, for a host of ``hosts`` outside it, and for hosts
    of the fleet without fabric facts (``ansible_facts['gpufabric']['gpu']``) while a host of the run is in a
    clique: every such host is named, since any of the run's domains might be theirs; and for a host of the fleet
    whose GPUs are in several cliques, one of them a clique of the run (it would drop out of that domain's file).
    ``outside`` (:func:`.fleet_facts.outside_members`) adds the recorded members outside the inventory to the
    hostvars and the fleet; a domain of the run with a recorded member whose facts are missing is refused, that
    domain only: each of its hosts of the run gets ``domain: None``, no nodes and ``refused``, the reason naming the
    domain and those members (every host has ``refused``, None where nothing was refused).
    """
    if not isinstance(hostvars, Mapping):
        raise ImexDomainError(f"the input must be hostvars (a mapping), got {_kind(hostvars)}")
    refused: dict[str, str] = {}
    if not _explicit(domains):
        hostvars, fleet, missing = with_outside(hostvars, fleet, outside)
        refused = refused_domains(hostvars, hosts, missing)
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
    if _explicit(domains):
        chosen = _explicit_domains(domains, hostvars, variable, family, family_variable)
        for domain in chosen:
            found = {clique for host in domain["hosts"] for clique in cliques_of(hostvars.get(host) or {})}
            if len(found) > 1:
                detail = ", ".join(f"{host} ({', '.join(cliques_of(hostvars.get(host) or {})) or 'no clique'})"
                                   for host in domain["hosts"])
                raise ImexDomainError(f"{variable} ({domain['name']}): its hosts are in different cliques: {detail}; "
                                      "hosts of one IMEX domain must share one NVLink clique")
            domain["clique"] = found.pop() if found else None
    elif fleet is not None:
        members = _fleet(hosts, fleet, fleet_variable)
        run_cliques = sorted({host_cliques[0] for host_cliques in cliques.values() if len(host_cliques) == 1})
        unknown = [name for name in members if "gpu" in lacking_subsets(hostvars.get(name), address_var)]
        if unknown and run_cliques:
            raise ImexDomainError(
                f"IMEX domain membership: no fabric facts of {_shown_names(unknown)} of {fleet_variable} (unreachable, "
                f"or the probe failed); any of this run's IMEX domains "
                f"({_shown_names(run_cliques, 3)}) may hold them, and its nodes file lists every member: make them "
                f"reachable, keep a fact cache that holds their facts, set {variable}, or leave them out of "
                f"{fleet_variable}")
        fleet_cliques = {name: cliques_of(hostvars.get(name) or {}) for name in members}
        split = [name for name in members
                 if len(fleet_cliques[name]) > 1 and set(run_cliques) & set(fleet_cliques[name])]
        if split:
            name = split[0]
            raise ImexDomainError(f"host {name} of {fleet_variable}: its GPUs are in {len(fleet_cliques[name])} "
                                  f"cliques ({', '.join(fleet_cliques[name])}) in "
                                  "ansible_facts['gpufabric']['gpu']['cliques'], one of them an IMEX domain of this "
                                  "run, whose nodes file lists every member: check "
                                  f"its NVLink fabric, or set {variable}")
        chosen = [{"name": clique, "hosts": names, "nodes": [], "clique": clique}
                  for clique, names in group_by_clique(fleet_cliques).items()
                  if clique in run_cliques and clique not in refused]
    else:
        chosen = [{"name": clique, "hosts": members, "nodes": [], "clique": clique}
                  for clique, members in group_by_clique(cliques).items() if clique not in refused]
    result = {name: {"domain": None, "clique": (cliques[name] or [None])[0], "address": None, "nodes": [],
                     "refused": refused.get((cliques[name] or [None])[0])}
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
                            "nodes": nodes, "refused": None}
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
