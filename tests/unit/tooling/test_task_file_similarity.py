# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""No two YAML task files of more than 10 lines are the same up to names (issue 15's acceptance, as a test).

Every task file of a role (roles/*/tasks/*.yml), of the playbooks (playbooks/tasks/*.yml) and every YAML file of the
molecule scenarios (molecule/**: playbooks, molecule.yml; issue 40) is compared with every other one, line by line,
after dropping blank lines, comments and the document start, and after replacing the role name that prefixes a
variable (``__nvidia_imex_``, ``doca_ofed_``) by ``ROLE_``. Two files of more than MIN_LINES such lines whose difflib
ratio is above MAX_RATIO are a near-copy: the shared steps of roles belong in an internal role (roles/_*), called with
include_role tasks_from; those of scenarios in a shared playbook (molecule/_shared, tests/molecule) imported with
import_playbook, or in a base config molecule merges under the scenario's molecule.yml (.config/molecule/config.yml,
molecule/_shared/base.yml).
"""

from __future__ import annotations

import difflib
import glob
import itertools
import os
import re

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
MIN_LINES = 10
MAX_RATIO = 0.8


def _roles() -> list[str]:
    return sorted(name.lstrip("_") for name in os.listdir(os.path.join(ROOT, "roles")))


def _prefix_pattern(roles: list[str]) -> re.Pattern:
    """A role name that starts a variable name: ``nvidia_imex_x``, ``__nvidia_imex_x``, not ``my_nvidia_imex_x``."""
    names = "|".join(re.escape(role) for role in sorted(roles, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_])(_*)(?:{names})_")


def normalised(text: str, prefixes: re.Pattern) -> list[str]:
    """The lines that carry content, with role-name prefixes of variables replaced by ROLE_."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        lines.append(prefixes.sub(r"\1ROLE_", line.rstrip()))
    return lines


def near_copies(files: dict[str, list[str]], min_lines: int = MIN_LINES, max_ratio: float = MAX_RATIO):
    """(ratio, first, second) of every pair of files over min_lines lines whose similarity is above max_ratio."""
    found = []
    long_enough = sorted(name for name, lines in files.items() if len(lines) > min_lines)
    for first, second in itertools.combinations(long_enough, 2):
        matcher = difflib.SequenceMatcher(None, files[first], files[second], autojunk=False)
        # real_quick_ratio and quick_ratio are upper bounds of ratio: cheap rejections first
        if matcher.real_quick_ratio() <= max_ratio or matcher.quick_ratio() <= max_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > max_ratio:
            found.append((round(ratio, 2), first, second))
    return found


def _task_files() -> dict[str, list[str]]:
    prefixes = _prefix_pattern(_roles())
    paths = glob.glob(os.path.join(ROOT, "roles", "*", "tasks", "*.yml"))
    paths += glob.glob(os.path.join(ROOT, "playbooks", "tasks", "*.yml"))
    paths += [path for pattern in ("*.yml", "*.yaml")
              for path in glob.glob(os.path.join(ROOT, "molecule", "**", pattern), recursive=True)]
    files = {}
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            files[os.path.relpath(path, ROOT)] = normalised(handle.read(), prefixes)
    return files


def test_task_files_are_found():
    files = _task_files()
    assert "roles/nvidia_imex/tasks/main.yml" in files
    assert "playbooks/tasks/preflight_report.yml" in files
    # the scenarios' playbooks and molecule.yml, nested ones too
    assert {"molecule/nvidia_imex/converge.yml", "molecule/dra_driver/molecule.yml",
            "molecule/_shared/prepare_host.yml", "molecule/nvidia_imex/tasks/verify_drill.yml"} <= set(files)


def test_no_two_task_files_are_the_same_up_to_names():
    copies = near_copies(_task_files())
    assert not copies, "near-copies (ratio, files): " + "; ".join(
        f"{ratio} {first} ~ {second}" for ratio, first, second in copies)


# The checker itself: it must see a renamed copy and must not see files that differ.

_TASKS = """---
# {role}: install the package
- name: Install the package
  ansible.builtin.package:
    name: "{{{{ __{role}_package }}}}"
    state: present
  register: __{role}_install
- name: Start the service
  ansible.builtin.systemd_service:
    name: "{{{{ {role}_service }}}}"
    state: started
    enabled: true
  when: not {role}_skip | bool
"""


def test_a_copy_that_differs_only_in_the_role_name_is_found():
    prefixes = _prefix_pattern(["nvidia_imex", "doca_ofed"])
    files = {role: normalised(_TASKS.format(role=role), prefixes) for role in ("nvidia_imex", "doca_ofed")}
    assert files["nvidia_imex"] == files["doca_ofed"]
    assert near_copies(files) == [(1.0, "doca_ofed", "nvidia_imex")]


@pytest.mark.parametrize("lines", [MIN_LINES, 3])
def test_files_of_at_most_min_lines_are_not_compared(lines):
    short = [f"- line {index}" for index in range(lines)]
    assert near_copies({"a": short, "b": list(short)}) == []


def test_different_files_are_not_found():
    prefixes = _prefix_pattern(["nvidia_imex"])
    first = normalised(_TASKS.format(role="nvidia_imex"), prefixes)
    second = [f"- name: Step {index}" for index in range(len(first))]
    assert near_copies({"a": first, "b": second}) == []


def test_a_name_that_only_contains_a_role_name_is_kept():
    prefixes = _prefix_pattern(["nvidia_imex"])
    assert normalised("x: my_nvidia_imex_thing\ny: nvidia_imex_thing\nz: __nvidia_imex_thing\n", prefixes) == [
        "x: my_nvidia_imex_thing", "y: ROLE_thing", "z: __ROLE_thing"]
