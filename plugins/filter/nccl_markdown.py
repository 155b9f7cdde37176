# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.nccl_markdown`` filter: the report of the role validate_nccl as Markdown.

A thin wrapper over :func:`...plugin_utils.report_markdown.nccl_markdown`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, report_markdown


@arguments.filter_errors("nccl_markdown")
def nccl_markdown(result: Mapping) -> str:
    """Return the report of the role validate_nccl as a Markdown document; see the filter documentation."""
    try:
        return report_markdown.nccl_markdown(result)
    except report_markdown.ReportError as exc:
        raise AnsibleFilterError(f"nccl_markdown: {exc}") from None


class FilterModule:
    """The nccl_markdown filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"nccl_markdown": nccl_markdown}
