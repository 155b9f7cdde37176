# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify nvidia_driver: the upgrade to 580 with fabric manager, nothing on the up-to-date tray, the fresh 570 node."""

from __future__ import annotations

import testinfra

HOSTS = ("drv-upgrade", "drv-present", "drv-fresh")
PIN = "/etc/apt/preferences.d/nvidia-driver-pin"
SOURCES = "/etc/apt/sources.list.d/nvidia-driver.list"
NOUVEAU = "/etc/modprobe.d/blacklist-nouveau.conf"
IMEX_CHANNEL = "/etc/modprobe.d/nvidia-imex-channel.conf"


def _host(name):
    return testinfra.get_host(f"podman://{name}")


def _entries(text):
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _managed(host, path):
    config = host.file(path)
    assert config.exists, path
    assert config.user == "root" and config.mode == 0o644, path
    assert config.content_string.startswith("#\n# Ansible managed\n"), path
    return _entries(config.content_string)


def test_upgrade_installs_580_open_with_fabric_manager():
    host = _host("drv-upgrade")
    assert host.package("nvidia-open-580").is_installed
    assert host.package("nvidia-fabricmanager").version == "580.95.05-1"
    assert host.package("nvidia-persistenced").version == "580.95.05-1"
    for absent in ("cuda-drivers-580", "nvidia-open-570", "nvidia-fabricmanager-570"):
        assert not host.package(absent).is_installed, absent
    assert "file:/opt/gpufabric-standin-repo/ /" in host.file(SOURCES).content_string
    pin = _managed(host, PIN)
    assert pin[1:] == ["Pin: version 580.*", "Pin-Priority: 1000"]
    assert pin[0].startswith("Package: ") and "nvidia-persistenced" in pin[0].split()


def test_daemons_enabled_but_not_started_before_the_reboot():
    """The 580 daemons cannot run on the loaded 570 driver: enabled for the next boot, not started."""
    upgrade = _host("drv-upgrade")
    for unit in ("nvidia-fabricmanager", "nvidia-persistenced"):
        assert upgrade.service(unit).is_enabled, unit
        assert not upgrade.service(unit).is_running, unit
    fresh = _host("drv-fresh")
    assert fresh.service("nvidia-persistenced").is_enabled
    assert not fresh.service("nvidia-persistenced").is_running


def test_fresh_node_gets_proprietary_570_pinned():
    host = _host("drv-fresh")
    assert host.package("cuda-drivers-570").is_installed
    assert not host.package("nvidia-open-570").is_installed
    # the repository also holds nvidia-persistenced 580.95.05-1: only the pin selects 570
    assert host.package("nvidia-persistenced").version == "570.172.08-1"
    assert host.package("nvidia-modprobe").version == "570.172.08-1"
    # no NVSwitch fabric in the facts (no driver loaded to see one): no fabric manager
    assert not host.package("nvidia-fabricmanager-570").is_installed
    assert not host.package("nvidia-fabricmanager").is_installed
    assert _managed(host, PIN)[1] == "Pin: version 570.*"


def test_module_options():
    for name in ("drv-upgrade", "drv-fresh"):
        assert _managed(_host(name), NOUVEAU) == ["blacklist nouveau", "options nouveau modeset=0"], name
    assert _managed(_host("drv-fresh"), IMEX_CHANNEL) == ["options nvidia NVreg_CreateImexChannel0=1"]
    assert not _host("drv-upgrade").file(IMEX_CHANNEL).exists


def test_loaded_wanted_driver_is_left_alone():
    host = _host("drv-present")
    for package in ("nvidia-open-570", "cuda-drivers-570", "nvidia-persistenced", "nvidia-fabricmanager-570"):
        assert not host.package(package).is_installed, package
    for path in (PIN, SOURCES, NOUVEAU, IMEX_CHANNEL):
        assert not host.file(path).exists, path


def test_check_diff_on_the_converged_hosts_changes_nothing(converge_check_diff):
    """``--check --diff`` of the converge playbook on the converged hosts reports no change on any host."""
    output = converge_check_diff(len(HOSTS))
    assert "host drv-upgrade: reboot required to load driver branch 580 (open); loaded now: 570.172.08" in output
    assert "host drv-fresh: reboot required to load driver branch 570 (proprietary); loaded now: none" in output
    assert "not rebooting: nvidia_driver_reboot is false" in output
    assert "host drv-present: driver 570.172.08 (open) of branch 570 is loaded, nothing to do" in output
