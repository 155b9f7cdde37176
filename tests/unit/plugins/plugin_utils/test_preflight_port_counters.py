# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The port_counters check: each ConnectX port error counter judged against its threshold, a warning naming host,
port and counter, never a failure; its thresholds as a preflight setting, refused in one line when wrong."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import COUNTERS
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import (
    SHOWN_PORTS,
    PreflightError,
    check_port_counters,
    preflight_report,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.settings import settings_problems

DEFAULTS = {"symbol_error": 10, "link_error_recovery": 10, "link_downed": 0, "port_rcv_errors": 10,
            "port_rcv_remote_physical_errors": 100, "excessive_buffer_overrun_errors": 10,
            "local_link_integrity_errors": 10, "port_xmit_discards": 100, "out_of_sequence": 100,
            "packet_seq_err": 100}


def _hostvars(fleet_facts, layout):
    return {host: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree]),
                                     "default_ipv4": {"address": address}}}
            for host, (tree, address) in layout.items()}


def _check(report, host):
    return {check["name"]: check for check in report["hosts"][host]["checks"]}["port_counters"]


def _port(counters=None, errors=(), netdev="ibp3s0", device="mlx5_0"):
    return {"rdma_device": device, "port": 1, "netdev": netdev, "counters": dict(counters or {}),
            "counter_errors": list(errors)}


def test_the_defaults_are_documented_in_the_argument_spec_one_per_counter():
    spec = site_settings.suboption_defaults(site_settings.SITE_ROLE, "gpufabric_preflight_settings")
    assert spec["port_counter_thresholds"] == DEFAULTS
    assert list(spec["port_counter_thresholds"]) == list(COUNTERS)


def test_a_healthy_tray_passes_with_every_counter_read(fleet_facts):
    report = preflight_report(_hostvars(fleet_facts, {"tray": ("gb200_tray", "10.114.0.11")}), ["tray"])
    assert _check(report, "tray") == {
        "name": "port_counters", "status": "pass",
        "message": "5 port(s) with a netdev: every error counter at or below its threshold"}
    assert report["settings"]["port_counter_thresholds"] == DEFAULTS


def test_each_counter_above_its_threshold_is_named_with_host_port_and_netdev(fleet_facts):
    report = preflight_report(_hostvars(fleet_facts, {"tray-7": ("gb200_tray_degraded", "10.114.0.11")}), ["tray-7"])
    check = _check(report, "tray-7")
    assert check["status"] == "warn"
    assert check["message"] == (
        "port error counters above their thresholds (settings.port_counter_thresholds) on tray-7: "
        "mlx5_0/1 (ibp3s0): symbol_error 27 (threshold 10), link_downed 3 (threshold 0), port_rcv_errors 19 "
        "(threshold 10), port_rcv_remote_physical_errors 112 (threshold 100); "
        "mlx5_1/1 (ibP2p3s0): symbol_error 65535 (threshold 10), link_downed 255 (threshold 0); "
        "mlx5_2/1 (ibP16p3s0): excessive_buffer_overrun_errors 11 (threshold 10), local_link_integrity_errors 12 "
        "(threshold 10), port_xmit_discards 4096 (threshold 100); "
        "mlx5_4/1 (enP6p1s0f0np0): out_of_sequence 6442450944 (threshold 100), packet_seq_err 1834 (threshold 100)")
    # link_error_recovery 4 is at most its threshold of 10: not named
    assert "link_error_recovery" not in check["message"]


def test_a_warning_does_not_make_a_ready_site_not_ready(fleet_facts):
    layout = {"tray-1": ("gb200_tray", "10.114.0.11"), "tray-2": ("gb200_tray", "10.114.0.12")}
    hostvars = _hostvars(fleet_facts, layout)
    for port in hostvars["tray-2"]["ansible_facts"]["gpufabric"]["connectx"]["ports"]:
        port["counters"]["link_downed"] = 1
    for host in layout:  # each tray's nodes file lists the two members of this run
        hostvars[host]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"] = ["10.114.0.11", "10.114.0.12"]
    report = preflight_report(hostvars, sorted(layout))
    assert _check(report, "tray-2")["status"] == "warn"
    assert report["hosts"]["tray-2"]["status"] == "warn"
    # and the recorded trees' driver, R570, past its end of life (issue 42)
    assert report["hosts"]["tray-2"]["summary"] == "warnings: driver_lifecycle, port_counters"
    assert report["summary"]["ready"] is True
    assert report["summary"]["fail"] == 0


def test_thresholds_are_a_setting_per_counter_and_null_leaves_a_counter_unjudged(fleet_facts):
    hostvars = _hostvars(fleet_facts, {"tray": ("gb200_tray_degraded", "10.114.0.11")})
    rules = {"port_counter_thresholds": {"symbol_error": 70000, "link_downed": None, "port_rcv_errors": 100,
                                         "port_rcv_remote_physical_errors": 1000, "excessive_buffer_overrun_errors": 20,
                                         "local_link_integrity_errors": 20, "port_xmit_discards": 5000,
                                         "out_of_sequence": None, "packet_seq_err": 1833}}
    report = preflight_report(hostvars, ["tray"], rules)
    assert report["settings"]["port_counter_thresholds"] == {**DEFAULTS, **rules["port_counter_thresholds"]}
    assert _check(report, "tray")["message"] == (
        "port error counters above their thresholds (settings.port_counter_thresholds) on tray: "
        "mlx5_4/1 (enP6p1s0f0np0): packet_seq_err 1834 (threshold 1833)")
    # the whole setting null: nothing judged
    report = preflight_report(hostvars, ["tray"], {"port_counter_thresholds": None})
    assert _check(report, "tray") == {"name": "port_counters", "status": "skip",
                                      "message": "no counter is judged (settings.port_counter_thresholds sets none)"}


def test_unreadable_counters_warn_naming_the_counter_not_the_file_text():
    base = "/sys/class/infiniband/mlx5_0/ports/1"
    port = _port({"link_downed": 0}, [f"{base}/counters/symbol_error: not a counter (expected a decimal number)",
                                      f"{base}/hw_counters/packet_seq_err: cannot be read"])
    check = check_port_counters("node-3", {"ports": [port]}, {"port_counter_thresholds": DEFAULTS})
    assert check == {"name": "port_counters", "status": "warn",
                     "message": "port error counters above their thresholds (settings.port_counter_thresholds) on "
                                "node-3: mlx5_0/1 (ibp3s0): symbol_error, packet_seq_err unreadable"}


def test_counters_absent_on_an_old_kernel_are_not_judged():
    settings = {"port_counter_thresholds": DEFAULTS}
    old = _port({}, netdev="ibp24s0")
    assert check_port_counters("h", {"ports": [old]}, settings) == {
        "name": "port_counters", "status": "skip",
        "message": "the kernel exposes no error counters on the 1 port(s) with a netdev"}
    ethernet = _port({"out_of_sequence": 0, "packet_seq_err": 0}, netdev="enp170s0f0np0", device="mlx5_8")
    assert check_port_counters("h", {"ports": [old, ethernet]}, settings) == {
        "name": "port_counters", "status": "pass",
        "message": "1 port(s) with a netdev: every error counter at or below its threshold; no counters exposed on "
                   "1 port(s)"}


def test_only_ports_with_a_netdev_are_judged():
    settings = {"port_counter_thresholds": DEFAULTS}
    without = _port({"link_downed": 9}, netdev=None)
    assert check_port_counters("h", {"ports": [without]}, settings)["status"] == "skip"


def test_the_listing_is_capped():
    ports = [_port({"link_downed": 1}, netdev=f"ib{i}", device=f"mlx5_{i}") for i in range(SHOWN_PORTS + 3)]
    message = check_port_counters("h", {"ports": ports}, {"port_counter_thresholds": DEFAULTS})["message"]
    assert message.endswith("mlx5_7/1 (ib7): link_downed 1 (threshold 0) and 3 more")
    assert message.count("link_downed") == SHOWN_PORTS


@pytest.mark.parametrize(("thresholds", "line"), [
    ({"symbol_errors": 5}, "port_counter_thresholds names no counter the probe reads: symbol_errors; known: "
                           + ", ".join(COUNTERS)),
    ({"link_downed": -1}, "port_counter_thresholds.link_downed must be a whole number of errors, 0 or more, got -1"),
    ({"link_downed": "3"}, "port_counter_thresholds.link_downed must be a whole number of errors, 0 or more, got '3'"),
    ({"link_downed": 1.5}, "port_counter_thresholds.link_downed must be a whole number of errors, 0 or more, got 1.5"),
    ({"link_downed": True}, "port_counter_thresholds.link_downed must be a whole number of errors, 0 or more, got "
                            "True"),
    ({"link_downed": [1]}, "port_counter_thresholds.link_downed must be a whole number of errors, 0 or more, got "
                           "[1]"),
    ({"x" * 300: 1}, "port_counter_thresholds names no counter the probe reads: a name of 300 characters; known: "
                     + ", ".join(COUNTERS)),
])
def test_bad_thresholds_are_refused_in_one_line_by_the_settings_check_and_the_preflight(thresholds, line):
    rules = {"port_counter_thresholds": thresholds}
    problems = settings_problems({"tray-1": {"gpufabric_preflight_settings": rules}}, ["tray-1"], ["gpufabric"])
    assert problems == [f"host tray-1: gpufabric_preflight_settings.{line}"]
    with pytest.raises(PreflightError) as caught:
        preflight_report({}, [], rules)
    assert str(caught.value) == f"settings.{line}"
    assert "\n" not in str(caught.value)


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 2 ** 65), st.floats(), st.text(max_size=5),
                   st.lists(st.integers(), max_size=2), st.binary(max_size=3))


@given(ports=st.lists(st.fixed_dictionaries({
    "rdma_device": st.one_of(st.none(), st.sampled_from(["mlx5_0", "mlx5_10", "mlx5_2"])),
    "port": st.one_of(st.none(), st.integers(1, 2), st.text(max_size=2)),
    "netdev": st.one_of(st.none(), st.sampled_from(["ibp3s0", "eth0", ""])),
    "counters": st.one_of(VALUES, st.dictionaries(st.sampled_from([*COUNTERS, "other"]), VALUES, max_size=4)),
    "counter_errors": st.one_of(VALUES, st.lists(st.one_of(st.text(max_size=20), st.integers(), st.sampled_from(
        [f"/sys/class/infiniband/mlx5_0/ports/1/counters/{name}: cannot be read" for name in COUNTERS])),
        max_size=3)),
}), max_size=12), thresholds=st.dictionaries(st.sampled_from(COUNTERS), st.one_of(st.none(), st.integers(0, 100))))
def test_any_port_facts_give_a_check_never_a_failure(ports, thresholds):
    check = check_port_counters("h", {"ports": ports}, {"port_counter_thresholds": thresholds})
    assert check["name"] == "port_counters"
    assert check["status"] in ("skip", "pass", "warn")
    assert "\n" not in check["message"]
