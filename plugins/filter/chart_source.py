# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.chart_source`` filter: which Helm chart a cluster role installs, and is it there.

A thin wrapper over :func:`...plugin_utils.chart_source.chart_source`, which holds the logic.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import chart_source as _logic


@arguments.filter_errors("chart_source")
def chart_source(spec: Mapping, prefix: str, shown: Mapping | None = None) -> dict:
    """Resolve (and with ``shown``, check) a role's chart source; see the filter documentation."""
    if not isinstance(spec, Mapping):
        raise AnsibleFilterError(f"chart_source: input must be a dict, got {type(spec).__name__}")
    prefix = arguments.text("prefix", prefix)
    try:
        return _logic.chart_source(spec, prefix, shown)
    except _logic.ChartSourceError as exc:
        raise AnsibleFilterError(f"{prefix}: {exc}") from None


class FilterModule:
    """The chart source filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"chart_source": chart_source}
