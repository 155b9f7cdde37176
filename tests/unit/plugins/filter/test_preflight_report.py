# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness rules on the facts the real probes gather from the recorded host trees."""

from __future__ import annotations

import copy
import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.preflight_markdown import preflight_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report


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
    assert report["hosts"]["hgx"]["status"] == "pass", checks
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
    assert "gpu-node-07" in checks["imex"]["message"]
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
    layout = {f"tray{i}": ("gb200_tray", f"10.114.0.{11 + i}") for i in range(3)}
    report = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))
    assert [domain["clique"] for domain in report["imex_domains"]] == ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"]
    domain = report["imex_domains"][0]
    assert domain["members"] == ["tray0", "tray1", "tray2"]
    assert domain["status"] == "pass"
    assert domain["problems"] == []
    assert domain["notes"] == ["15 address(es) in the nodes file belong to hosts outside this run"]
    for host in layout:
        assert report["hosts"][host]["status"] == "pass", checks_of(report, host)
        assert report["hosts"][host]["cliques"] == ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"]
        assert checks_of(report, host)["fabric"]["message"] == \
            "fabric COMPLETED on 4 GPU(s), clique 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"


def test_gb200_domain_detects_hand_edited_nodes_file_and_missing_member(fleet_facts):
    layout = {"tray0": ("gb200_tray", "10.114.0.11"), "tray1": ("gb200_tray", "10.114.0.12"),
              "tray2": ("gb200_tray", "10.114.9.99")}
    hostvars = hostvars_for(fleet_facts, layout)
    hostvars["tray1"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"].pop()
    report = preflight_report(hostvars, sorted(layout))
    domain = report["imex_domains"][0]
    assert domain["status"] == "fail"
    assert domain["problems"] == ["nodes files differ across the domain: tray1 differ from tray0",
                                  "members missing from the nodes file: tray2 (10.114.9.99)"]
    for host in layout:
        assert checks_of(report, host)["imex_domain"]["status"] == "fail"
        assert report["hosts"][host]["status"] == "fail"


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
    assert report["hosts"]["hgx"]["summary"] == "warnings: probe"


def test_bad_input_is_named():
    with pytest.raises(AnsibleFilterError, match=r"unknown setting.*min_driver"):
        preflight_report({}, [], {"min_driver": "1"})
    with pytest.raises(AnsibleFilterError, match="hosts must be a list"):
        preflight_report({}, "localhost")
    with pytest.raises(AnsibleFilterError, match="expected the dict returned"):
        preflight_markdown({"hosts": {}})


def test_markdown_rendering(fleet_facts):
    layout = {"broken": ("broken_node", "10.0.0.3"), "localhost": ("no_nvidia", None),
              "tray0": ("gb200_tray", "10.114.0.11")}
    report = preflight_report(hostvars_for(fleet_facts, layout), sorted(layout))
    text = preflight_markdown(report)
    json.dumps(report)  # the report must be JSON-serialisable as written
    assert text.startswith("# GPU fabric readiness\n\n**NOT READY: broken** - 3 host(s): 1 pass, 0 warn, 1 fail, "
                           "1 without NVIDIA GPU or ConnectX port\n")
    assert ("| localhost | NO HW | 0 | - | 0 | - "
            "| no NVIDIA GPU or ConnectX port found; nothing to prepare on this host |") in text
    assert "| broken | FAIL | 2 | - | 2 | - | failed: driver, imex, rdma_ports, gpudirect_rdma |" in text
    assert "## IMEX domains (from GPU fabric cliques)" in text
    assert "| 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1 | tray0 | PASS |" in text
