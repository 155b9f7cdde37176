# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.domain_members_to_probe`` filter: hosts whose GPU facts a day-2 plan needs.

A thin wrapper over :func:`...plugin_utils.domain_waves.members_to_probe`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import domain_waves as _logic


@arguments.filter_errors("domain_members_to_probe")
def domain_members_to_probe(hostvars: t.Any, changing: t.Any, run: t.Any, fleet: t.Any, root: t.Any = "/",
                            fleet_variable: str = "fleet") -> list[dict]:
    """Return ``[{name, root, gather_subset}]``; see the filter documentation."""
    try:
        return _logic.members_to_probe(hostvars, changing, run, fleet, root, fleet_variable)
    except (arguments.ArgumentError, _logic.DomainWaveError) as exc:
        raise AnsibleFilterError(f"domain_members_to_probe: {exc}") from None


class FilterModule:
    """The day-2 plan's probe filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"domain_members_to_probe": domain_members_to_probe}
