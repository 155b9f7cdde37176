# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.site_summary_markdown`` filter: the summary of a site run as Markdown.

A thin wrapper over :func:`...plugin_utils.report_markdown.site_summary_markdown`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, report_markdown


@arguments.filter_errors("site_summary_markdown")
def site_summary_markdown(summary: Mapping) -> str:
    """Return the site summary as a Markdown document; see the filter documentation."""
    try:
        return report_markdown.site_summary_markdown(summary)
    except report_markdown.ReportError as exc:
        raise AnsibleFilterError(f"site_summary_markdown: {exc}") from None


class FilterModule:
    """The site summary Markdown filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"site_summary_markdown": site_summary_markdown}
