# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Tests of the ConnectX sysfs walk on the recorded host trees and on trees broken on purpose."""

from __future__ import annotations

import os
import shutil

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import (
    MODELS,
    collect_connectx,
    parse_coded,
    parse_numa_node,
    parse_rate,
    shares_pcie_switch,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import COUNTERS

HGX_IB = [
    # rdma device, pci address, netdev, numa node, GPU on the same PCIe switch
    ("mlx5_0", "0000:18:00.0", "ibp24s0", 0, "0000:1b:00.0"),
    ("mlx5_1", "0000:40:00.0", "ibp64s0", 0, "0000:43:00.0"),
    ("mlx5_2", "0000:4f:00.0", "ibp79s0", 0, "0000:52:00.0"),
    ("mlx5_3", "0000:5e:00.0", "ibp94s0", 0, "0000:61:00.0"),
    ("mlx5_4", "0000:9a:00.0", "ibp154s0", 1, "0000:9d:00.0"),
    ("mlx5_5", "0000:c0:00.0", "ibp192s0", 1, "0000:c3:00.0"),
    ("mlx5_6", "0000:ce:00.0", "ibp206s0", 1, "0000:d1:00.0"),
    ("mlx5_7", "0000:dc:00.0", "ibp220s0", 1, "0000:df:00.0"),
]
HGX_NUMA = {0: ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0"],
            1: ["0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]}
GB200_NUMA = {0: ["0008:01:00.0", "0009:01:00.0"], 1: ["0018:01:00.0", "0019:01:00.0"]}
# A healthy port's error counters: every one the probe reads, 0 (the recorded trees write them all).
HEALTHY_COUNTERS = dict.fromkeys(COUNTERS, 0)


def _port(payload: dict, rdma_device: str, port: int = 1) -> dict:
    matches = [p for p in payload["ports"] if p["rdma_device"] == rdma_device and p["port"] == port]
    assert len(matches) == 1, f"{rdma_device} port {port}: {matches}"
    return matches[0]


def _host(root: str, path: str) -> str:
    return os.path.join(root, path.lstrip("/"))


def _real(root: str, path: str) -> str:
    """Resolved real path of a host path inside a fixture tree."""
    return os.path.realpath(_host(root, path))


def _write(root: str, path: str, text: str) -> None:
    with open(_real(root, path), "w", encoding="utf-8") as handle:
        handle.write(text)


# --- pure parsers ------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("400 Gb/sec (4X NDR)", 400),
    ("200 Gb/sec (2X NDR)", 200),
    ("100 Gb/sec (4X EDR)", 100),
    ("2.5 Gb/sec (1X SDR)", 2.5),
    ("53.125 Gb/sec (1X PAM4)", 53.125),
])
def test_parse_rate(text, expected):
    value = parse_rate(text)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text", ["garbage", "", "Gb/sec 400", "fast (4X NDR)",
                                  "\uff14\uff10\uff10 Gb/sec (4X NDR)", "400 Gb/sec (4X NDR)\n"])
def test_parse_rate_rejects_garbage(text):
    with pytest.raises(ParseError, match="Gb/sec"):
        parse_rate(text)


@pytest.mark.parametrize("text, expected", [
    ("4: ACTIVE", (4, "ACTIVE")),
    ("1: DOWN", (1, "DOWN")),
    ("5: ACTIVE_DEFER", (5, "ACTIVE_DEFER")),
    ("5: LinkUp", (5, "LinkUp")),
    ("2: Polling", (2, "Polling")),
    ("4: PortConfigurationTraining", (4, "PortConfigurationTraining")),
    ("7: Phy Test", (7, "Phy Test")),
])
def test_parse_coded(text, expected):
    assert parse_coded(text) == expected


@pytest.mark.parametrize("text", ["ACTIVE", "x: ACTIVE", "4:", "", "4: Port Configuration Training",
                                  "4: ACTIVE and more", "4: active"])
def test_parse_coded_rejects_garbage(text):
    """Only a name the kernel writes is reported (drivers/infiniband/core/sysfs.c); anything else is garbage."""
    with pytest.raises(ParseError):
        parse_coded(text)


@pytest.mark.parametrize("text, expected", [("0", 0), ("3", 3), ("-1", None)])
def test_parse_numa_node(text, expected):
    assert parse_numa_node(text) == expected


def test_parse_numa_node_rejects_garbage():
    with pytest.raises(ParseError, match=r"^not a NUMA node number$"):
        parse_numa_node("zero")


@pytest.mark.parametrize("nic, gpu, expected", [
    # below the same switch upstream port
    ("/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:17:04.0/0000:18:00.0",
     "/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:1a:03.0/0000:1b:00.0", True),
    # below the same switch downstream port
    ("/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:1a:00.0/0000:1b:00.0",
     "/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:1a:00.0/0000:1b:00.1", True),
    # only the root port in common
    ("/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:1a:00.0/0000:1b:00.0",
     "/sys/devices/pci0000:18/0000:18:01.0/0000:19:01.0/0000:1c:00.0", False),
    # two functions of one device straight on a root port
    ("/sys/devices/pci0000:a7/0000:a7:01.0/0000:aa:00.0", "/sys/devices/pci0000:a7/0000:a7:01.0/0000:aa:00.1", False),
    # same host bridge, different root ports
    ("/sys/devices/pci0000:a7/0000:a7:01.0/0000:aa:00.0", "/sys/devices/pci0000:a7/0000:a7:02.0/0000:ab:00.0", False),
    # different host bridges
    ("/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:1a:00.0/0000:1b:00.0",
     "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0/0000:42:00.0/0000:43:00.0", False),
])
def test_shares_pcie_switch(nic, gpu, expected):
    assert shares_pcie_switch(nic, gpu) is expected
    assert shares_pcie_switch(gpu, nic) is expected


def test_model_table():
    assert MODELS["0x1021"] == "ConnectX-7"
    assert MODELS["0xa2dc"] == "BlueField-3"
    assert MODELS["0x101d"] == "ConnectX-6 Dx"
    assert len(MODELS) == 9


# --- recorded hosts ----------------------------------------------------------------------------

def test_hgx_h100(host_trees):
    payload = collect_connectx(host_trees["hgx_h100"])
    assert payload["errors"] == []
    assert payload["warnings"] == []
    assert payload["count"] == 10
    assert payload["rdma_devices"] == [f"mlx5_{i}" for i in range(10)]
    assert payload["link_layers"] == {"InfiniBand": 8, "Ethernet": 2}
    assert payload["functions_without_rdma"] == []
    assert [p["rdma_device"] for p in payload["ports"]] == [f"mlx5_{i}" for i in range(10)]
    for rdma_device, bdf, netdev, numa, gpu in HGX_IB:
        assert _port(payload, rdma_device) == {
            "pci_address": bdf, "device_id": "0x1021", "model": "ConnectX-7", "rdma_device": rdma_device,
            "port": 1, "netdev": netdev, "link_layer": "InfiniBand", "state": "ACTIVE", "state_code": 4,
            "phys_state": "LinkUp", "rate_gbps": 400, "rate": "400 Gb/sec (4X NDR)", "mtu": 4092,
            "fw_ver": "28.39.1002", "board_id": "MT_0000000838", "numa_node": numa,
            "gpus_same_switch": [gpu], "gpus_same_numa": HGX_NUMA[numa], "errors": [],
            "counters": HEALTHY_COUNTERS, "counter_errors": [],
        }
    for fn in (0, 1):
        assert _port(payload, f"mlx5_{8 + fn}") == {
            "pci_address": f"0000:aa:00.{fn}", "device_id": "0x1021", "model": "ConnectX-7",
            "rdma_device": f"mlx5_{8 + fn}", "port": 1, "netdev": f"enp170s0f{fn}np{fn}", "link_layer": "Ethernet",
            "state": "ACTIVE", "state_code": 4, "phys_state": "LinkUp", "rate_gbps": 200,
            "rate": "200 Gb/sec (4X HDR)", "mtu": 9000, "fw_ver": "28.39.1002", "board_id": "MT_0000000838",
            "numa_node": 1, "gpus_same_switch": [], "gpus_same_numa": HGX_NUMA[1], "errors": [],
            "counters": HEALTHY_COUNTERS, "counter_errors": [],
        }


def test_hgx_h100_nvswitches_are_not_gpus(host_trees):
    # 0000:07:00.0 and 0000:08:00.0 are NVIDIA functions of class 0x0680 (NVSwitch), never GPUs.
    payload = collect_connectx(host_trees["hgx_h100"])
    listed = {bdf for port in payload["ports"] for bdf in port["gpus_same_numa"] + port["gpus_same_switch"]}
    assert listed == set(HGX_NUMA[0] + HGX_NUMA[1])


def test_hgx_h100_ethernet_netdev_comes_from_gid_attrs(fresh_tree):
    root = fresh_tree("hgx_h100")
    # Port indexes that match no port: only the kernel's gid_attrs/ndevs/0 can still name the netdevs.
    for fn in (0, 1):
        _write(root, f"/sys/class/net/enp170s0f{fn}np{fn}/dev_port", "7\n")
    payload = collect_connectx(root)
    assert (_port(payload, "mlx5_8")["netdev"], _port(payload, "mlx5_8")["mtu"]) == ("enp170s0f0np0", 9000)
    assert (_port(payload, "mlx5_9")["netdev"], _port(payload, "mlx5_9")["mtu"]) == ("enp170s0f1np1", 9000)
    assert payload["errors"] == []
    # And without gid_attrs (an InfiniBand-like port) those netdevs are not taken.
    os.unlink(_real(root, "/sys/class/infiniband/mlx5_8/ports/1/gid_attrs/ndevs/0"))
    assert _port(collect_connectx(root), "mlx5_8")["netdev"] is None


def test_gb200_tray(host_trees):
    payload = collect_connectx(host_trees["gb200_tray"])
    assert payload["errors"] == []
    assert payload["warnings"] == []
    assert payload["count"] == 5
    assert payload["rdma_devices"] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]
    assert payload["link_layers"] == {"InfiniBand": 4, "Ethernet": 1}
    assert payload["functions_without_rdma"] == []
    expected_ib = [("mlx5_0", "0000:03:00.0", "ibp3s0", 0), ("mlx5_1", "0002:03:00.0", "ibP2p3s0", 0),
                   ("mlx5_2", "0010:03:00.0", "ibP16p3s0", 1), ("mlx5_3", "0012:03:00.0", "ibP18p3s0", 1)]
    for rdma_device, bdf, netdev, numa in expected_ib:
        port = _port(payload, rdma_device)
        assert (port["pci_address"], port["netdev"], port["numa_node"]) == (bdf, netdev, numa)
        assert (port["model"], port["link_layer"], port["rate_gbps"], port["mtu"]) == (
            "ConnectX-7", "InfiniBand", 400, 4092)
        assert port["gpus_same_switch"] == []
        assert port["gpus_same_numa"] == GB200_NUMA[numa]
    assert _port(payload, "mlx5_4") == {
        "pci_address": "0006:01:00.0", "device_id": "0xa2dc", "model": "BlueField-3", "rdma_device": "mlx5_4",
        "port": 1, "netdev": "enP6p1s0f0np0", "link_layer": "Ethernet", "state": "ACTIVE", "state_code": 4,
        "phys_state": "LinkUp", "rate_gbps": 200, "rate": "200 Gb/sec (4X HDR)", "mtu": 9000,
        "fw_ver": "32.43.1014", "board_id": "MT_0000001069", "numa_node": 0,
        "gpus_same_switch": [], "gpus_same_numa": GB200_NUMA[0], "errors": [],
        "counters": HEALTHY_COUNTERS, "counter_errors": [],
    }


def test_no_nvidia(host_trees):
    assert collect_connectx(host_trees["no_nvidia"]) == {
        "ports": [], "count": 0, "rdma_devices": [], "link_layers": {"InfiniBand": 0, "Ethernet": 0},
        "functions_without_rdma": [], "errors": [], "warnings": [],
    }


def test_broken_node(host_trees):
    payload = collect_connectx(host_trees["broken_node"])
    assert payload["errors"] == []
    assert payload["count"] == 2
    assert payload["link_layers"] == {"InfiniBand": 2, "Ethernet": 0}
    up = _port(payload, "mlx5_0")
    assert (up["state"], up["state_code"], up["phys_state"], up["rate_gbps"], up["mtu"]) == (
        "ACTIVE", 4, "LinkUp", 400, 4092)
    assert up["gpus_same_numa"] == ["0000:17:00.0", "0000:65:00.0"]
    assert _port(payload, "mlx5_1") == {
        "pci_address": "0000:b1:00.0", "device_id": "0x1021", "model": "ConnectX-7", "rdma_device": "mlx5_1",
        "port": 1, "netdev": "ibp177s0", "link_layer": "InfiniBand", "state": "DOWN", "state_code": 1,
        "phys_state": "Polling", "rate_gbps": 200, "rate": "200 Gb/sec (4X HDR)", "mtu": 2044,
        "fw_ver": "28.39.1002", "board_id": "MT_0000000838", "numa_node": 1,
        "gpus_same_switch": [], "gpus_same_numa": [], "errors": [],
        "counters": HEALTHY_COUNTERS, "counter_errors": [],
    }


# --- bad input ---------------------------------------------------------------------------------

def test_missing_root(tmp_path):
    missing = str(tmp_path / "nowhere")
    payload = collect_connectx(missing)
    assert payload["ports"] == []
    assert payload["count"] == 0
    assert payload["errors"] == [f"root {missing!r} does not exist or is not a directory"]


def test_root_without_sysfs(tmp_path):
    payload = collect_connectx(str(tmp_path))
    assert payload["ports"] == []
    assert payload["errors"] == ["/sys/bus/pci/devices: is missing (sysfs not mounted below the root?)"]


def test_garbage_rate_is_not_kept_and_other_ports_are(fresh_tree):
    root = fresh_tree("hgx_h100")
    _write(root, "/sys/class/infiniband/mlx5_3/ports/1/rate", "garbage\n")
    payload = collect_connectx(root)
    assert payload["count"] == 10
    broken = _port(payload, "mlx5_3")
    assert broken["rate"] is None  # only a rate as the kernel writes it is reported
    assert broken["rate_gbps"] is None
    assert broken["state"] == "ACTIVE"
    assert payload["errors"] == [
        "/sys/class/infiniband/mlx5_3/ports/1/rate: not a rate (expected '<number> Gb/sec (<width>X <speed>)')"]
    assert broken["errors"] == payload["errors"]
    assert _port(payload, "mlx5_2")["errors"] == []
    assert [p["rate_gbps"] for p in payload["ports"]] == [400, 400, 400, None, 400, 400, 400, 400, 200, 200]


def test_fractional_rate(fresh_tree):
    root = fresh_tree("broken_node")
    _write(root, "/sys/class/infiniband/mlx5_1/ports/1/rate", "2.5 Gb/sec (1X SDR)\n")
    port = _port(collect_connectx(root), "mlx5_1")
    assert port["rate_gbps"] == 2.5
    assert port["rate"] == "2.5 Gb/sec (1X SDR)"


def test_missing_and_unreadable_port_attributes(fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(_real(root, "/sys/class/infiniband/mlx5_0/ports/1/state"))
    # A directory where a file should be: present but not readable as text (tests run as root, so chmod won't do).
    phys = _real(root, "/sys/class/infiniband/mlx5_0/ports/1/phys_state")
    os.unlink(phys)
    os.mkdir(phys)
    _write(root, "/sys/class/infiniband/mlx5_0/ports/1/link_layer", "")
    payload = collect_connectx(root)
    port = _port(payload, "mlx5_0")
    assert (port["state"], port["state_code"], port["phys_state"]) == (None, None, None)
    assert port["link_layer"] is None
    assert port["rate_gbps"] == 400
    assert payload["errors"] == [
        "/sys/class/infiniband/mlx5_0/ports/1/state: is missing",
        "/sys/class/infiniband/mlx5_0/ports/1/phys_state: cannot be read",
        "/sys/class/infiniband/mlx5_0/ports/1/link_layer: not a link layer (expected InfiniBand or Ethernet)",
    ]
    assert port["errors"] == payload["errors"]
    assert payload["link_layers"] == {"InfiniBand": 1, "Ethernet": 0}
    assert _port(payload, "mlx5_1")["state"] == "DOWN"


def test_malformed_state(fresh_tree):
    root = fresh_tree("broken_node")
    _write(root, "/sys/class/infiniband/mlx5_1/ports/1/state", "DOWN\n")
    payload = collect_connectx(root)
    assert _port(payload, "mlx5_1")["state"] is None
    assert payload["errors"] == [
        "/sys/class/infiniband/mlx5_1/ports/1/state: not a port state (expected '<code>: <name>')"]
    assert _port(payload, "mlx5_1")["errors"] == payload["errors"]


def test_device_attributes_missing(fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(_real(root, "/sys/class/infiniband/mlx5_1/fw_ver"))
    _write(root, "/sys/bus/pci/devices/0000:b1:00.0/numa_node", "-1\n")
    _write(root, "/sys/bus/pci/devices/0000:31:00.0/numa_node", "seven\n")
    payload = collect_connectx(root)
    port = _port(payload, "mlx5_1")
    assert port["fw_ver"] is None
    assert port["board_id"] == "MT_0000000838"
    assert port["numa_node"] is None
    assert port["gpus_same_numa"] == []
    assert _port(payload, "mlx5_0")["numa_node"] is None
    assert payload["errors"] == [
        "/sys/devices/pci0000:2e/0000:2e:01.0/0000:31:00.0/numa_node: not a NUMA node number",
        "/sys/class/infiniband/mlx5_1/fw_ver: is missing",
    ]


def test_unknown_device_id_has_no_model(fresh_tree):
    root = fresh_tree("broken_node")
    _write(root, "/sys/bus/pci/devices/0000:31:00.0/device", "0x101c\n")
    port = _port(collect_connectx(root), "mlx5_0")
    assert port["device_id"] == "0x101c"
    assert port["model"] is None


def test_netdev_of_other_vendor_is_ignored_in_gid_attrs(fresh_tree):
    root = fresh_tree("hgx_h100")
    # The kernel names the Intel management NIC; it is not a ConnectX netdev.
    _write(root, "/sys/class/infiniband/mlx5_9/ports/1/gid_attrs/ndevs/0", "eno1\n")
    # Its own netdev would match port 1 no more, so nothing stands in for the ignored one.
    _write(root, "/sys/class/net/enp170s0f1np1/dev_port", "7\n")
    payload = collect_connectx(root)
    port = _port(payload, "mlx5_9")
    assert port["netdev"] is None
    assert port["mtu"] is None
    assert payload["warnings"] == [
        "/sys/class/infiniband/mlx5_9/ports/1/gid_attrs/ndevs/0 names a netdev that is not a ConnectX netdev "
        "(its device/vendor is not 0x15b3); ignored"
    ]
    assert payload["errors"] == []
    assert _port(payload, "mlx5_8")["netdev"] == "enp170s0f0np0"


def test_netdev_of_other_vendor_is_ignored_below_function(fresh_tree):
    root = fresh_tree("hgx_h100")
    # Point ibp24s0's device link at the Intel NIC: its vendor is 0x8086, so it no longer counts.
    link = _host(root, "/sys/devices/pci0000:18/0000:18:01.0/0000:19:00.0/0000:17:04.0/0000:18:00.0/net/ibp24s0/device")
    os.unlink(link)
    os.symlink(os.path.relpath(_host(root, "/sys/devices/pci0000:03/0000:03:01.0/0000:06:00.0"),
                               os.path.dirname(link)), link)
    payload = collect_connectx(root)
    port = _port(payload, "mlx5_0")
    assert port["netdev"] is None
    assert port["mtu"] is None
    assert port["state"] == "ACTIVE"
    assert _port(payload, "mlx5_1")["netdev"] == "ibp64s0"
    assert payload["errors"] == []


def test_second_port_matched_by_dev_port(fresh_tree):
    root = fresh_tree("broken_node")
    device = "/sys/class/infiniband/mlx5_0"
    port2 = _real(root, f"{device}/ports") + "/2"
    shutil.copytree(_real(root, f"{device}/ports/1"), port2)
    with open(os.path.join(port2, "state"), "w", encoding="utf-8") as handle:
        handle.write("2: INIT\n")
    netdev1 = _real(root, "/sys/class/net/ibp49s0")
    netdev2 = os.path.join(os.path.dirname(netdev1), "ibp49s0d1")
    shutil.copytree(netdev1, netdev2, symlinks=True)
    for attr, value in (("dev_port", "1\n"), ("mtu", "2044\n")):
        with open(os.path.join(netdev2, attr), "w", encoding="utf-8") as handle:
            handle.write(value)
    payload = collect_connectx(root)
    assert payload["count"] == 3
    assert [(p["rdma_device"], p["port"]) for p in payload["ports"]] == [("mlx5_0", 1), ("mlx5_0", 2), ("mlx5_1", 1)]
    assert payload["rdma_devices"] == ["mlx5_0", "mlx5_1"]
    assert (_port(payload, "mlx5_0", 1)["netdev"], _port(payload, "mlx5_0", 1)["mtu"]) == ("ibp49s0", 4092)
    assert (_port(payload, "mlx5_0", 2)["netdev"], _port(payload, "mlx5_0", 2)["mtu"]) == ("ibp49s0d1", 2044)
    assert _port(payload, "mlx5_0", 2)["state"] == "INIT"


def test_natural_sort_of_rdma_devices(fresh_tree):
    root = fresh_tree("hgx_h100")
    # Rename mlx5_2 to mlx5_10 as the kernel would lay it out.
    old = _real(root, "/sys/class/infiniband/mlx5_2")
    new = os.path.join(os.path.dirname(old), "mlx5_10")
    os.rename(old, new)
    os.unlink(_host(root, "/sys/class/infiniband/mlx5_2"))
    link = _host(root, "/sys/class/infiniband/mlx5_10")
    os.symlink(os.path.relpath(new, os.path.dirname(link)), link)
    payload = collect_connectx(root)
    order = ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_10"]
    assert [p["rdma_device"] for p in payload["ports"]] == order
    assert payload["rdma_devices"] == order
    assert _port(payload, "mlx5_10")["pci_address"] == "0000:4f:00.0"
    assert payload["errors"] == []


def test_function_without_rdma_device(fresh_tree):
    root = fresh_tree("hgx_h100")
    # mlx5_ib not loaded for 0000:aa:00.1: the PCI function is there, its RDMA device is not.
    shutil.rmtree(_real(root, "/sys/bus/pci/devices/0000:aa:00.1/infiniband"))
    os.unlink(_host(root, "/sys/class/infiniband/mlx5_9"))
    payload = collect_connectx(root)
    assert payload["count"] == 9
    assert payload["functions_without_rdma"] == ["0000:aa:00.1"]
    assert payload["link_layers"] == {"InfiniBand": 8, "Ethernet": 1}
    assert "mlx5_9" not in payload["rdma_devices"]
    assert payload["errors"] == []


def test_rdma_device_without_class_link_is_read_below_function(fresh_tree):
    root = fresh_tree("broken_node")
    os.unlink(_host(root, "/sys/class/infiniband/mlx5_1"))
    payload = collect_connectx(root)
    assert _port(payload, "mlx5_1")["state"] == "DOWN"
    assert payload["errors"] == []


def test_rdma_device_without_ports(fresh_tree):
    root = fresh_tree("broken_node")
    shutil.rmtree(_real(root, "/sys/class/infiniband/mlx5_1/ports"))
    payload = collect_connectx(root)
    assert payload["count"] == 1
    assert payload["rdma_devices"] == ["mlx5_0"]
    assert payload["errors"] == ["/sys/class/infiniband/mlx5_1/ports: no ports found"]


def test_dangling_pci_link_is_reported(fresh_tree):
    root = fresh_tree("broken_node")
    os.symlink("../../../devices/pci0000:ee/0000:ee:01.0/0000:ef:00.0",
               _host(root, "/sys/bus/pci/devices/0000:ef:00.0"))
    payload = collect_connectx(root)
    assert payload["count"] == 2
    assert payload["errors"] == ["/sys/bus/pci/devices/0000:ef:00.0: does not resolve to a device below the root"]


def test_mellanox_bridge_is_not_a_function_without_rdma(fresh_tree):
    root = fresh_tree("broken_node")
    bridge = _host(root, "/sys/devices/pci0000:ae/0000:ae:01.0/0000:b0:00.0")
    os.makedirs(bridge)
    for attr, value in (("vendor", "0x15b3"), ("device", "0x197b"), ("class", "0x060400"), ("numa_node", "1")):
        with open(os.path.join(bridge, attr), "w", encoding="utf-8") as handle:
            handle.write(value + "\n")
    os.symlink("../../../devices/pci0000:ae/0000:ae:01.0/0000:b0:00.0",
               _host(root, "/sys/bus/pci/devices/0000:b0:00.0"))
    payload = collect_connectx(root)
    assert payload["functions_without_rdma"] == []
    assert payload["count"] == 2


def test_runner_is_not_used(host_trees):
    def runner(*args, **kwargs):
        raise AssertionError("connectx reads sysfs only")
    assert collect_connectx(host_trees["broken_node"], runner)["count"] == 2


def test_a_device_without_board_id_is_read_without_error(fresh_tree):
    """Issue 45: board_id only names the card; a BlueField-3 without the attribute failed the preflight as
    'unreadable (... board_id: is missing)' on the starting commit. A board_id of another shape is still an error."""
    root = fresh_tree("hgx_h100_frontend")
    payload = collect_connectx(root)
    dpu = _port(payload, "mlx5_11")
    assert (dpu["device_id"], dpu["board_id"], dpu["errors"]) == ("0xa2dc", None, [])
    assert payload["errors"] == []
    with open(os.path.join(root, "sys/class/infiniband/mlx5_11/board_id"), "w", encoding="utf-8") as handle:
        handle.write("MT 0838\n")
    dpu = _port(collect_connectx(root), "mlx5_11")
    assert dpu["board_id"] is None
    assert dpu["errors"] == ["/sys/class/infiniband/mlx5_11/board_id: not a board id (expected 1 to 64 letters, "
                             "digits and _.-)"]
