# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/venv_interpreter.py: the same controller-only play under each venv's ansible-playbook."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "venv_interpreter.py")
VENV = os.path.dirname(os.path.dirname(sys.executable))  # the venv running the tests: it has ansible-playbook


def _bench(*args, cwd=REPO):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=300)


def test_each_venv_is_run_and_reported_with_its_interpreter(tmp_path):
    # a second venv: the test's own under another name; given relative, it is read from where the benchmark starts
    os.symlink(VENV, tmp_path / "other-venv")
    completed = _bench("--venv", "other-venv", "--venv", VENV, "--rounds", "1", "--tasks", "2", cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    rows = [line for line in completed.stdout.splitlines() if line.startswith((VENV + " ", f"{tmp_path}/other-venv "))]
    assert len(rows) == 2, completed.stdout
    real = os.path.realpath(os.path.join(VENV, "bin", "python"))
    assert all(row.endswith(f"{sys.version.split()[0]} ({real})") for row in rows), rows
    assert "2 set_fact tasks on localhost, 1 rounds" in completed.stdout
    assert os.listdir(tmp_path) == ["other-venv"]  # the play is written to a temporary directory, removed after


def test_a_venv_given_twice_is_refused(tmp_path):
    completed = _bench("--venv", os.path.relpath(VENV, tmp_path), "--venv", VENV, cwd=tmp_path)
    assert completed.returncode == 2
    assert f"--venv {VENV}: given more than once" in completed.stderr


@pytest.mark.parametrize("args, message", [
    (["--venv", VENV, "--rounds", "0"], "--rounds and --tasks must be at least 1"),
    (["--venv", VENV, "--tasks", "-1"], "--rounds and --tasks must be at least 1"),
    (["--venv", "/nonexistent/venv"], "--venv /nonexistent/venv: no bin/ansible-playbook there"),
    (["--rounds", "1"], "the following arguments are required: --venv"),
    (["--venv", VENV, "--rounds", "two"], "invalid int value: 'two'"),
])
def test_bad_arguments_are_refused_naming_the_option(args, message):
    completed = _bench(*args)
    assert completed.returncode == 2
    assert message in completed.stderr


def test_a_failing_run_names_the_venv_and_its_output(tmp_path):
    # a venv whose ansible-playbook exits 3: the benchmark stops, naming it, instead of printing figures
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ansible-playbook").write_text("#!/bin/sh\necho broken playbook >&2\nexit 3\n",
                                                       encoding="utf-8")
    (tmp_path / "bin" / "ansible-playbook").chmod(0o755)
    completed = _bench("--venv", str(tmp_path), "--rounds", "1", "--tasks", "1")
    assert completed.returncode == 1
    assert f"{tmp_path}: ansible-playbook exited 3" in completed.stderr
    assert "broken playbook" in completed.stderr
    assert "user s" not in completed.stdout
