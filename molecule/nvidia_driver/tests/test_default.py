# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify nvidia_driver: the upgrade to 580 with fabric manager, nothing on the up-to-date tray, the fresh 570 node,
and nvidia_driver with nvidia_imex from one signed repository entry."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess

import testinfra

HOSTS = ("drv-upgrade", "drv-present", "drv-fresh", "drv-imex")
PIN = "/etc/apt/preferences.d/nvidia-driver-pin"
NOUVEAU = "/etc/modprobe.d/blacklist-nouveau.conf"
IMEX_CHANNEL = "/etc/modprobe.d/nvidia-imex-channel.conf"

# The files gpufabric.cluster._nvidia_repository writes: the keyring per repository URL (nvidia-<sha256(url)[:12]>),
# the sources file per URL and suite (nvidia-<sha256("<url> <suite>")[:12]>).
REPO_URL = "file:/opt/gpufabric-standin-repo/"
REPO_NAME = "nvidia-" + hashlib.sha256(REPO_URL.encode()).hexdigest()[:12]
SOURCES = "/etc/apt/sources.list.d/nvidia-" + hashlib.sha256(f"{REPO_URL} /".encode()).hexdigest()[:12] + ".list"
KEYRING = f"/etc/apt/keyrings/{REPO_NAME}.asc"


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


def test_driver_and_imex_share_one_signed_repository_entry():
    """Both roles configure file:/opt/gpufabric-standin-repo/ signed: one keyring, one sources entry, no other."""
    host = _host("drv-imex")
    assert _managed(host, SOURCES) == [f"deb [signed-by={KEYRING}] {REPO_URL} /"]
    keyring = host.file(KEYRING)
    assert keyring.user == "root" and keyring.mode == 0o644
    assert keyring.content_string == host.file("/opt/gpufabric-standin-repo/standin-key.asc").content_string
    listed = host.check_output("ls /etc/apt/sources.list.d /etc/apt/keyrings").split()
    assert not {"nvidia-driver.list", "nvidia-imex.list", "nvidia-driver.asc", "nvidia-imex.asc"} & set(listed)
    # apt reads the signed repository: a bad signature or a Signed-By conflict fails the update
    update = host.run(f"apt-get update -o Dir::Etc::sourcelist={SOURCES} -o Dir::Etc::sourceparts=-")
    assert update.rc == 0, update.stderr
    assert "Conflicting values" not in update.stderr and "GPG error" not in update.stderr, update.stderr


def test_driver_and_imex_installed_with_the_site_imex_mode():
    host = _host("drv-imex")
    assert host.package("nvidia-open-580").is_installed
    # the 580 pin also holds the unsuffixed nvidia-imex of the repository on the branch
    assert host.package("nvidia-imex").version == "580.95.05-1"
    assert not host.package("nvidia-imex-570").is_installed
    # gpufabric_imex_mode host: the driver creates channel 0 and the host service runs
    assert _managed(host, IMEX_CHANNEL) == ["options nvidia NVreg_CreateImexChannel0=1"]
    assert host.service("nvidia-imex").is_enabled and host.service("nvidia-imex").is_running


def test_check_diff_on_the_converged_hosts_changes_nothing(converge_check_diff):
    """``--check --diff`` of the converge playbook on the converged hosts reports no change on any host."""
    output = converge_check_diff(len(HOSTS))
    assert "host drv-upgrade: reboot required to load driver branch 580 (open); loaded now: 570.172.08" in output
    assert "host drv-fresh: reboot required to load driver branch 570 (proprietary); loaded now: none" in output
    assert "not rebooting: nvidia_driver_reboot is false" in output
    assert "host drv-present: driver 570.172.08 (open) of branch 570 is loaded, nothing to do" in output


def _boot(name):
    """When the host's init started (field 22 of /proc/1/stat, clock ticks since the kernel booted)."""
    return _host(name).check_output("cut -d' ' -f22 /proc/1/stat")


def test_change_in_check_mode_one_domain_at_a_time():
    """``--check`` with nvidia_driver_reboot and the drain: the plan, one NVLink domain per wave, nothing rebooted.

    drv-imex and drv-present probe the same recorded GB200 tray: one NVLink domain. drv-imex needs 580, drv-present
    runs its 570 already, so the canary wave drains both and changes drv-imex; drv-fresh (no driver) and drv-upgrade
    (HGX, no multi-node clique) are in no domain and follow one at a time. The containers cannot reboot into a
    driver here, so the reboots run in check mode (ansible_check_mode is set by --check only); the plan itself is
    unit-tested in tests/unit/plugins/plugin_utils/test_domain_waves.py.
    """
    before = {name: _boot(name) for name in HOSTS}
    playbook = os.path.join(os.environ["MOLECULE_SCENARIO_DIRECTORY"], "converge.yml")
    completed = subprocess.run(
        ["ansible-playbook", "--check", "-i", os.environ["MOLECULE_INVENTORY_FILE"], playbook,
         "-e", json.dumps({"nvidia_driver_reboot": True, "nvidia_driver_reboot_drain": True})],
        capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    tasks = completed.stdout.split("TASK [")
    reboots = [sorted(re.findall(r"^changed: \[([\w-]+)\]", task, re.M)) for task in tasks
               if task.startswith("gpufabric.cluster.nvidia_driver : Reboot the wave's changing hosts together")]
    assert reboots == [["drv-imex"], ["drv-fresh"], ["drv-upgrade"]]
    output = " ".join(completed.stdout.split())
    assert "wave 1 (canary): NVLink domain" in output
    # each changing host with what changes on it: the driver loaded now (drv-fresh has none) and the branch wanted
    assert re.search(r"change drv-imex \(driver \d+\.\d+\.\d+ -> branch 580\); drain and verify with them "
                     r"drv-present", output), output[-3000:]
    assert re.search(r"wave 2: host\(s\) in no NVLink domain: drv-fresh \(driver (none loaded|570\.\d+\.\d+) -> "
                     r"branch 570\)", output), output[-3000:]
    assert re.search(r"wave 3: host\(s\) in no NVLink domain: drv-upgrade \(driver 570\.\d+\.\d+ -> branch 580\)",
                     output), output[-3000:]
    for name in HOSTS:
        assert f"Kubernetes node {name} would be cordoned and drained" in output
        assert f"Kubernetes node {name} would be uncordoned once its wave passes verification" in output
    assert {name: _boot(name) for name in HOSTS} == before
