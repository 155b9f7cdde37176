# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE callback: write each task's result on the one host of a play as JSON, warnings included.

tools/hardware-run.sh runs the five probe modules in a play on the lent GPU machine and keeps each result as the
module returned it; the stdout callbacks print results without their ``warnings`` (they show them apart), and a
probe's warnings are half of what it says about a host it cannot fully read. This callback writes
``{task name: result}`` to the file GPUFABRIC_HARDWARE_RESULT names, with ``warnings`` as the warnings' texts.
Not part of the collection; enabled only by the run script (ANSIBLE_CALLBACK_PLUGINS, ANSIBLE_CALLBACKS_ENABLED).
"""

from __future__ import annotations

import json
import os

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: gpufabric_hardware_result
type: aggregate
short_description: TEST FIXTURE - write each task's result as JSON, warnings included
description:
  - Test fixture of the hardware tier (tools/hardware-run.sh); not part of the collection.
requirements:
  - GPUFABRIC_HARDWARE_RESULT set to the file to write.
author: gpufabric.cluster contributors (@gpufabric)
"""


class CallbackModule(CallbackBase):
    """Write every task's result to the file GPUFABRIC_HARDWARE_RESULT names."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpufabric_hardware_result"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._results = {}

    def _keep(self, result, **flags):
        data = {key: value for key, value in result.result.items()
                if key not in ("warnings", "deprecations") and not key.startswith("_ansible")}
        data.update(flags)
        data["warnings"] = [warning.event.msg for warning in result.warnings]
        self._results[result.task.get_name()] = data

    def v2_runner_on_ok(self, result):
        self._keep(result)

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._keep(result, failed=True)

    def v2_runner_on_unreachable(self, result):
        self._keep(result, failed=True, unreachable=True)

    def v2_playbook_on_stats(self, stats):
        path = os.environ.get("GPUFABRIC_HARDWARE_RESULT")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(self._results, handle, indent=1, sort_keys=True, default=str)
