# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.judge_nvbandwidth`` filter: an nvbandwidth result judged against a threshold.

A thin wrapper over :func:`...plugin_utils.judge_nvbandwidth.judge_nvbandwidth`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import judge_nvbandwidth as _logic


def judge_nvbandwidth(parsed: t.Any, nodes: int, gpus_per_node: int, gpu_model: str | None = None,
                      threshold_gbps: float | None = None, testcases: list[str] | None = None,
                      peak_fraction: float = _logic.DEFAULT_PEAK_FRACTION) -> dict:
    """See the filter documentation."""
    try:
        return _logic.judge_nvbandwidth(parsed, nodes, gpus_per_node, gpu_model, threshold_gbps, testcases,
                                        peak_fraction)
    except _logic.NvbandwidthJudgeError as exc:
        raise AnsibleFilterError(f"judge_nvbandwidth: {exc}") from None


class FilterModule:
    """The ``judge_nvbandwidth`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"judge_nvbandwidth": judge_nvbandwidth}
