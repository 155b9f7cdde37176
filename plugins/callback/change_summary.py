# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Aggregate callback: what a run changed and what failed, per play and host, printed and written as JSON."""

from __future__ import annotations

DOCUMENTATION = r"""
name: change_summary
type: aggregate
short_description: What a run changed and what failed, per play and host
description:
  - At the end of a run, prints for every play the tasks that changed something on each host, and every failed or
    unreachable host with the failing task, and writes the same as C(change-summary.json) in O(report_dir).
  - Meant for C(gpufabric.cluster.site), whose plays are its phases, so the summary reads phase by phase; works
    with any playbook.
  - Only task names, host names and the first line of a failure message are recorded, never task arguments or
    results; a task with C(no_log) keeps its message out as well.
  - Credentials in a URL (C(https://user:password@host/...)) are shown as C(https://***@host/...) in the printed
    summary and in C(change-summary.json), in task names and messages alike.
  - A failure that a block's C(rescue) handled is listed too; the play's own outcome says whether it was fatal.
  - C(change-summary.json) is written the way M(gpufabric.cluster.write_files) writes (atomically, through a temporary
    file and a rename, and rewritten only when it differs). A symbolic link at its path or as O(report_dir) is not
    followed; the file is not written then, and a warning says why.
  - Enable it with C(callbacks_enabled = gpufabric.cluster.change_summary) in C(ansible.cfg) or
    E(ANSIBLE_CALLBACKS_ENABLED).
version_added: 0.1.0
author: gpufabric.cluster contributors (@gpufabric)
options:
  report_dir:
    description: Directory on the controller for C(change-summary.json); empty writes no file.
    type: path
    default: ''
    env:
      - name: GPUFABRIC_REPORT_DIR
    ini:
      - section: gpufabric
        key: report_dir
"""

import json
import os

from ansible.plugins.callback import CallbackBase

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.write_files import WriteFilesError, write_files


def _first_line(result: dict, no_log: bool) -> str:
    if no_log:
        return "(message hidden by no_log)"
    message = str(result.get("msg") or result.get("stderr") or result.get("reason") or "failed")
    # redacted before it is cut, so that a cut never leaves part of a credential behind
    return redact(message.strip().splitlines()[0])[:300] if message.strip() else "failed"


class ChangeLedger:
    """Changed tasks and failures per play and host, in the order they happened."""

    def __init__(self) -> None:
        self.plays: list[dict] = []

    def start_play(self, name: str) -> None:
        self.plays.append({"play": redact(name), "changed": {}, "failed": {}})

    def _current(self) -> dict:
        if not self.plays:
            self.start_play("(no play)")
        return self.plays[-1]

    def changed(self, host: str, task: str) -> None:
        tasks = self._current()["changed"].setdefault(host, [])
        task = redact(task)
        if task not in tasks:
            tasks.append(task)

    def failed(self, host: str, task: str, message: str) -> None:
        self._current()["failed"][host] = {"task": redact(task), "message": redact(message)}

    def as_dict(self) -> dict:
        plays = [play for play in self.plays if play["changed"] or play["failed"]]
        hosts_changed = sorted({host for play in plays for host in play["changed"]})
        hosts_failed = sorted({host for play in plays for host in play["failed"]})
        return {"plays": plays, "hosts_changed": hosts_changed, "hosts_failed": hosts_failed}

    def lines(self) -> list[str]:
        summary = self.as_dict()
        if not summary["plays"]:
            return ["nothing changed, nothing failed"]
        lines = []
        for play in summary["plays"]:
            lines.append(f"{play['play']}:")
            for host, tasks in sorted(play["changed"].items()):
                lines.append(f"  {host}: changed {len(tasks)} task(s): {'; '.join(tasks)}")
            for host, failure in sorted(play["failed"].items()):
                lines.append(f"  {host}: FAILED at {failure['task']}: {failure['message']}")
        return lines


def _task_name(result) -> str:
    """The task's own name, as ansible-core 2.19 gives it, also where 2.21 prefixes its role's.

    2.19's ``task_name`` is the templated name alone; 2.21's is ``Task.get_name()``, ``"<role> : <name>"`` for a
    task of a role. A task without a name is ``"<role> : <action>"`` in both, and stays so.
    """
    name = result.task_name or result._task.get_name()
    role = getattr(result._task, "_role", None)
    if role is not None and getattr(result._task, "name", None):
        prefix = f"{role.get_name()} : "
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


class CallbackModule(CallbackBase):
    """Record changed and failed tasks; print and write them at the end of the run."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpufabric.cluster.change_summary"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self) -> None:
        super().__init__()
        self.ledger = ChangeLedger()

    def v2_playbook_on_play_start(self, play) -> None:
        self.ledger.start_play(play.get_name().strip() or "(unnamed play)")

    def v2_runner_on_ok(self, result) -> None:
        if result.is_changed():
            self.ledger.changed(result._host.get_name(), _task_name(result))

    def v2_runner_on_failed(self, result, ignore_errors: bool = False) -> None:
        if ignore_errors:
            return
        no_log = bool(getattr(result._task, "no_log", False))
        self.ledger.failed(result._host.get_name(), _task_name(result),
                           _first_line(result._result, no_log))

    def v2_runner_on_unreachable(self, result) -> None:
        self.ledger.failed(result._host.get_name(), _task_name(result),
                           "unreachable: " + _first_line(result._result, False))

    def v2_playbook_on_stats(self, stats) -> None:
        self._display.banner("GPUFABRIC CHANGE SUMMARY")
        for line in self.ledger.lines():
            self._display.display(line)
        report_dir = self.get_option("report_dir")
        if report_dir:
            # The one way a file is written on the controller: atomically, and never through a symbolic link.
            path = os.path.join(report_dir, "change-summary.json")
            content = json.dumps(self.ledger.as_dict(), indent=2, sort_keys=True) + "\n"
            try:
                write_files([{"path": path, "content": content, "mode": "0644"}])
            except (arguments.ArgumentError, WriteFilesError) as exc:
                self._display.warning(f"change_summary: change-summary.json not written: {exc}")
                return
            self._display.display(f"written to {path}")
