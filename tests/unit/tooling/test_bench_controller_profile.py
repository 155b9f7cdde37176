# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/controller_profile (BENCH FIXTURE of bench/fleet_preflight.py --profile): cProfile of ansible-playbook and
of each worker it forks, and the benchmark's merged profile of a run.

Each case starts fresh interpreters with the fixture on ``PYTHONPATH`` as a profiled run has it: a program named
``ansible-playbook`` that forks workers with multiprocessing (as ansible-core does, fork start method), and others.
"""

from __future__ import annotations

import contextlib
import io
import os
import pstats
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(REPO, "bench", "controller_profile")
sys.path.insert(0, os.path.join(REPO, "bench"))
import fleet_preflight  # noqa: E402  pylint: disable=wrong-import-position

# ansible-playbook in miniature: work in the main process, then two workers forked by multiprocessing that work and
# end as multiprocessing ends a process.
PLAYBOOK = """
import multiprocessing

def parent_work():
    return sum(range(300_000))

def worker_work():
    return sum(range(300_000))

if __name__ == "__main__":
    parent_work()
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=worker_work) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
"""


def run(program: str, directory: str | None, cwd: str) -> None:
    environment = dict(os.environ, PYTHONPATH=FIXTURE)
    environment.pop("GPUFABRIC_BENCH_PROFILE", None)
    if directory is not None:
        environment["GPUFABRIC_BENCH_PROFILE"] = directory
    subprocess.run([sys.executable, program], env=environment, check=True, cwd=cwd, timeout=120)


def functions(path: str) -> dict[str, int]:
    """function name -> calls in one profile file."""
    return {function: calls for (_file, _line, function), (_primitive, calls, *_rest)
            in pstats.Stats(path).stats.items()}  # type: ignore[attr-defined]


@pytest.fixture(name="playbook")
def fixture_playbook(tmp_path):
    script = tmp_path / "bin" / "ansible-playbook"
    script.parent.mkdir()
    script.write_text(PLAYBOOK, encoding="ascii")
    return str(script)


def test_the_playbook_and_each_worker_write_their_own_profile(tmp_path, playbook):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    run(playbook, str(profiles), str(tmp_path))
    names = sorted(os.listdir(profiles))
    mains = [name for name in names if name.startswith("main-")]
    workers = [name for name in names if name.startswith("worker-")]
    assert len(mains) == 1 and len(workers) == 2 and len(names) == 3
    main = functions(str(profiles / mains[0]))
    assert main.get("parent_work") == 1 and "worker_work" not in main
    for worker in workers:  # the worker's own calls, not what its parent ran before the fork
        calls = functions(str(profiles / worker))
        assert calls.get("worker_work") == 1 and "parent_work" not in calls


def test_other_programs_and_runs_without_an_absolute_directory_write_nothing(tmp_path, playbook):
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    other = tmp_path / "bin" / "ansible-playbook.py"  # not ansible-playbook (a module, a test), same work
    other.write_text(PLAYBOOK, encoding="ascii")
    run(str(other), str(profiles), str(tmp_path))
    run(playbook, None, str(tmp_path))
    run(playbook, "", str(tmp_path))
    run(playbook, "profiles", str(tmp_path))  # relative: would be written wherever a worker's directory is
    assert os.listdir(profiles) == []
    assert sorted(os.listdir(tmp_path)) == ["bin", "profiles"]


def test_the_benchmark_merges_a_runs_profiles_and_prints_its_top_functions(tmp_path, playbook):
    profiles = tmp_path / "preflight-18"
    profiles.mkdir()
    run(playbook, str(profiles), str(tmp_path))
    stats, mains, workers = fleet_preflight.merge_profiles(str(profiles))
    assert (mains, workers) == (1, 2)
    merged = functions(str(tmp_path / "preflight-18.prof"))
    assert merged.get("parent_work") == 1 and merged.get("worker_work") == 2
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        fleet_preflight.print_profile("preflight-18", stats, mains, workers, 3)
    lines = output.getvalue().splitlines()
    assert lines[0].startswith("preflight-18: 1 ansible-playbook and 2 worker profile(s), ")
    assert len(lines) == 2 + 3
    owns = [float(line.split()[0]) for line in lines[2:]]
    assert owns == sorted(owns, reverse=True)


def test_a_run_without_a_profile_of_the_playbook_fails_naming_the_directory(tmp_path):
    (tmp_path / "worker-1.prof").write_bytes(b"")
    with pytest.raises(SystemExit, match=f"{tmp_path}: no profile of ansible-playbook"):
        fleet_preflight.merge_profiles(str(tmp_path))


@pytest.mark.parametrize("content", ["file", "directory"])
def test_a_profile_directory_that_is_not_empty_is_refused_naming_it(tmp_path, content):
    target = tmp_path / "profiles"
    if content == "file":
        target.write_text("", encoding="ascii")
    else:
        target.mkdir()
        (target / "main-1.prof").write_bytes(b"")
    completed = subprocess.run([sys.executable, os.path.join(REPO, "bench", "fleet_preflight.py"), "--profile",
                                str(target)], capture_output=True, text=True, check=False, timeout=120)
    assert completed.returncode == 2
    assert f"--profile {target} is not an empty directory" in completed.stderr
