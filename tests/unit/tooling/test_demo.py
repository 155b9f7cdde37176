# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/demo.py (`make demo`): the judgement of the site summary, the molecule command lines, a run with a
stand-in molecule; and molecule/molecule.mk leaving the demo out of `make molecule`."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import string
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("demo", os.path.join(ROOT, "tools", "demo.py"))
demo = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(demo)

# What site.yml writes as reports/demo/site-summary.json when the demo goes as meant (gpufabric.cluster.site_summary).
PASSING = {
    "preflight": {"ready": False, "status": {"gb200-tray-07": "ready", "gb200-tray-08": "ready",
                                             "gb200-tray-16": "not_ready", "localhost": "no_hardware"}},
    "excluded_hosts": {"gb200-tray-16": ["mlx5_1/1 (ibP2p3s0): state DOWN/Polling"]},
    "failed_hosts": {},
    "converged_hosts": ["gb200-tray-07", "gb200-tray-08"],
    "cluster_failure": None,
    "validation_failures": [],
    "validation_ran": True,
    "reports": {"preflight": "reports/demo/preflight.md", "validation": "reports/demo/validation.md",
                "summary": "reports/demo/site-summary.md"},
    "reports_written": True,
    "result": "fail",
    "message": "site run incomplete: excluded gb200-tray-16; failed none; cluster ok; validation ok. "
               "See reports/demo/site-summary.md",
}


def changed(**fields):
    summary = copy.deepcopy(PASSING)
    summary.update(fields)
    return summary


def test_the_demo_as_meant_passes():
    assert demo.judge(PASSING) == []


def test_another_tray_excluded_is_named():
    summary = changed(excluded_hosts={**PASSING["excluded_hosts"], "gb200-tray-08": ["fabric: clique missing"]})
    problems = demo.judge(summary)
    assert any("gb200-tray-08 (fabric: clique missing)" in problem for problem in problems), problems


def test_tray_16_not_excluded_is_named():
    problems = demo.judge(changed(excluded_hosts={}, result="pass"))
    assert "gb200-tray-16 was not excluded; its rail mlx5_1 is DOWN" in problems
    assert any("result is 'pass'" in problem for problem in problems)


@pytest.mark.parametrize("reasons", [["mlx5_0/1 (ibp3s0): state DOWN/Polling"], ["no NVIDIA GPU found"], []])
def test_tray_16_excluded_for_another_reason_is_named(reasons):
    problems = demo.judge(changed(excluded_hosts={"gb200-tray-16": reasons}))
    assert len(problems) == 1 and problems[0].startswith("gb200-tray-16 was excluded, but not for mlx5_1 DOWN")


def test_failed_validation_is_named():
    problems = demo.judge(changed(validation_failures=["rdma: mlx5_2 92.1 Gb/s below 368 Gb/s"]))
    assert problems == ["the validation failed: rdma: mlx5_2 92.1 Gb/s below 368 Gb/s"]


def test_validation_that_did_not_run_is_named():
    assert demo.judge(changed(validation_ran=False)) == ["the validation did not run"]


def test_failed_hosts_cluster_failure_and_converged_hosts_are_judged():
    problems = demo.judge(changed(failed_hosts={"gb200-tray-08": "failed or unreachable in the host phase"},
                                  converged_hosts=["gb200-tray-07"], cluster_failure="dra_driver: timeout"))
    assert problems == [
        "failed: gb200-tray-08 (failed or unreachable in the host phase)",
        "converged gb200-tray-07, expected gb200-tray-07, gb200-tray-08",
        "the cluster phase failed: dra_driver: timeout",
    ]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("excluded_hosts", ["gb200-tray-16"], "'excluded_hosts' must be an object of host: [reasons], got list"),
    ("failed_hosts", None, "'failed_hosts' must be an object of host: reason, got NoneType"),
    ("converged_hosts", "gb200-tray-07", "'converged_hosts' must be a list of hosts, got str"),
    ("validation_ran", "yes", "'validation_ran' must be true or false, got str"),
    ("validation_failures", 0, "'validation_failures' must be a list of messages, got int"),
    ("result", True, "'result' must be 'pass' or 'fail', got bool"),
])
def test_wrong_types_are_a_clear_error(field, value, message):
    with pytest.raises(demo.DemoError) as error:
        demo.judge(changed(**{field: value}))
    assert str(error.value) == f"site-summary.json: {message}"


def test_a_missing_field_is_a_clear_error():
    summary = changed()
    del summary["validation_ran"]
    with pytest.raises(demo.DemoError, match=r"no 'validation_ran'; not a summary of gpufabric\.cluster\.site"):
        demo.judge(summary)


@pytest.mark.parametrize(("content", "message"), [
    (None, "not written; the site run ended before its summary"),
    (b"", "empty; the site run did not finish writing its summary"),
    (b"  \n", "empty; the site run did not finish writing its summary"),
    (json.dumps(PASSING).encode()[:-20], "not JSON (.*); truncated or not a site summary"),
    (b"PLAY RECAP", "not JSON"),
    (b"\xff\xfe", "unreadable"),
    (b"[]", "a site summary is a JSON object, got list"),
    (b"null", "a site summary is a JSON object, got NoneType"),
])
def test_a_summary_file_that_is_no_summary_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "site-summary.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(demo.DemoError, match=message):
        demo.load_summary(path)


def test_a_written_summary_is_loaded(tmp_path):
    path = tmp_path / "site-summary.json"
    path.write_text(json.dumps(PASSING, indent=2) + "\n", encoding="utf-8")
    assert demo.judge(demo.load_summary(path)) == []


NAMES = st.text(alphabet=string.ascii_lowercase + "-_0123456789", min_size=1, max_size=16)
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=6)
CONTAINERS = st.lists(SCALARS, max_size=3) | st.dictionaries(NAMES, SCALARS | st.lists(SCALARS, max_size=2), max_size=3)
JSON_VALUES = SCALARS | CONTAINERS


@given(st.dictionaries(st.sampled_from(sorted(PASSING)), JSON_VALUES, max_size=len(PASSING)))
def test_any_json_object_is_judged_or_refused_clearly(fields):
    summary = changed(**fields)
    try:
        problems = demo.judge(summary)
    except demo.DemoError as error:
        assert str(error).startswith("site-summary.json: ")
    else:
        assert all(isinstance(problem, str) for problem in problems)
        if summary == PASSING:
            assert problems == []


@given(st.lists(NAMES.filter(lambda name: name != "gb200-tray-16"), min_size=1, max_size=4, unique=True))
def test_every_other_excluded_tray_is_named(others):
    excluded = {**PASSING["excluded_hosts"], **{host: [f"{host} is unfit"] for host in others}}
    problems = demo.judge(changed(excluded_hosts=excluded))
    assert len(problems) == 1 and problems[0].startswith("excluded besides gb200-tray-16: ")
    for host in others:
        assert f"{host} ({host} is unfit)" in problems[0]


@given(st.binary(max_size=64) | JSON_VALUES.map(lambda value: json.dumps(value).encode()))
def test_any_file_content_loads_as_an_object_or_is_refused_clearly(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("summary") / "site-summary.json"
    path.write_bytes(content)
    try:
        summary = demo.load_summary(path)
    except demo.DemoError as error:
        assert str(error).startswith(f"{path}: ")
    else:
        assert isinstance(summary, dict)


def test_molecule_command_lines():
    base = ["-c", ".config/molecule/config.yml", "-c", "molecule/site/molecule.yml"]
    assert demo.molecule_command("/venv/bin/molecule", "converge") == ["/venv/bin/molecule", *base, "converge",
                                                                       "-s", "demo"]
    assert demo.molecule_command("molecule", "destroy") == ["molecule", *base, "destroy", "-s", "demo"]
    for config in demo.BASE_CONFIGS:
        assert os.path.isfile(os.path.join(ROOT, config)), config
    assert os.path.isfile(os.path.join(ROOT, "molecule", "demo", "molecule.yml"))


def _stand_in_molecule(tmp_path, summary, status):
    """A molecule that records its arguments and, on converge, writes ``summary`` (None: nothing) as site.yml would."""
    script = tmp_path / "bin" / "molecule"
    script.parent.mkdir()
    writes = "" if summary is None else (
        f"mkdir -p reports/demo && cat > reports/demo/site-summary.json <<'JSON'\n{json.dumps(summary)}\nJSON\n"
        "touch reports/demo/preflight.html reports/demo/validation.html reports/demo/site-summary.md\n")
    script.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/molecule.args\n'
                      f'[ "$5" = converge ] && {{\n{writes}:\n}}\nexit {status}\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script), tmp_path / "molecule.args"


def test_up_judges_the_summary_not_the_exit_status_and_prints_the_reports(tmp_path, capsys):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule, args = _stand_in_molecule(tmp_path, PASSING, 2)
    assert demo.up(molecule, root) == 0
    assert args.read_text(encoding="utf-8").split() == demo.molecule_command(molecule, "converge")[1:]
    out = capsys.readouterr().out
    report_dir = root / "reports" / "demo"
    assert out.index(str(report_dir / "preflight.html")) < out.index(str(report_dir / "validation.html"))
    assert str(report_dir / "site-summary.json") in out and "make demo: as expected" in out


def test_up_fails_on_a_summary_other_than_the_demo_s(tmp_path, capsys):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule = _stand_in_molecule(tmp_path, changed(validation_ran=False), 2)[0]
    assert demo.up(molecule, root) == 1
    captured = capsys.readouterr()
    assert "the validation did not run" in captured.err
    # the reports are listed, and nothing says the run went as the demo means it to
    assert str(root / "reports" / "demo" / "validation.html") in captured.out
    assert "as the demo means it to" not in captured.out + captured.err


def test_up_never_judges_an_earlier_run_s_summary(tmp_path, capsys):
    root = tmp_path / "checkout"
    (root / "reports" / "demo").mkdir(parents=True)
    (root / "reports" / "demo" / "site-summary.json").write_text(json.dumps(PASSING), encoding="utf-8")
    molecule = _stand_in_molecule(tmp_path, None, 1)[0]
    assert demo.up(molecule, root) == 1
    err = capsys.readouterr().err
    assert "molecule converge exited 1" in err and "not written" in err


def test_down_runs_the_scenario_s_destroy_and_returns_its_status(tmp_path):
    molecule, args = _stand_in_molecule(tmp_path, None, 3)
    assert demo.down(molecule, tmp_path) == 3
    assert args.read_text(encoding="utf-8").split() == demo.molecule_command(molecule, "destroy")[1:]


def _make(*args):
    completed = subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=ROOT, capture_output=True,
                               text=True, check=False, timeout=60)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def test_make_molecule_leaves_the_demo_out():
    scenarios = _make("-f", "molecule/molecule.mk", "--eval", "print-scenarios: ; @echo $(MOLECULE_SCENARIOS)",
                      "print-scenarios").split()
    on_disk = sorted(name for name in os.listdir(os.path.join(ROOT, "molecule"))
                     if os.path.isfile(os.path.join(ROOT, "molecule", name, "molecule.yml")))
    assert "demo" in on_disk and "site" in scenarios
    assert sorted(scenarios) == [name for name in on_disk if name != "demo"]


def test_make_help_offers_demo_and_demo_down():
    targets = {line.split()[0] for line in _make("help").splitlines() if line.strip()}
    assert {"demo", "demo-down"} <= targets
