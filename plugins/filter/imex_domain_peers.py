# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_domain_peers`` filter: the other members of a run's IMEX domains.

A thin wrapper over :func:`...plugin_utils.imex_domains.domain_peers`, which places hosts in domains as
:func:`...plugin_utils.imex_domains.derive_domains` does.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import ImexDomainError, domain_peers


@arguments.filter_errors("imex_domain_peers")
def imex_domain_peers(hostvars: Mapping, hosts: t.Sequence[str], fleet: t.Sequence[str],
                      outside: Mapping | None = None) -> dict[str, list[str]]:
    """Return ``{members, unknown}`` for the domains of ``hosts``; see the filter documentation."""
    try:
        if not isinstance(hostvars, Mapping):
            raise arguments.ArgumentError(f"the input must be hostvars (a mapping), got {type(hostvars).__name__}")
        names = {}
        for argument, value in (("hosts", hosts), ("fleet", fleet)):
            names[argument] = [arguments.text(f"{argument} entry", name)
                               for name in arguments.sequence(argument, value)]
        return domain_peers(hostvars, names["hosts"], names["fleet"], outside)
    except (arguments.ArgumentError, ImexDomainError) as exc:
        raise AnsibleFilterError(f"imex_domain_peers: {exc}") from None


class FilterModule:
    """The filter of the other members of a run's IMEX domains."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_domain_peers": imex_domain_peers}
