# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 1: no text of a host file reaches the preflight report, its Markdown and HTML, or its summary lines.

On the starting commit a nodes file named by ``IMEX_NODE_CONFIG_FILE`` (``/etc/shadow`` inside the root, say) had
each invalid line kept in the facts (``nodes.invalid[].value``) and quoted by the ``imex`` check in every report.
"""

from __future__ import annotations

import json
import os

from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import collect_fabric
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import preflight_markdown
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

CONFIG_PATH = "/etc/nvidia-imex/config.cfg"
SHADOW_LINE = "root:$6$qzXJkMARKER7f3$0pWdH4sh:19876:0:99999:7:::"


def _summary_lines(report: dict) -> str:
    """What the preflight playbook prints for each host: its status and summary, then every check that did not pass."""
    lines = []
    for name, entry in report["hosts"].items():
        checks = "".join(f" | {check['name']} {check['status']}: {check['message']}" for check in entry["checks"]
                         if check["status"] not in ("pass", "skip"))
        lines.append(f"{name}: {entry['status'].upper()} - {entry['summary']}{checks}")
    return "\n".join(lines)


def _renderings(report: dict) -> dict[str, str]:
    return {"preflight.json": json.dumps(report), "preflight.md": preflight_markdown(report),
            "preflight.html": preflight_report_html(report), "summary": _summary_lines(report)}


def test_a_nodes_file_line_is_named_by_path_and_number_in_every_report(fresh_tree, command_runner):
    root = fresh_tree("gb200_tray")
    write_host_file(root, "/etc/shadow", f"{SHADOW_LINE}\n10.114.0.11\n", 0o600)
    with open(os.path.join(root, CONFIG_PATH.lstrip("/")), "a", encoding="utf-8") as handle:
        handle.write("IMEX_NODE_CONFIG_FILE=/etc/shadow\n")
    facts = collect_fabric(root, command_runner, ["gpu", "connectx", "imex", "peermem", "network"])
    assert facts["imex"]["nodes"]["invalid"] == [{"line": 1}]
    assert "qzXJkMARKER7f3" not in json.dumps(facts)
    hostvars = {"tray": {"ansible_facts": {"gpufabric": facts, "default_ipv4": {"address": "10.114.0.11"}}}}
    report = preflight_report(hostvars, ["tray"])
    imex = next(check for check in report["hosts"]["tray"]["checks"] if check["name"] == "imex")
    assert imex["status"] == "fail"
    assert "nodes file /etc/shadow has entries that are not IP addresses on line 1" in imex["message"].split("; ")
    for name, text in _renderings(report).items():
        assert "qzXJkMARKER7f3" not in text, name
        assert "/etc/shadow has entries that are not IP addresses on line 1" in text, name


def test_facts_of_an_older_probe_are_not_quoted_either():
    """A fact cache can hold what an older probe kept: each entry's text, a path of any characters."""
    facts = {"gpu": {"count": 0, "gpus": [], "cliques": [], "errors": []},
             "connectx": {"count": 0, "ports": [], "errors": []},
             "imex": {"installed": True, "version": "570.172.08-1", "errors": [],
                      "service": {"exists": True, "active": False},
                      "nodes": {"path": f"/etc/{SHADOW_LINE}", "addresses": ["10.0.0.1"], "duplicates": [],
                                "invalid": [{"line": 2, "value": SHADOW_LINE}, {"value": SHADOW_LINE},
                                            SHADOW_LINE, {"line": True, "value": SHADOW_LINE}],
                                "blank_or_comment": 0, "valid": False}},
             "peermem": {"kernel_version": "6.8.0", "nvidia_peermem": {}, "errors": []}}
    report = preflight_report({"old": {"ansible_facts": {"gpufabric": facts}}}, ["old"])
    imex = next(check for check in report["hosts"]["old"]["checks"] if check["name"] == "imex")
    assert imex["message"] == (
        "nodes file (its path is not shown: not an absolute path of safe characters) has entries that are not IP "
        "addresses on lines 2, 3 without a line number")
    for name, text in _renderings(report).items():
        assert "qzXJkMARKER7f3" not in text, name
