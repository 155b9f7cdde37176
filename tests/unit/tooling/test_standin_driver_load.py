# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The stand-in driver's "load" at boot (TEST FIXTURE of tests/standin/build-repo.sh, molecule/domain_upgrade).

The repository is built as the scenarios build it; the loader of a driver package is taken out of its .deb and run
as its unit runs it at boot, with its configuration directory in a temporary one (GPUFABRIC_STANDIN_CONF) and a copy
of the recorded GB200 tray tree as the probe root. What it writes is read back with the collection's own parser of
the loaded driver (plugins/module_utils/nvidia_driver.py), so the stand-in writes what the role's verification reads.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.nvidia_driver import read_nvidia_driver

TESTS = os.path.join(os.path.dirname(__file__), "..", "..")
BUILD_REPO = os.path.join(TESTS, "standin", "build-repo.sh")
BUILD_TREES = os.path.join(TESTS, "fixtures", "build_trees.py")
LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z (?P<host>\S+) (?P<event>.+)$")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    dest = tmp_path_factory.mktemp("repo")
    subprocess.run(["bash", BUILD_REPO, str(dest)], check=True, capture_output=True)
    return dest


def package_file(repo, tmp_path, deb: str, path: str) -> str:
    """``path`` of the package ``deb`` of the repository, unpacked under tmp_path."""
    unpacked = tmp_path / deb
    subprocess.run(["dpkg-deb", "-x", str(repo / deb), str(unpacked)], check=True)
    return str(unpacked / path.lstrip("/"))


@pytest.fixture
def tray(repo, tmp_path):
    """(run the loader of a package, the probe root, the configuration directory, the timeline)."""
    subprocess.run([sys.executable, BUILD_TREES, str(tmp_path / "trees"), "--host", "gb200_tray"], check=True,
                   capture_output=True)
    root = tmp_path / "trees" / "gb200_tray"
    conf = tmp_path / "conf"
    conf.mkdir()
    timeline = tmp_path / "timeline"

    def load(deb: str = "nvidia-open-580_580.95.05-1_all.deb") -> subprocess.CompletedProcess:
        loader = package_file(repo, tmp_path, deb, "/usr/lib/gpufabric-standin/driver-load")
        return subprocess.run([loader], env=dict(os.environ, GPUFABRIC_STANDIN_CONF=str(conf)), check=True,
                              capture_output=True, text=True)

    return load, root, conf, timeline


def events(timeline) -> list[str]:
    lines = timeline.read_text(encoding="ascii").splitlines()
    assert all(LINE.match(line) for line in lines), lines
    return [LINE.match(line).group("event") for line in lines]


def test_without_a_probe_root_file_nothing_is_written(tray):
    """The scenarios that never reboot write no probe-root file: the unit leaves their trees as they are."""
    load, root, conf, timeline = tray
    (conf / "timeline").write_text(str(timeline), encoding="ascii")
    before = (root / "proc/driver/nvidia/version").read_bytes()
    load()
    assert (root / "proc/driver/nvidia/version").read_bytes() == before
    assert not timeline.exists()


def test_a_boot_loads_the_installed_driver_where_the_probe_reads_it(tray):
    load, root, conf, timeline = tray
    (conf / "probe-root").write_text(str(root), encoding="ascii")
    (conf / "timeline").write_text(str(timeline), encoding="ascii")
    assert read_nvidia_driver(str(root)).version == "570.172.08"
    load()
    driver = read_nvidia_driver(str(root))
    assert (driver.version, driver.kernel_module) == ("580.95.05", "open")
    assert (root / "sys/module/nvidia/version").read_text(encoding="ascii") == "580.95.05\n"
    assert (root / "sys/module/nvidia_uvm/version").read_text(encoding="ascii") == "580.95.05\n"
    recording = json.loads((root.parent / "gb200_tray.nvml.json").read_text(encoding="utf-8"))
    assert (recording["driver_version"], recording["nvml_version"]) == ("580.95.05", "12.580.95.05")
    assert events(timeline) == ["driver-loaded 580.95.05 previous=570.172.08"]
    load()
    assert events(timeline)[1:] == ["driver-loaded 580.95.05 previous=580.95.05"]


def test_the_proprietary_package_loads_the_proprietary_module(tray):
    load, root, conf, _timeline = tray
    (conf / "probe-root").write_text(str(root), encoding="ascii")
    load("cuda-drivers-570_570.172.08-1_all.deb")
    driver = read_nvidia_driver(str(root))
    assert (driver.version, driver.kernel_module) == ("570.172.08", "proprietary")


def test_a_driver_that_did_not_load_leaves_the_old_version(tray):
    load, root, conf, timeline = tray
    (conf / "probe-root").write_text(str(root), encoding="ascii")
    (conf / "timeline").write_text(str(timeline), encoding="ascii")
    (conf / "fail-load").touch()
    before = (root / "proc/driver/nvidia/version").read_bytes()
    load()
    assert (root / "proc/driver/nvidia/version").read_bytes() == before
    assert read_nvidia_driver(str(root)).version == "570.172.08"
    assert events(timeline) == ["driver-load-failed 580.95.05 loaded=570.172.08"]


def test_without_a_timeline_file_the_driver_loads_and_no_line_is_written(tray):
    load, root, conf, timeline = tray
    (conf / "probe-root").write_text(str(root), encoding="ascii")
    load()
    assert read_nvidia_driver(str(root)).version == "580.95.05"
    assert not timeline.exists()
