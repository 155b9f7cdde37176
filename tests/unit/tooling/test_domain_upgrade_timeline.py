# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""molecule/domain_upgrade/files/check_timeline.py (TEST FIXTURE): its answers on synthetic timelines.

Each bad timeline is one a wrong upgrade would leave (a member rebooted while the domain served, two domains at once,
a rack rebooted host at a time without a cordon), and the checker must say so; the good ones are what issue 42's
one-domain-at-a-time upgrade leaves.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "..", "molecule", "domain_upgrade", "files",
                     "check_timeline.py")
_SPEC = importlib.util.spec_from_file_location("check_timeline", _PATH)
check_timeline = importlib.util.module_from_spec(_SPEC)
sys.modules["check_timeline"] = check_timeline  # its dataclasses look their module up
_SPEC.loader.exec_module(check_timeline)

DOMAINS = {"A": ["gb200-tray-01", "gb200-tray-02"], "B": ["gb200-tray-03", "gb200-tray-04"]}
OLD, NEW = "570.172.08", "580.95.05"


def at(second: float) -> str:
    return f"2026-11-28T21:50:{second:09.6f}Z"


def loaded(second: float, host: str, before: str = OLD, version: str = NEW) -> str:
    return f"{at(second)} {host} driver-loaded {version} previous={before}"


def failed(second: float, host: str) -> str:
    return f"{at(second)} {host} driver-load-failed {NEW} loaded={OLD}"


def cordon(second: float, host: str, state: str = "cordoned") -> str:
    return f"{at(second)} {host} {state}"


def initial() -> tuple[list[str], list[str]]:
    """What prepare leaves: every tray loaded 570 once, the watcher listed every node uncordoned (second 0)."""
    hosts = DOMAINS["A"] + DOMAINS["B"]
    return [loaded(0, host, OLD, OLD) for host in hosts], [cordon(0, host, "uncordoned") for host in hosts]


def domain_upgrade(start: float, domain: str, fail: str | None = None) -> tuple[list[str], list[str]]:
    """One domain done right: cordon every member, reboot them together, uncordon (unless a member failed)."""
    first, second = DOMAINS[domain]
    tray = [loaded(start + 2, first), failed(start + 2.5, second) if fail == second else loaded(start + 2.5, second),
            f"{at(start + 3)} {first} imex-started {NEW}"]
    cordons = [cordon(start, first), cordon(start + 0.1, second)]
    if fail is None:
        cordons += [cordon(start + 4, first, "uncordoned"), cordon(start + 4.1, second, "uncordoned")]
    return tray, cordons


def run(tray: list[str], cordons: list[str], since: str | None = at(0.5)) -> dict:
    events = check_timeline.parse("\n".join(tray), "timeline", cordons=False)
    cordon_events = check_timeline.parse("\n".join(cordons), "cordons", cordons=True, start=len(events))
    return check_timeline.check(events, cordon_events, DOMAINS,
                                check_timeline._when(since) if since else None)


def test_one_domain_at_a_time_is_safe_and_in_order():
    tray, cordons = initial()
    for start, domain in ((10, "A"), (20, "B")):
        more_tray, more_cordons = domain_upgrade(start, domain)
        tray += more_tray
        cordons += more_cordons
    answer = run(tray, cordons)
    assert answer["safe"] is True and answer["mixed_while_uncordoned"] == []
    assert (answer["started_order"], answer["finished_order"], answer["one_at_a_time"]) == (["A", "B"], ["A", "B"],
                                                                                            True)
    assert answer["windows"] == [{"domain": "A", "started": at(10), "finished": at(14.1)},
                                 {"domain": "B", "started": at(20), "finished": at(24.1)}]
    a = answer["domains"]["A"]
    assert (a["touched"], a["reboots"], a["cordoned"], a["load_failures"]) == (True, 2, [], [])
    assert a["versions"] == {"gb200-tray-01": NEW, "gb200-tray-02": NEW}
    assert a["imex_versions"] == {"gb200-tray-01": NEW, "gb200-tray-02": None}


def test_a_member_rebooted_while_its_peer_serves_is_unsafe():
    """Today's batches: tray-01 cordoned and rebooted alone while tray-02 of its domain still serves."""
    tray, cordons = initial()
    tray += [loaded(12, "gb200-tray-01"), loaded(22, "gb200-tray-02")]
    cordons += [cordon(10, "gb200-tray-01"), cordon(14, "gb200-tray-01", "uncordoned"),
                cordon(20, "gb200-tray-02"), cordon(24, "gb200-tray-02", "uncordoned")]
    answer = run(tray, cordons)
    assert answer["safe"] is False
    assert answer["mixed_while_uncordoned"] == [
        {"domain": "A", "time": at(12), "until": at(22), "uncordoned": ["gb200-tray-02"],
         "versions": {"gb200-tray-01": NEW, "gb200-tray-02": OLD}}]


def test_a_reboot_without_a_cordon_is_unsafe_and_opens_a_window():
    tray, cordons = initial()
    tray += [loaded(10, "gb200-tray-03")]
    answer = run(tray, cordons)
    assert answer["safe"] is False
    assert [(entry["domain"], entry["until"]) for entry in answer["mixed_while_uncordoned"]] == [("B", None)]
    assert answer["windows"] == [{"domain": "B", "started": at(10), "finished": at(10)}]


def test_two_domains_at_once_are_not_one_at_a_time():
    tray, cordons = initial()
    for start, domain in ((10, "A"), (12, "B")):  # B cordoned before A returned
        more_tray, more_cordons = domain_upgrade(start, domain)
        tray += more_tray
        cordons += more_cordons
    answer = run(tray, cordons)
    assert answer["safe"] is True
    assert (answer["started_order"], answer["one_at_a_time"]) == (["A", "B"], False)


def test_a_failed_domain_stays_cordoned_and_the_next_is_untouched():
    tray, cordons = initial()
    more_tray, more_cordons = domain_upgrade(10, "A", fail="gb200-tray-02")
    answer = run(tray + more_tray, cordons + more_cordons)
    a, b = answer["domains"]["A"], answer["domains"]["B"]
    assert answer["safe"] is True  # two versions in A, but A never served with them
    assert (a["finished"], a["cordoned"]) == (None, ["gb200-tray-01", "gb200-tray-02"])
    assert a["load_failures"] == [{"host": "gb200-tray-02", "time": at(12.5), "wanted": NEW, "loaded": OLD}]
    assert a["versions"] == {"gb200-tray-01": NEW, "gb200-tray-02": OLD}
    assert (b["touched"], b["reboots"], b["started"]) == (False, 0, None)
    assert (answer["started_order"], answer["finished_order"]) == (["A"], [])


def test_the_failed_domain_uncordoned_with_two_versions_is_unsafe():
    tray, cordons = initial()
    more_tray, more_cordons = domain_upgrade(10, "A", fail="gb200-tray-02")
    answer = run(tray + more_tray, cordons + more_cordons + [cordon(15, "gb200-tray-01", "uncordoned")])
    assert answer["safe"] is False
    assert answer["mixed_while_uncordoned"][0]["uncordoned"] == ["gb200-tray-01"]


def test_a_domain_that_starts_again_after_another_is_not_one_at_a_time():
    tray, cordons = initial()
    for start, domain in ((10, "A"), (20, "B"), (30, "A")):
        more_tray, more_cordons = domain_upgrade(start, domain)
        tray += more_tray
        cordons += more_cordons
    answer = run(tray, cordons)
    assert answer["started_order"] == ["A", "B", "A"]
    assert answer["one_at_a_time"] is True
    assert answer["domains"]["A"]["started"] == at(10) and answer["domains"]["A"]["finished"] == at(34.1)


def test_events_before_since_set_the_state_only():
    tray, cordons = initial()
    cordons.append(cordon(0.2, "gb200-tray-03"))  # before the run: a node an operator had cordoned
    answer = run(tray, cordons)
    assert answer["windows"] == [] and answer["domains"]["B"]["cordoned"] == ["gb200-tray-03"]
    without_since = run(tray, cordons, since=None)
    assert [window["domain"] for window in without_since["windows"]] == ["A", "B", "B"]


def test_events_of_one_instant_are_applied_together():
    """Both members loaded at the same microsecond while uncordoned: never two versions at once."""
    tray, cordons = initial()
    tray += [loaded(10, "gb200-tray-01"), loaded(10, "gb200-tray-02")]
    answer = run(tray, cordons)
    assert answer["safe"] is True
    tray[-1] = loaded(10.000001, "gb200-tray-02")
    assert run(tray, cordons)["safe"] is False


@pytest.mark.parametrize(("line", "cordons"), [
    ("2026-11-28T21:50:00Z gb200-tray-01 driver-loaded", False),
    ("2026-11-28 21:50:00 gb200-tray-01 driver-loaded 580.95.05", False),
    ("2026-11-28T21:50:00Z gb200-tray-01 rebooted 580.95.05", False),
    ("2026-11-28T21:50:00Z gb200-tray-01 cordoned", False),
    ("2026-11-28T21:50:00Z gb200-tray-01 drained", True),
    ("2026-11-28T21:50:00Z gb200-tray-01 driver-loaded 580.95.05", True),
])
def test_a_line_that_is_not_an_event_is_named_with_its_place(line, cordons):
    with pytest.raises(check_timeline.TimelineError, match=r"^log:2: not a "):
        check_timeline.parse(f"\n{line}\n", "log", cordons=cordons)


def test_the_command_line_prints_the_answer_and_names_an_unreadable_log(tmp_path, capsys):
    tray, cordons = initial()
    more_tray, more_cordons = domain_upgrade(10, "A")
    (tmp_path / "timeline").write_text("\n".join(tray + more_tray) + "\n", encoding="ascii")
    (tmp_path / "cordons").write_text("\n".join(cordons + more_cordons) + "\n", encoding="ascii")
    domains = ["--domain", "A=gb200-tray-01,gb200-tray-02", "--domain", "B=gb200-tray-03,gb200-tray-04"]
    assert check_timeline.main(["--timeline", str(tmp_path / "timeline"), "--cordons", str(tmp_path / "cordons"),
                                "--since", "2026-11-28T21:50:00.5", *domains]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert (answer["safe"], answer["started_order"], list(answer["domains"])) == (True, ["A"], ["A", "B"])
    (tmp_path / "cordons").write_text("not a line\n", encoding="ascii")
    assert check_timeline.main(["--timeline", str(tmp_path / "timeline"), "--cordons", str(tmp_path / "cordons"),
                                *domains]) == 2
    assert capsys.readouterr().err == f"check_timeline: {tmp_path / 'cordons'}:1: not a cordon log event\n"


_WATCH = os.path.join(os.path.dirname(_PATH), "watch_cordons.py")


def test_the_watcher_logs_each_nodes_first_state_and_its_changes(tmp_path):
    """A fake kubectl streams what `kubectl get nodes --watch -o json` does: objects one after another."""
    nodes = [{"metadata": {"name": "gb200-tray-01"}, "spec": {}},
             {"metadata": {"name": "gb200-tray-02"}, "spec": {"unschedulable": True}},
             {"metadata": {"name": "gb200-tray-01"}, "spec": {"unschedulable": True}},
             {"metadata": {"name": "gb200-tray-01"}, "spec": {"unschedulable": True}, "status": {}},
             {"metadata": {"name": "gb200-tray-01"}, "spec": {"unschedulable": False}}]
    (tmp_path / "stream").write_text("".join(json.dumps(node, indent=4) + "\n" for node in nodes), encoding="ascii")
    kubectl = tmp_path / "kubectl"
    kubectl.write_text(f"#!/bin/sh\ncat {tmp_path}/stream\nexec sleep 60\n", encoding="ascii")
    kubectl.chmod(0o755)
    log, pid_file = tmp_path / "cordons", tmp_path / "watch.pid"
    argv = [sys.executable, _WATCH, "start", "--kubectl", str(kubectl), "--kubeconfig", "kubeconfig",
            "--log", str(log), "--pid-file", str(pid_file)]
    assert subprocess.run(argv, check=False, timeout=60).returncode == 0
    try:
        for _attempt in range(100):
            if len(log.read_text(encoding="ascii").splitlines()) >= 4:
                break
            time.sleep(0.1)
        events = check_timeline.parse(log.read_text(encoding="ascii"), "cordons", cordons=True)
        assert [(event.host, event.kind) for event in events] == [
            ("gb200-tray-01", "uncordoned"), ("gb200-tray-02", "cordoned"), ("gb200-tray-01", "cordoned"),
            ("gb200-tray-01", "uncordoned")]
        pid = int(pid_file.read_text(encoding="ascii"))
    finally:
        subprocess.run([sys.executable, _WATCH, "stop", "--pid-file", str(pid_file)], check=True, timeout=60)
    for _attempt in range(100):
        if not os.path.exists(f"/proc/{pid}"):
            break
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}") and not pid_file.exists()
