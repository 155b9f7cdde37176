# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 42 item 4: the nvidia_imex role installs the package its one table names for the host's distribution,
package source and driver branch, and refuses a branch without a known name before any change.

The role runs in check mode on localhost (a Debian 12 controller, or whatever the test machine runs: the expected
names below are those of the Debian family) against the recorded GB200 tray (gpufabric_probe_root), without
configuring a repository, as the one member of an explicit domain (PCI sysfs alone reports no clique); the install
task's title names the package the role decided.

Every case is one play of one ansible-playbook run (a role run costs seconds; the interpreter's start as much
again): each play sets its case's variables, runs the role in a block and, when the role refuses, prints the refusal
with the case's name in a rescue, so a refusal ends its own case only. Each case's output is the text from its play's
banner to the next one's.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

DECIDE = "TASK [gpufabric.cluster.nvidia_imex : Check that the nvidia-imex package of the driver branch is known]"

CASES = {
    "nvidia 570": {"nvidia_imex_driver_branch": "570"},
    "nvidia 590": {"nvidia_imex_driver_branch": "590"},
    "nvidia 550": {"nvidia_imex_driver_branch": "550"},
    "nvidia 630": {"nvidia_imex_driver_branch": "630"},
    "named 630": {"nvidia_imex_driver_branch": "630", "nvidia_imex_package": "nvidia-imex-630"},
    "ubuntu 590": {"nvidia_imex_driver_branch": "590", "nvidia_imex_package_source": "ubuntu"},
    # nvidia_driver's wave runs tasks_from upgrade with the branch it installs
    "upgrade 580": {"nvidia_imex_driver_branch": "580", "tasks_from": "upgrade"},
    "upgrade 550": {"nvidia_imex_driver_branch": "550", "tasks_from": "upgrade"},
}


def case_play(name: str, settings: dict, first: bool) -> dict:
    settings = dict(settings)
    role = {"name": "gpufabric.cluster.nvidia_imex", "tasks_from": settings.pop("tasks_from", "main")}
    refusal = {"name": f"Refused in case {name}",
               "ansible.builtin.debug": {"msg": f"REFUSED {name}: {{{{ ansible_failed_result.msg | default('') }}}}"}}
    return {"name": f"CASE {name}", "hosts": "localhost", "gather_facts": first, "vars": settings,
            "tasks": [{"name": f"Run nvidia_imex for {name}",
                       "block": [{"name": "Run nvidia_imex", "ansible.builtin.include_role": role}],
                       "rescue": [refusal]}]}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, host_trees) -> dict:
    """Each case's output, by case name, from one check-mode run on localhost over the recorded GB200 tray."""
    with open("/etc/os-release", encoding="utf-8") as handle:
        release = handle.read()
    if "ID=debian" not in release and "ID_LIKE=debian" not in release and "ID=ubuntu" not in release:
        pytest.fail("the playbook tests of nvidia_imex's package names run on a Debian-family machine")
    workdir = tmp_path_factory.mktemp("imex_package")
    plays = [case_play(name, settings, index == 0) for index, (name, settings) in enumerate(CASES.items())]
    (workdir / "play.yml").write_text(yaml.safe_dump(plays, sort_keys=False))
    arguments = ["-i", "localhost,", "-c", "local", "--check", "-e", f"ansible_python_interpreter={sys.executable}",
                 "-e", f"gpufabric_probe_root={host_trees['gb200_tray']}", "-e", "nvidia_imex_fleet=localhost",
                 "-e", "nvidia_imex_manage_repository=false", "-e", "nvidia_imex_address=192.0.2.1",
                 "-e", '{"nvidia_imex_domains": [{"name": "rack1", "hosts": ["localhost"]}]}']
    completed = ansible_playbook([*arguments, str(workdir / "play.yml")], workdir)
    text = " ".join((completed.stdout + completed.stderr).split())
    cases = {}
    for name in CASES:
        start = text.find(f"PLAY [CASE {name}]")
        assert start >= 0, f"case {name} did not run: {text[-2000:]}"
        end = text.find("PLAY [", start + 1)
        cases[name] = text[start:end if end >= 0 else len(text)]
    assert "PLAY RECAP" in text, text[-2000:]
    return cases


@pytest.mark.parametrize(("case", "package"), [("nvidia 570", "nvidia-imex-570"), ("nvidia 590", "nvidia-imex")])
def test_the_role_installs_the_name_of_nvidias_repository(outputs, case, package):
    output = outputs[case]
    assert f"TASK [gpufabric.cluster.nvidia_imex : Install {package}]" in output, output[-2000:]
    # No repository is configured here, so the package manager answers for the name the role asked for.
    assert f"No package matching '{package}' is available" in output, output[-2000:]


@pytest.mark.parametrize(("case", "branch"), [("nvidia 550", "550"), ("nvidia 630", "630")])
def test_a_branch_without_a_known_name_is_refused_before_any_change(outputs, case, branch):
    output = outputs[case]
    assert DECIDE in output, output[-2000:]
    assert (f"REFUSED {case}: host localhost: no known nvidia-imex package for driver branch {branch} "
            "(nvidia_imex_driver_branch, or the loaded driver's) from NVIDIA's CUDA repository") in output, output
    assert "TASK [gpufabric.cluster.nvidia_imex : Install" not in output


def test_a_package_the_user_names_is_installed_on_any_branch(outputs):
    output = outputs["named 630"]
    assert "TASK [gpufabric.cluster.nvidia_imex : Install nvidia-imex-630]" in output, output[-2000:]
    assert "no known nvidia-imex package" not in output


def test_ubuntus_archive_is_refused_on_a_host_that_is_not_ubuntu(outputs):
    with open("/etc/os-release", encoding="utf-8") as handle:
        if "ID=ubuntu" in handle.read():
            pytest.fail("this test needs a Debian-family machine that is not Ubuntu")
    output = outputs["ubuntu 590"]
    assert ("REFUSED ubuntu 590: host localhost: nvidia_imex_package_source is ubuntu (Ubuntu's own archive) but this "
            "host runs") in output, output[-2000:]
    assert "TASK [gpufabric.cluster.nvidia_imex : Install" not in output


def test_the_driver_changes_upgrade_installs_the_new_branchs_package_and_nothing_else(outputs):
    """nvidia_driver's wave (host IMEX modes) installs the nvidia-imex of the driver it installs, before the reboot:
    the package of the new branch, and neither the repository, the configuration nor the service."""
    output = outputs["upgrade 580"]
    assert "TASK [gpufabric.cluster.nvidia_imex : Install the nvidia-imex of the new driver, nvidia-imex]" in output, (
        output[-2000:])
    assert "No package matching 'nvidia-imex' is available" in output, output[-2000:]
    for other in ("Configure the package repository", "Render", "Enable and start", "Check that this host is in"):
        assert f"TASK [gpufabric.cluster.nvidia_imex : {other}" not in output, other
    refused = outputs["upgrade 550"]
    assert ("REFUSED upgrade 550: host localhost: no known nvidia-imex package for driver branch 550") in refused
    assert "TASK [gpufabric.cluster.nvidia_imex : Install" not in refused
