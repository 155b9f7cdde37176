# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.preflight_markdown`` filter: a preflight report as Markdown.

A thin wrapper over :func:`...plugin_utils.report_markdown.preflight_markdown`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, report_markdown


@arguments.filter_errors("preflight_markdown")
def preflight_markdown(report: Mapping, title: str = "GPU fabric readiness") -> str:
    """Return the report as a Markdown document; see the filter documentation."""
    try:
        return report_markdown.preflight_markdown(report, arguments.text("title", title))
    except (arguments.ArgumentError, report_markdown.ReportError) as exc:
        raise AnsibleFilterError(f"preflight_markdown: {exc}") from None


class FilterModule:
    """The preflight Markdown filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"preflight_markdown": preflight_markdown}
