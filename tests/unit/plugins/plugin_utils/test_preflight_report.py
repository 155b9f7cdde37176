# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness rules on the facts the real probes gather from the recorded host trees."""

from __future__ import annotations

import copy
import json

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.preflight_markdown import preflight_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report

GB200_CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"


def hostvars_for(fleet_facts, layout):
    """hostvars for hosts named in ``layout`` ({host: (tree, address)})."""
    return {
        host: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts[tree]),
                                 "default_ipv4": {"address": address} if address else {}}}
        for host, (tree, address) in layout.items()
    }


def checks_of(report, host):
    return {check["name"]: check for check in report["hosts"][host]["checks"]}


def test_no_nvidia_host_reports_no_hardware(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"localhost": ("no_nvidia", "192.0.2.30")})
    report = preflight_report(hostvars, ["localhost"])
    entry = report["hosts"]["localhost"]
    assert entry["status"] == "no_hardware"
    assert entry["summary"] == "no NVIDIA GPU or ConnectX port found; nothing to prepare on this host"
    assert report["summary"] == {"hosts": 1, "pass": 0, "warn": 0, "fail": 0, "no_hardware": 1,
                                 "failed_hosts": [], "ready": True}
    assert {check["status"] for check in entry["checks"]} == {"pass", "skip"}
    assert report["imex_domains"] == []


def test_hgx_h100_is_ready(fleet_facts):
    report = preflight_report(hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")}), ["hgx"])
    checks = checks_of(report, "hgx")
    # ready, with one warning: the recorded driver's branch, R570, is past its end of life (issue 42)
    assert (report["hosts"]["hgx"]["status"], report["hosts"]["hgx"]["summary"]) == \
        ("warn", "warnings: driver_lifecycle"), checks
    assert report["summary"]["ready"] is True
    assert [name for name, check in checks.items() if check["status"] not in ("pass", "skip")] == ["driver_lifecycle"]
    assert checks["driver"]["message"] == "driver 570.172.08 (open kernel module) on 8 GPU(s)"
    assert checks["fabric"]["status"] == "pass"
    assert "no multi-node clique" in checks["fabric"]["message"]
    assert checks["imex"]["status"] == "skip"
    assert checks["rdma_ports"]["message"] == \
        "10 port(s) ACTIVE at expected rate and MTU (2 Ethernet, 8 InfiniBand)"
    assert checks["gpudirect_rdma"]["message"] == "GPUDirect RDMA through dma_buf"
    assert checks["numa_alignment"]["message"] == "every GPU has an ACTIVE port nearby (8/8 on a shared PCIe switch)"
    assert report["imex_domains"] == []


def test_broken_node_fails_with_every_reason(fleet_facts):
    report = preflight_report(hostvars_for(fleet_facts, {"broken": ("broken_node", "10.0.0.3")}), ["broken"])
    entry = report["hosts"]["broken"]
    checks = checks_of(report, "broken")
    assert entry["status"] == "fail"
    assert report["summary"]["failed_hosts"] == ["broken"]
    assert report["summary"]["ready"] is False
    assert checks["driver"] == {"name": "driver", "status": "fail",
                                "message": "2 NVIDIA GPU(s) on PCI but the nvidia kernel driver is not loaded"}
    assert checks["fabric"]["status"] == "skip"
    assert checks["imex"]["status"] == "fail"
    assert "duplicates: 10.0.0.2" in checks["imex"]["message"]
    assert "nodes file /etc/nvidia-imex/nodes_config.cfg has entries that are not IP addresses on line 6" \
        in checks["imex"]["message"]
    assert "gpu-node-07" not in json.dumps(report)  # the entry's text is named by its line, never quoted
    assert checks["rdma_ports"]["status"] == "fail"
    assert "mlx5_1/1 (ibp177s0): state DOWN/Polling, rate 200 Gb/s below 400 Gb/s" in checks["rdma_ports"]["message"]
    assert "mlx5_0" not in checks["rdma_ports"]["message"]
    assert checks["gpudirect_rdma"]["status"] == "fail"
    assert "nvidia_peermem is not loaded" in checks["gpudirect_rdma"]["message"]
    assert "5.12" in checks["gpudirect_rdma"]["message"]
    assert entry["summary"] == "failed: driver, imex, rdma_ports, gpudirect_rdma"


def test_driver_below_minimum_fails(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    report = preflight_report(hostvars, ["hgx"], {"min_driver_version": "575.51.03"})
    assert checks_of(report, "hgx")["driver"] == {
        "name": "driver", "status": "fail",
        "message": "driver 570.172.08 (open) is older than the minimum 575.51.03"}


def test_ethernet_mtu_and_rate_settings(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    hostvars["hgx"]["ansible_facts"]["gpufabric"]["connectx"]["ports"][8]["mtu"] = 1500
    report = preflight_report(hostvars, ["hgx"], {"rdma_min_rate_gbps": 400})
    message = checks_of(report, "hgx")["rdma_ports"]["message"]
    assert "mlx5_8/1 (enp170s0f0np0): rate 200 Gb/s below 400 Gb/s, mtu 1500 instead of 9000" in message
    assert "mlx5_9/1 (enp170s0f1np1): rate 200 Gb/s below 400 Gb/s" in message
    assert "mlx5_0/1" not in message


def test_gb200_domain_members_agree(fleet_facts):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    report = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))
    assert [domain["clique"] for domain in report["imex_domains"]] == [GB200_CLIQUE]
    domain = report["imex_domains"][0]
    assert domain["members"] == sorted(layout)
    # the domain's own checks pass; its members warn about their driver branch alone (R570, past its end of life)
    assert (domain["own_status"], domain["problems"], domain["notes"], domain["stale"]) == ("pass", [], [], [])
    assert domain["status"] == "warn" and report["summary"]["ready"] is True
    assert domain["expected_nodes"] == [f"10.114.0.{11 + i}" for i in range(18)]
    for host in layout:
        assert report["hosts"][host]["summary"] == "warnings: driver_lifecycle", checks_of(report, host)
        assert report["hosts"][host]["cliques"] == [GB200_CLIQUE]
        assert checks_of(report, host)["fabric"]["message"] == f"fabric COMPLETED on 4 GPU(s), clique {GB200_CLIQUE}"
        assert checks_of(report, host)["imex_domain"]["message"] == \
            f"18 member(s) of clique {GB200_CLIQUE} agree on one nodes file"


@pytest.mark.parametrize(("members", "expected", "status", "host_status"), [
    # "pass" domains' members still warn: the recorded trays run R570, past its end of life (issue 42)
    pytest.param(18, 18, "pass", "warn", id="full-rack"),
    # the recorded trays' nodes files list 18 addresses: 18 agreeing members of a domain of 19
    pytest.param(18, 19, "warn", "warn", id="a-tray-missing"),
    # 17 members: the nodes files also list the absent tray, which fails the domain; the count is noted beside it
    pytest.param(17, 18, "fail", "fail", id="a-tray-missing-with-its-address-in-the-nodes-files"),
    pytest.param(18, 17, "fail", "fail", id="more-than-a-domain-holds"),
    pytest.param(18, None, "pass", "warn", id="not-judged"),
])
def test_imex_domain_members_against_the_expected_count(fleet_facts, members, expected, status, host_status):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(members)}
    report = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout), {"imex_domain_members": expected})
    domain = report["imex_domains"][0]
    assert (domain["own_status"], domain["expected_members"]) == (status, expected)
    message = checks_of(report, "tray00")["imex_domain"]["message"]
    if status == "warn":
        assert domain["problems"] == []
        assert domain["notes"] == [
            "18 of 19 expected members (settings.imex_domain_members): the other trays of this domain are not in "
            "this run (not in the inventory, unreachable or not probed)"]
        assert message == domain["notes"][0]
    if (members, expected) == (17, 18):
        assert domain["notes"] == [
            "17 of 18 expected members (settings.imex_domain_members): the other trays of this domain are not in "
            "this run (not in the inventory, unreachable or not probed)"]
        assert "lists 10.114.0.28 (no member of this run)" in message and domain["notes"][0] in message
    if (members, expected) == (18, 17):
        assert domain["problems"] == [
            "18 members, more than the 17 of one IMEX domain (settings.imex_domain_members): the hosts' clique IDs "
            "are wrong or repeated"]
    assert report["hosts"]["tray00"]["status"] == host_status
    assert checks_of(report, "tray00")["imex_domain"]["status"] == status


def test_nodes_file_listing_hosts_outside_the_run_differs_from_what_nvidia_imex_writes(fleet_facts):
    """Three trays of the rack: nvidia_imex over these three writes their three addresses, not the rack's 18."""
    layout = {f"tray{i}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(3)}
    [domain] = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))["imex_domains"]
    assert domain["status"] == "fail"
    assert domain["stale"] == ["tray0", "tray1", "tray2"]
    assert domain["problems"] == [
        "nodes file of tray0, tray1, tray2 differs from the expected one (3 member address(es), sorted, as "
        "nvidia_imex writes it): lists 10.114.0.14, 10.114.0.15, 10.114.0.16, 10.114.0.17, 10.114.0.18, "
        "10.114.0.19, 10.114.0.20, 10.114.0.21 and 7 more (no member of this run)"]


def test_gb200_domain_detects_hand_edited_nodes_file_and_missing_member(fleet_facts):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    layout["tray17"] = ("gb200_tray", "10.114.9.99")
    hostvars = hostvars_for(fleet_facts, layout)
    hostvars["tray01"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].pop()
    report = preflight_report(hostvars, sorted(layout))
    domain = report["imex_domains"][0]
    assert domain["status"] == "fail"
    assert domain["problems"] == [
        "nodes file of tray00, tray02, tray03, tray04, tray05, tray06, tray07, tray08, tray09, tray10, tray11, "
        "tray12, tray13, tray14, tray15, tray16, tray17 differs from the expected one (18 member address(es), "
        "sorted, as nvidia_imex writes it): lacks 10.114.9.99; lists 10.114.0.28 (no member of this run)",
        "nodes file of tray01 differs from the expected one (18 member address(es), sorted, as nvidia_imex writes "
        "it): lacks 10.114.9.99"]
    for host in layout:
        assert checks_of(report, host)["imex_domain"]["status"] == "fail"
        assert report["hosts"][host]["status"] == "fail"


@pytest.mark.parametrize("stale", ["tray00", "tray09", "tray17"])
def test_a_single_stale_tray_is_named_however_its_name_sorts(fleet_facts, stale):
    """On the starting commit the first tray by name was the reference: a stale tray00 made all others 'differ'."""
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    hostvars = hostvars_for(fleet_facts, layout)
    hostvars[stale]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"][-1] = "10.114.0.99"
    [domain] = preflight_report(hostvars, sorted(layout))["imex_domains"]
    assert domain["stale"] == [stale]
    assert domain["problems"] == [
        f"nodes file of {stale} differs from the expected one (18 member address(es), sorted, as nvidia_imex "
        "writes it): lacks 10.114.0.28; lists 10.114.0.99 (no member of this run)"]


def test_nodes_file_in_another_order_is_stale(fleet_facts):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    hostvars = hostvars_for(fleet_facts, layout)
    hostvars["tray05"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].reverse()
    [domain] = preflight_report(hostvars, sorted(layout))["imex_domains"]
    assert domain["problems"] == [
        "nodes file of tray05 differs from the expected one (18 member address(es), sorted, as nvidia_imex writes "
        "it): lists the addresses in another order"]


def test_two_members_with_one_address_fail_naming_both(fleet_facts):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    layout["tray03"] = ("gb200_tray", "10.114.0.13")
    [domain] = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))["imex_domains"]
    assert domain["status"] == "fail"
    assert domain["problems"][0] == \
        "hosts tray02 and tray03 have the same IMEX address 10.114.0.13; every member needs its own"


@pytest.mark.parametrize(("addresses", "problem"), [
    pytest.param(["127.0.0.1", "10.114.0.12"], "127.0.0.1 (loopback)", id="loopback"),
    pytest.param(["0.0.0.0", "10.114.0.12"], "0.0.0.0 (unspecified)", id="unspecified"),
    pytest.param(["169.254.0.7", "10.114.0.12"], "169.254.0.7 (link-local)", id="link-local-v4"),
    pytest.param(["fe80::7", "fd00::2"], "fe80::7 (link-local)", id="link-local-v6"),
    pytest.param(["224.0.0.1", "10.114.0.12"], "224.0.0.1 (multicast)", id="multicast-v4"),  # issue 39 item 9
    pytest.param(["ff02::1", "fd00::2"], "ff02::1 (multicast)", id="multicast-v6"),
    pytest.param(["10.114.0.11", "fd00::2"], "IPv4 and IPv6 addresses mixed", id="mixed-family"),
])
def test_nodes_file_with_addresses_peers_cannot_use_is_invalid(fleet_facts, addresses, problem):
    hostvars = hostvars_for(fleet_facts, {"tray": ("gb200_tray", "10.114.0.11")})
    imex = hostvars["tray"]["ansible_facts"]["gpufabric"]["imex"]
    imex["nodes"]["addresses"] = addresses
    imex["domain"] = None  # no live domain to compare: the nodes file alone is judged
    check = checks_of(preflight_report(hostvars, ["tray"]), "tray")["imex"]
    assert check == {"name": "imex", "status": "fail",
                     "message": f"nodes file /etc/nvidia-imex/nodes_config.cfg is invalid: {problem} "
                                "(IMEX peers need routable addresses of one family)"}


def test_live_domain_up_with_fewer_nodes_than_the_nodes_file_fails(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"tray": ("gb200_tray", "10.114.0.11")})
    domain = hostvars["tray"]["ansible_facts"]["gpufabric"]["imex"]["domain"]
    assert domain["status"] == "UP" and len(domain["nodes"]) == 18
    del domain["nodes"][9:]
    check = checks_of(preflight_report(hostvars, ["tray"]), "tray")["imex"]
    assert check == {"name": "imex", "status": "fail", "message":
                     "IMEX domain UP with 9 of the 18 node(s) of nodes file /etc/nvidia-imex/nodes_config.cfg"}


def test_fabric_in_progress_and_split_cliques_fail(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"tray": ("gb200_tray", "10.114.0.11")})
    gpu = hostvars["tray"]["ansible_facts"]["gpufabric"]["gpu"]
    gpu["gpus"][2]["fabric"]["state"] = "in_progress"
    gpu["cliques"].append("3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2")
    report = preflight_report(hostvars, ["tray"])
    assert checks_of(report, "tray")["fabric"] == {
        "name": "fabric", "status": "fail",
        "message": "GPU 2: fabric state in_progress; GPUs disagree on their clique: "
                   "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1, 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2"}
    assert report["imex_domains"] == []


def test_host_without_facts_fails():
    report = preflight_report({"down": {}}, ["down"])
    assert report["hosts"]["down"]["status"] == "fail"
    assert report["hosts"]["down"]["summary"] == "no gpufabric facts (host unreachable or probe failed)"


def test_probe_errors_are_warnings(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    hostvars["hgx"]["ansible_facts"]["gpufabric"]["connectx"]["errors"] = ["cannot read /sys/class/infiniband/mlx5_3"]
    report = preflight_report(hostvars, ["hgx"])
    assert checks_of(report, "hgx")["probe"] == {
        "name": "probe", "status": "warn", "message": "connectx: cannot read /sys/class/infiniband/mlx5_3"}
    assert report["hosts"]["hgx"]["status"] == "warn"
    assert report["hosts"]["hgx"]["summary"] == "warnings: probe, driver_lifecycle"


def test_bad_input_is_named():
    with pytest.raises(AnsibleFilterError, match=r"unknown setting.*min_driver"):
        preflight_report({}, [], {"min_driver": "1"})
    with pytest.raises(AnsibleFilterError, match="hosts must be a list, got a string"):
        preflight_report({}, "localhost")
    with pytest.raises(AnsibleFilterError, match="expected the dict returned"):
        preflight_markdown({"hosts": {}})


def test_markdown_rendering(fleet_facts):
    layout = {"broken": ("broken_node", "10.0.0.3"), "localhost": ("no_nvidia", None),
              "tray0": ("gb200_tray", "10.114.0.11")}
    report = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))
    text = preflight_markdown(report)
    json.dumps(report)  # the report must be JSON-serialisable as written
    # tray0 alone of its rack: its nodes file lists 17 trays outside the run, which nvidia_imex would drop.
    assert text.startswith("# GPU fabric readiness\n\n**NOT READY: broken, tray0** - 3 host(s): 0 pass, 0 warn, "
                           "2 fail, 1 without NVIDIA GPU or ConnectX port\n")
    assert ("| localhost | NO HW | 0 | - | 0 | - "
            "| no NVIDIA GPU or ConnectX port found; nothing to prepare on this host |") in text
    assert "| broken | FAIL | 2 | - | 2 | - | failed: driver, imex, rdma_ports, gpudirect_rdma |" in text
    assert "## IMEX domains (from GPU fabric cliques)" in text
    assert "| 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1 | tray0 | FAIL | nodes file of tray0 differs" in text


@pytest.mark.parametrize(("subset", "payload", "message"), [
    pytest.param("gpu", {"errors": ["cannot list /sys/bus/pci/devices"]}, "gpu: the probe did not report it",
                 id="collector-raised"),
    pytest.param("gpu", {"count": 0, "gpus": [], "cliques": [], "errors": ["cannot list /sys/bus/pci/devices"]},
                 "gpu: read nothing (cannot list /sys/bus/pci/devices)", id="gpu-read-nothing"),
    pytest.param("connectx", {"count": 0, "ports": [], "errors": ["cannot read /sys/class/infiniband"]},
                 "connectx: read nothing (cannot read /sys/class/infiniband)", id="connectx-read-nothing"),
    pytest.param("imex", None, "imex: the probe did not report it", id="subset-missing"),
    pytest.param("peermem", "garbage", "peermem: the probe did not report it", id="subset-not-a-mapping"),
])
def test_a_probe_that_read_nothing_fails_the_host_never_ready(fleet_facts, subset, payload, message):
    """On the starting commit a host whose probes read nothing was no_hardware, and the run READY."""
    hostvars = hostvars_for(fleet_facts, {"plain": ("no_nvidia", "192.0.2.30")})
    facts = hostvars["plain"]["ansible_facts"]["gpufabric"]
    if payload is None:
        del facts[subset]
    else:
        facts[subset] = payload
    report = preflight_report(hostvars, ["plain"])
    assert checks_of(report, "plain")["probe"] == {"name": "probe", "status": "fail", "message": message}
    assert report["hosts"]["plain"]["status"] == "fail"
    assert report["hosts"]["plain"]["summary"] == "failed: probe"
    assert report["summary"]["ready"] is False
    assert report["summary"]["failed_hosts"] == ["plain"]


@pytest.mark.parametrize("facts", [{}, "garbage", [], {"gpu": "x"}])
def test_facts_of_the_wrong_shape_fail_the_host(facts):
    report = preflight_report({"h": {"ansible_facts": {"gpufabric": facts}}}, ["h"])
    assert report["hosts"]["h"]["status"] == "fail"
    assert report["summary"]["ready"] is False


def test_a_port_the_probe_reported_errors_for_fails_with_its_errors(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    port = hostvars["hgx"]["ansible_facts"]["gpufabric"]["connectx"]["ports"][3]
    port["errors"] = ["link_layer 'Ethernot' is not one a kernel writes", "rate '400 bogons' is not a rate"]
    report = preflight_report(hostvars, ["hgx"])
    check = checks_of(report, "hgx")["rdma_ports"]
    assert check == {"name": "rdma_ports", "status": "fail", "message":
                     f"{port['rdma_device']}/1 ({port['netdev']}): unreadable (link_layer 'Ethernot' is not one a "
                     "kernel writes; rate '400 bogons' is not a rate)"}
    assert report["hosts"]["hgx"]["status"] == "fail"


def test_ports_with_empty_errors_are_judged_as_before(fleet_facts):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    for port in hostvars["hgx"]["ansible_facts"]["gpufabric"]["connectx"]["ports"]:
        port["errors"] = []
    assert checks_of(preflight_report(hostvars, ["hgx"]), "hgx")["rdma_ports"]["status"] == "pass"


@pytest.mark.parametrize(("value", "active_required"), [("false", False), ("no", False), (0, False),
                                                        ("true", True), ("yes", True)])
def test_rdma_require_active_is_read_as_ansible_reads_booleans(fleet_facts, value, active_required):
    """On the starting commit the string "false" was truthy: ports that are down still failed."""
    hostvars = hostvars_for(fleet_facts, {"broken": ("broken_node", "10.0.0.3")})
    report = preflight_report(hostvars, ["broken"], {"rdma_require_active": value})
    assert report["settings"]["rdma_require_active"] is active_required
    assert ("state DOWN/Polling" in checks_of(report, "broken")["rdma_ports"]["message"]) is active_required


@pytest.mark.parametrize(("settings", "message"), [
    pytest.param({"rdma_require_active": "maybe"}, 'preflight_report: settings.rdma_require_active must be a boolean '
                 '(true/false, "yes"/"no", 1/0), got \'maybe\'', id="boolean"),
    pytest.param({"rdma_min_rate_gbps": 0}, "preflight_report: settings.rdma_min_rate_gbps must be greater than 0, "
                 "got 0", id="rate-zero"),
    pytest.param({"rdma_min_rate_gbps": "400"}, "preflight_report: settings.rdma_min_rate_gbps must be a number, "
                 "got '400'", id="rate-string"),
    pytest.param({"rdma_mtu": "9000"}, "preflight_report: settings.rdma_mtu must be a mapping, got a string",
                 id="mtu-string"),
    pytest.param({"rdma_mtu": {"Ethernet": -1}}, "preflight_report: settings.rdma_mtu.Ethernet must be greater "
                 "than 0, got -1", id="mtu-negative"),
    pytest.param("min_driver_version=1", "preflight_report: settings must be a mapping, got a string",
                 id="settings-string"),
    pytest.param({"imex_domain_members": "18"}, "preflight_report: settings.imex_domain_members must be a whole "
                 "number of hosts, 1 or more, got '18'", id="members-string"),
    pytest.param({"imex_domain_members": 17.5}, "preflight_report: settings.imex_domain_members must be a whole "
                 "number of hosts, 1 or more, got 17.5", id="members-fraction"),
    pytest.param({"imex_domain_members": True}, "preflight_report: settings.imex_domain_members must be a whole "
                 "number of hosts, 1 or more, got True", id="members-boolean"),
    pytest.param({"imex_domain_members": 0}, "preflight_report: settings.imex_domain_members must be a whole "
                 "number of hosts, 1 or more, got 0", id="members-zero"),
])
def test_bad_settings_are_refused_naming_them(settings, message):
    with pytest.raises(AnsibleFilterError) as caught:
        preflight_report({}, [], settings)
    assert str(caught.value) == message


@pytest.mark.parametrize(("hostvars", "hosts", "message"), [
    pytest.param([], [], "preflight_report: the input must be hostvars (a mapping), got list", id="hostvars"),
    pytest.param({}, [1], "preflight_report: hosts entry must be a string, got a number", id="host-number"),
    pytest.param({}, {"a": 1}, "preflight_report: hosts must be a list, got a mapping", id="hosts-mapping"),
])
def test_bad_input_is_refused_naming_the_argument(hostvars, hosts, message):
    with pytest.raises(AnsibleFilterError) as caught:
        preflight_report(hostvars, hosts)
    assert str(caught.value) == message


SCALARS = (st.none() | st.booleans() | st.integers(-2, 500) | st.floats(allow_nan=False, allow_infinity=False)
           | st.text(max_size=6) | st.sampled_from(["UP", "ACTIVE", "10.0.0.1", "fe80::1", "Ethernet"]))
JSON = st.recursive(SCALARS, lambda children: st.lists(children, max_size=3)
                    | st.dictionaries(st.text(max_size=6), children, max_size=3), max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replace(value, path, new):
    if not path:
        return new
    value = copy.copy(value)
    value[path[0]] = _replace(value[path[0]], path[1:], new)
    return value


def _check_report(report):
    assert set(report) == {"settings", "summary", "hosts", "imex_domains"}
    for entry in report["hosts"].values():
        assert entry["status"] in {"pass", "warn", "fail", "no_hardware"}
        assert isinstance(entry["summary"], str)
        for check in entry["checks"]:
            assert check["status"] in {"skip", "pass", "warn", "fail"} and isinstance(check["message"], str)
    assert report["summary"]["ready"] is (report["summary"]["fail"] == 0)
    for domain in report["imex_domains"]:
        assert domain["status"] in {"pass", "warn", "fail"}
    json.dumps(report)
    assert isinstance(preflight_markdown(report), str)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_corruption_of_the_facts_gives_a_report_or_the_documented_error(fleet_facts, data):
    """Whatever a fact holds (a string for a list, null for a count, garbage in a port): a report, never a crash."""
    trees = data.draw(st.lists(st.sampled_from(sorted(fleet_facts)), min_size=1, max_size=3))
    hostvars = {}
    for number, tree in enumerate(trees):
        facts = fleet_facts[tree]
        for _mutation in range(data.draw(st.integers(0, 3))):
            paths = list(_paths(facts))
            facts = _replace(facts, paths[data.draw(st.integers(0, len(paths) - 1))], data.draw(JSON))
        host_vars = {"ansible_facts": {"gpufabric": facts,
                                       "default_ipv4": {"address": data.draw(st.sampled_from(
                                           ["10.114.0.11", "10.114.0.12", "127.0.0.1", "fd00::1", "x"]))}}}
        site = st.sampled_from(["gpufabric_imex_address", "gpufabric_imex_interface", "gpufabric_imex_address_family"])
        host_vars.update(data.draw(st.dictionaries(site, JSON, max_size=2)))
        hostvars[f"h{number}"] = host_vars
    _check_report(preflight_report(hostvars, sorted(hostvars)))


@settings(max_examples=40, deadline=None)
@given(hostvars=st.one_of(JSON, st.dictionaries(st.sampled_from(["a", "b"]), JSON, max_size=2)),
       hosts=st.one_of(JSON, st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)),
       rules=st.one_of(st.none(), JSON, st.dictionaries(st.sampled_from(sorted(
           ["min_driver_version", "rdma_min_rate_gbps", "rdma_mtu", "rdma_require_active",
            "imex_domain_members"])), JSON, max_size=3)))
def test_any_input_gives_a_report_or_the_documented_error(hostvars, hosts, rules):
    try:
        report = preflight_report(hostvars, hosts, rules)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("preflight_report: ")
        return
    _check_report(report)


def test_markdown_title_must_be_text():
    report = preflight_report({}, [])
    with pytest.raises(AnsibleFilterError) as caught:
        preflight_markdown(report, 5)
    assert str(caught.value) == "preflight_markdown: title must be a string, got a number"


def test_nodes_file_listing_an_address_twice_is_stale(fleet_facts):
    layout = {f"tray{i:02d}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(18)}
    hostvars = hostvars_for(fleet_facts, layout)
    hostvars["tray07"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].append("10.114.0.11")
    [domain] = preflight_report(hostvars, sorted(layout))["imex_domains"]
    assert domain["stale"] == ["tray07"]
    assert domain["problems"][0].endswith("): lists an address more than once")
