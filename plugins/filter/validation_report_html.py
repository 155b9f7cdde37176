# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.validation_report_html`` filter: validation results as one HTML page.

A thin wrapper over :func:`...plugin_utils.report_html.validation_report_html`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import ReportError


@arguments.filter_errors("validation_report_html")
def validation_report_html(results: t.Any, title: t.Any = "gpufabric.cluster validation") -> str:
    """One HTML document, no external asset; see the filter documentation."""
    try:
        return report_html.validation_report_html(results, arguments.text("title", title))
    except (arguments.ArgumentError, ReportError) as exc:
        raise AnsibleFilterError(f"validation_report_html: {exc}") from None


class FilterModule:
    """The validation report renderer."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"validation_report_html": validation_report_html}
