# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify doca_ofed: the DOCA-OFED profile from the DOCA repository, and Debian's rdma-core on the inbox host."""

from __future__ import annotations

import hashlib

import testinfra

HOSTS = ("ofed-doca", "ofed-inbox")
# The files gpufabric.cluster._nvidia_repository writes: the keyring per repository URL (nvidia-<sha256(url)[:12]>),
# the sources file per URL and suite (nvidia-<sha256("<url> <suite>")[:12]>).
REPO_URL = "file:/opt/gpufabric-standin-repo/"
REPO_NAME = "nvidia-" + hashlib.sha256(REPO_URL.encode()).hexdigest()[:12]
SOURCES = "/etc/apt/sources.list.d/nvidia-" + hashlib.sha256(f"{REPO_URL} ./".encode()).hexdigest()[:12] + ".list"


def _host(name):
    return testinfra.get_host(f"podman://{name}")


def test_doca_profile_installed_from_the_repository():
    host = _host("ofed-doca")
    for package in ("doca-ofed", "ofed-scripts", "mlnx-ofed-kernel-dkms", "mlnx-ofed-kernel-utils"):
        assert host.package(package).is_installed, package
    assert not host.package("rdma-core").is_installed
    assert "file:/opt/gpufabric-standin-repo/ ./" in host.file(SOURCES).content_string
    # what the probe will read on the next run
    assert host.check_output("ofed_info -s") == "OFED-internal-25.07-0.9.7.0:"


def test_inbox_host_has_debian_rdma_core():
    host = _host("ofed-inbox")
    for package in ("rdma-core", "ibverbs-utils", "infiniband-diags"):
        assert host.package(package).is_installed, package
    assert host.exists("ibv_devinfo")
    assert not host.package("doca-ofed").is_installed
    assert not host.file(SOURCES).exists


def test_check_diff_on_the_converged_hosts_changes_nothing(converge_check_diff):
    """``--check --diff`` of the converge playbook on the converged hosts reports no change on any host."""
    converge_check_diff(len(HOSTS))
