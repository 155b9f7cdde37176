# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""End-to-end tests of the connectx_info module through AnsibleModule on the recorded host trees."""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import connectx_info

RESULT_KEYS = {"changed", "ports", "count", "rdma_devices", "link_layers", "functions_without_rdma", "errors"}
PORT_KEYS = {"pci_address", "device_id", "model", "rdma_device", "port", "netdev", "link_layer", "state", "state_code",
             "phys_state", "rate_gbps", "rate", "mtu", "fw_ver", "board_id", "numa_node", "gpus_same_switch",
             "gpus_same_numa", "errors", "counters", "counter_errors"}


def _by_device(result: dict) -> dict:
    return {port["rdma_device"]: port for port in result["ports"]}


def test_hgx_h100(module_runner, host_trees):
    result = module_runner(connectx_info, {"root": host_trees["hgx_h100"]})
    assert "failed" not in result
    assert set(result) == RESULT_KEYS
    assert result["changed"] is False
    assert result["count"] == 10
    assert result["errors"] == []
    assert result["link_layers"] == {"InfiniBand": 8, "Ethernet": 2}
    assert result["rdma_devices"] == [f"mlx5_{i}" for i in range(10)]
    assert result["functions_without_rdma"] == []
    ports = _by_device(result)
    assert all(set(port) == PORT_KEYS for port in result["ports"])
    ib = [ports[f"mlx5_{i}"] for i in range(8)]
    assert [p["netdev"] for p in ib] == ["ibp24s0", "ibp64s0", "ibp79s0", "ibp94s0",
                                         "ibp154s0", "ibp192s0", "ibp206s0", "ibp220s0"]
    assert [p["gpus_same_switch"] for p in ib] == [["0000:1b:00.0"], ["0000:43:00.0"], ["0000:52:00.0"],
                                                   ["0000:61:00.0"], ["0000:9d:00.0"], ["0000:c3:00.0"],
                                                   ["0000:d1:00.0"], ["0000:df:00.0"]]
    assert {(p["link_layer"], p["rate_gbps"], p["rate"], p["state"], p["state_code"], p["phys_state"], p["mtu"])
            for p in ib} == {("InfiniBand", 400, "400 Gb/sec (4X NDR)", "ACTIVE", 4, "LinkUp", 4092)}
    assert [p["numa_node"] for p in ib] == [0, 0, 0, 0, 1, 1, 1, 1]
    for name, bdf, netdev in (("mlx5_8", "0000:aa:00.0", "enp170s0f0np0"), ("mlx5_9", "0000:aa:00.1", "enp170s0f1np1")):
        port = ports[name]
        assert (port["pci_address"], port["netdev"], port["link_layer"], port["mtu"]) == (bdf, netdev, "Ethernet", 9000)
        assert (port["rate_gbps"], port["numa_node"], port["gpus_same_switch"]) == (200, 1, [])
        assert port["gpus_same_numa"] == ["0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
        assert (port["device_id"], port["model"], port["fw_ver"]) == ("0x1021", "ConnectX-7", "28.39.1002")


def test_gb200_tray(module_runner, host_trees):
    result = module_runner(connectx_info, {"root": host_trees["gb200_tray"]})
    assert "failed" not in result
    assert result["count"] == 5
    assert result["errors"] == []
    assert result["link_layers"] == {"InfiniBand": 4, "Ethernet": 1}
    ports = _by_device(result)
    assert [ports[f"mlx5_{i}"]["netdev"] for i in range(4)] == ["ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0"]
    assert all(port["gpus_same_switch"] == [] for port in result["ports"])
    assert [ports[f"mlx5_{i}"]["gpus_same_numa"] for i in range(5)] == [
        ["0008:01:00.0", "0009:01:00.0"], ["0008:01:00.0", "0009:01:00.0"],
        ["0018:01:00.0", "0019:01:00.0"], ["0018:01:00.0", "0019:01:00.0"],
        ["0008:01:00.0", "0009:01:00.0"],
    ]
    bluefield = ports["mlx5_4"]
    assert (bluefield["model"], bluefield["device_id"], bluefield["link_layer"], bluefield["netdev"]) == (
        "BlueField-3", "0xa2dc", "Ethernet", "enP6p1s0f0np0")
    assert (bluefield["fw_ver"], bluefield["board_id"], bluefield["rate_gbps"], bluefield["mtu"]) == (
        "32.43.1014", "MT_0000001069", 200, 9000)


def test_no_nvidia(module_runner, host_trees):
    result = module_runner(connectx_info, {"root": host_trees["no_nvidia"]})
    assert "failed" not in result
    assert "warnings" not in result
    assert result["ports"] == []
    assert result["count"] == 0
    assert result["rdma_devices"] == []
    assert result["link_layers"] == {"InfiniBand": 0, "Ethernet": 0}
    assert result["functions_without_rdma"] == []
    assert result["errors"] == []


def test_broken_node(module_runner, host_trees):
    result = module_runner(connectx_info, {"root": host_trees["broken_node"]})
    assert "failed" not in result
    assert result["count"] == 2
    assert result["errors"] == []
    down = _by_device(result)["mlx5_1"]
    assert (down["state"], down["state_code"], down["phys_state"]) == ("DOWN", 1, "Polling")
    assert (down["rate_gbps"], down["rate"], down["mtu"], down["netdev"]) == (
        200, "200 Gb/sec (4X HDR)", 2044, "ibp177s0")
    assert (down["numa_node"], down["gpus_same_numa"], down["gpus_same_switch"]) == (1, [], [])
    assert _by_device(result)["mlx5_0"]["state"] == "ACTIVE"


def test_check_mode_returns_the_same(module_runner, host_trees):
    normal = module_runner(connectx_info, {"root": host_trees["broken_node"]})
    checked = module_runner(connectx_info, {"root": host_trees["broken_node"], "_ansible_check_mode": True})
    assert checked["changed"] is False
    assert checked["ports"] == normal["ports"]


def test_missing_root_fails_naming_it(module_runner, tmp_path):
    missing = str(tmp_path / "absent")
    result = module_runner(connectx_info, {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"
    assert "ports" not in result


def test_garbage_rate_is_reported_and_other_ports_kept(module_runner, fresh_tree):
    root = fresh_tree("hgx_h100")
    with open(os.path.realpath(os.path.join(root, "sys/class/infiniband/mlx5_5/ports/1/rate")), "w",
              encoding="utf-8") as handle:
        handle.write("lots of bandwidth\n")
    result = module_runner(connectx_info, {"root": root})
    assert "failed" not in result
    assert result["count"] == 10
    port = _by_device(result)["mlx5_5"]
    assert (port["rate_gbps"], port["rate"]) == (None, None)  # only a rate as the kernel writes it is reported
    assert result["errors"] == [
        "/sys/class/infiniband/mlx5_5/ports/1/rate: not a rate (expected '<number> Gb/sec (<width>X <speed>)')"]
    assert port["errors"] == result["errors"]
    assert _by_device(result)["mlx5_6"]["rate_gbps"] == 400


def test_warnings_go_through_module_warn(module_runner, fresh_tree):
    root = fresh_tree("hgx_h100")
    with open(os.path.realpath(os.path.join(root, "sys/class/infiniband/mlx5_8/ports/1/gid_attrs/ndevs/0")), "w",
              encoding="utf-8") as handle:
        handle.write("eno1\n")
    result = module_runner(connectx_info, {"root": root})
    assert "failed" not in result
    # ansible-core 2.19 returns each warning as a WarningSummary event.
    assert [warning["event"]["msg"] for warning in result["warnings"]] == [
        "/sys/class/infiniband/mlx5_8/ports/1/gid_attrs/ndevs/0 names a netdev that is not a ConnectX netdev "
        "(its device/vendor is not 0x15b3); ignored"]
    # The function's own netdev still matches port 1 by dev_port, as ibdev2netdev would find it.
    assert _by_device(result)["mlx5_8"]["netdev"] == "enp170s0f0np0"


def test_unknown_option_fails(module_runner, host_trees):
    result = module_runner(connectx_info, {"root": host_trees["no_nvidia"], "roots": "/"})
    assert result["failed"] is True
    assert "Unsupported parameters" in result["msg"]
    assert "roots" in result["msg"]


@pytest.mark.parametrize("value", [["/"], {"path": "/"}])
def test_non_string_root_is_never_read_as_a_host(module_runner, value):
    # AnsibleModule converts any value of a `path` option to text; the result is no directory: the task fails.
    result = module_runner(connectx_info, {"root": value})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(value)!r} does not exist or is not a directory"
