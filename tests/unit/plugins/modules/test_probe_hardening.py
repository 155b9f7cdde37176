# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 17, the probes: ``root`` is a jail, no file content in a message, helper tools with a timeout and a clean
environment, a root that cannot be probed fails, values a kernel never writes are errors of their port.

Each test runs a module end to end through AnsibleModule on a recorded tree altered the way an operator's typo,
a stale file or a hostile link would alter it.
"""

from __future__ import annotations

import os

import pytest

from ansible_collections.gpufabric.cluster.plugins.modules import (
    connectx_info,
    fabric_facts,
    gpu_info,
    imex_info,
    peermem_info,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import warning_messages, write_host_file

MODULES = {"gpu_info": gpu_info, "connectx_info": connectx_info, "imex_info": imex_info,
           "peermem_info": peermem_info, "fabric_facts": fabric_facts}
SECRET = "s3cr3t-0f-the-h0st"
NODES_PATH = "/etc/nvidia-imex/nodes_config.cfg"
CONFIG_PATH = "/etc/nvidia-imex/config.cfg"
PORT = "/sys/class/infiniband/mlx5_1/ports/1"


@pytest.fixture
def jailed(tmp_path, tree_builder):
    """Build a host into ``tmp/jail/<name>`` beside ``tmp/outside`` (files holding SECRET); return both paths."""
    def build(name):
        outside = tmp_path / "outside"
        outside.mkdir(exist_ok=True)
        for file_name, text in (("nodes", "10.9.9.9\n"), ("rate", "800 Gb/sec (4X XDR)\n"), ("secret", SECRET),
                                ("osrelease", "6.9.0-outside\n")):
            (outside / file_name).write_text(text, encoding="utf-8")
        (tmp_path / "jail").mkdir(exist_ok=True)
        return tree_builder.build_tree(name, str(tmp_path / "jail")), str(outside)
    return build


def _link(root: str, path: str, target: str) -> None:
    """Replace the host path ``path`` below ``root`` by a symlink to ``target`` (the real file's parent is kept)."""
    full = os.path.join(root, path.lstrip("/"))
    real = os.path.realpath(full)
    if os.path.lexists(real):
        os.unlink(real)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    os.symlink(target, real)


def _overwrite(root: str, path: str, text: str) -> None:
    """Write ``text`` into the real file behind the host path ``path`` (sysfs attributes sit behind links)."""
    with open(os.path.realpath(os.path.join(root, path.lstrip("/"))), "w", encoding="utf-8") as handle:
        handle.write(text)


def _climb(root: str, path: str, outside: str) -> str:
    """A relative symlink target that, from the directory of ``path``, climbs out of ``root`` to ``outside``."""
    real_dir = os.path.dirname(os.path.realpath(os.path.join(root, path.lstrip("/"))))
    return os.path.relpath(outside, real_dir)


def _port(result: dict, rdma_device: str) -> dict:
    return next(port for port in result["ports"] if port["rdma_device"] == rdma_device)


# --- root is a jail ----------------------------------------------------------------------------------------------


def test_absolute_symlink_resolves_under_root_not_on_the_controller(module_runner, jailed):
    root, outside = jailed("gb200_tray")
    # An absolute target means <root>/<target>, as on the host whose tree this is; there is none.
    _link(root, NODES_PATH, os.path.join(outside, "nodes"))
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["nodes"] is None
    assert result["errors"] == [f"{NODES_PATH}: dangling link"]
    assert "10.9.9.9" not in str(result)


def test_absolute_symlink_inside_the_tree_is_followed_under_root(module_runner, jailed):
    root, _outside = jailed("gb200_tray")
    write_host_file(root, "/srv/imex/nodes", "10.1.1.1\n10.1.1.2\n")
    _link(root, NODES_PATH, "/srv/imex/nodes")
    result = module_runner(imex_info, {"root": root})
    assert result["errors"] == []
    assert result["nodes"]["addresses"] == ["10.1.1.1", "10.1.1.2"]


def test_symlink_climbing_out_of_root_is_an_error_and_never_read(module_runner, jailed):
    root, outside = jailed("gb200_tray")
    _link(root, NODES_PATH, os.path.join(_climb(root, NODES_PATH, outside), "nodes"))
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == [f"{NODES_PATH}: outside root"]
    assert result["nodes"] is None
    assert "10.9.9.9" not in str(result)


def test_nodes_path_from_the_config_climbing_out_of_root_is_never_read(module_runner, jailed):
    root, outside = jailed("gb200_tray")
    escape = "/" + "/".join([".."] * (root.count("/") + 2)) + os.path.join(outside, "nodes")
    config = os.path.realpath(os.path.join(root, CONFIG_PATH.lstrip("/")))
    with open(config, "a", encoding="utf-8") as handle:
        handle.write(f"IMEX_NODE_CONFIG_FILE={escape}\n")
    result = module_runner(imex_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == [f"{escape}: outside root"]
    assert result["nodes"] is None
    assert "10.9.9.9" not in str(result["nodes"])


def test_relative_nodes_path_from_the_config_is_refused(module_runner, jailed):
    root, _outside = jailed("gb200_tray")
    write_host_file(root, CONFIG_PATH, "IMEX_NODE_CONFIG_FILE=nodes_config.cfg\n")
    result = module_runner(imex_info, {"root": root})
    assert result["errors"] == [f"{CONFIG_PATH}: line 1: IMEX_NODE_CONFIG_FILE is not an absolute path"]
    assert result["nodes"] is None


def test_sysfs_attribute_climbing_out_of_root_is_an_error_of_its_port(module_runner, jailed):
    root, outside = jailed("broken_node")
    _link(root, f"{PORT}/rate", os.path.join(_climb(root, f"{PORT}/rate", outside), "rate"))
    result = module_runner(connectx_info, {"root": root})
    assert "failed" not in result
    port = _port(result, "mlx5_1")
    assert (port["rate"], port["rate_gbps"]) == (None, None)
    assert port["errors"] == [f"{PORT}/rate: outside root"]
    assert result["errors"] == [f"{PORT}/rate: outside root"]
    assert _port(result, "mlx5_0")["errors"] == []


def test_kernel_release_climbing_out_of_root_is_never_read(module_runner, jailed):
    root, outside = jailed("hgx_h100")
    path = "/proc/sys/kernel/osrelease"
    _link(root, path, os.path.join(_climb(root, path, outside), "osrelease"))
    result = module_runner(peermem_info, {"root": root})
    assert result["kernel_version"] is None
    assert result["errors"] == [f"{path}: outside root"]


def test_tool_climbing_out_of_root_is_not_run(module_runner, jailed):
    root, outside = jailed("hgx_h100")
    tool = os.path.join(outside, "ofed_info")
    with open(tool, "w", encoding="utf-8") as handle:
        handle.write("#!/bin/sh\necho OFED-from-outside\n")
    os.chmod(tool, 0o755)
    _link(root, "/usr/bin/ofed_info", os.path.join(_climb(root, "/usr/bin/ofed_info", outside), "ofed_info"))
    result = module_runner(peermem_info, {"root": root})
    assert result["ofed"] == {"installed": False, "version": None}
    assert result["errors"] == ["/usr/bin/ofed_info: outside root"]


def test_gpu_probe_reports_pci_entries_outside_root(module_runner, jailed):
    root, outside = jailed("broken_node")
    path = "/sys/bus/pci/devices/0000:65:00.0/vendor"
    _link(root, path, os.path.join(_climb(root, path, outside), "secret"))
    result = module_runner(gpu_info, {"root": root})
    assert result["errors"] == [f"{path}: outside root"]
    assert [gpu["pci_address"] for gpu in result["gpus"]] == ["0000:17:00.0"]


# --- no file content in a message --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [
    "/sys/class/net/ibp177s0/dev_id",  # ConnectX: netdev port index
    f"{PORT}/state",
    f"{PORT}/rate",
    "/sys/bus/pci/devices/0000:b1:00.0/numa_node",
])
def test_connectx_messages_never_quote_a_file(module_runner, fresh_tree, path):
    root = fresh_tree("broken_node")
    _overwrite(root, path, SECRET + "\n")
    result = module_runner(connectx_info, {"root": root})
    assert result["errors"], result
    assert SECRET not in str(result["errors"]) + str(result.get("warnings", []))


def test_gpu_messages_never_quote_a_file(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    _overwrite(root, "/sys/bus/pci/devices/0000:65:00.0/class", SECRET)
    result = module_runner(gpu_info, {"root": root})
    assert result["errors"] == ["/sys/bus/pci/devices/0000:65:00.0/class: not a hexadecimal number"]


def test_imex_messages_never_quote_a_file(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, CONFIG_PATH, f"LOG_LEVEL=4\npassword {SECRET}\n")
    write_host_file(root, NODES_PATH, f"10.0.0.1\n{SECRET}\n")
    result = module_runner(imex_info, {"root": root})
    assert result["errors"] == [f"{CONFIG_PATH}: not KEY=VALUE: line 2"]
    assert warning_messages(result) == [
        f"IMEX nodes file {NODES_PATH} is not valid: entries that are not IP addresses on line 2"]


def test_peermem_messages_never_quote_a_file(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    write_host_file(root, "/proc/sys/kernel/osrelease", SECRET + "\n")
    result = module_runner(peermem_info, {"root": root})
    assert result["errors"] == ["/proc/sys/kernel/osrelease: not a kernel release"]
    assert SECRET not in str(result)


# --- helper tools: timeout, clean environment --------------------------------------------------------------------


def test_hanging_tool_is_killed_and_named(module_runner, fresh_tree):
    root = fresh_tree("gb200_tray")
    write_host_file(root, "/usr/bin/nvidia-imex-ctl", "#!/bin/sh\n# TEST FIXTURE: a hung daemon.\nexec sleep 60\n",
                    0o755)
    result = module_runner(imex_info, {"root": root, "command_timeout": 1})
    assert "failed" not in result
    assert result["errors"] == ["nvidia-imex-ctl: no answer within 1 s (killed)"]
    assert result["domain"] is None
    assert result["service"]["active"] is True


def test_hanging_systemctl_is_an_error_and_the_unit_files_answer(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    write_host_file(root, "/usr/bin/systemctl", "#!/bin/sh\nexec sleep 60\n", 0o755)
    result = module_runner(imex_info, {"root": root, "command_timeout": 1})
    assert result["errors"] == ["systemctl: no answer within 1 s (killed); service state read from the unit files"]
    assert result["service"]["unit_file_state"] == "disabled"


@pytest.mark.parametrize("value", [0, -3])
def test_command_timeout_must_be_positive(module_runner, host_trees, value):
    result = module_runner(peermem_info, {"root": host_trees["hgx_h100"], "command_timeout": value})
    assert result["failed"] is True
    assert result["msg"] == f"command_timeout must be a number of seconds greater than 0, got {value}"


def test_tools_run_with_a_clean_environment(module_runner, fresh_tree, monkeypatch):
    root = fresh_tree("hgx_h100")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/controller/lib")
    monkeypatch.setenv("GPUFABRIC_TEST_TOKEN", SECRET)
    monkeypatch.setenv("PATH", "/opt/controller/bin:" + os.environ["PATH"])
    # ofed_info writes the environment it was given beside the tree, then prints a version.
    seen_file = os.path.join(os.path.dirname(root), "ofed_info.env")
    write_host_file(root, "/usr/bin/ofed_info", f"#!/bin/sh\n/usr/bin/env > {seen_file}\necho OFED-25.04:\n", 0o755)
    result = module_runner(peermem_info, {"root": root})
    assert result["ofed"]["version"] == "OFED-25.04"
    with open(seen_file, encoding="utf-8") as handle:
        seen = dict(line.split("=", 1) for line in handle.read().splitlines())
    real = os.path.realpath(root)
    dirs = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
    assert seen["PATH"] == ":".join([real + directory for directory in dirs] + list(dirs))
    assert (seen["LC_ALL"], seen["LANG"]) == ("C", "C")
    assert not {"LD_LIBRARY_PATH", "GPUFABRIC_TEST_TOKEN", "HOME"} & set(seen)


# --- a root that cannot be probed fails --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MODULES))
def test_missing_root_fails_the_module(module_runner, tmp_path, name):
    missing = str(tmp_path / "no-such-host")
    result = module_runner(MODULES[name], {"root": missing})
    assert result["failed"] is True
    assert result["msg"] == f"root {missing!r} does not exist or is not a directory"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_root_without_sys_fails_the_module(module_runner, tmp_path, name):
    (tmp_path / "etc").mkdir()
    result = module_runner(MODULES[name], {"root": str(tmp_path)})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(tmp_path)!r} has no sys/ directory; the probe cannot read a host there"


def test_root_whose_sys_leads_outside_fails_the_module(module_runner, tmp_path, host_trees):
    root = tmp_path / "host"
    root.mkdir()
    os.symlink(os.path.relpath(os.path.join(host_trees["hgx_h100"], "sys"), str(root)), str(root / "sys"))
    result = module_runner(connectx_info, {"root": str(root)})
    assert result["failed"] is True
    assert result["msg"] == f"root {str(root)!r} has no sys/ directory; the probe cannot read a host there"


# --- values a kernel never writes are errors of their port -------------------------------------------------------


@pytest.mark.parametrize("attribute, text, error", [
    ("link_layer", "Fibre Channel", "not a link layer (expected InfiniBand or Ethernet)"),
    ("link_layer", "", "not a link layer (expected InfiniBand or Ethernet)"),
    ("rate", "400", "not a rate (expected '<number> Gb/sec (<width>X <speed>)')"),
    ("rate", "fast (4X NDR)", "not a rate (expected '<number> Gb/sec (<width>X <speed>)')"),
    ("rate", "0 Gb/sec (4X NDR)", "not a rate (expected '<number> Gb/sec (<width>X <speed>)')"),
    ("state", "ACTIVE", "not a port state (expected '<code>: <name>')"),
])
def test_value_a_kernel_never_writes_is_an_error_of_its_port(module_runner, fresh_tree, attribute, text, error):
    root = fresh_tree("broken_node")
    _overwrite(root, f"{PORT}/{attribute}", text + "\n")
    result = module_runner(connectx_info, {"root": root})
    port = _port(result, "mlx5_1")
    assert port["errors"] == [f"{PORT}/{attribute}: {error}"]
    assert result["errors"] == port["errors"]
    assert _port(result, "mlx5_0")["errors"] == []
    assert port[attribute] is None or attribute == "rate"


def test_dangling_device_link_is_an_error_of_its_port(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    link = os.path.join(root, "sys/class/infiniband/mlx5_1")
    os.unlink(link)
    os.symlink("../../devices/pci0000:ee/0000:ee:01.0/0000:ef:00.0/infiniband/mlx5_1", link)
    result = module_runner(connectx_info, {"root": root})
    port = _port(result, "mlx5_1")
    assert port["errors"] == ["/sys/class/infiniband/mlx5_1: dangling link"]
    assert port["state"] == "DOWN"  # still read below its PCI function
    assert result["errors"] == ["/sys/class/infiniband/mlx5_1: dangling link"]


def test_dangling_netdev_link_is_an_error_of_its_port(module_runner, fresh_tree):
    root = fresh_tree("hgx_h100")
    # The kernel names the port's netdev in gid_attrs/ndevs/0 (RoCE); its /sys/class/net link leads nowhere.
    link = os.path.join(root, "sys/class/net/enp170s0f0np0")
    os.unlink(link)
    os.symlink("../../devices/pci0000:ee/0000:ee:01.0/0000:ef:00.0/net/enp170s0f0np0", link)
    result = module_runner(connectx_info, {"root": root})
    port = _port(result, "mlx5_8")
    assert port["netdev"] is None
    assert port["errors"] == ["/sys/class/net/enp170s0f0np0: dangling link"]
    assert _port(result, "mlx5_9")["errors"] == []


def test_fabric_facts_connectx_ports_carry_their_errors(module_runner, fresh_tree):
    root = fresh_tree("broken_node")
    _overwrite(root, f"{PORT}/link_layer", "Token Ring\n")
    result = module_runner(fabric_facts, {"root": root, "gather_subset": ["connectx"]})
    ports = result["ansible_facts"]["gpufabric"]["connectx"]["ports"]
    assert [port["errors"] for port in ports] == [
        [], [f"{PORT}/link_layer: not a link layer (expected InfiniBand or Ethernet)"]]


def test_fabric_facts_reports_an_outside_path_in_the_subset_that_read_it(module_runner, jailed):
    root, outside = jailed("broken_node")
    _link(root, f"{PORT}/rate", os.path.join(_climb(root, f"{PORT}/rate", outside), "rate"))
    result = module_runner(fabric_facts, {"root": root, "gather_subset": ["gpu", "connectx", "imex", "peermem"]})
    facts = result["ansible_facts"]["gpufabric"]
    assert facts["connectx"]["errors"] == [f"{PORT}/rate: outside root"]
    assert (facts["gpu"]["errors"], facts["imex"]["errors"], facts["peermem"]["errors"]) == ([], [], [])
