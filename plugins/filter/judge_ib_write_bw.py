# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.judge_ib_write_bw`` filter: an ib_write_bw result judged against the line rate.

A thin wrapper over :func:`...plugin_utils.judge_ib_write_bw.judge_ib_write_bw`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import judge_ib_write_bw as _logic


@arguments.filter_errors("judge_ib_write_bw")
def judge_ib_write_bw(parsed: t.Any, line_rate_gbps: t.Any, min_fraction: t.Any = _logic.DEFAULT_MIN_FRACTION,
                      port: t.Any = None, bidirectional: t.Any = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.judge_ib_write_bw(parsed, line_rate_gbps, min_fraction, port, bidirectional)
    except (arguments.ArgumentError, _logic.IbWriteBwJudgeError) as exc:
        raise AnsibleFilterError(f"judge_ib_write_bw: {exc}") from None


class FilterModule:
    """The ``judge_ib_write_bw`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"judge_ib_write_bw": judge_ib_write_bw}
