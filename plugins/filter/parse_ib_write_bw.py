# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.parse_ib_write_bw`` filter: ib_write_bw output parsed into a bandwidth table.

A thin wrapper over :func:`...plugin_utils.parse_ib_write_bw.parse_ib_write_bw`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import parse_ib_write_bw as _logic


@arguments.filter_errors("parse_ib_write_bw")
def parse_ib_write_bw(output: t.Any) -> dict:
    """See the filter documentation."""
    try:
        return _logic.parse_ib_write_bw(output)
    except _logic.IbWriteBwParseError as exc:
        raise AnsibleFilterError(f"parse_ib_write_bw: {exc}") from None


class FilterModule:
    """The ``parse_ib_write_bw`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"parse_ib_write_bw": parse_ib_write_bw}
