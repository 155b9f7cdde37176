# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.parse_nvbandwidth`` filter: nvbandwidth output parsed into matrices.

A thin wrapper over :func:`...plugin_utils.parse_nvbandwidth.parse_nvbandwidth`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import parse_nvbandwidth as _logic


@arguments.filter_errors("parse_nvbandwidth")
def parse_nvbandwidth(output: t.Any) -> dict:
    """See the filter documentation."""
    try:
        return _logic.parse_nvbandwidth(output)
    except _logic.NvbandwidthParseError as exc:
        raise AnsibleFilterError(f"parse_nvbandwidth: {exc}") from None


class FilterModule:
    """The ``parse_nvbandwidth`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"parse_nvbandwidth": parse_nvbandwidth}
