# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.site_gate`` filter: which hosts of a site run go on after the preflight, and why not.

A thin wrapper over :func:`...plugin_utils.site.site_gate`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, site


@arguments.filter_errors("site_gate")
def site_gate(report: Mapping, targets: t.Sequence[str], checks: t.Sequence[str], hosts_all: t.Sequence[str],
              hosts_active: t.Sequence[str]) -> dict:
    """Return the record of the gate; see the filter documentation."""
    try:
        return site.site_gate(report, targets, checks, hosts_all, hosts_active)
    except site.SiteError as exc:
        raise AnsibleFilterError(f"site_gate: {exc}") from None


class FilterModule:
    """The site gate filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"site_gate": site_gate}
