# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.preflight_report_html`` filter: the preflight report as one HTML page of host tiles.

A thin wrapper over :func:`...plugin_utils.preflight_html.preflight_report_html`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, preflight_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import ReportError


@arguments.filter_errors("preflight_report_html")
def preflight_report_html(report: t.Any, title: t.Any = "GPU fabric readiness", validation_link: t.Any = None,
                          expected_members: t.Any = None) -> str:
    """One HTML document, no external asset; see the filter documentation."""
    try:
        return preflight_html.preflight_report_html(report, title, validation_link, expected_members)
    except (arguments.ArgumentError, ReportError) as exc:
        raise AnsibleFilterError(f"preflight_report_html: {exc}") from None


class FilterModule:
    """The preflight report renderer (HTML)."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"preflight_report_html": preflight_report_html}
