# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.parse_dcgm_diag`` filter: dcgmi diag / mndiag JSON parsed into tests and GPU results.

A thin wrapper over :func:`...plugin_utils.parse_dcgm_diag.parse_dcgm_diag`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import parse_dcgm_diag as _logic


@arguments.filter_errors("parse_dcgm_diag")
def parse_dcgm_diag(output: t.Any) -> dict:
    """See the filter documentation."""
    try:
        return _logic.parse_dcgm_diag(output)
    except (arguments.ArgumentError, _logic.DcgmDiagParseError) as exc:
        raise AnsibleFilterError(f"parse_dcgm_diag: {exc}") from None


class FilterModule:
    """The ``parse_dcgm_diag`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"parse_dcgm_diag": parse_dcgm_diag}
