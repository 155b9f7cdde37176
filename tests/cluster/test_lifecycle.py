# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The harness's own life cycle: down leaves nothing behind, a failed up neither, a busy port is named."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import cluster_harness as harness
import pytest


def listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent, the test process, has not reaped it).
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def bin_dir(cluster):
    return cluster.bin_dir


def test_down_leaves_nothing_running_or_listening(bin_dir, tmp_path):
    run_dir = tmp_path / "run"
    completed = subprocess.run(
        [
            sys.executable,
            str(harness.HERE / "harness.py"),
            "--run-dir",
            str(run_dir),
            "up",
            "--no-build",
            "--gpu-nodes",
            "2",
            "--complete-helm-hooks",
            # waits for a DRA driver chart that never comes: down must stop it all the same
            "--compute-domain-controller",
            "nvidia-dra-driver-gpu",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "export KUBECONFIG=" in completed.stdout
    state = harness.read_state(run_dir)
    pids = [process["pid"] for process in state["processes"]]
    ports = list(state["ports"].values())
    assert {process["name"] for process in state["processes"]} == {
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kwok",
        "mpi-operator",
        "compute-domain-kubelet-plugin",
        "compute-domain-controller",
        "helm-hook-completer",
    }
    assert all(pid_alive(pid) for pid in pids)
    assert listening(state["ports"]["apiserver"]) and listening(state["ports"]["etcd"])
    status = harness.status(run_dir)
    assert status["running"] and status["nodes"] == 3

    completed = subprocess.run(
        [sys.executable, str(harness.HERE / "harness.py"), "--run-dir", str(run_dir), "down"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert not [pid for pid in pids if pid_alive(pid)]
    assert not [port for port in ports if listening(port)]
    assert not run_dir.exists()
    assert harness.status(run_dir) == {"running": False}


def test_port_in_use_is_named(bin_dir, tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(harness.HarnessError, match=f"port {port} .*kube-apiserver.* in use"):
            harness.up(harness.Config(run_dir=tmp_path / "run", bin_dir=bin_dir, ports={"apiserver": port}))
    assert harness.status(tmp_path / "run") == {"running": False}


def test_picked_ports_lie_outside_the_ephemeral_range():
    """An outgoing connection's source port comes from the ephemeral range: a picked port never does, so no client
    of another harness can take it before the component binds it (CI once saw kube-scheduler exit on that)."""
    low, high = harness.ports.ephemeral_range()
    picked = harness.ports.choose_ports({})
    assert sorted(picked) == sorted(harness.PORTS)
    assert len(set(picked.values())) == len(picked)
    assert not [port for port in picked.values() if low <= port <= high]


@pytest.mark.parametrize(("text", "expected"), [
    ("32768\t60999\n", range(10000, 32768)),
    ("1024 65000", range(65001, 65536)),
    ("", range(10000, 32768)),
    ("60999", range(10000, 32768)),
])
def test_pickable_ports_follow_the_kernel_setting(tmp_path, text, expected):
    setting = tmp_path / "ip_local_port_range"
    setting.write_text(text)
    assert harness.ports.pickable_ports(setting) == expected


def test_a_busy_port_is_passed_over_and_a_full_range_named(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        candidates = range(port, port + 1)
        with pytest.raises(harness.HarnessError, match=f"no 1 free ports on 127.0.0.1 between {port} and {port}"):
            harness.ports.free_ports(1, set(), candidates)
        free = harness.ports.free_ports(2, {port + 1}, range(port, port + 40))
    assert port not in free and port + 1 not in free and len(set(free)) == 2


def test_failed_up_stops_what_it_started(bin_dir, tmp_path):
    """A kube-apiserver that dies at once: up names it, stops etcd and exits non-zero."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in harness.BINARIES:
        (fake / name).symlink_to(bin_dir / name)
    (fake / "kwok-stages").symlink_to(bin_dir / "kwok-stages")
    (fake / "kube-apiserver").unlink()
    (fake / "kube-apiserver").write_text("#!/bin/sh\necho 'no apiserver today' >&2\nexit 3\n")
    (fake / "kube-apiserver").chmod(0o755)
    run_dir = tmp_path / "run"
    with pytest.raises(harness.HarnessError, match="kube-apiserver exited") as raised:
        harness.up(harness.Config(run_dir=run_dir, bin_dir=fake, timeout=60))
    assert "no apiserver today" in str(raised.value)
    assert harness.read_state(run_dir) is None
    etcd_log = run_dir / "logs" / "etcd.log"
    assert etcd_log.exists()
    # No process of ours is left: nothing runs the etcd binary from this fake directory.
    leftovers = subprocess.run(["pgrep", "-f", str(fake / "etcd")], capture_output=True, text=True, check=False)
    assert leftovers.stdout.strip() == ""


def test_exiting_mpi_operator_is_named(bin_dir, tmp_path):
    """An MPI operator that exits at start (as v0.6.0 does without its CRD): up names it and stops the rest."""
    fake = tmp_path / "bin"
    fake.mkdir()
    for name in (*harness.BINARIES, "kwok-stages", "kwok-crds"):
        (fake / name).symlink_to(bin_dir / name)
    (fake / "mpi-operator").unlink()
    (fake / "mpi-operator").write_text("#!/bin/sh\necho 'CRD does not exist. Exiting' >&2\nexit 1\n")
    (fake / "mpi-operator").chmod(0o755)
    run_dir = tmp_path / "run"
    with pytest.raises(harness.HarnessError, match="mpi-operator exited") as raised:
        harness.up(harness.Config(run_dir=run_dir, bin_dir=fake, gpu_nodes=1, timeout=60))
    assert "CRD does not exist" in str(raised.value)
    assert harness.read_state(run_dir) is None
    leftovers = subprocess.run(
        ["pgrep", "-f", str(fake / "kube-apiserver")], capture_output=True, text=True, check=False
    )
    assert leftovers.stdout.strip() == ""


def test_missing_go_is_named(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GO": str(tmp_path / "go" / "bin" / "go")}
    completed = subprocess.run(
        ["bash", str(harness.BUILD_SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode != 0
    assert "no Go toolchain found" in completed.stderr
