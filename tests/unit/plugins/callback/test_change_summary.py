# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change_summary callback never prints or writes a URL's credentials."""

from __future__ import annotations

import json

from ansible_collections.gpufabric.cluster.plugins.callback.change_summary import ChangeLedger, _first_line

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
