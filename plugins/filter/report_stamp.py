# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.report_stamp`` filter: when a report was made, by which release, over which hosts.

A thin wrapper over :func:`...plugin_utils.report_stamp.report_stamp`.
"""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_stamp import report_stamp as _report_stamp


@arguments.filter_errors("report_stamp")
def report_stamp(hosts: t.Any, limit: t.Any = None, inventory: t.Any = None) -> dict:
    """Return the stamp of a report judging ``hosts``; see the filter documentation."""
    return _report_stamp(hosts, limit, inventory)


class FilterModule:
    """The report stamp filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"report_stamp": report_stamp}
