# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_outside_members`` filter: the recorded members of a run's IMEX domains that its
inventory does not hold (a job slice), from the fact cache.

A thin wrapper over :func:`...plugin_utils.fleet_facts.outside_members`; the one thing it adds is reading those
members' facts from the fact cache the run is configured with (``fact_caching`` and its connection, prefix and
timeout, or their ``ANSIBLE_CACHE_PLUGIN*`` variables), through Ansible's own cache plugin.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible import constants as C
from ansible.errors import AnsibleFilterError
from ansible.plugins.loader import cache_loader

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fleet_facts import outside_members, recorded_members


def cached_facts(names: t.Iterable[str]) -> dict[str, dict]:
    """The facts the run's fact cache holds of each of ``names`` (in the inventory or not); a host it does not hold
    (never cached, expired, unreadable) is left out.  With the default ``memory`` cache nothing outlives a run."""
    cache = cache_loader.get(C.CACHE_PLUGIN)
    found = {}
    for name in names:
        try:
            facts = cache.get(name) if cache.contains(name) else None
        except (KeyError, OSError, ValueError):
            continue
        if isinstance(facts, Mapping):
            found[name] = dict(facts)
    return found


@arguments.filter_errors("imex_outside_members")
def imex_outside_members(hostvars: Mapping, hosts: t.Sequence[str]) -> dict:
    """Return ``{hostvars, missing}``; see the filter documentation."""
    try:
        if not isinstance(hostvars, Mapping):
            raise arguments.ArgumentError(f"the input must be hostvars (a mapping), got {type(hostvars).__name__}")
        names = [arguments.text("hosts entry", name) for name in arguments.sequence("hosts", hosts)]
        # Every host's variables read once: the members outside the inventory are those the fact cache is asked for.
        recorded = recorded_members(hostvars, names)
        wanted = [name for members in recorded.values() for name in members if name not in hostvars]
        return outside_members(hostvars, names, cached_facts(wanted) if wanted else {}, recorded)
    except arguments.ArgumentError as exc:
        raise AnsibleFilterError(f"imex_outside_members: {exc}") from None


class FilterModule:
    """The filter of the recorded IMEX domain members outside the inventory."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_outside_members": imex_outside_members}
