# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/molecule/podman/create.yml refuses, by name, platforms it would start wrongly, before any podman runs.

The platforms come as molecule passes them (``molecule_yml`` as an extra variable); a refused one fails in the checks,
ahead of the task that runs podman. An accepted one is run in check mode, where the podman task does not run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CREATE = os.path.join(os.path.dirname(__file__), "..", "..", "molecule", "podman", "create.yml")
IMAGE = "localhost/gpufabric/debian12-systemd:latest"


def tray(name="tray-1", **extra):
    return {"name": name, "image": IMAGE, "pre_build_image": True, "command": "/sbin/init", "systemd": "always",
            "privileged": True, "groups": ["gpu_nodes"], **extra}


def run_create(tmp_path, platforms, *args, path=None):
    (tmp_path / "vars.json").write_text(json.dumps({"molecule_yml": {"platforms": platforms}}))
    env = dict(os.environ, MOLECULE_SCENARIO_NAME="unit", ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false")
    if path:
        env["PATH"] = f"{path}{os.pathsep}{env['PATH']}"
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
               "-e", f"ansible_python_interpreter={sys.executable}", "-e", f"@{tmp_path / 'vars.json'}", *args, CREATE]
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), check=False)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


@pytest.mark.parametrize(("platforms", "message"), [
    pytest.param([], "scenario unit: needs at least one platform, each with a name of its own", id="none"),
    pytest.param([tray("a"), tray("a")], "platforms named a, a", id="one-name-twice"),
    pytest.param([{k: v for k, v in tray().items() if k != "name"}], "platforms named (no name)", id="no-name"),
    pytest.param([tray(capabilities=["SYS_ADMIN"])], "platform tray-1 of scenario unit: "
                 "tests/molecule/podman/create.yml applies only name, image, pre_build_image, command, systemd, "
                 "privileged, restart_policy, volumes, groups with pre_build_image true, not capabilities",
                 id="unknown-key"),
    pytest.param([tray(pre_build_image="false")], "not pre_build_image false", id="string-false"),
])
def test_a_platform_it_would_start_wrongly_is_refused_by_name(tmp_path, platforms, message):
    returncode, output = run_create(tmp_path, platforms)
    assert returncode == 2, output
    assert message in output
    assert "TASK [Start the containers]" not in output


def test_platforms_it_applies_pass_the_checks(tmp_path):
    """Two trays of their own names, privileged given as the string "false" (as -e passes it), pass; check mode."""
    returncode, output = run_create(tmp_path, [tray("a"), tray("b", privileged="false")], "--check")
    assert returncode == 0, output
    assert "TASK [Start the containers]" in output


def test_restart_policy_and_volumes_reach_podman_run(tmp_path):
    """A tray that comes back after its systemd reboots, with a host directory shared by the trays (created first)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/podman-$$.args\n', encoding="ascii")
    (bin_dir / "podman").chmod(0o755)
    shared = tmp_path / "timeline"
    returncode, output = run_create(tmp_path, [tray("a", restart_policy="always",
                                                    volumes=[f"{shared}:/var/lib/timeline:z"])], path=str(bin_dir))
    assert returncode == 0, output
    argv = [path.read_text().splitlines() for path in tmp_path.glob("podman-*.args")]
    assert argv == [["run", "--detach", "--replace", "--name", "a", "--hostname", "a", "--label", "owner=molecule",
                     "--systemd", "always", "--privileged", "--restart", "always",
                     f"--volume={shared}:/var/lib/timeline:z", IMAGE, "/sbin/init"]]
    assert shared.is_dir()


def test_a_platform_without_restart_policy_or_volumes_runs_as_before(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "podman").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path}/podman-$$.args\n', encoding="ascii")
    (bin_dir / "podman").chmod(0o755)
    returncode, output = run_create(tmp_path, [tray("a")], path=str(bin_dir))
    assert returncode == 0, output
    argv = [path.read_text().splitlines() for path in tmp_path.glob("podman-*.args")]
    assert argv == [["run", "--detach", "--replace", "--name", "a", "--hostname", "a", "--label", "owner=molecule",
                     "--systemd", "always", "--privileged", IMAGE, "/sbin/init"]]
