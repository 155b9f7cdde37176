# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ansible-core 2.21 leg (tests/core221): its pins, and how its make targets hand them to the tiers.

The leg's venv must differ from .venv in ansible-core and the `ansible` package only, both versions must be ones
meta/runtime.yml admits, the test tools must go on top of either ansible-core, and the make that runs the tiers in the
chroot must be given no RUN_REQUIREMENTS (the tests that start make themselves would inherit it). Cheap: files and
`make -n`, well under a second.
"""

from __future__ import annotations

import os
import re
import subprocess

import yaml
from packaging.specifiers import SpecifierSet

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
LEG_REQUIREMENTS = os.path.join(ROOT, "tests", "core221", "requirements-run.txt")
RUN_REQUIREMENTS = os.path.join(ROOT, "tools", "requirements-run.txt")
VERSIONED = {"ansible-core", "ansible"}


def _lines(path):
    """The requirement lines of a pip requirements file, includes resolved to absolute paths."""
    lines = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.split("#", 1)[0].strip()
            if line.startswith("-r "):
                line = "-r " + os.path.normpath(os.path.join(os.path.dirname(path), line[3:].strip()))
            if line:
                lines.append(line)
    return lines


def _pins(path):
    pins = {}
    for line in _lines(path):
        if not line.startswith("-"):
            name, version = line.split("==", 1) if "==" in line else (line, "")
            assert version, f"{path}: {line!r} is not pinned with =="
            assert name.lower() not in pins, f"{path}: {name} twice"
            pins[name.lower()] = version
    return pins


def test_the_leg_differs_from_the_venv_in_ansible_core_and_ansible_only():
    leg, run = _pins(LEG_REQUIREMENTS), _pins(RUN_REQUIREMENTS)
    assert set(leg) == set(run)
    assert {name: version for name, version in leg.items() if name not in VERSIONED} == \
        {name: version for name, version in run.items() if name not in VERSIONED}
    assert [line for line in _lines(LEG_REQUIREMENTS) if line.startswith("-")] == \
        [line for line in _lines(RUN_REQUIREMENTS) if line.startswith("-")]


def test_the_leg_pins_ansible_core_2_21_and_both_pins_are_admitted_by_requires_ansible():
    with open(os.path.join(ROOT, "meta", "runtime.yml"), encoding="utf-8") as handle:
        admitted = SpecifierSet(yaml.safe_load(handle)["requires_ansible"])
    leg, run = _pins(LEG_REQUIREMENTS)["ansible-core"], _pins(RUN_REQUIREMENTS)["ansible-core"]
    assert re.fullmatch(r"2\.21\.\d+", leg)
    assert re.fullmatch(r"2\.19\.\d+", run)
    assert leg in admitted and run in admitted


def test_the_test_tools_include_no_ansible_core_pin():
    """tests/requirements.txt goes on top of either venv: a pin or an include of one would undo the leg's."""
    path = os.path.join(ROOT, "tests", "requirements.txt")
    assert not [line for line in _lines(path) if line.startswith("-")]
    assert not set(_pins(path)) & VERSIONED


def _make_dry_run(target):
    environment = {key: value for key, value in os.environ.items() if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=60, env=environment)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if "chroot-run.sh" in line]


def test_the_leg_venv_is_made_with_its_requirements_and_the_tiers_without():
    venv = _make_dry_run("core221-venv")
    assert "make --no-print-directory RUN_REQUIREMENTS=tests/core221/requirements-run.txt test-venv" in venv[0]
    tiers = _make_dry_run("core221")
    runs = [line for line in tiers if "--output-sync=target" in line]
    assert runs and not [line for line in runs if "RUN_REQUIREMENTS" in line]


def test_chroot_run_without_a_command_says_how_to_call_it():
    done = subprocess.run([os.path.join(ROOT, "tests", "core221", "chroot-run.sh")], capture_output=True, text=True,
                          check=False, timeout=30)
    assert done.returncode == 2
    assert "usage:" in done.stderr
