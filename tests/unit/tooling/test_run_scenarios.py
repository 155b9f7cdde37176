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

import yaml
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
    """TEST FIXTURE: a `molecule` that records its calls, sleeps a little, and fails `test -s broken` (with or
    without options before the command)."""
    script = directory / "molecule"
    script.write_text(
        "#!/bin/sh\n"
        f"echo \"$$ start $*\" >> {directory}/calls\n"
        "sleep 0.3\n"
        "echo \"output of $*\"\n"
        f"echo \"$$ end $*\" >> {directory}/calls\n"
        "case \" $* \" in *\" test -s broken \"*) exit 1;; esac\n")
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


def _scenario(root, name: str, config: str) -> None:
    (root / "molecule" / name).mkdir(parents=True)
    (root / "molecule" / name / "molecule.yml").write_text(config)


CLUSTER_OPTIONS = "--base-config .config/molecule/config.yml --base-config molecule/_shared/base.yml"


def test_a_cluster_scenario_runs_and_is_destroyed_on_the_cluster_base_config(tmp_path, monkeypatch, capsys):
    repository = tmp_path / "repository"
    _scenario(repository, "broken", "---\ndriver:\n  name: default  # the cluster scenarios' base\n")
    _scenario(repository, "pods", "---\ndriver:\n  name: podman\n")
    _scenario(repository, "plain", "---\nprovisioner:\n  name: ansible\n")
    monkeypatch.chdir(repository)
    molecule = _stand_in_molecule(tmp_path)
    assert run_scenarios.run(["broken", "pods", "plain", "absent"], 1, str(tmp_path / "logs"), molecule) == 1
    capsys.readouterr()
    calls = {line.split(" ", 2)[2] for line in (tmp_path / "calls").read_text().splitlines() if " start " in line}
    assert calls == {f"{CLUSTER_OPTIONS} test -s broken", f"{CLUSTER_OPTIONS} destroy -s broken",
                     "test -s pods", "test -s plain", "test -s absent"}


def test_the_repository_s_cluster_scenarios_get_their_base_and_it_makes_them_whole(monkeypatch):
    """Merged as molecule merges them (base configs in order, molecule.yml last), every scenario of the delegated
    driver has the control plane's create and destroy, the controller and its state; the podman ones are untouched."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    monkeypatch.chdir(root)
    merge_dicts = importlib.import_module("molecule.util").merge_dicts
    cluster = set()
    for name in sorted(os.listdir("molecule")):
        if not os.path.isfile(os.path.join("molecule", name, "molecule.yml")):
            continue
        options = run_scenarios.base_config_options(name)
        bases = options[1::2] or [".config/molecule/config.yml"]
        assert options[::2] == ["--base-config"] * len(options[::2])
        merged = {}
        for path in [*bases, os.path.join("molecule", name, "molecule.yml")]:
            with open(path, encoding="utf-8") as handle:
                merged = merge_dicts(merged, yaml.safe_load(handle))
        if options:
            cluster.add(name)
            assert merged["driver"] == {"name": "default", "options": {"managed": True}}
            assert merged["platforms"] == [{"name": "controller"}]
            assert merged["provisioner"]["playbooks"]["create"] == "../../tests/molecule/cluster/create.yml"
            assert merged["provisioner"]["playbooks"]["destroy"] == "../../tests/molecule/cluster/destroy.yml"
            assert "cluster_state" in merged["provisioner"]["inventory"]["host_vars"]["controller"]
            assert merged["verifier"]["name"] == "ansible"
        else:
            assert merged["driver"]["name"] == "podman"
    assert cluster == {"dra_driver", "gpu_operator", "network_operator", "validate_compute_domain", "validate_rdma"}


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


DURATIONS = st.dictionaries(NAMES, st.floats(min_value=0, max_value=1e6), max_size=12)


@given(st.lists(NAMES, max_size=12), DURATIONS, st.integers(min_value=0, max_value=14))
def test_heavy_are_the_longest_known_scenarios(scenarios, durations, count):
    heavy = run_scenarios.heavy_scenarios(scenarios, durations, count)
    known = set(scenarios) & set(durations)
    assert heavy <= known
    assert len(heavy) == min(count, len(known))
    assert all(durations[big] >= durations[small] for big in heavy for small in known - heavy)


def test_a_negative_number_of_heavy_scenarios_is_an_error():
    try:
        run_scenarios.heavy_scenarios(["a"], {"a": 1}, -1)
    except ValueError as exc:
        assert "0 or more, got -1" in str(exc)
    else:
        raise AssertionError("no error for -1")


def _schedule(scenarios, durations, jobs, count):
    """Simulate run(): each scenario takes its recorded duration (1 when unknown); (start, end, name) per scenario."""
    waiting = run_scenarios.order_longest_first(scenarios, durations)
    heavy = run_scenarios.heavy_scenarios(waiting, durations, count)
    running, done, now = {}, [], 0.0
    while waiting or running:
        while len(running) < jobs:
            name = run_scenarios.next_scenario(waiting, running, heavy)
            if name is None:
                # a slot waits only while a heavy one runs and every one left is heavy
                assert not waiting or (any(n in heavy for n in running) and set(waiting) <= heavy)
                break
            waiting.remove(name)
            running[name] = now
        assert running, "nothing runs while scenarios wait"
        name = min(running, key=lambda n: (running[n] + durations.get(n, 1), n))
        now = running[name] + durations.get(name, 1)
        done.append((running.pop(name), now, name))
    return done, heavy


@given(st.lists(NAMES, max_size=12), DURATIONS, st.integers(min_value=1, max_value=4),
       st.integers(min_value=0, max_value=5))
def test_schedule_runs_each_once_never_two_heavy_together(scenarios, durations, jobs, count):
    done, heavy = _schedule(scenarios, durations, jobs, count)
    assert sorted(name for _start, _end, name in done) == sorted(set(scenarios))
    for start, end, name in done:
        beside = [other for s, e, other in done if other != name and s < end and start < e and s <= start]
        assert len(beside) < jobs
        if name in heavy:
            assert not [other for s, e, other in done if other != name and other in heavy and s < end and start < e]


def test_schedule_of_the_recorded_tier_keeps_site_and_rdma_network_apart():
    durations = {"site": 450, "rdma_network": 444, "nvidia_driver": 331, "nvidia_imex": 325, "validate_rdma": 166,
                 "nvidia_peermem": 88, "validate_compute_domain": 82, "doca_ofed": 81, "network_operator": 75,
                 "dra_driver": 67, "gpu_operator": 58}
    done, heavy = _schedule(list(durations), durations, 2, 2)
    assert heavy == {"site", "rdma_network"}
    spans = {name: (start, end) for start, end, name in done}
    assert spans["site"][1] <= spans["rdma_network"][0]
    assert spans["site"][0] == spans["nvidia_driver"][0] == 0  # a light one beside the first heavy one
    assert max(end for _start, end, _name in done) <= sum(durations.values()) / 2 + 450


def test_run_never_starts_a_heavy_scenario_beside_another(tmp_path, capsys):
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"alpha": 100, "beta": 90, "gamma": 1, "delta": 2}))
    molecule = _stand_in_molecule(tmp_path)
    assert run_scenarios.run(["alpha", "beta", "gamma", "delta"], 2, str(tmp_path / "logs"), molecule,
                             str(durations), 2) == 0
    out = capsys.readouterr().out
    calls = [line.split(" ", 1)[1] for line in (tmp_path / "calls").read_text().splitlines()]
    assert calls.index("end test -s alpha") < calls.index("start test -s beta")
    # the order the runner started them in (the stand-ins of two started together may log in either order)
    started = [line.split()[3] for line in out.splitlines() if line.endswith(": started")]
    assert started[:2] == ["alpha:", "delta:"]


def test_run_keeps_the_durations_another_run_wrote_meanwhile(tmp_path, capsys):
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"alpha": 5, "old": 3}))
    script = tmp_path / "molecule"
    script.write_text("#!/bin/sh\n"
                      f"echo '{{\"alpha\": 5, \"old\": 3, \"other\": 7}}' > {durations}\n")  # another run's figures
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert run_scenarios.run(["alpha"], 1, str(tmp_path / "logs"), str(script), str(durations)) == 0
    capsys.readouterr()
    kept = json.loads(durations.read_text())
    assert set(kept) == {"alpha", "old", "other"} and kept["other"] == 7 and kept["alpha"] < 5


def test_run_on_a_machine_without_durations_orders_by_the_expected_ones_and_keeps_only_its_own(tmp_path, capsys):
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"alpha": 1, "gamma": 100, "beta": 50}))
    durations = tmp_path / "cache" / "durations.json"  # a fresh machine: not there yet
    molecule = _stand_in_molecule(tmp_path)
    assert run_scenarios.run(["alpha", "beta", "gamma"], 1, str(tmp_path / "logs"), molecule, str(durations), 0,
                             str(expected)) == 0
    capsys.readouterr()
    starts = [line.split(" test -s ")[1] for line in (tmp_path / "calls").read_text().splitlines()
              if " start test -s " in line]
    assert starts == ["gamma", "beta", "alpha"]
    kept = json.loads(durations.read_text())
    assert set(kept) == {"alpha", "beta", "gamma"} and kept["gamma"] < 100  # measured here, not the expected figure
    assert json.loads(expected.read_text()) == {"alpha": 1, "gamma": 100, "beta": 50}  # never written


def test_the_machine_s_own_durations_win_over_the_expected_ones(tmp_path, capsys):
    expected = tmp_path / "expected.json"
    expected.write_text(json.dumps({"alpha": 1, "gamma": 100}))
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"alpha": 200}))
    molecule = _stand_in_molecule(tmp_path)
    assert run_scenarios.run(["alpha", "gamma"], 1, str(tmp_path / "logs"), molecule, str(durations), 0,
                             str(expected)) == 0
    capsys.readouterr()
    starts = [line.split(" test -s ")[1] for line in (tmp_path / "calls").read_text().splitlines()
              if " start test -s " in line]
    assert starts == ["alpha", "gamma"]


def test_the_committed_expected_durations_name_every_scenario():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "..")
    path = os.path.join(root, "tests", "molecule", "expected-durations.json")
    with open(path, encoding="utf-8") as handle:
        expected = json.load(handle)
    scenarios = {name for name in os.listdir(os.path.join(root, "molecule"))
                 if os.path.isfile(os.path.join(root, "molecule", name, "molecule.yml"))} - {"demo"}
    assert set(run_scenarios.read_durations(path)) == scenarios == set(expected)  # every figure a usable number


def _step(scenario: str, step: str, event: str) -> str:
    return f"INFO     [{scenario} > {step}] {event}" + (": Successful" if event == "Executed" else "") + "\n"


def test_step_durations_of_a_whole_scenario_in_order_with_a_step_run_twice():
    marks = [(0.5, _step("site", "destroy", "Executing")), (2.0, "TASK [Destroy] ****\n"),
             (3.0, _step("site", "destroy", "Executed")), (3.1, _step("site", "create", "Executing")),
             (20.0, _step("site", "create", "Executed")), (20.0, _step("site", "destroy", "Executing")),
             (24.5, _step("site", "destroy", "Executed")), (25.0, "")]
    assert run_scenarios.step_durations(marks) == [("destroy", 2.5), ("create", 16.9), ("destroy", 4.5)]
    assert run_scenarios.describe_steps(run_scenarios.step_durations(marks)) == "destroy 2s, create 17s, destroy 4s"


def test_step_durations_keep_verify_whole_across_the_testinfra_line():
    """molecule's testinfra verifier prints "Executing Testinfra tests found in ..." inside the verify step."""
    marks = [(147.1, "INFO     [nvidia_driver > verify] Executing\n"),
             (147.1, "INFO     [nvidia_driver > verify] Executing Testinfra tests found in /x/tests/...\n"),
             (194.6, "INFO     [nvidia_driver > verify] Executed: Successful\n")]
    assert run_scenarios.step_durations(marks) == [("verify", 47.5)]


def test_step_durations_count_a_step_still_open_until_the_last_line_and_pass_over_a_stray_end():
    marks = [(1.0, _step("x", "prepare", "Executed")),  # no Executing before it: passed over
             (2.0, _step("x", "converge", "Executing")), (3.0, _step("x", "idempotence", "Executing")),
             (9.0, "fatal: [host]: FAILED!\n"), (10.0, "")]
    assert run_scenarios.step_durations(marks) == [("converge", 1.0), ("idempotence", 7.0)]


LINES = st.one_of(st.text(max_size=40),
                  st.builds(_step, NAMES, st.sampled_from(["converge", "destroy", "verify", "side_effect"]),
                            st.sampled_from(["Executing", "Executed"])))


@given(st.lists(st.tuples(st.floats(min_value=0, max_value=1e5), LINES), max_size=30))
def test_step_durations_of_any_output_are_known_steps_with_non_negative_seconds(marks):
    marks = sorted(marks, key=lambda mark: mark[0])
    steps = run_scenarios.step_durations(marks)
    opened = [line for _seconds, line in marks if run_scenarios.STEP_LINE.search(line)
              and run_scenarios.STEP_LINE.search(line).group("event") == "Executing"]
    assert len(steps) == len(opened)
    assert [step for step, _seconds in steps] == [run_scenarios.STEP_LINE.search(line).group("step") for line in opened]
    assert all(0 <= seconds <= (marks[-1][0] if marks else 0) for _step_name, seconds in steps)


def test_run_prefixes_every_log_line_with_its_time_and_ends_with_the_steps(tmp_path, capsys):
    script = tmp_path / "molecule"
    script.write_text("#!/bin/sh\n"
                      "echo 'INFO     [alpha > converge] Executing'\n"
                      "sleep 1.2\n"
                      "echo 'TASK [Apply the role]'\n"
                      "echo 'INFO     [alpha > converge] Executed: Successful'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    assert run_scenarios.run(["alpha"], 1, str(tmp_path / "logs"), str(script), str(tmp_path / "d.json")) == 0
    out = capsys.readouterr().out
    log = (tmp_path / "logs" / "alpha.log").read_text().splitlines()
    assert [line.split("] ", 1)[1] for line in log] == ["INFO     [alpha > converge] Executing",
                                                        "TASK [Apply the role]",
                                                        "INFO     [alpha > converge] Executed: Successful"]
    assert all(line.startswith("[") and line.split("s] ", 1)[0].strip("[ ").replace(".", "").isdigit() for line in log)
    assert "=== molecule scenario alpha passed in " in out and "s (converge 1s)" in out
