# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's failures grouped across the fleet, each naming the role or setting that fixes it (issue 45)."""

from __future__ import annotations

import pathlib
import re

from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import preflight_fixes as fixes
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import preflight_markdown

PREFLIGHT = pathlib.Path(fixes.__file__).with_name("preflight.py")
MTU = "mlx5_0/1 (ibp3s0): mtu 1500 instead of 9000"


def host(*checks):
    return {"status": "fail", "summary": "", "checks": [{"name": name, "status": status, "message": message}
                                                        for name, status, message in checks]}


def fleet(trays=72):
    hosts = {f"tray{number:02d}": host(("rdma_ports", "fail", MTU), ("driver", "pass", "570")) for number in
             range(1, trays + 1)}
    hosts["tray07"] = host(("imex", "fail", "IMEX domain status DOWN"), ("numa_alignment", "warn", "far"))
    return hosts


def test_every_check_the_preflight_makes_names_what_fixes_it():
    """A new check of preflight.py without its entry here fails this test, so no failing check reads without a fix."""
    made = set(re.findall(r'_check\("([a-z_]+)"', PREFLIGHT.read_text()))
    # the checks preflight.py takes from a module of their own, which name themselves (fabric_health, issue 44: its
    # failures read "fixed by -")
    for module in ("fabric_health.py",):
        made |= set(re.findall(r'"name": "([a-z_]+)"', PREFLIGHT.with_name(module).read_text()))
    assert made and made <= set(fixes.FIXED_BY), sorted(made - set(fixes.FIXED_BY))


def test_one_failure_shared_by_a_rack_is_one_line_naming_its_hosts():
    problems = fixes.grouped_problems(fleet())
    assert [(item["check"], item["status"], len(item["hosts"])) for item in problems] == [
        ("rdma_ports", "fail", 71), ("imex", "fail", 1), ("numa_alignment", "warn", 1)]
    assert problems[0]["message"] == MTU
    assert problems[0]["fixed_by"].startswith("role gpufabric.cluster.doca_ofed")
    assert "tray07" not in problems[0]["hosts"]
    assert fixes.named_hosts(problems[0]["hosts"]) == ("tray01, tray02, tray03, tray04, tray05, tray06, tray08, tray09 "
                                                       "and 63 more")


def test_the_reports_carry_the_grouped_failures():
    report = {"hosts": fleet(), "summary": {"ready": False, "hosts": 72}, "imex_domains": []}
    markdown = preflight_markdown(report)
    assert "## What to fix" in markdown
    assert (f"| rdma_ports | FAIL | 71: tray01, tray02, tray03, tray04, tray05, tray06, tray08, tray09 and 63 more "
            f"| {MTU} | role gpufabric.cluster.doca_ofed") in markdown
    html = preflight_report_html(report)
    assert "<h2>What to fix</h2>" in html
    assert ('<span class="count">71 hosts</span>: <span class="named"><a href="#host-tray01">tray01</a>, '
            '<a href="#host-tray02">tray02</a>') in html


def test_a_fleet_that_passes_has_no_section():
    hosts = {"tray01": host(("driver", "pass", "570"))}
    assert fixes.grouped_problems(hosts) == []
    assert "What to fix" not in preflight_markdown({"hosts": hosts, "summary": {"ready": True}})
    assert "What to fix" not in preflight_report_html({"hosts": hosts, "summary": {"ready": True}})


def test_a_message_naming_its_own_host_is_one_line_for_the_hosts_it_reads_the_same_on():
    """Issue 44: 18 trays of a degraded rack each said "GPU health on <itself>: ..." and took 18 lines."""
    ecc = "aggregate uncorrectable ECC errors 2 (threshold 0)"
    hosts = {f"rack7-tray{number:02d}": host(("gpu_health", "fail", f"GPU health on rack7-tray{number:02d}: {ecc}"))
             for number in range(1, 19)}
    hosts["rack7-tray1"] = host(("gpu_health", "fail", f"GPU health on rack7-tray1: {ecc}"))  # a prefix of tray10
    hosts["rack9-tray01"] = host(("gpu_health", "fail", "GPU health on rack9-tray01: row remap failure"))
    hosts["rack2-tray03"] = host(("imex_domain", "fail", "nodes file of rack2-tray03 differs"))
    hosts["rack2-tray04"] = host(("imex_domain", "fail", "nodes file of rack2-tray03 differs"))
    problems = fixes.grouped_problems(hosts)
    assert [(item["check"], item["message"], len(item["hosts"])) for item in problems] == [
        ("gpu_health", f"GPU health on each host: {ecc}", 19),
        ("imex_domain", "nodes file of rack2-tray03 differs", 2),
        ("gpu_health", "GPU health on rack9-tray01: row remap failure", 1)]
    assert problems[0]["hosts"][:3] == ["rack7-tray01", "rack7-tray02", "rack7-tray03"]
    assert "rack7-tray1" in problems[0]["hosts"]
    assert fixes.own_name_generic("on tray10 and tray1.x", "tray1") == "on tray10 and tray1.x"
    assert fixes.own_name_generic("on tray1: x", "") == "on tray1: x"


def test_an_unknown_check_and_odd_entries_are_shown_without_a_fix():
    hosts = {"a": host(("future_check", "warn", "x")), "b": "not a mapping", "c": {"checks": [None, 5]}}
    assert fixes.grouped_problems(hosts) == [
        {"check": "future_check", "status": "warn", "message": "x", "hosts": ["a"], "fixed_by": ""}]
    assert fixes.fixed_by(None) == ""


CHECK = st.tuples(st.sampled_from([*sorted(fixes.FIXED_BY), "other"]),
                  st.sampled_from(["pass", "warn", "fail", "skip"]),
                  st.sampled_from(["m1", "m2", "on a: x", "on b: x"]))


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.lists(CHECK, max_size=4, unique=True), max_size=8))
def test_property_every_failure_and_warning_is_in_exactly_one_group(hosts):
    records = {name: host(*checks) for name, checks in hosts.items()}
    problems = fixes.grouped_problems(records)
    expected = sorted((name, check, status) for name, checks in hosts.items()
                      for check, status, _message in checks if status in ("fail", "warn"))
    assert sorted((name, item["check"], item["status"]) for item in problems for name in item["hosts"]) == expected
    # each host's message as it is, or with the host's own name read as "each host" in a line several hosts share
    for item in problems:
        for name in item["hosts"]:
            wanted = (item["check"], item["status"])
            own = [message for check, status, message in hosts[name] if (check, status) == wanted]
            assert item["message"] in own or (len(item["hosts"]) > 1 and any(
                item["message"] == fixes.own_name_generic(message, name) != message for message in own))
    assert [item["status"] for item in problems] == sorted((item["status"] for item in problems),
                                                           key=lambda status: status != "fail")
