# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/venv-python.sh: the interpreter `make venv` builds .venv with.

The candidates are stand-in interpreters (shell scripts answering the version check with an exit status), so each
choice is tested whatever Python this machine has; the default choice is checked against the real interpreters.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(ROOT, "tools", "venv-python.sh")


def _stand_in(tmp_path, name, status):
    """An interpreter whose `-c` version check exits ``status`` (0: 3.11 or newer, 1: older)."""
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\nexit {status}\n", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def _choose(*candidates, path=None):
    completed = subprocess.run(["/bin/sh", SCRIPT, *candidates], capture_output=True, text=True, check=False,
                               timeout=30, env={"PATH": path or os.environ["PATH"]})
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    return completed.stdout


def test_the_first_candidate_that_is_python_3_11_or_newer_is_chosen(tmp_path):
    first, second = _stand_in(tmp_path, "first", 0), _stand_in(tmp_path, "second", 0)
    assert _choose(first, second) == first + "\n"


def test_an_older_python_is_passed_over(tmp_path):
    older, newer = _stand_in(tmp_path, "python3.10", 1), _stand_in(tmp_path, "python3.12", 0)
    assert _choose(older, newer) == newer + "\n"


def test_a_missing_or_broken_candidate_is_passed_over(tmp_path):
    broken = tmp_path / "not-executable"
    broken.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    newer = _stand_in(tmp_path, "python3", 0)
    assert _choose(str(tmp_path / "absent"), str(broken), "", newer) == newer + "\n"


def test_with_no_candidate_fit_the_last_is_printed_so_that_the_venv_step_names_it(tmp_path):
    older = _stand_in(tmp_path, "python3.10", 1)
    assert _choose(str(tmp_path / "absent"), older) == older + "\n"


def test_a_candidate_name_with_spaces_is_printed_whole(tmp_path):
    (tmp_path / "a dir").mkdir()
    spaced = _stand_in(tmp_path / "a dir", "python 3", 0)
    assert _choose(spaced) == spaced + "\n"


def test_the_default_choice_is_a_python_3_11_or_newer_or_python3_from_path():
    chosen = _choose().strip()
    assert chosen in ("/usr/bin/python3", "python3")
    version = subprocess.run([chosen, "-c", "import sys; print(sys.version_info[:2] >= (3, 11))"],
                             capture_output=True, text=True, check=False, timeout=30)
    if chosen == "/usr/bin/python3":
        assert version.stdout.strip() == "True"
    else:
        assert not os.path.exists("/usr/bin/python3") or subprocess.run(
            ["/usr/bin/python3", "-c", "import sys; sys.exit(sys.version_info < (3, 11))"],
            check=False, timeout=30).returncode != 0


def test_the_makefile_builds_the_venv_with_the_chosen_interpreter():
    printed = subprocess.run(["make", "--no-print-directory", "-n", "-B", "-W", "tools/requirements-run.txt",
                              os.path.join(ROOT, ".venv", "bin", "ansible")],
                             cwd=ROOT, capture_output=True, text=True, check=False, timeout=60)
    assert printed.returncode == 0, printed.stderr
    chosen = _choose().strip()
    assert f"PYTHON='{chosen}' sh tools/bootstrap-debian.sh" in printed.stdout
    assert f"{chosen} -m venv \"$(readlink -m {ROOT}/.venv)\"" in printed.stdout
    # `make PYTHON=...` still chooses
    printed = subprocess.run(["make", "--no-print-directory", "-n", "-B", f"PYTHON={sys.executable}",
                              os.path.join(ROOT, ".venv", "bin", "ansible")],
                             cwd=ROOT, capture_output=True, text=True, check=False, timeout=60)
    assert f"PYTHON='{sys.executable}' sh tools/bootstrap-debian.sh" in printed.stdout
    assert f"{sys.executable} -m venv \"$(readlink -m {ROOT}/.venv)\"" in printed.stdout


def test_an_empty_python_from_the_environment_is_not_an_interpreter():
    # PYTHON= in the environment (an unset CI variable) must not leave `make venv` running "-m venv"
    stamp = os.path.join(ROOT, ".venv", "bin", "ansible")
    printed = subprocess.run(["make", "--no-print-directory", "-n", "-B", stamp], cwd=ROOT, capture_output=True,
                             text=True, check=False, timeout=60, env={**os.environ, "PYTHON": ""})
    assert printed.returncode == 0, printed.stderr
    assert f"{_choose().strip()} -m venv \"$(readlink -m {ROOT}/.venv)\"" in printed.stdout


def _make_venv_in_copy(tmp_path, python):
    """`make PYTHON=python <copy>/.venv/bin/ansible` in a copy of the Makefile whose OS bootstrap does nothing."""
    copy = tmp_path / "checkout"
    (copy / "tools").mkdir(parents=True)
    for name in ("Makefile", "galaxy.yml", "requirements.txt", os.path.join("tools", "requirements-run.txt"),
                 os.path.join("tools", "venv-python.sh")):
        shutil.copyfile(os.path.join(ROOT, name), copy / name)
    (copy / "tools" / "bootstrap-debian.sh").write_text("exit 0\n", encoding="utf-8")  # no apt in a unit test
    return copy, subprocess.run(["make", "--no-print-directory", f"PYTHON={python}", str(copy / ".venv/bin/ansible")],
                                cwd=copy, capture_output=True, text=True, check=False, timeout=60)


def test_a_python_older_than_3_11_is_refused_naming_it_before_any_venv(tmp_path):
    old = _stand_in(tmp_path, "python3.10", 1)
    copy, completed = _make_venv_in_copy(tmp_path, old)
    assert completed.returncode == 2
    assert (f"the interpreter of .venv, '{old}' (PYTHON, else tools/venv-python.sh's choice), does not run as Python "
            "3.11 or newer, which ansible-core 2.19 needs on the controller: give one with make "
            "PYTHON=/path/to/python3.11") in completed.stderr
    assert not (copy / ".venv").exists()


def test_the_string_false_as_python_is_refused_naming_it(tmp_path):
    copy, completed = _make_venv_in_copy(tmp_path, "false")
    assert completed.returncode == 2
    assert "the interpreter of .venv, 'false' (PYTHON" in completed.stderr
    assert not (copy / ".venv").exists()
