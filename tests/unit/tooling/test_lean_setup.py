# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The first README command installs only what running the playbooks needs.

tools/bootstrap-debian.sh is run with a stand-in apt-get on a PATH that lacks every tool, so it asks for every
package it would install on a bare machine; tools/requirements-run.txt (`make venv`) holds no test tool; and every
`apt-get install` in the tree skips the recommended packages.
"""

from __future__ import annotations

import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tools", "bootstrap-debian.sh")
VENV_PYTHON = os.path.join(ROOT, "tools", "venv-python.sh")
RUNTIME = {"make", "python3-venv", "git"}
TEST_PACKAGES = {"rsync", "shellcheck", "chromium", "podman", "runc", "debootstrap", "crun", "golang", "golang-go"}


def _bare_path(tmp_path, present=()):
    """A PATH with a stand-in apt-get (it records its arguments), id (root), env, sh, a python3 without venv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "apt.log"
    scripts = {
        "apt-get": f'#!/bin/sh\necho "$*" >> {log}\n',
        "id": "#!/bin/sh\necho 0\n",
        "python3": "#!/bin/sh\nexit 1\n",
    }
    scripts.update(dict.fromkeys(present, "#!/bin/sh\nexit 0\n"))
    for name, text in scripts.items():
        (bin_dir / name).write_text(text, encoding="utf-8")
        (bin_dir / name).chmod(0o755)
    os.symlink("/usr/bin/env", bin_dir / "env")
    os.symlink("/bin/sh", bin_dir / "sh")
    return str(bin_dir), log


def _bootstrap(tmp_path, *args, present=(), python="python3"):
    """Run the bootstrap on the bare PATH; ``python`` is the PYTHON the Makefile passes (None: not set)."""
    path, log = _bare_path(tmp_path, present)
    env = {"PATH": path} if python is None else {"PATH": path, "PYTHON": python}
    completed = subprocess.run(
        ["/bin/sh", SCRIPT, *args], env=env, capture_output=True, text=True, check=False, timeout=30
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _installed(calls):
    installs = [call.split() for call in calls if call.split()[:1] == ["install"]]
    assert len(installs) == 1, calls
    assert "--no-install-recommends" in installs[0] and "-y" in installs[0]
    return {word for word in installs[0][1:] if not word.startswith("-")}


def test_bootstrap_installs_only_what_running_the_playbooks_needs(tmp_path):
    calls = _bootstrap(tmp_path)
    assert calls[0].split() == ["update", "-q"]
    assert _installed(calls) == RUNTIME
    assert not _installed(calls) & TEST_PACKAGES


def test_bootstrap_installs_python3_venv_only_when_venv_or_ensurepip_is_missing(tmp_path):
    assert _installed(_bootstrap(tmp_path, present=("make", "git"))) == {"python3-venv"}


def test_bootstrap_checks_the_venv_module_of_the_interpreter_make_venv_uses(tmp_path):
    # PYTHON names the stand-in without venv although a python3 with it is on PATH: python3-venv is installed
    (tmp_path / "bare").mkdir()
    without_venv = tmp_path / "bare" / "python-without-venv"
    without_venv.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    without_venv.chmod(0o755)
    calls = _bootstrap(tmp_path, present=("make", "git", "python3"), python=str(without_venv))
    assert _installed(calls) == {"python3-venv"}


def test_bootstrap_without_python_asks_tools_venv_python(tmp_path):
    # no PYTHON: the interpreter is tools/venv-python.sh's choice, the distribution's /usr/bin/python3 where it is
    # 3.11 or newer, else the stand-in python3 of the bare PATH; either way the bootstrap decides on that one's venv
    chosen = subprocess.run(["/bin/sh", VENV_PYTHON], env={"PATH": _bare_path(tmp_path / "probe")[0]},
                            capture_output=True, text=True, check=True, timeout=30).stdout.strip()
    has_venv = subprocess.run([chosen, "-c", "import venv, ensurepip"], env={"PATH": _bare_path(tmp_path / "run")[0]},
                              capture_output=True, check=False, timeout=30).returncode == 0
    calls = _bootstrap(tmp_path / "bootstrap", present=("make", "git"), python=None)
    assert (_installed(calls) if calls else set()) == (set() if has_venv else {"python3-venv"})


def test_bootstrap_installs_nothing_when_everything_is_there(tmp_path):
    assert _bootstrap(tmp_path, present=("make", "git", "python3")) == []
    assert _bootstrap(tmp_path / "again", "rsync", present=("rsync",)) == []


def test_bootstrap_installs_the_named_test_tools_when_missing(tmp_path):
    calls = _bootstrap(tmp_path, "rsync", "shellcheck", "chromium", "dpkg-deb:dpkg-dev", present=("rsync",))
    assert _installed(calls) == {"shellcheck", "chromium", "dpkg-dev"}


def _requirement_names(path):
    names = set()
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                names.add(re.split(r"[<>=!~ \[;]", line, maxsplit=1)[0].lower())
    return names


def test_make_venv_installs_no_test_tool():
    runtime = _requirement_names(os.path.join(ROOT, "tools", "requirements-run.txt"))
    controller = _requirement_names(os.path.join(ROOT, "requirements.txt"))
    tests = _requirement_names(os.path.join(ROOT, "tests", "requirements.txt"))
    assert runtime - controller == {"ansible-core", "ansible"}
    assert not runtime & tests
    assert {"pytest", "ansible-lint", "molecule"} <= tests


def _tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=False, timeout=30)
    assert listed.returncode == 0, listed.stderr
    return [name for name in listed.stdout.decode().split("\0") if name]


def test_every_apt_get_install_in_the_tree_skips_recommended_packages():
    commands = []
    for name in _tracked_files():
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path) or name == "tests/unit/tooling/test_lean_setup.py":
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except UnicodeDecodeError:
            continue
        for command in text.replace("\\\n", " ").splitlines():
            if re.search(r"\bapt(-get)? +(\S+ +)*install\b", command):
                commands.append((name, command.strip()))
    assert commands, "found no apt-get install at all"
    assert [item for item in commands if "--no-install-recommends" not in item[1]] == []
