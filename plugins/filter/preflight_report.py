# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.preflight_report`` filter: the readiness report of the preflight playbook.

A thin wrapper over :func:`...plugin_utils.preflight.preflight_report`, which holds the rules.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, preflight


@arguments.filter_errors("preflight_report")
def preflight_report(hostvars: Mapping, hosts: list[str], settings: Mapping | None = None,
                     min_driver_version: t.Any = None, unknown_members: t.Sequence[str] = (),
                     outside: Mapping | None = None) -> dict:
    """Build the readiness report for ``hosts`` from their hostvars; see the filter documentation."""
    try:
        return preflight.preflight_report(hostvars, hosts, settings, min_driver_version, unknown_members,
                                          outside=outside)
    except preflight.PreflightError as exc:
        raise AnsibleFilterError(f"preflight_report: {exc}") from None


class FilterModule:
    """The preflight readiness filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"preflight_report": preflight_report}
