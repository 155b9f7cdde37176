# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change_summary callback never prints or writes a URL's credentials, and writes its file as write_files does."""

from __future__ import annotations

import json
import os
import stat
from unittest import mock

from ansible_collections.gpufabric.cluster.plugins.callback.change_summary import (
    CallbackModule,
    ChangeLedger,
    _first_line,
)

URL = "https://fabric:s3cr3t-pw@charts.example.com/nvidia"


def test_failure_message_and_task_name_redacted():
    ledger = ChangeLedger()
    ledger.start_play(f"Cluster from {URL}")
    ledger.changed("localhost", f"Add the repository {URL}")
    message = _first_line({"msg": f'Error: looks like "{URL}" is not a valid chart repository\nsecond line'}, False)
    assert message == 'Error: looks like "https://***@charts.example.com/nvidia" is not a valid chart repository'
    ledger.failed("localhost", f"Read the chart from {URL}", message)
    assert ledger.lines() == [
        "Cluster from https://***@charts.example.com/nvidia:",
        "  localhost: changed 1 task(s): Add the repository https://***@charts.example.com/nvidia",
        "  localhost: FAILED at Read the chart from https://***@charts.example.com/nvidia: Error: looks like "
        "\"https://***@charts.example.com/nvidia\" is not a valid chart repository"]
    written = json.dumps(ledger.as_dict())
    assert "s3cr3t-pw" not in written and "fabric:" not in written


def test_a_credential_cut_at_300_characters_is_still_hidden():
    message = _first_line({"msg": "x" * 290 + " " + URL}, False)
    assert "s3cr3t" not in message and "fabric" not in message
    assert _first_line({"msg": URL}, True) == "(message hidden by no_log)"


# Issue 39, item 4: change-summary.json is written as write_files writes, atomically and never through a link.

def callback_writing_to(report_dir):
    """The callback with ``report_dir`` set, a changed and a failed task recorded, and its display captured."""
    callback = CallbackModule()
    callback.get_option = {"report_dir": str(report_dir)}.get
    callback._display = mock.MagicMock()
    callback.ledger.start_play("Site phase hosts")
    callback.ledger.changed("tray1", "Install the driver")
    callback.ledger.failed("tray2", "Install the driver", "no space left on device")
    return callback


def warnings_of(callback):
    return [call.args[0] for call in callback._display.warning.call_args_list]


def test_the_summary_is_written_and_a_second_run_rewrites_nothing(tmp_path):
    callback = callback_writing_to(tmp_path / "reports")
    callback.v2_playbook_on_stats(None)
    path = tmp_path / "reports" / "change-summary.json"
    assert json.loads(path.read_text()) == callback.ledger.as_dict()
    assert path.read_text().endswith("}\n") and stat.S_IMODE(os.stat(path).st_mode) == 0o644
    inode = os.stat(path).st_ino
    callback.v2_playbook_on_stats(None)
    assert os.stat(path).st_ino == inode and warnings_of(callback) == []
    callback._display.display.assert_called_with(f"written to {path}")


def test_the_summary_replaces_the_file_atomically(tmp_path):
    """A new file is renamed over the old one: a reader (here a hard link) of the old file never sees it change.
    On the starting commit open(path, "w") truncated and rewrote the file in place."""
    path = tmp_path / "change-summary.json"
    path.write_text("{}\n")
    os.link(path, tmp_path / "reader")
    callback_writing_to(tmp_path).v2_playbook_on_stats(None)
    assert (tmp_path / "reader").read_text() == "{}\n"
    assert json.loads(path.read_text())["hosts_failed"] == ["tray2"]


def test_a_link_at_the_summary_is_not_followed(tmp_path):
    """On the starting commit the file the link pointed to was overwritten with the summary."""
    secret = tmp_path / "secret"
    secret.write_text("keep me\n")
    os.chmod(secret, 0o600)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "change-summary.json").symlink_to(secret)
    callback = callback_writing_to(tmp_path / "reports")
    callback.v2_playbook_on_stats(None)
    assert secret.read_text() == "keep me\n" and stat.S_IMODE(os.stat(secret).st_mode) == 0o600
    assert (tmp_path / "reports" / "change-summary.json").is_symlink()
    assert warnings_of(callback) == [
        f"change_summary: change-summary.json not written: {tmp_path / 'reports' / 'change-summary.json'} is a "
        "symbolic link; write_files does not follow links"]


def test_a_link_as_the_report_directory_is_not_followed(tmp_path):
    (tmp_path / "private").mkdir(mode=0o700)
    (tmp_path / "reports").symlink_to(tmp_path / "private")
    callback = callback_writing_to(tmp_path / "reports")
    callback.v2_playbook_on_stats(None)
    assert os.listdir(tmp_path / "private") == []
    assert len(warnings_of(callback)) == 1
    assert warnings_of(callback)[0].startswith(
        f"change_summary: change-summary.json not written: {tmp_path / 'reports'} is a symbolic link")
