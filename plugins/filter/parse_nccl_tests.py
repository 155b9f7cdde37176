# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.parse_nccl_tests`` filter: nccl-tests output (text or -J JSON) parsed into rows.

A thin wrapper over :func:`...plugin_utils.parse_nccl_tests.parse_nccl_tests`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import parse_nccl_tests as _logic


@arguments.filter_errors("parse_nccl_tests")
def parse_nccl_tests(output: t.Any) -> dict:
    """See the filter documentation."""
    try:
        return _logic.parse_nccl_tests(output)
    except _logic.NcclTestsParseError as exc:
        raise AnsibleFilterError(f"parse_nccl_tests: {exc}") from None


class FilterModule:
    """The ``parse_nccl_tests`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"parse_nccl_tests": parse_nccl_tests}
