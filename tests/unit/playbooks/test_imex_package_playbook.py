# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42 item 4: the nvidia_imex role installs the package its one table names for the host's distribution,
package source and driver branch, and refuses a branch without a known name before any change.

The role runs in check mode on localhost (a Debian 12 controller, or whatever the test machine runs: the expected
names below are those of the Debian family) against the recorded GB200 tray (gpufabric_probe_root), without
configuring a repository, as the one member of an explicit domain (PCI sysfs alone reports no clique); the install
task's title names the package the role decided.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

DECIDE = "TASK [gpufabric.cluster.nvidia_imex : Check that the nvidia-imex package of the driver branch is known]"


def run_nvidia_imex(workdir, root: str, *extra: str) -> tuple[int, str]:
    role = {"name": "gpufabric.cluster.nvidia_imex"}
    play = [{"name": "IMEX package", "hosts": "localhost", "gather_facts": True,
             "tasks": [{"name": "Run nvidia_imex", "ansible.builtin.include_role": role}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    arguments = ["-i", "localhost,", "-c", "local", "--check", "-e", f"ansible_python_interpreter={sys.executable}",
                 "-e", f"gpufabric_probe_root={root}", "-e", "nvidia_imex_fleet=localhost",
                 "-e", "nvidia_imex_manage_repository=false", "-e", "nvidia_imex_address=192.0.2.1",
                 "-e", '{"nvidia_imex_domains": [{"name": "rack1", "hosts": ["localhost"]}]}']
    for setting in extra:
        arguments += ["-e", setting]
    completed = ansible_playbook([*arguments, str(workdir / "play.yml")], workdir)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.fixture(scope="module")
def debian_family():
    with open("/etc/os-release", encoding="utf-8") as handle:
        release = handle.read()
    if "ID=debian" not in release and "ID_LIKE=debian" not in release and "ID=ubuntu" not in release:
        pytest.fail("the playbook tests of nvidia_imex's package names run on a Debian-family machine")


@pytest.mark.parametrize(("branch", "package"), [("570", "nvidia-imex-570"), ("590", "nvidia-imex")])
def test_the_role_installs_the_name_of_nvidias_repository(tmp_path, host_trees, debian_family, branch, package):
    _returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], f"nvidia_imex_driver_branch={branch}")
    assert f"TASK [gpufabric.cluster.nvidia_imex : Install {package}]" in output, output[-2000:]


@pytest.mark.parametrize("branch", ["550", "630"])
def test_a_branch_without_a_known_name_is_refused_before_any_change(tmp_path, host_trees, debian_family, branch):
    returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], f"nvidia_imex_driver_branch={branch}")
    assert returncode == 2, output[-2000:]
    assert DECIDE in output, output[-2000:]
    assert (f"host localhost: no known nvidia-imex package for driver branch {branch} (nvidia_imex_driver_branch, "
            f"or the loaded driver's) from NVIDIA's CUDA repository") in output, output[-2000:]
    assert "TASK [gpufabric.cluster.nvidia_imex : Install" not in output


def test_a_package_the_user_names_is_installed_on_any_branch(tmp_path, host_trees, debian_family):
    _returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], "nvidia_imex_driver_branch=630",
                                          "nvidia_imex_package=nvidia-imex-630")
    assert "TASK [gpufabric.cluster.nvidia_imex : Install nvidia-imex-630]" in output, output[-2000:]
    assert "no known nvidia-imex package" not in output


def test_ubuntus_archive_is_refused_on_a_host_that_is_not_ubuntu(tmp_path, host_trees, debian_family):
    with open("/etc/os-release", encoding="utf-8") as handle:
        if "ID=ubuntu" in handle.read():
            pytest.fail("this test needs a Debian-family machine that is not Ubuntu")
    returncode, output = run_nvidia_imex(tmp_path, host_trees["gb200_tray"], "nvidia_imex_driver_branch=590",
                                         "nvidia_imex_package_source=ubuntu")
    assert returncode == 2, output[-2000:]
    assert "host localhost: nvidia_imex_package_source is ubuntu (Ubuntu's own archive) but this host runs" in output
