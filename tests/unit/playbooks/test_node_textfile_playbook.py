# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight writes each host's node-exporter textfile when gpufabric_node_verdict_textfile_dir names a directory
(issue 43 item 5): one ``gpufabric_fabric.prom`` per host, mode 0644, its verdict as a gauge; check mode writes none;
a second run changes nothing; without the setting nothing is written and the verdict tasks do not run.

The hosts are local and probe recorded trees (tests/fixtures), so each gets its own directory (a per-host setting).
"""

from __future__ import annotations

import re
import stat

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook, local_hosts_inventory

HOSTS = {"hgx": "hgx_h100", "broken": "broken_node", "plain": "no_nvidia"}


@pytest.fixture
def fleet(host_trees, tmp_path):
    inventory = local_hosts_inventory(host_trees, HOSTS)
    for name, host in inventory["all"]["hosts"].items():
        (tmp_path / "textfiles" / name).mkdir(parents=True)
        host["gpufabric_node_verdict_textfile_dir"] = str(tmp_path / "textfiles" / name)
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return tmp_path


def run_preflight(workdir, *extra):
    return ansible_playbook(["-i", str(workdir / "hosts.yml"), "gpufabric.cluster.preflight", "-e",
                             f"gpufabric_report_dir={workdir / 'reports'}", *extra], workdir)


def _changed(output):
    return {host: int(count) for host, count in re.findall(r"^(\S+)\s*:\s*ok=\d+\s+changed=(\d+)", output, re.M)}


def test_each_host_gets_its_textfile_once_and_check_mode_writes_none(fleet):
    checked = run_preflight(fleet, "--check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert not list((fleet / "textfiles").rglob("*.prom"))
    assert _changed(checked.stdout)["hgx"] == 1

    first = run_preflight(fleet)
    assert first.returncode == 0, first.stdout + first.stderr
    verdicts = {}
    for name in HOSTS:
        path = fleet / "textfiles" / name / "gpufabric_fabric.prom"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        text = path.read_text()
        assert "# TYPE gpufabric_fabric_checks gauge" in text or name == "plain"
        found = re.search(r"^gpufabric_fabric_verdict (\d)$", text, re.M)
        verdicts[name] = int(found.group(1)) if found else None
    assert verdicts == {"hgx": 1, "broken": 2, "plain": None}
    # a temporary file of the atomic write is never left behind
    written = sorted(path.name for path in (fleet / "textfiles").rglob("*"))
    assert written == ["broken", "gpufabric_fabric.prom", "gpufabric_fabric.prom", "gpufabric_fabric.prom", "hgx",
                       "plain"]
    again = run_preflight(fleet)
    assert again.returncode == 0
    assert set(_changed(again.stdout).values()) == {0}, again.stdout


def test_without_the_setting_nothing_is_written(host_trees, tmp_path):
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(local_hosts_inventory(host_trees, HOSTS)))
    completed = run_preflight(tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Write the node-exporter textfile" not in completed.stdout
    assert "Read the Kubernetes nodes" not in completed.stdout
