# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.judge_nccl_tests`` filter: a parsed nccl-tests run judged against a busbw threshold.

A thin wrapper over :func:`...plugin_utils.judge_nccl_tests.judge_nccl_tests`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import judge_nccl_tests as _logic


@arguments.filter_errors("judge_nccl_tests")
def judge_nccl_tests(parsed: t.Any, threshold_gbps: t.Any = None, facts: t.Any = None,
                     min_size_bytes: t.Any = _logic.DEFAULT_MIN_SIZE_BYTES, ranks: t.Any = None,
                     log: t.Any = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.judge_nccl_tests(parsed, threshold_gbps=threshold_gbps, facts=facts,
                                       min_size_bytes=min_size_bytes, ranks=ranks, log=log)
    except (arguments.ArgumentError, _logic.NcclTestsJudgeError) as exc:
        raise AnsibleFilterError(f"judge_nccl_tests: {exc}") from None


class FilterModule:
    """The ``judge_nccl_tests`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"judge_nccl_tests": judge_nccl_tests}
