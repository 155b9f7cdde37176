# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.judge_dcgm_diag`` filter: a parsed DCGM diagnostic judged, each problem named.

A thin wrapper over :func:`...plugin_utils.judge_dcgm_diag.judge_dcgm_diag`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import judge_dcgm_diag as _logic


@arguments.filter_errors("judge_dcgm_diag")
def judge_dcgm_diag(parsed: t.Any, host: t.Any = None, domain: t.Any = None, run_level: t.Any = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.judge_dcgm_diag(parsed, host, domain, run_level)
    except (arguments.ArgumentError, _logic.DcgmDiagJudgeError) as exc:
        raise AnsibleFilterError(f"judge_dcgm_diag: {exc}") from None


class FilterModule:
    """The ``judge_dcgm_diag`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"judge_dcgm_diag": judge_dcgm_diag}
