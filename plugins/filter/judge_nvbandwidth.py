# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.judge_nvbandwidth`` filter: an nvbandwidth result judged against a threshold.

A thin wrapper over :func:`...plugin_utils.judge_nvbandwidth.judge_nvbandwidth`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import judge_nvbandwidth as _logic


@arguments.filter_errors("judge_nvbandwidth")
def judge_nvbandwidth(parsed: t.Any, nodes: t.Any, gpus_per_node: t.Any, gpu_model: t.Any = None,
                      threshold_gbps: t.Any = None, testcases: t.Any = None,
                      peak_fraction: t.Any = _logic.DEFAULT_PEAK_FRACTION) -> dict:
    """See the filter documentation."""
    try:
        return _logic.judge_nvbandwidth(parsed, nodes, gpus_per_node, gpu_model, threshold_gbps, testcases,
                                        peak_fraction)
    except (arguments.ArgumentError, _logic.NvbandwidthJudgeError) as exc:
        raise AnsibleFilterError(f"judge_nvbandwidth: {exc}") from None


class FilterModule:
    """The ``judge_nvbandwidth`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"judge_nvbandwidth": judge_nvbandwidth}
