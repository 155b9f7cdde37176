# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.rdma_markdown`` filter: the report of the role validate_rdma as Markdown.

A thin wrapper over :func:`...plugin_utils.report_markdown.rdma_markdown`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, report_markdown


@arguments.filter_errors("rdma_markdown")
def rdma_markdown(results: t.Sequence[Mapping]) -> str:
    """Return the report of the role validate_rdma as a Markdown document; see the filter documentation."""
    try:
        return report_markdown.rdma_markdown(results)
    except report_markdown.ReportError as exc:
        raise AnsibleFilterError(f"rdma_markdown: {exc}") from None


class FilterModule:
    """The rdma_markdown filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"rdma_markdown": rdma_markdown}
