# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BENCH callback: per play (a phase of site.yml), the tasks each host ran, the wall time and the CPU time.

Written as JSON to ``$GPUFABRIC_PHASE_PROFILE`` when the run ends, one entry per play in run order:
``play``, ``hosts`` (hosts that ran or skipped a task), ``executed`` / ``skipped`` / ``changed`` (results of
tasks, summed over hosts; a loop counts once per item), ``wall_s``, ``cpu_s`` (user + system of ansible-playbook
and every process it waited for: its forks and, on local containers, the modules). Used by bench/site_rerun.py;
not part of the collection.
"""

from __future__ import annotations

import json
import os
import resource
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: gpufabric_phase_profile
type: aggregate
short_description: BENCH - tasks, wall and CPU per play, as JSON
description:
  - Benchmark helper of bench/site_rerun.py; not part of the collection.
requirements:
  - GPUFABRIC_PHASE_PROFILE set to the JSON file to write.
author: gpufabric.cluster contributors (@gpufabric)
"""


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CallbackModule(CallbackBase):
    """Count results per play and take the wall and CPU clocks at play boundaries."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpufabric_phase_profile"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._plays: list[dict] = []
        self._current: dict | None = None

    def _close(self) -> None:
        if self._current is not None:
            self._current["wall_s"] = round(time.monotonic() - self._current.pop("_wall"), 3)
            self._current["cpu_s"] = round(_cpu_seconds() - self._current.pop("_cpu"), 3)
            self._current["hosts"] = sorted(self._current["hosts"])
            self._plays.append(self._current)
            self._current = None

    def v2_playbook_on_play_start(self, play):
        self._close()
        self._current = {"play": play.get_name(), "hosts": set(), "executed": 0, "skipped": 0, "changed": 0,
                         "_wall": time.monotonic(), "_cpu": _cpu_seconds()}

    def _count(self, result, key: str) -> None:
        if self._current is None:
            return
        self._current["hosts"].add(result._host.get_name())
        self._current[key] += 1
        if key == "executed" and result._result.get("changed"):
            self._current["changed"] += 1

    def v2_runner_on_ok(self, result):
        self._count(result, "executed")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._count(result, "executed")

    def v2_runner_on_unreachable(self, result):
        self._count(result, "executed")

    def v2_runner_on_skipped(self, result):
        self._count(result, "skipped")

    def v2_playbook_on_stats(self, stats):
        self._close()
        path = os.environ.get("GPUFABRIC_PHASE_PROFILE")
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(self._plays, handle, indent=1)
