# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.site_summary`` filter: the summary of a site run and its result.

A thin wrapper over :func:`...plugin_utils.site.site_summary`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, site


@arguments.filter_errors("site_summary")
def site_summary(record: Mapping | None, converged: t.Sequence[str], cluster_failure: t.Any = None,
                 validation: Mapping | None = None, report_dir: t.Any = None, written: t.Any = True) -> dict:
    """Return the summary of a site run; see the filter documentation."""
    if record is not None and not isinstance(record, Mapping):
        raise AnsibleFilterError(f"site_summary: the input must be the site_gate record, not {type(record).__name__}")
    try:
        summary = site.site_summary(record, converged, cluster_failure, validation, report_dir,
                                    arguments.boolean("written", written))
    except (site.SiteError, arguments.ArgumentError) as exc:
        raise AnsibleFilterError(f"site_summary: {exc}") from None
    return summary


class FilterModule:
    """The site summary filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"site_summary": site_summary}
