# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The members of a run's IMEX domains that its inventory does not hold: a job slice (issue 44).

An automation platform that slices a job slices the inventory itself: AWX's ``Inventory.get_script_data``
(awx/main/models/inventory.py) hands slice k of N only the hosts ``[k-1::N]`` in name order, and a sliced job's fact
cache holds only those hosts too (``Job.get_hosts_for_fact_cache``, awx/main/models/jobs.py, slices the hosts that
``start_fact_cache``, awx/main/tasks/facts.py, writes into the job's ``artifacts/<id>/fact_cache``).  The other members
of a slice's IMEX domains are then not in ``hostvars`` at all, and no ``--limit``-style resolution of the fleet can
find them.

So the membership of a domain is recorded where a slice finds it: the preflight that judged a whole domain (every
member's facts there) leaves on each member the cacheable fact :data:`MEMBERSHIP_FACT`, ``{clique, members: {name:
IMEX address}}``, which the fact cache keeps with the member's own facts.  A run whose host holds that record for its
current clique knows every member by name; a member outside the inventory is read from the fact cache
(``gpufabric.cluster.cached_facts`` lookup: a shared jsonfile cache, say), with the IMEX address the record holds, as
if its hostvars were there (:class:`FleetHostvars`).  A recorded member whose facts are in neither is *missing*, and
every decision over its domain refuses that domain, naming it: a nodes file or a domain verdict is never made from
part of a domain.
"""

from __future__ import annotations

import typing as t
from collections.abc import Iterator, Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key

MEMBERSHIP_FACT = "gpufabric_imex_membership"
# The variable a recorded member's IMEX address stands in for: the site's explicit address, which the preflight
# (gpufabric.cluster.imex_address) and nvidia_imex (imex_domains.MEMBER_SETTINGS) both read of a member.
ADDRESS_VARIABLE = "gpufabric_imex_address"


class FleetHostvars(Mapping):
    """``hostvars`` with the members outside the inventory added: ``outside`` maps each such host to the hostvars-like
    record :func:`outside_members` builds.  A host of the inventory always reads its own hostvars."""

    def __init__(self, hostvars: Mapping, outside: Mapping[str, Mapping] | None) -> None:
        self._hostvars = hostvars
        self._outside = {name: record for name, record in (outside or {}).items() if name not in hostvars}

    def __getitem__(self, name: str) -> t.Any:
        if name in self._outside:
            return self._outside[name]
        return self._hostvars[name]

    def __contains__(self, name: object) -> bool:
        return name in self._outside or name in self._hostvars

    def __iter__(self) -> Iterator[str]:
        yield from self._hostvars
        yield from self._outside

    def __len__(self) -> int:
        return len(self._hostvars) + len(self._outside)

    @property
    def outside(self) -> list[str]:
        """The hosts added, in natural name order."""
        return sorted(self._outside, key=natural_key)


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _single_clique(host_vars: Mapping) -> str | None:
    gpu = _map(_map(_map(_map(host_vars).get("ansible_facts")).get("gpufabric")).get("gpu"))
    cliques = gpu.get("cliques")
    if not isinstance(cliques, (list, tuple)):
        return None
    found = {clique for clique in cliques if isinstance(clique, str) and clique}
    return found.pop() if len(found) == 1 else None


def membership_record(host_vars: Mapping) -> dict | None:
    """The membership record a host holds for its current clique, ``{clique, members: {name: address}}``, or None:
    absent, of another shape, or of another clique than the host's GPUs report now (stale, the host moved)."""
    facts = _map(_map(host_vars).get("ansible_facts"))
    record = facts.get(MEMBERSHIP_FACT)
    if record is None:
        record = _map(host_vars).get(MEMBERSHIP_FACT)
    record = _map(record)
    clique = record.get("clique")
    members = record.get("members")
    if not isinstance(clique, str) or not isinstance(members, Mapping) or not members:
        return None
    if clique != _single_clique(host_vars):
        return None
    if not all(isinstance(name, str) and name and isinstance(address, str) and address
               for name, address in members.items()):
        return None
    return {"clique": clique, "members": dict(members)}


def recorded_members(hostvars: Mapping, hosts: t.Sequence[str]) -> dict[str, dict[str, str]]:
    """The recorded members of the domains of ``hosts``: ``{clique: {name: address}}``, from every host's
    :func:`membership_record` (two records of one clique are joined)."""
    recorded: dict[str, dict[str, str]] = {}
    for name in hosts:
        record = membership_record(hostvars.get(name) if name in hostvars else {})
        if record:
            recorded.setdefault(record["clique"], {}).update(record["members"])
    return recorded


def _has_fabric_facts(facts: t.Any) -> bool:
    return isinstance(_map(_map(facts).get("gpufabric")).get("gpu"), Mapping)


def outside_members(hostvars: Mapping, hosts: t.Sequence[str], cached: Mapping[str, t.Any] | None,
                    recorded: Mapping[str, Mapping[str, str]] | None = None) -> dict:
    """The recorded members of the domains of ``hosts`` that the inventory does not hold.

    ``cached`` maps a host name to its cached facts (``gpufabric.cluster.cached_facts``).  Returns ``{hostvars:
    {name: {ansible_facts, gpufabric_imex_address}}, missing: {clique: [names]}}``: the members found in ``cached``,
    with the address their record holds, and, per clique, those found nowhere (without fabric facts), in natural name
    order.  A recorded member in the inventory is left to its own hostvars.  ``recorded``: what
    :func:`recorded_members` returns for ``hostvars`` and ``hosts``, where the caller read it already (reading every
    host's variables is the costly part at fleet scale); read here when None.
    """
    cached = cached if isinstance(cached, Mapping) else {}
    recorded = recorded_members(hostvars, hosts) if recorded is None else recorded
    found: dict[str, dict] = {}
    missing: dict[str, list[str]] = {}
    for clique, members in sorted(recorded.items()):
        for name in sorted(members, key=natural_key):
            if name in hostvars:
                continue
            facts = cached.get(name)
            if _has_fabric_facts(facts):
                found[name] = {"ansible_facts": dict(facts), ADDRESS_VARIABLE: members[name]}
            else:
                missing.setdefault(clique, []).append(name)
    return {"hostvars": found, "missing": missing}


def missing_text(missing: Mapping[str, t.Sequence[str]], limit: int = 10) -> str:
    """``'IMEX domain <clique>: no facts of <names>'`` per domain, joined by ``'; '``."""
    parts = []
    for clique, names in sorted(missing.items()):
        shown = ", ".join(list(names)[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")
        parts.append(f"IMEX domain {clique}: no facts of its member(s) {shown}")
    return "; ".join(parts)
