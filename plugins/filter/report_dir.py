# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.report_dir`` filter: the report directory on the controller, or a refusal by name.

A thin wrapper over :func:`...plugin_utils.report_dir.report_dir`, the one resolution of ``gpufabric_report_dir``
and the validation roles' ``<role>_report_dir``.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_dir import ReportDirError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_dir import report_dir as _report_dir


@arguments.filter_errors("report_dir")
def report_dir(value: t.Any, name: t.Any = "gpufabric_report_dir") -> str:
    """Return the absolute report directory ``value`` names; see the filter documentation."""
    try:
        return _report_dir(value, arguments.text("name", name))
    except (arguments.ArgumentError, ReportDirError) as exc:
        raise AnsibleFilterError(f"report_dir: {exc}") from None


class FilterModule:
    """The report directory filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"report_dir": report_dir}
