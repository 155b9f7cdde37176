# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/module_cpu (BENCH FIXTURE of bench/fleet_preflight.py): the CPU of each module process, by module name.

Each case starts fresh interpreters with the fixture on ``PYTHONPATH`` as the benchmark's ``ansible-playbook`` runs
have it: one shaped like a module process (a program on stdin, or a file named ``AnsiballZ_*.py``, that runs a module
through ``runpy.run_module`` and exits with ``sys.exit`` as ``exit_json`` does), and others that are not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIXTURE = os.path.join(REPO, "bench", "module_cpu")
sys.path.insert(0, os.path.join(REPO, "bench"))
import fleet_preflight  # noqa: E402  pylint: disable=wrong-import-position
from fleet_preflight import read_module_cpu  # noqa: E402  pylint: disable=wrong-import-position

# A module process in miniature: runpy runs the module as __main__ (as AnsiballZ does), the module burns some CPU
# and leaves with sys.exit, so runpy has restored __main__ by the time atexit runs.
PAYLOAD = """
import runpy, sys
sys.path.insert(0, {modules!r})
runpy.run_module(mod_name="ansible_collections.acme.tools.plugins.modules.busy", run_name="__main__", alter_sys=True)
"""
MODULE = "import sys\ntotal = sum(range(2_000_000))\nsys.exit(0)\n"


@pytest.fixture(name="modules")
def fixture_modules(tmp_path):
    package = tmp_path / "modules" / "ansible_collections" / "acme" / "tools" / "plugins" / "modules"
    package.mkdir(parents=True)
    for directory in [package, *package.parents][:5]:
        (directory / "__init__.py").write_text("", encoding="ascii")
    (package / "busy.py").write_text(MODULE, encoding="ascii")
    return str(tmp_path / "modules")


def run(argv: list[str], record: str | None, stdin: str = "", cwd: str | None = None) -> None:
    environment = dict(os.environ, PYTHONPATH=FIXTURE)
    environment.pop("GPUFABRIC_BENCH_MODULE_CPU", None)
    if record is not None:
        environment["GPUFABRIC_BENCH_MODULE_CPU"] = record
    subprocess.run([sys.executable, *argv], input=stdin, text=True, env=environment, check=True, cwd=cwd)


def test_a_module_process_on_stdin_records_its_module_and_cpu(tmp_path, modules):
    record = str(tmp_path / "record")
    run([], record, PAYLOAD.format(modules=modules))
    run([], record, PAYLOAD.format(modules=modules))
    result = read_module_cpu(record)
    assert list(result) == ["acme.tools.busy"]
    runs, seconds = result["acme.tools.busy"]
    assert runs == 2 and 0 < seconds < 30


def test_an_ansiballz_file_records_too(tmp_path, modules):
    record = str(tmp_path / "record")
    script = tmp_path / "AnsiballZ_busy.py"
    script.write_text(PAYLOAD.format(modules=modules), encoding="ascii")
    run([str(script)], record)
    assert read_module_cpu(record)["acme.tools.busy"][0] == 1


def test_other_processes_and_runs_without_the_setting_record_nothing(tmp_path, modules):
    record = str(tmp_path / "record")
    script = tmp_path / "ansible-playbook"  # not a module process, though it runs a module the same way
    script.write_text(PAYLOAD.format(modules=modules), encoding="ascii")
    run([str(script)], record)
    run(["-c", PAYLOAD.format(modules=modules)], record)
    run([], None, PAYLOAD.format(modules=modules))
    run([], "", PAYLOAD.format(modules=modules))
    assert not os.path.exists(record)
    assert read_module_cpu(record) == {}


@pytest.mark.parametrize("setting", ["false", "record", "./record"])
def test_a_relative_setting_records_nothing_where_the_module_runs(tmp_path, modules, setting):
    """A relative path (the string "false" from a shell too) would be written in whatever directory the module runs
    in (its remote tmp, a host's working directory): only an absolute path records."""
    run([], setting, PAYLOAD.format(modules=modules), cwd=str(tmp_path))
    assert os.listdir(tmp_path) == ["modules"]


def test_two_runs_of_one_label_each_count_their_own_modules(tmp_path, monkeypatch):
    """The record is named by the run's label: a second run of the same label (``--sizes 18 18``) starts it afresh
    instead of adding its modules to the first run's."""
    tools = tmp_path / "bin"
    tools.mkdir()
    playbook = tools / "ansible-playbook"  # stands in for ansible-playbook: one module process that records
    playbook.write_text('#!/bin/sh\necho "acme.tools.busy 0.25" >> "$GPUFABRIC_BENCH_MODULE_CPU"\n', encoding="ascii")
    playbook.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(tools / "python"))
    settings = fleet_preflight.Settings(forks=1, pipelining=True, fact_cache="memory", fact_cache_timeout=0,
                                        callback="ansible.builtin.default", workdir=str(tmp_path))
    for _round in range(2):
        run_result = fleet_preflight.run_playbook("preflight-18", "play.yml", "inventory.json", 18, settings,
                                                  "linear", 0.05, [])
        assert run_result.modules == {"acme.tools.busy": (1, 0.25)}


def test_a_module_process_that_ran_no_module_is_unknown(tmp_path):
    record = str(tmp_path / "record")
    run([], record, "pass\n")
    assert read_module_cpu(record)["unknown"][0] == 1


@pytest.mark.parametrize("content", ["", "\n"])
def test_an_empty_record_is_no_module(tmp_path, content):
    record = tmp_path / "record"
    record.write_text(content, encoding="ascii")
    assert read_module_cpu(str(record)) == {}


@pytest.mark.parametrize("line", ["acme.tools.busy", "acme.tools.busy 0.1x", "acme.tools.busy -1", " 0.25",
                                  "acme.tools.busy nan", "acme.tools.busy inf"])
def test_a_damaged_line_fails_naming_the_file_and_line(tmp_path, line):
    record = tmp_path / "record"
    record.write_text(f"acme.tools.busy 0.5\n{line}\n", encoding="ascii")
    with pytest.raises(SystemExit, match=f"{record}: line 2 is not '<module> <CPU seconds>'"):
        read_module_cpu(str(record))


# Module names as the fixture writes them: no whitespace (so no line break either), printable.
NAMES = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1,
                max_size=30).filter(lambda name: name.isprintable() and len(name.split()) == 1 and name.strip() == name)


@given(st.lists(st.tuples(NAMES, st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False))))
def test_well_formed_records_are_summed_per_module(records):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "record")
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(f"{name} {seconds!r}\n" for name, seconds in records)
        result = read_module_cpu(path)
    assert {name: runs for name, (runs, _seconds) in result.items()} == \
        {name: sum(1 for other, _value in records if other == name) for name, _value in records}
    for name, (_runs, seconds) in result.items():
        assert seconds == pytest.approx(sum(value for other, value in records if other == name))


@given(st.text())
def test_any_record_is_read_or_refused_with_its_line(text):
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "record")
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        try:
            result = read_module_cpu(path)
        except SystemExit as error:
            assert f"{path}: line " in str(error)
        else:
            assert all(runs > 0 and seconds >= 0 for runs, seconds in result.values())
