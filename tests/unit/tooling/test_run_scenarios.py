# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/molecule/run_scenarios.py: the order, the durations file, and a run with a stand-in molecule command."""

from __future__ import annotations

import importlib.util
import json
import os
import stat
import string

from hypothesis import given
from hypothesis import strategies as st

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "molecule", "run_scenarios.py")
_SPEC = importlib.util.spec_from_file_location("run_scenarios", _PATH)
run_scenarios = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(run_scenarios)

NAMES = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)


@given(st.lists(NAMES, max_size=12), st.dictionaries(NAMES, st.floats(min_value=0, max_value=1e6), max_size=12))
def test_order_is_every_scenario_once_unknown_first_then_longest(scenarios, durations):
    ordered = run_scenarios.order_longest_first(scenarios, durations)
    assert sorted(ordered) == sorted(set(scenarios))
    known = [durations[name] for name in ordered if name in durations]
    assert known == sorted(known, reverse=True)
    first_known = next((index for index, name in enumerate(ordered) if name in durations), len(ordered))
    assert all(name not in durations for name in ordered[:first_known])
    assert all(name in durations for name in ordered[first_known:])


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
                           max_leaves=8)


@given(st.one_of(st.binary(max_size=64).map(lambda raw: raw),
                 JSON_VALUES.map(lambda value: json.dumps(value).encode()),
                 st.dictionaries(NAMES, JSON_VALUES, max_size=6).map(lambda value: json.dumps(value).encode()),
                 st.just(b'{"a": 1'), st.just(b'{"a": NaN, "b": Infinity, "c": true, "d": "5", "e": 2}')))
def test_durations_file_of_any_content_gives_only_finite_non_negative_numbers(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("durations") / "durations.json"
    path.write_bytes(content)
    durations = run_scenarios.read_durations(str(path))
    assert isinstance(durations, dict)
    for value in durations.values():
        assert type(value) in (int, float) and 0 <= value < float("inf")
    if content.startswith(b'{"a": NaN'):
        assert durations == {"e": 2}


def test_missing_durations_file_is_no_durations(tmp_path):
    assert run_scenarios.read_durations(str(tmp_path / "absent.json")) == {}


def _stand_in_molecule(directory) -> str:
    """TEST FIXTURE: a `molecule` that records its calls, sleeps a little, and fails `test -s broken`."""
    script = directory / "molecule"
    script.write_text(
        "#!/bin/sh\n"
        f"echo \"$$ start $*\" >> {directory}/calls\n"
        "sleep 0.3\n"
        "echo \"output of $*\"\n"
        f"echo \"$$ end $*\" >> {directory}/calls\n"
        "[ \"$1 $3\" != \"test broken\" ]\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_run_prints_each_log_destroys_the_failed_one_and_keeps_durations(tmp_path, capsys):
    molecule = _stand_in_molecule(tmp_path)
    status = run_scenarios.run(["alpha", "broken", "gamma", "alpha"], 2, str(tmp_path / "logs"), molecule)
    out = capsys.readouterr().out
    assert status == 1
    for name in ("alpha", "gamma"):
        assert f"output of test -s {name}" in out
        assert f"=== molecule scenario {name} passed in" in out
    assert "=== molecule scenario broken FAILED after" in out
    assert out.rstrip().endswith("failed molecule scenario(s): broken")
    calls = (tmp_path / "calls").read_text().splitlines()
    assert sum(" start test -s alpha" in line for line in calls) == 1  # a duplicate runs once
    assert any(" start destroy -s broken" in line for line in calls)
    durations = json.loads((tmp_path / "logs" / "durations.json").read_text())
    assert set(durations) == {"alpha", "gamma"}
    # never more than two at a time
    active, most = 0, 0
    for line in calls:
        if " test -s " in line:
            active += 1 if " start " in line else -1
            most = max(most, active)
    assert most == 2


def test_run_with_every_scenario_passing_exits_zero(tmp_path, capsys):
    assert run_scenarios.run(["alpha"], 3, str(tmp_path / "logs"), _stand_in_molecule(tmp_path)) == 0
    assert "failed molecule" not in capsys.readouterr().out


def test_run_starts_the_longest_known_first_and_keeps_durations_in_the_given_file(tmp_path, capsys):
    durations = tmp_path / "cache" / "gpufabric" / "molecule-durations.json"
    durations.parent.mkdir(parents=True)
    durations.write_text(json.dumps({"alpha": 1, "gamma": 100}))
    molecule = _stand_in_molecule(tmp_path)
    assert run_scenarios.run(["alpha", "gamma"], 1, str(tmp_path / "logs"), molecule, str(durations)) == 0
    capsys.readouterr()
    starts = [line.split(" test -s ")[1] for line in (tmp_path / "calls").read_text().splitlines()
              if " start test -s " in line]
    assert starts == ["gamma", "alpha"]
    kept = json.loads(durations.read_text())
    assert set(kept) == {"alpha", "gamma"} and kept["gamma"] < 100  # the new run's figure replaced the old one
    assert not (tmp_path / "logs" / "durations.json").exists()


def test_durations_file_in_a_directory_not_there_yet_is_created(tmp_path, capsys):
    durations = tmp_path / "new" / "dir" / "durations.json"
    assert run_scenarios.run(["alpha"], 1, str(tmp_path / "logs"), _stand_in_molecule(tmp_path), str(durations)) == 0
    capsys.readouterr()
    assert set(json.loads(durations.read_text())) == {"alpha"}
