# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify nvidia_peermem: DMA-BUF chosen where supported (nothing written), the legacy module persisted elsewhere."""

from __future__ import annotations

import testinfra

HOSTS = ("pm-dmabuf", "pm-legacy", "pm-forced", "pm-load")
LOAD_FILE = "/etc/modules-load.d/nvidia-peermem.conf"


def _entries(text):
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_dma_buf_host_gets_no_boot_time_load():
    host = testinfra.get_host("podman://pm-dmabuf")
    assert not host.file(LOAD_FILE).exists
    # nothing else under modules-load.d names the module either
    listing = host.check_output("cat /etc/modules-load.d/*.conf 2>/dev/null || true")
    assert "nvidia_peermem" not in listing


def test_legacy_hosts_load_nvidia_peermem_at_boot():
    for name in ("pm-legacy", "pm-forced", "pm-load"):
        load = testinfra.get_host(f"podman://{name}").file(LOAD_FILE)
        assert load.exists, name
        assert load.user == "root" and load.group == "root" and load.mode == 0o644, name
        assert load.content_string.startswith("#\n# Ansible managed\n"), name
        # systemd-modules-load(8) reads one module name per line
        assert _entries(load.content_string) == ["nvidia_peermem"], name


def test_available_module_loaded_by_the_role():
    """pm-load's tree had nvidia_peermem available but not loaded: the role's modprobe made it live."""
    host = testinfra.get_host("podman://pm-load")
    tree = "/opt/gpufabric-fixture/peermem_proprietary_unloaded"
    assert host.file(f"{tree}/sys/module/nvidia_peermem/initstate").content_string == "live\n"
    assert host.file(f"{tree}/lib/modules").exists


def test_check_diff_on_the_converged_hosts_changes_nothing(converge_check_diff):
    """``--check --diff`` of the converge playbook on the converged hosts reports no change on any host."""
    output = converge_check_diff(len(HOSTS))
    assert "host pm-dmabuf: GPUDirect RDMA by dma_buf (nvidia_peermem_method auto; DMA-BUF supported)" in output
    assert "host pm-legacy: GPUDirect RDMA by legacy (nvidia_peermem_method auto; DMA-BUF not supported:" in output
    assert "host pm-forced: GPUDirect RDMA by legacy (nvidia_peermem_method legacy; DMA-BUF supported)" in output
    assert "host pm-load: GPUDirect RDMA by legacy (nvidia_peermem_method auto; DMA-BUF not supported:" in output
