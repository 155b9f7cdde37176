# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/demo.py (`make demo`): the judgement of the site summary and of the preflight report, the molecule command
lines, a run with a stand-in molecule; the demo rack's trays through the collection's own probe, preflight and gate
(what `make demo` shows); and molecule/molecule.mk leaving the demo out of `make molecule`."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import string
import subprocess
from pathlib import Path

import pytest
import yaml
from fixtures import build_trees
from fixtures.commands import run_command
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import collect_fabric, select_subsets
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import site
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import derive_domains
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("demo", os.path.join(ROOT, "tools", "demo.py"))
demo = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(demo)
STANDIN = os.path.join(ROOT, "tests", "fixtures", "pynvml_standin", "pynvml.py")

# What site.yml writes as reports/demo/site-summary.json when the demo goes as meant (gpufabric.cluster.site_summary).
PASSING = {
    "preflight": {"ready": False, "status": {"gb200-tray-07": "ready", "gb200-tray-08": "ready",
                                             "gb200-tray-16": "not_ready", "localhost": "no_hardware"}},
    "excluded_hosts": {"gb200-tray-16": ["GPU 2: 16 of 18 NVLinks active; inactive links 7, 13; GPU 2: fabric health: "
                                         "degraded bandwidth, summary limited capacity"]},
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
    assert "gb200-tray-16 was not excluded; its GPU 2's NVLink fabric is degraded (two links down)" in problems
    assert any("result is 'pass'" in problem for problem in problems)


@pytest.mark.parametrize("reasons", [["mlx5_1/1 (ibP2p3s0): state DOWN/Polling"], ["no NVIDIA GPU found"], [],
                                     ["GPU 2: 16 of 18 NVLinks active; inactive links 7, 13"],
                                     ["GPU 1: fabric health: degraded bandwidth"]])
def test_tray_16_excluded_for_another_reason_is_named(reasons):
    problems = demo.judge(changed(excluded_hosts={"gb200-tray-16": reasons}))
    assert len(problems) == 1 and problems[0].startswith(
        "gb200-tray-16 was excluded, but not because its GPU 2's NVLink fabric is degraded")


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
    with pytest.raises(demo.DemoError, match=r"no 'validation_ran'; not a report of gpufabric\.cluster\.site"):
        demo.judge(summary)


@pytest.mark.parametrize(("content", "message"), [
    (None, "not written; the site run ended before it"),
    (b"", "empty; the site run did not finish writing it"),
    (b"  \n", "empty; the site run did not finish writing it"),
    (json.dumps(PASSING).encode()[:-20], "not JSON (.*); truncated or not a report of gpufabric.cluster.site"),
    (b"PLAY RECAP", "not JSON"),
    (b"\xff\xfe", "unreadable"),
    (b"[]", "a report is a JSON object, got list"),
    (b"null", "a report is a JSON object, got NoneType"),
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


def _stand_in_molecule(tmp_path, summary, status, preflight=None, plan_status=0):
    """A molecule that records its arguments and, on converge, writes ``summary`` and ``preflight`` (None: nothing)
    as site.yml would and exits ``status``; its side-effect (the upgrade plan) exits ``plan_status``."""
    script = tmp_path / "bin" / "molecule"
    script.parent.mkdir()
    writes = "mkdir -p reports/demo\n"
    for name, content in (("site-summary.json", summary), ("preflight.json", preflight)):
        if content is not None:
            writes += f"cat > reports/demo/{name} <<'JSON'\n{json.dumps(content)}\nJSON\n"
    if summary is not None:
        writes += "touch reports/demo/preflight.html reports/demo/validation.html reports/demo/site-summary.md\n"
    # on failure, what molecule 26 logs (its level first, coloured), after ansible's own lines in its frame
    failed = "" if status == 0 else (
        "echo '  \u2502 [ERROR]: Task failed: Action failed: site run incomplete: excluded gb200-tray-16'\n"
        f"printf '\\033[31m\\033[1mCRITICAL\\033[0m Ansible return code was {status}, command was: x\\n'\n"
        "echo 'ERROR    demo \u279c converge: Executed: Failed'\n")
    # molecule 26 in a checkout without molecule/default: a CRITICAL line, then it goes on
    search = "echo \"CRITICAL 'molecule/default/molecule.yml' glob failed.  Exiting.\"\n"
    plan_failed = "echo 'ERROR    demo \u279c side_effect: Executed: Failed'\n" if plan_status else ""
    script.write_text(f'#!/bin/sh\necho "$*" >> {tmp_path}/molecule.args\n'
                      f'echo "${{GPUFABRIC_DEMO_CHECK_MODE:-unset}}" >> {tmp_path}/molecule.check\n{search}'
                      f'[ "$5" = side-effect ] && {{\n{plan_failed}exit {plan_status}\n}}\n'
                      f'[ "$5" = converge ] && {{\n{writes}{failed}:\n}}\nexit {status}\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script), tmp_path / "molecule.args"


def test_up_judges_the_reports_not_the_exit_status_prints_them_and_the_plan(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule, args = _stand_in_molecule(tmp_path, PASSING, 2, demo_rack["preflight"])
    assert demo.up(molecule, root) == 0
    calls = args.read_text(encoding="utf-8").splitlines()
    expected = [demo.molecule_command(molecule, action)[1:] for action in ("converge", "side-effect")]
    assert [call.split() for call in calls] == expected
    # --check for the plan only (molecule/demo/molecule.yml reads it)
    assert (tmp_path / "molecule.check").read_text(encoding="utf-8").split() == ["unset", "true"]
    with open(os.path.join(ROOT, "molecule", "demo", "molecule.yml"), encoding="utf-8") as handle:
        assert f"check: ${{{demo.CHECK_MODE}:-false}}" in handle.read()
    out = capsys.readouterr().out
    report_dir = root / "reports" / "demo"
    assert out.index(str(report_dir / "preflight.html")) < out.index(str(report_dir / "validation.html"))
    assert str(report_dir / "site-summary.json") in out and "make demo: as expected" in out
    assert "clique 1: gb200-tray-07 (slot 7), gb200-tray-08 (slot 8); clique 2: gb200-tray-16 (slot 26)" in out
    assert "NVML is simulated" in out


def test_molecule_s_failure_lines_are_left_out_of_the_intended_outcome_only(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule = _stand_in_molecule(tmp_path, PASSING, 2, demo_rack["preflight"])[0]
    assert demo.up(molecule, root) == 0
    captured = capsys.readouterr()
    assert "CRITICAL" not in captured.out + captured.err and "Executed: Failed" not in captured.out + captured.err
    assert ("(left out: molecule's failure-level log lines, 1 about the molecule/default scenario this checkout has "
            "none of (molecule goes on) and 2 reporting the converge failed, exit status 2: the site run failing on "
            "the excluded tray, the outcome the demo means (its summary is above).)") in captured.out
    assert ("(left out: molecule's failure-level log lines, 1 about the molecule/default scenario this checkout has "
            "none of (molecule goes on).)") in captured.out
    # ansible's own lines (the site run's failure) pass
    assert "[ERROR]: Task failed: Action failed: site run incomplete: excluded gb200-tray-16" in captured.out


def test_molecule_s_failure_lines_are_shown_when_the_run_is_not_the_demo_s(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule = _stand_in_molecule(tmp_path, changed(validation_ran=False), 2, demo_rack["preflight"])[0]
    assert demo.up(molecule, root) == 1
    err = capsys.readouterr().err
    assert "CRITICAL\x1b[0m Ansible return code was 2" in err
    assert "ERROR    demo \u279c converge: Executed: Failed" in err
    assert err.index("Executed: Failed") < err.index("make demo: FAILED")


def test_up_fails_on_a_summary_other_than_the_demo_s(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule, args = _stand_in_molecule(tmp_path, changed(validation_ran=False), 2, demo_rack["preflight"])
    assert demo.up(molecule, root) == 1
    captured = capsys.readouterr()
    assert "the validation did not run" in captured.err
    # the reports are listed, nothing says the run went as the demo means it to, and no plan is made
    assert str(root / "reports" / "demo" / "validation.html") in captured.out
    assert "as the demo means it to" not in captured.out + captured.err
    assert "side-effect" not in args.read_text(encoding="utf-8")


def test_up_fails_on_a_preflight_without_the_nvlink_domain(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule = _stand_in_molecule(tmp_path, PASSING, 2, dict(demo_rack["preflight"], imex_domains=[]))[0]
    assert demo.up(molecule, root) == 1
    assert "the preflight found no IMEX domain" in capsys.readouterr().err


def test_up_fails_when_the_upgrade_plan_fails(tmp_path, capsys, demo_rack):
    root = tmp_path / "checkout"
    root.mkdir()
    molecule = _stand_in_molecule(tmp_path, PASSING, 2, demo_rack["preflight"], plan_status=2)[0]
    assert demo.up(molecule, root) == 1
    captured = capsys.readouterr()
    assert "the upgrade plan's check-mode run (molecule side-effect) exited 2" in captured.err
    assert "ERROR    demo \u279c side_effect: Executed: Failed" in captured.err
    assert "glob failed" in captured.err  # every held line of the failed run is shown
    assert "as expected" not in captured.out


@pytest.mark.parametrize("earlier", ["site-summary.json", "preflight.json"])
def test_up_never_judges_an_earlier_run_s_reports(tmp_path, capsys, demo_rack, earlier):
    root = tmp_path / "checkout"
    (root / "reports" / "demo").mkdir(parents=True)
    for name, content in (("site-summary.json", PASSING), ("preflight.json", demo_rack["preflight"])):
        (root / "reports" / "demo" / name).write_text(json.dumps(content), encoding="utf-8")
    written = {"site-summary.json": (None, demo_rack["preflight"]), "preflight.json": (PASSING, None)}[earlier]
    molecule = _stand_in_molecule(tmp_path, *written[:1], 1, written[1])[0]
    assert demo.up(molecule, root) == 1
    err = capsys.readouterr().err
    assert "molecule converge exited 1" in err and f"{earlier}: not written" in err


def test_down_runs_the_scenario_s_destroy_and_returns_its_status(tmp_path):
    molecule, args = _stand_in_molecule(tmp_path, None, 3)
    assert demo.down(molecule, tmp_path) == 3
    assert args.read_text(encoding="utf-8").split() == demo.molecule_command(molecule, "destroy")[1:]


# --- the demo rack through the collection's own probe, preflight and gate ---------------------------------------
#
# What `make demo` shows, without containers: each tray's tree holds the running kernel's boot id and the stand-in
# pynvml answers as `pynvml` from the tray's recording (as molecule/demo/prepare.yml sets the trays up), the real
# nvml_source and collectors gather the facts, each tray gets the nodes file of its IMEX domain (imex_domains, as
# prepare writes it), then the preflight judges them and the site gate decides with the demo's settings.


def _demo_settings():
    with open(os.path.join(ROOT, "molecule", "demo", "molecule.yml"), encoding="utf-8") as handle:
        scenario = yaml.safe_load(handle)
    return scenario["provisioner"]["inventory"]


@pytest.fixture(scope="module")
def demo_rack(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("pynvml_standin", STANDIN)
    standin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(standin)
    dest = tmp_path_factory.mktemp("rack")
    inventory = _demo_settings()
    with open(nvml.BOOT_ID, encoding="ascii") as handle:
        boot_id = handle.read()
    hostvars = {}
    roots = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nvml, "pynvml", standin)
        for index, (host, host_vars) in enumerate(sorted(inventory["host_vars"].items())):
            root = build_trees.build_tree(host_vars["demo_tray"], str(dest))
            boot = Path(root) / nvml.BOOT_ID.lstrip("/")
            boot.parent.mkdir(parents=True, exist_ok=True)
            boot.write_text(boot_id, encoding="ascii")
            roots[host] = root
            hostvars[host] = {"ansible_facts": {"default_ipv4": {"address": f"10.88.0.{10 + index}"}},
                              "gpufabric_imex_mode": "dra", **host_vars}

        def gather():
            for host, root in roots.items():
                patch.setattr(standin, "RECORDING", root + ".nvml.json")
                facts = collect_fabric(root, run_command, select_subsets(["all"]))
                assert facts.pop("warnings") == []
                hostvars[host]["ansible_facts"]["gpufabric"] = facts

        gather()
        placement = derive_domains(hostvars, sorted(hostvars))
        for host, root in roots.items():
            Path(root, "etc/nvidia-imex/nodes_config.cfg").write_text(
                "".join(f"{address}\n" for address in placement[host]["nodes"]), encoding="utf-8")
        gather()
    hosts = sorted(hostvars)
    report = json.loads(json.dumps(preflight_report(hostvars, hosts), default=str))
    gate_checks = inventory["group_vars"]["all"].get("gpufabric_site_gate_checks", site.DEFAULT_GATE_CHECKS)
    gate = site.site_gate(report, hosts, gate_checks, hosts, hosts)
    return {"preflight": report, "gate": gate, "hostvars": hostvars}


def test_the_demo_rack_shows_its_nvlink_domains_by_rack_and_slot(demo_rack):
    report = demo_rack["preflight"]
    assert demo.judge_preflight(report) == []
    # each domain's own verdict (its nodes files agree), then with its members' (R570 past its end of life warns
    # on every tray; tray-16's fabric fails)
    assert [(domain["members"], domain["own_status"], domain["status"]) for domain in report["imex_domains"]] == [
        (["gb200-tray-07", "gb200-tray-08"], "pass", "warn"), (["gb200-tray-16"], "pass", "fail")]
    assert report["imex_domains"][0]["racks"] == [
        {"chassis_serial": build_trees.GB200_CHASSIS_SERIAL,
         "trays": [{"host": "gb200-tray-07", "slot_number": 7, "tray_index": 7},
                   {"host": "gb200-tray-08", "slot_number": 8, "tray_index": 8}]}]
    for host in ("gb200-tray-07", "gb200-tray-08"):
        checks = {check["name"]: check for check in report["hosts"][host]["checks"]}
        assert checks["fabric"]["status"] == checks["fabric_health"]["status"] == "pass", checks
        assert checks["imex_domain"]["status"] == "pass", checks["imex_domain"]
        assert "fabric state unknown" not in json.dumps(report["hosts"][host])
    title = _demo_settings()["group_vars"]["all"]["gpufabric_preflight_report_title"]
    page = preflight_report_html(report, title=title)
    assert "No IMEX domain" not in page and "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1" in page
    # the page says it is of a simulation
    assert "<h1>GPU fabric readiness of a simulated GB200 NVL72 rack (make demo: no GPU, NVML answered from " \
           'recordings): <span class="fail">NOT READY</span></h1>' in page


def test_the_demo_rack_s_gate_excludes_only_the_degraded_tray_for_its_fabric(demo_rack):
    gate = demo_rack["gate"]
    assert gate["ready"] == ["gb200-tray-07", "gb200-tray-08"]
    assert sorted(gate["excluded"]) == ["gb200-tray-16"]
    # the summary site.yml would write from this gate is the one the demo expects
    assert demo.judge(changed(excluded_hosts=gate["excluded"])) == []


def _preflight_changed(demo_rack, change):
    report = copy.deepcopy(demo_rack["preflight"])
    change(report)
    return demo.judge_preflight(report)


def test_a_preflight_other_than_the_demo_rack_s_is_named(demo_rack):
    def one_domain(report):
        report["imex_domains"][0]["members"].append("gb200-tray-16")
        report["imex_domains"].pop()

    assert _preflight_changed(demo_rack, one_domain) == [
        "IMEX domains 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1: gb200-tray-07, gb200-tray-08, gb200-tray-16, expected "
        "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1: gb200-tray-07, gb200-tray-08; "
        "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2: gb200-tray-16",
        "gb200-tray-16 is not placed in its rack at slot 26 (found None)"]

    def no_platform(report):
        for domain in report["imex_domains"]:
            for rack in domain["racks"]:
                rack["chassis_serial"] = None

    assert _preflight_changed(demo_rack, no_platform) == [
        f"{host} is not placed in its rack at slot {slot} (found None)" for host, slot in demo.SLOTS.items()]

    def tray_08_failed_and_16_passed(report):
        report["hosts"]["gb200-tray-08"]["status"] = "fail"
        report["hosts"]["gb200-tray-16"]["status"] = "pass"

    assert _preflight_changed(demo_rack, tray_08_failed_and_16_passed) == [
        "gb200-tray-08: preflight status 'fail', expected pass or warn",
        "gb200-tray-16: the preflight did not fail it; its GPU 2's NVLink fabric is degraded (two links down)"]


@pytest.mark.parametrize(("change", "message"), [
    ({"imex_domains": None}, "preflight.json: 'imex_domains' must be a list of domains, got NoneType"),
    ({"imex_domains": "3c1a"}, "preflight.json: 'imex_domains' must be a list of domains, got str"),
    ({"hosts": []}, "preflight.json: 'hosts' must be an object of host: entry, got list"),
    ({"imex_domains": [["gb200-tray-07"]]}, "preflight.json: an IMEX domain must be an object, got list"),
    ({"imex_domains": [{"clique": "x", "members": "gb200-tray-07"}]},
     "preflight.json: the members of an IMEX domain must be a list, got str"),
])
def test_a_preflight_report_of_the_wrong_shape_is_a_clear_error(demo_rack, change, message):
    with pytest.raises(demo.DemoError) as error:
        demo.judge_preflight(dict(demo_rack["preflight"], **change))
    assert str(error.value) == message


def test_a_preflight_report_without_a_field_is_a_clear_error(demo_rack):
    for key in ("imex_domains", "hosts"):
        report = dict(demo_rack["preflight"])
        del report[key]
        with pytest.raises(demo.DemoError, match=f"preflight.json: no '{key}'; not a report of gpufabric.cluster.site"):
            demo.judge_preflight(report)


@given(st.dictionaries(st.sampled_from(["imex_domains", "hosts", "summary"]), JSON_VALUES, max_size=3))
@settings(max_examples=60)
def test_any_preflight_object_is_judged_or_refused_clearly(demo_rack, fields):
    report = dict(demo_rack["preflight"], **fields)
    try:
        problems = demo.judge_preflight(report)
    except demo.DemoError as error:
        assert str(error).startswith("preflight.json: ")
    else:
        assert all(isinstance(problem, str) for problem in problems)


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
