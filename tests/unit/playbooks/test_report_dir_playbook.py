# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report directory at playbook level (issue 39, item 2): null or empty is refused before anything is written.

On the starting commit ``-e gpufabric_report_dir=`` made preflight.yml and site.yml write ``/preflight.json``,
``.md`` and ``.html`` (``'' ~ '/preflight.json'``), null wrote ``None/preflight.json`` under the working directory,
validate.yml took both for its default, and the default was ``$PWD/reports``, the shell's idea of the working
directory, not the process's. Each run here starts in a directory of its own with ``PWD`` pointing elsewhere, and
checks that nothing at all was written there, nor at the root.
"""

from __future__ import annotations

import json
import os
import stat
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

ROOT_REPORTS = [os.path.join(os.sep, name) for name in (
    "preflight.json", "preflight.md", "preflight.html", "site-summary.json", "site-summary.md", "validation.json",
    "validation.md", "validation.html", "reports")]
EMPTY = ("-e", "gpufabric_report_dir=")
NULL = ("-e", '{"gpufabric_report_dir": null}')
REFUSAL = {EMPTY: "gpufabric_report_dir is empty: set it to a directory on the controller, or leave it unset for "
                  "reports in the working directory",
           NULL: "gpufabric_report_dir is null: set it to a directory on the controller, or leave it unset for "
                 "reports in the working directory"}


@pytest.fixture
def workdir(host_trees, tmp_path):
    """A working directory with an inventory of two local GPU hosts reading recorded trees, and nothing else."""
    work = tmp_path / "work"
    work.mkdir()
    hosts = {"hgx": "hgx_h100", "plain": "no_nvidia"}
    inventory = {"all": {"children": {"gpu_nodes": {"hosts": {
        name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
               "gpufabric_probe_root": host_trees[tree]}
        for name, tree in hosts.items()}}}}}
    (work / "hosts.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "stale-pwd").mkdir()
    return work


def root_state():
    """What the report names are at the root of the file system (nothing, on a sane controller)."""
    return {path: os.lstat(path).st_mtime_ns if os.path.lexists(path) else None for path in ROOT_REPORTS}


def tree(directory):
    """Every path under ``directory``, relative."""
    return sorted(os.path.relpath(os.path.join(parent, name), directory)
                  for parent, dirnames, filenames in os.walk(directory) for name in dirnames + filenames)


def run(workdir, playbook, *extra, inventory=True):
    """ansible-playbook in ``workdir``, with PWD naming another directory (as a subprocess or a cron job may)."""
    env = {"ANSIBLE_INVENTORY_UNPARSED_WARNING": "false", "PWD": str(workdir.parent / "stale-pwd"),
           "KUBECONFIG": str(workdir.parent / "no-kubeconfig")}
    hosts = ["-i", str(workdir / "hosts.yml")] if inventory else ["-i", "localhost,", "-c", "local", "-e",
                                                                  f"ansible_python_interpreter={sys.executable}"]
    completed = ansible_playbook([*hosts, playbook, *extra], workdir, env=env)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


PLAYBOOKS = {
    "preflight": ("gpufabric.cluster.preflight",),
    # --tags hosts skips the preflight's own tasks; the check still runs before the host phase and every write.
    "site": ("gpufabric.cluster.site", "--tags", "hosts", "-e", '{"gpufabric_host_roles": []}'),
    "validate": ("gpufabric.cluster.validate", "-e", "gpufabric_validate_compute_domain=false"),
}


@pytest.mark.parametrize("value", [EMPTY, NULL], ids=["empty", "null"])
@pytest.mark.parametrize("playbook", list(PLAYBOOKS))
def test_an_empty_or_null_report_directory_is_refused_before_anything_is_written(workdir, playbook, value):
    before = root_state()
    returncode, output = run(workdir, *PLAYBOOKS[playbook], *value)
    assert returncode == 2, output[-3000:]
    assert REFUSAL[value] in output, output[-3000:]
    assert "TASK [Gather the GPU fabric facts of every host]" not in output  # no host probed
    assert "TASK [gpufabric.cluster.validate_" not in output  # no validation run
    assert "TASK [Write" not in output  # no write task reached
    assert tree(workdir) == ["hosts.yml"], tree(workdir)
    assert tree(workdir.parent / "stale-pwd") == []
    assert root_state() == before


@pytest.mark.parametrize("playbook", ["preflight", "validate"])
def test_the_default_is_reports_in_the_working_directory_of_the_process(workdir, playbook):
    """$PWD/reports was the shell's directory: a stale PWD put the reports elsewhere, a missing one into /reports."""
    returncode, output = run(workdir, *PLAYBOOKS[playbook])
    assert returncode == 0, output[-3000:]
    written = "preflight.json" if playbook == "preflight" else "validation.json"
    assert json.loads((workdir / "reports" / written).read_text())
    assert tree(workdir.parent / "stale-pwd") == []
    if playbook == "preflight":
        assert f"Report: {workdir / 'reports'}/preflight.md, preflight.json and preflight.html" in output


@pytest.mark.parametrize("role", ["validate_rdma", "validate_compute_domain", "validate_nccl", "validate_dcgm"])
@pytest.mark.parametrize("extra", [("-e", "{role}_report_dir="), EMPTY], ids=["role-variable", "site-variable"])
def test_a_validation_role_refuses_an_empty_report_directory_before_it_reaches_the_cluster(workdir, role, extra):
    """A role's <role>_report_dir defaults to gpufabric_report_dir; empty, either way, stops the role at its first
    checks, naming the role's variable. On the starting commit empty meant reports/ beside the playbook."""
    play = [{"name": "A validation role alone", "hosts": "localhost", "gather_facts": False,
             "tasks": [{"name": f"Run {role}", "ansible.builtin.include_role": {"name": f"gpufabric.cluster.{role}"}}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    returncode, output = run(workdir, str(workdir / "play.yml"), extra[0], extra[1].format(role=role),
                             inventory=False)
    assert returncode == 2, output[-3000:]
    assert f"report_dir: {role}_report_dir is empty: set it to a directory on the controller" in output, output[-3000:]
    assert "kubernetes.core" not in output and "k8s_info" not in output
    assert tree(workdir) == ["hosts.yml", "play.yml"]


@pytest.mark.parametrize("playbook", ["preflight", "site", "validate", "validate_rdma"])
def test_a_report_directory_that_is_a_link_is_refused_before_anything_runs(workdir, playbook):
    """Item 5 at playbook level: a link as the report directory stops the run at the check, before a host is probed
    or a validation runs, naming the variable. On the starting commit the preflight chmodded the private directory
    the link points to (0700 became 0755) and wrote into it, and so did validate.yml's file and copy tasks."""
    private = workdir.parent / "private"
    private.mkdir(mode=0o700)
    os.chmod(private, 0o700)
    (workdir / "reports").symlink_to(private)
    variable = "gpufabric_report_dir"
    if playbook == "validate_rdma":
        variable = "validate_rdma_report_dir"
        play = [{"name": "A validation role alone", "hosts": "localhost", "gather_facts": False,
                 "tasks": [{"name": "Run validate_rdma",
                            "ansible.builtin.include_role": {"name": "gpufabric.cluster.validate_rdma"}}]}]
        (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
        returncode, output = run(workdir, str(workdir / "play.yml"), inventory=False)
    else:
        returncode, output = run(workdir, *PLAYBOOKS[playbook])
    assert returncode == 2, output[-3000:]
    assert (f"{variable} {workdir / 'reports'} is a symbolic link; reports are not written through a link: set "
            f"{variable} to the directory it points to") in output, output[-3000:]
    assert "TASK [Gather the GPU fabric facts of every host]" not in output
    assert "TASK [Write" not in output and "k8s_info" not in output
    assert os.listdir(private) == [] and stat.S_IMODE(os.stat(private).st_mode) == 0o700
