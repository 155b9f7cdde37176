# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 1, as a property: no text of a probed file reaches the facts, the messages or the reports.

A random marker, a string that is no valid value of any field (it holds ``%`` and ``!``), is written into the files a
probe reads on a recorded tree: as a line of the IMEX nodes file, as the value of a ``config.cfg`` setting, and
inserted anywhere into the nodes file, ``config.cfg``, the dpkg status file, a sysfs attribute, a ``/proc`` file or
an ``/etc`` file. Then ``fabric_facts`` runs through AnsibleModule and its facts go through the preflight rules and
the three report renderers. The marker's letters appear nowhere: not in the facts, the errors or the warnings of the
module result, not in the report, its Markdown, its HTML or the playbook's summary lines.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import CONFIG_KEYS
from ansible_collections.gpufabric.cluster.plugins.modules import fabric_facts
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import preflight_markdown

CONFIG_PATH = "etc/nvidia-imex/config.cfg"
NODES_PATH = "etc/nvidia-imex/nodes_config.cfg"
DPKG_STATUS = "var/lib/dpkg/status"
HOSTS = {"gb200_tray": "10.114.0.11", "gb200_tray_host_managed": "10.114.0.11", "broken_node": "10.0.0.3",
         "hgx_h100": "192.0.2.21"}
# Where a marker goes: a file of the tree by kind (the recorded outputs of the stand-in tools below usr/ are tool
# data, not host files, and are left alone).
KINDS = ("nodes", "config", "dpkg", "sys", "proc", "etc")
# Text around a setting's marker, so that the value looks like one of the shapes a setting may have.
VALUE_PREFIXES = ("", "/var/log/", "10.0.0.", "50", "-1", "FILE", "eth", "fd00::1")
# ... and before a nodes file line's marker (ipaddress takes any text after % as an IPv6 scope).
LINE_PREFIXES = ("", "10.114.0.11", "fd00::1", "fe80::1%")

# The marker's letters: a run of at least 10 of these is in no output a probe or a report makes by itself.
core = st.text(alphabet="qxzjkQXZJK", min_size=10, max_size=14)
insertion = st.tuples(st.sampled_from(KINDS), st.integers(min_value=0, max_value=10 ** 6),
                      st.integers(min_value=0, max_value=10 ** 6))
setting = st.tuples(st.sampled_from(CONFIG_KEYS), st.sampled_from(VALUE_PREFIXES))


@pytest.fixture(scope="module")
def trees(host_trees, tree_builder, tmp_path_factory):
    """The recorded trees, the host-managed GB200 tray (control socket, READY daemon) included."""
    extra = str(tmp_path_factory.mktemp("host-text-trees"))
    return {**host_trees, "gb200_tray_host_managed": tree_builder.build_tree("gb200_tray_host_managed", extra)}


def _files(root: str, kind: str) -> list[str]:
    """The regular files of one kind below ``root`` (real paths, sorted)."""
    if kind == "nodes":
        return [os.path.join(root, NODES_PATH)] if os.path.isfile(os.path.join(root, NODES_PATH)) else []
    if kind == "config":
        return [os.path.join(root, CONFIG_PATH)] if os.path.isfile(os.path.join(root, CONFIG_PATH)) else []
    if kind == "dpkg":
        return [os.path.join(root, DPKG_STATUS)] if os.path.isfile(os.path.join(root, DPKG_STATUS)) else []
    found = []
    for directory, subdirs, files in os.walk(os.path.join(root, kind)):
        subdirs.sort()
        found.extend(os.path.join(directory, name) for name in sorted(files)
                     if os.path.isfile(os.path.join(directory, name))
                     and not os.path.islink(os.path.join(directory, name)))
    return found


def _insert(path: str, marker: str, at: int) -> None:
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    at %= len(text) + 1
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text[:at] + marker + text[at:])


def _add_line(path: str, line: str, at: int | None = None) -> None:
    """Add ``line`` to a file of lines, before line ``at`` (modulo the lines) or, with ``None``, at its end."""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    at = len(lines) if at is None else at % (len(lines) + 1)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join([*lines[:at], line, *lines[at:]]) + "\n")


def plant(root: str, marker: str, node_lines: list[tuple[int, str]], settings_: list[tuple[str, str]],
          insertions: list[tuple[str, int, int]]) -> dict[str, bytes]:
    """Write ``marker`` into the tree at ``root``: nodes file lines, config.cfg settings, anywhere in files.

    Returns the original content of every file changed, by path (for :func:`restore`).
    """
    originals: dict[str, bytes] = {}

    def keep(path: str) -> str:
        if path not in originals:
            with open(path, "rb") as handle:
                originals[path] = handle.read()
        return path

    nodes, config = os.path.join(root, NODES_PATH), os.path.join(root, CONFIG_PATH)
    for at, prefix in node_lines:
        if os.path.isfile(nodes):
            _add_line(keep(nodes), prefix + marker, at)
    for key, prefix in settings_:
        if os.path.isfile(config):
            _add_line(keep(config), f"{key}={prefix}{marker}")  # the last setting of a key is the one IMEX reads
    for kind, pick, at in insertions:
        files = _files(root, kind)
        if files:
            _insert(keep(files[pick % len(files)]), marker, at)
    return originals


def restore(originals: dict[str, bytes]) -> None:
    """Write back what :func:`plant` changed."""
    for path, content in originals.items():
        with open(path, "wb") as handle:
            handle.write(content)


def _summary_lines(report: dict) -> str:
    """What the preflight playbook prints: each host's status, summary and every check that did not pass."""
    return "\n".join(
        f"{name}: {entry['status'].upper()} - {entry['summary']}"
        + "".join(f" | {check['name']} {check['status']}: {check['message']}" for check in entry["checks"]
                  if check["status"] not in ("pass", "skip"))
        for name, entry in report["hosts"].items())


def outputs(result: dict, host: str, address: str, mode: str) -> dict[str, str]:
    """The module result and every report the preflight makes of its facts, as text."""
    facts = result["ansible_facts"]["gpufabric"]
    hostvars = {host: {"ansible_facts": {"gpufabric": facts, "default_ipv4": {"address": address}},
                       "gpufabric_imex_mode": mode}}
    report = preflight_report(hostvars, [host])
    return {"module result": json.dumps(result), "preflight.json": json.dumps(report),
            "preflight.md": preflight_markdown(report), "preflight.html": preflight_report_html(report),
            "summary lines": _summary_lines(report)}


@pytest.fixture(scope="module")
def copies(trees, tmp_path_factory):
    """A copy of each tree for the property test to change and restore (copying a tree per example is slow)."""
    workspace = str(tmp_path_factory.mktemp("host-text"))
    found = {}
    for host in HOSTS:
        found[host] = os.path.join(workspace, host)
        shutil.copytree(trees[host], found[host], symlinks=True)
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(host=st.sampled_from(sorted(HOSTS)), letters=core,
       node_lines=st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(LINE_PREFIXES)), max_size=2),
       settings_=st.lists(setting, max_size=3), insertions=st.lists(insertion, max_size=4),
       mode=st.sampled_from(["host", "dra_host_managed"]))
def test_no_probed_text_in_facts_messages_or_reports(host, letters, node_lines, settings_, insertions, mode, copies,
                                                     module_runner):
    marker = f"%{letters}!"
    root = copies[host]
    originals = plant(root, marker, node_lines, settings_, insertions)
    try:
        result = module_runner(fabric_facts, {"root": root, "command_timeout": 5})
        assert "failed" not in result, result
        for name, text in outputs(result, host, HOSTS[host], mode).items():
            assert letters not in text, f"{name} quotes a probed file"
    finally:
        restore(originals)


@pytest.mark.parametrize("key", CONFIG_KEYS)
def test_every_setting_of_another_shape_is_named_by_line_and_key(key, copies, module_runner):
    root = copies["gb200_tray"]
    with open(os.path.join(root, CONFIG_PATH), encoding="utf-8") as handle:
        line = len(handle.read().splitlines()) + 1
    originals = plant(root, "%qxzjkQXZJKqxz!", [], [(key, "/var/log/")], [])
    try:
        result = module_runner(fabric_facts, {"root": root, "gather_subset": ["imex"]})
    finally:
        restore(originals)
    imex = result["ansible_facts"]["gpufabric"]["imex"]
    assert imex["config"][key] is None
    assert [error for error in imex["errors"] if error.startswith(f"/etc/nvidia-imex/config.cfg: line {line}: ")] \
        == [error for error in imex["errors"] if key in error]
    assert len([error for error in imex["errors"] if key in error]) == 1
    assert "qxzjkQXZJKqxz" not in json.dumps(result)


@pytest.mark.parametrize(("path", "field", "reported"), [
    ("sys/class/infiniband/mlx5_0/fw_ver", "fw_ver", None),
    ("sys/class/infiniband/mlx5_0/board_id", "board_id", None),
    ("sys/class/infiniband/mlx5_0/ports/1/rate", "rate", None),
    ("sys/class/infiniband/mlx5_0/ports/1/state", "state", None),
    ("sys/class/infiniband/mlx5_0/ports/1/phys_state", "phys_state", None),
    ("sys/class/infiniband/mlx5_0/ports/1/link_layer", "link_layer", None),
    ("sys/bus/pci/devices/0000:18:00.0/device", "device_id", None),
    # the netdev the kernel names is refused; the one of the PCI function (ibdev2netdev's fallback) is found
    ("sys/class/infiniband/mlx5_8/ports/1/gid_attrs/ndevs/0", "netdev", "enp170s0f0np0"),
])
def test_a_port_attribute_of_another_shape_is_not_reported_and_an_error_names_its_path(path, field, reported, copies,
                                                                                       module_runner):
    root = copies["hgx_h100"]
    real = os.path.realpath(os.path.join(root, path))
    with open(real, "rb") as handle:
        original = handle.read()
    value = original.decode().strip()
    with open(real, "w", encoding="utf-8") as handle:
        handle.write(f"{value[:2]}%qxzjkQXZJKqxz!{value[2:]}\n")
    try:
        result = module_runner(fabric_facts, {"root": root, "gather_subset": ["connectx"]})
    finally:
        restore({real: original})
    connectx = result["ansible_facts"]["gpufabric"]["connectx"]
    port = next(port for port in connectx["ports"] if port["rdma_device"] == path.split("/")[3]
                or (field == "device_id" and port["pci_address"] == "0000:18:00.0"))
    assert port[field] == reported
    assert [error for error in port["errors"] if error.startswith(f"/{path}") or error.startswith("/sys/devices/")]
    assert "qxzjkQXZJKqxz" not in json.dumps(result)
