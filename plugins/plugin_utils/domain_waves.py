# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Day-2 changes on the controller: which hosts change together, and in what order (issue 42).

On an NVL72 the NVLink domain (the hosts whose GPUs share one fabric clique, ``ansible_facts['gpufabric']['gpu']
['cliques']``) works or fails whole, so a change that needs a reboot is made to a domain whole: every member is
drained, changed, rebooted and verified together, and the domain returns to service only when all of them pass.
A *wave* is what changes at one time:

- the first wave holds one domain, the canary;
- each later wave holds up to ``domains_at_a_time`` domains (default 1);
- hosts whose GPUs are in no clique (HGX systems, single nodes, hosts whose driver is not loaded) are not in a
  domain: they follow the domains in waves of ``serial`` hosts each, host at a time by default.

A domain's members come from the fleet (every host that may be a member, resolved against the whole inventory),
never from the run: a member outside the run (``--limit``, a host that failed or was unreachable earlier) cannot be
drained, rebooted and verified with the others, so the domain is refused, naming it, before anything changes.  The
members of a domain that already run the wanted software are in its wave too: they are drained and verified with
the others (the domain returns whole), but nothing is installed on them.

Domains are ordered by rack (the chassis serial their trays name, :func:`...nvlink_domain.tray_place`), then by
clique, so a plan is the same for the same facts in any order of the input.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import SUBSETS, cliques_of, member_setting
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.nvlink_domain import place_key, place_text, tray_place

WAVE_KEYS = ("number", "canary", "domains", "hosts", "changing", "summary")
DOMAIN_KEYS = ("name", "rack", "hosts", "changing")


class DomainWaveError(ValueError):
    """Input from which no plan can be made; the message names the host, the domain or the argument."""


def _shown(names: t.Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _names(name: str, value: t.Any) -> list[str]:
    names = arguments.sequence(name, value)
    for item in names:
        if not isinstance(item, str) or not item:
            raise arguments.ArgumentError(f"{name} must be a list of host names, got {item!r} in it")
    return sorted(set(names), key=natural_key)


def _whole_number(name: str, value: t.Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit() \
            or int(value) < 1:
        raise arguments.ArgumentError(f"{name} must be a whole number greater than 0, got {value!r}")
    return int(value)


def _facts(hostvars: Mapping, name: str) -> Mapping:
    host_vars = hostvars.get(name)
    facts = host_vars.get("ansible_facts") if isinstance(host_vars, Mapping) else None
    gpufabric = facts.get("gpufabric") if isinstance(facts, Mapping) else None
    return gpufabric if isinstance(gpufabric, Mapping) else {}


def _has_gpu_facts(hostvars: Mapping, name: str) -> bool:
    return isinstance(_facts(hostvars, name).get("gpu"), Mapping)


def _domain(clique: str, members: list[str], changing: set[str], hostvars: Mapping) -> dict:
    places = [tray_place(_facts(hostvars, name)) for name in members]
    racks = sorted({place_text({"chassis_serial": place["chassis_serial"]}) for place in places if place})
    return {"name": clique, "rack": ", ".join(racks) or None,
            "hosts": sorted(members, key=lambda name: place_key(tray_place(_facts(hostvars, name)), name)),
            "changing": sorted((name for name in members if name in changing), key=natural_key)}


def _domain_key(domain: Mapping, hostvars: Mapping) -> tuple:
    first = domain["hosts"][0]
    return (*place_key(tray_place(_facts(hostvars, first)), "")[:2], domain["name"])


def plan_waves(hostvars: t.Any, changing: t.Any, run: t.Any, fleet: t.Any, domains_at_a_time: t.Any = 1,
               serial: t.Any = 1, fleet_variable: str = "fleet", nodes: t.Any = None,
               nodes_variable: str = "nodes", changes: t.Any = None) -> list[dict]:
    """The waves in which ``changing`` hosts change: ``[{number, canary, domains, hosts, changing}]``.

    ``changing`` are the hosts that need the change, ``run`` the hosts this run can change (the play's hosts that
    are still alive), ``fleet`` every host that may share a domain with them (``fleet_variable`` in messages).
    Each wave's ``domains`` lists ``{name, rack, hosts, changing}`` (empty for a wave of hosts in no domain),
    ``hosts`` every host of the wave (the members of its domains, changing or not), ``changing`` those of them that
    need the change; ``canary`` is true for the first wave when it holds a domain; ``summary`` is its line of
    :func:`plan_lines`.  No change: no wave.

    ``nodes`` maps a host of ``run`` to its Kubernetes node name (``nodes_variable`` in messages); two hosts of the
    run with one node name are refused (both would cordon and mark the same Node).

    ``changes`` maps a changing host to what changes on it, in a few words (``'driver 570.124.06 -> branch 580'``);
    the summary shows it after the hosts it applies to. Hosts it leaves out are shown without one.

    Raises :class:`DomainWaveError` for a changing host outside ``run`` or ``fleet``, a host whose GPUs are in two
    cliques, a member of a changing domain outside ``run``, and a host of the fleet whose GPU facts are not known
    (it might be a member of a changing domain): each named, before any wave.
    """
    hostvars = arguments.mapping("hostvars", hostvars)
    changing_names = _names("changing", changing)
    run_names = set(_names("run", run))
    fleet_names = _names(fleet_variable, fleet)
    node_of = arguments.mapping(nodes_variable, nodes or {})
    shared: dict[str, list[str]] = {}
    for name in sorted(run_names, key=natural_key):
        node = node_of.get(name)
        if isinstance(node, str) and node:
            shared.setdefault(node, []).append(name)
    shared = {node: names for node, names in shared.items() if len(names) > 1}
    if shared:
        raise DomainWaveError(f"{nodes_variable} must name one Kubernetes node per host: "
                              + "; ".join(f"{', '.join(names)} all name {node}" for node, names in shared.items()))
    at_a_time = _whole_number("domains_at_a_time", domains_at_a_time)
    serial = _whole_number("serial", serial)
    change_of = _changes(changes)
    outside = [name for name in changing_names if name not in run_names]
    if outside:
        raise DomainWaveError(f"host(s) {_shown(outside)} need the change but are not in this run")
    not_fleet = [name for name in changing_names if name not in set(fleet_names)]
    if not_fleet:
        raise DomainWaveError(f"host(s) {_shown(not_fleet)} of this run are not in {fleet_variable}: the NVLink "
                              f"domains are found over that fleet; add them to the host pattern {fleet_variable}")
    cliques = {name: cliques_of(hostvars.get(name) or {}) for name in fleet_names}
    several = [f"{name} ({', '.join(cliques[name])})" for name in changing_names if len(cliques[name]) > 1]
    if several:
        raise DomainWaveError(f"host(s) whose GPUs are in more than one NVLink clique cannot be changed with one "
                              f"domain: {_shown(several)}; fix the fabric first (the preflight names it)")
    changing_set = set(changing_names)
    wanted = sorted({cliques[name][0] for name in changing_names if cliques[name]})
    if wanted:
        unknown = [name for name in fleet_names if not _has_gpu_facts(hostvars, name)]
        if unknown:
            raise DomainWaveError(
                f"the GPU facts of host(s) {_shown(unknown)} of {fleet_variable} are not known, so the members of "
                f"NVLink domain(s) {_shown(wanted)} cannot be told: gather their facts in this run (include them, "
                "or use a fact cache), or take them out of the fleet")
    domains = []
    for clique in wanted:
        members = [name for name in fleet_names if cliques[name] == [clique]]
        missing = [name for name in members if name not in run_names]
        if missing:
            raise DomainWaveError(
                f"NVLink domain {clique}: member(s) {_shown(missing)} are not in this run (--limit, or they failed or "
                "were unreachable earlier); a domain is drained, changed, rebooted and verified whole: run it with "
                "all its members")
        domains.append(_domain(clique, members, changing_set, hostvars))
    domains.sort(key=lambda domain: _domain_key(domain, hostvars))
    groups = [domains[:1]] + [domains[index:index + at_a_time] for index in range(1, len(domains), at_a_time)]
    waves = [{"canary": index == 0, "domains": group, "hosts": [name for domain in group for name in domain["hosts"]],
              "changing": sorted((name for domain in group for name in domain["changing"]), key=natural_key)}
             for index, group in enumerate(group for group in groups if group)]
    alone = [name for name in changing_names if not cliques[name]]
    waves += [{"canary": False, "domains": [], "hosts": alone[index:index + serial],
               "changing": alone[index:index + serial]} for index in range(0, len(alone), serial)]
    numbered = [dict(wave, number=number) for number, wave in enumerate(waves, start=1)]
    return [dict(wave, summary=line) for wave, line in zip(numbered, plan_lines(numbered, change_of), strict=True)]


def members_to_probe(hostvars: t.Any, changing: t.Any, run: t.Any, fleet: t.Any, root: t.Any = "/",
                     fleet_variable: str = "fleet") -> list[dict]:
    """The hosts of ``fleet`` outside ``run`` whose GPU facts the plan needs and their vars lack:
    ``[{name, root, gather_subset}]`` for the caller's probe, in natural name order.

    Only while a ``changing`` host is in a clique (a domain's members are then looked for over the whole fleet); empty
    otherwise, so that a change of HGX hosts probes nobody else.  ``root`` is the probe root of a host whose vars set
    none; ``gather_subset`` keeps the subsets it has, since the facts module replaces ``ansible_facts['gpufabric']``.
    """
    hostvars = arguments.mapping("hostvars", hostvars)
    changing_names = _names("changing", changing)
    run_names = set(_names("run", run))
    fleet_names = _names(fleet_variable, fleet)
    root = arguments.text("root", root)
    if not any(cliques_of(hostvars.get(name) or {}) for name in changing_names):
        return []
    probes = []
    for name in fleet_names:
        if name in run_names or name not in hostvars or _has_gpu_facts(hostvars, name):
            continue
        present = [subset for subset in SUBSETS if subset in _facts(hostvars, name)]
        probes.append({"name": name, "root": member_setting(hostvars.get(name) or {}, "root", root),
                       "gather_subset": [subset for subset in SUBSETS if subset in [*present, "gpu"]]})
    return probes


def _changes(changes: t.Any) -> dict[str, str]:
    change_of = arguments.mapping("changes", changes or {})
    for name, change in change_of.items():
        if not isinstance(change, str):
            raise arguments.ArgumentError(f"changes must map host names to text, got {change!r} for {name!r}")
    return {name: " ".join(change.split())[:120] for name, change in change_of.items()}


def _changed(names: t.Sequence[str], change_of: Mapping[str, str]) -> str:
    """``names`` grouped by their change, each group followed by its change in brackets (none: no brackets)."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(change_of.get(name, ""), []).append(name)
    return "; ".join(_shown(group) + (f" ({change})" if change else "") for change, group in groups.items())


def plan_lines(waves: t.Sequence[Mapping], changes: Mapping[str, str] | None = None) -> list[str]:
    """The plan as an operator reads it: one line per wave, its domains with their rack and members, and what
    changes on the changing hosts (``changes``, by host) where it is known."""
    change_of = changes or {}
    lines = []
    for wave in waves:
        label = f"wave {wave['number']}" + (" (canary)" if wave.get("canary") else "")
        if wave["domains"]:
            parts = []
            for domain in wave["domains"]:
                where = f" ({domain['rack']})" if domain.get("rack") else ""
                kept = [name for name in domain["hosts"] if name not in domain["changing"]]
                parts.append(f"NVLink domain {domain['name']}{where}: change {_changed(domain['changing'], change_of)}"
                             + (f"; drain and verify with them {_shown(kept)}" if kept else ""))
            lines.append(f"{label}: " + "; ".join(parts))
        else:
            lines.append(f"{label}: host(s) in no NVLink domain: {_changed(wave['hosts'], change_of)}")
    return lines
