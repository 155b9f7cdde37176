# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.site_lost`` filter: record the hosts a phase of a site run lost.

A thin wrapper over :func:`...plugin_utils.site.site_lost`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, site


@arguments.filter_errors("site_lost")
def site_lost(record: Mapping, hosts_all: t.Sequence[str], hosts_active: t.Sequence[str], phase: str,
              hostvars: Mapping | None = None) -> dict:
    """Return ``record`` with the hosts lost in ``phase`` added to ``failed``; see the filter documentation."""
    if not isinstance(record, Mapping):
        raise AnsibleFilterError(f"site_lost: the input must be the record of site_gate, got {type(record).__name__}")
    try:
        return site.site_lost(record, hosts_all, hosts_active, phase, hostvars)
    except site.SiteError as exc:
        raise AnsibleFilterError(f"site_lost: {exc}") from None


class FilterModule:
    """The site lost-hosts filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"site_lost": site_lost}
