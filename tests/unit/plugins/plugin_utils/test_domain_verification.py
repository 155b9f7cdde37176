# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verdict on a changed wave (issue 42 item 1): a domain returns to service only when every member runs the wanted
driver with a healthy fabric and the members agree; each problem names the tray with its rack and slot.

On the starting commit a host returned to service when its own driver branch loaded (reboot_batch.yml), whatever its
domain's other members, its fabric or IMEX said; there was no verdict to test.
"""

from __future__ import annotations

import copy

import pytest
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.domain_verification import failure_reason, verify_wave

RACK = "1823124190518"


@pytest.fixture(scope="module")
def recorded(tree_builder, tmp_path_factory, command_runner):
    dest = str(tmp_path_factory.mktemp("verdict"))
    return {name: recorded_facts(tree_builder.build_tree(name, dest), command_runner)
            for name in ("gb200_tray", "hgx_h100", "gb200_tray_imex_not_ready", "gb200_tray_degraded")}


def answer(recorded, slot, version=None, name="gb200_tray"):
    facts = copy.deepcopy(recorded[name])
    facts["gpu"]["platform"]["slot_numbers"] = [slot]
    if version:
        facts["gpu"]["driver_version"] = version
    return {"gpu": facts["gpu"], "imex": facts["imex"]}


WAVE = {"number": 1, "canary": True, "hosts": ["tray-1", "tray-2"], "changing": ["tray-1", "tray-2"],
        "domains": [{"name": "clique-1", "rack": f"rack {RACK}", "hosts": ["tray-1", "tray-2"],
                     "changing": ["tray-1", "tray-2"]}]}


def wanted(branch, *hosts):
    return {host: {"branch": branch, "version": ""} for host in hosts or WAVE["hosts"]}


def test_a_domain_whose_members_all_run_the_wanted_driver_passes(recorded):
    loaded = recorded["gb200_tray"]["gpu"]["driver_version"]
    answers = {"tray-1": answer(recorded, 10), "tray-2": answer(recorded, 11)}
    verdict = verify_wave(WAVE, answers, wanted(loaded.split(".")[0]), "dra")
    assert verdict["passed"] and verdict["failed_hosts"] == [] and verdict["reasons"] == {}
    assert verdict["domains"][0]["problems"] == [] and verdict["domains"][0]["reason"] is None


def test_one_member_on_the_old_driver_fails_the_whole_domain_naming_its_slot(recorded):
    answers = {"tray-1": answer(recorded, 10, "580.95.05"), "tray-2": answer(recorded, 11, "570.172.08")}
    verdict = verify_wave(WAVE, answers, wanted("580"), "dra")
    assert not verdict["passed"]
    assert verdict["failed_hosts"] == ["tray-1", "tray-2"]
    problems = verdict["domains"][0]["problems"]
    assert problems[0] == f"tray-2 (rack {RACK}, slot 11): driver 570.172.08 is loaded, not branch 580"
    assert problems[1].startswith("members run different NVIDIA driver versions: ")
    reason = verdict["reasons"]["tray-1"]
    assert reason == verdict["reasons"]["tray-2"] == verdict["domains"][0]["reason"]
    assert reason.startswith("NVLink domain clique-1 failed verification after the change: tray-2 (rack ")


def test_a_pinned_version_must_be_the_loaded_one(recorded):
    answers = {"tray-1": answer(recorded, 10, "580.95.05"), "tray-2": answer(recorded, 11, "580.95.05")}
    pinned = {host: {"branch": "580", "version": "580.65.06"} for host in WAVE["hosts"]}
    verdict = verify_wave(WAVE, answers, pinned, "dra")
    assert verdict["domains"][0]["problems"][0] == (f"tray-1 (rack {RACK}, slot 10): driver 580.95.05 is loaded, not "
                                                    "the pinned 580.65.06")


def test_a_member_lost_during_the_drain_is_named_first_with_its_place_from_before(recorded):
    answers = {"tray-2": answer(recorded, 11, "570.172.08")}
    before = {"tray-1": {"gpu": answer(recorded, 10)["gpu"]}}
    verdict = verify_wave(WAVE, answers, wanted("580"), "dra", before=before, steps={"tray-1": "drain"})
    problems = verdict["domains"][0]["problems"]
    assert problems[0] == (f"tray-1 (rack {RACK}, slot 10): failed during the drain (see its task's error); nothing "
                           "was verified")
    assert verdict["failed_hosts"] == ["tray-1", "tray-2"]


def test_a_member_that_did_not_come_back_is_named(recorded):
    verdict = verify_wave(WAVE, {"tray-2": answer(recorded, 11, "580.95.05")}, wanted("580"), "dra",
                          steps={"tray-1": "verification"})
    assert verdict["domains"][0]["problems"] == [
        "tray-1: no answer after the change (it did not come back, or its probe failed)"]


def test_a_fabric_that_did_not_complete_fails_the_domain(recorded):
    broken = answer(recorded, 10, "580.95.05")
    broken["gpu"]["gpus"][0]["fabric"].update(state="in_progress", clique=None, clique_unset="registration in progress")
    verdict = verify_wave(WAVE, {"tray-1": broken, "tray-2": answer(recorded, 11, "580.95.05")}, wanted("580"), "dra")
    assert not verdict["passed"]
    assert verdict["domains"][0]["problems"][0].startswith(f"tray-1 (rack {RACK}, slot 10): ")
    assert "GPU 0: no clique (registration in progress)" in verdict["domains"][0]["problems"][0]


def test_a_gpu_that_needs_a_repair_fails_the_domain(recorded):
    """The recorded degraded tray: a pending row remap, a volatile uncorrectable ECC error, a reset asked for."""
    degraded = answer(recorded, 10, "580.95.05", name="gb200_tray_degraded")
    verdict = verify_wave(WAVE, {"tray-1": degraded, "tray-2": answer(recorded, 11, "580.95.05")}, wanted("580"),
                          "dra")
    assert not verdict["passed"]
    memory = [problem for problem in verdict["domains"][0]["problems"] if "pending" in problem or "ECC" in problem]
    assert memory and memory[0].startswith(f"tray-1 (rack {RACK}, slot 10): ")


def test_a_probe_without_nvml_is_a_note_not_a_pass_of_the_fabric(recorded):
    pci = answer(recorded, 10, "580.95.05")
    pci["gpu"]["source"] = "pci"
    verdict = verify_wave(WAVE, {"tray-1": pci, "tray-2": answer(recorded, 11, "580.95.05")}, wanted("580"), "dra")
    assert verdict["passed"]
    assert verdict["domains"][0]["notes"] == [
        f"tray-1 (rack {RACK}, slot 10): NVLink health is unknown: NVML was not usable, GPUs were listed from PCI"]


def test_imex_is_judged_only_where_the_mode_runs_it_on_the_host(recorded):
    loaded = recorded["gb200_tray"]["gpu"]["driver_version"]
    down = answer(recorded, 10)
    down["imex"]["domain"]["status"] = "DOWN"
    answers = {"tray-1": down, "tray-2": answer(recorded, 11)}
    assert verify_wave(WAVE, answers, wanted(loaded.split(".")[0]), "dra")["passed"]
    failed = verify_wave(WAVE, answers, wanted(loaded.split(".")[0]), "host")
    assert not failed["passed"]
    assert failed["domains"][0]["problems"] == [f"tray-1 (rack {RACK}, slot 10): IMEX: IMEX domain status DOWN"]
    not_ready = {"tray-1": answer(recorded, 10, name="gb200_tray_imex_not_ready"), "tray-2": answer(recorded, 11)}
    assert verify_wave(WAVE, not_ready, wanted(loaded.split(".")[0]), "dra")["passed"]
    host_managed = verify_wave(WAVE, not_ready, wanted(loaded.split(".")[0]), "dra_host_managed", "/run/imex.sock")
    assert not host_managed["passed"]
    assert host_managed["domains"][0]["problems"][0].startswith(f"tray-1 (rack {RACK}, slot 10): IMEX: ")


def test_a_member_left_on_another_nvidia_imex_version_fails_the_domain(recorded):
    """One nvidia-imex version for the whole domain: peers of another version are !V! (communication disabled,
    ../shared/reference/imex/nvidia-imex-ctl-N.sample.txt), in any IMEX mode."""
    loaded = recorded["gb200_tray"]["gpu"]["driver_version"]
    old, new = answer(recorded, 10), answer(recorded, 11)
    for item, version in ((old, "570.124.06-1"), (new, f"{loaded}-1")):
        item["imex"].update(installed=True, version=version)
    verdict = verify_wave(WAVE, {"tray-1": old, "tray-2": new}, wanted(loaded.split(".")[0]), "dra")
    assert not verdict["passed"] and verdict["failed_hosts"] == ["tray-1", "tray-2"]
    [problem] = verdict["domains"][0]["problems"]
    assert problem.startswith("members run different nvidia-imex versions: ")
    assert f"tray-1 (rack {RACK}, slot 10)" in problem and "570.124.06" in problem and loaded in problem
    assert problem.endswith("(peers of another version are !V!, communication disabled)")


def test_where_the_host_runs_imex_its_version_must_be_the_loaded_drivers(recorded):
    """A tray rebooted into driver 580 with the nvidia-imex of 570 left installed: the old daemon cannot serve over the
    new kernel module (NVRM API mismatch), so in the host IMEX modes the domain fails, naming the tray and both
    versions; where the DRA driver runs IMEX the host package is not in use and is not judged."""
    new = "580.95.05"
    answers = {}
    for name, slot, daemon in (("tray-1", 10, "570.172.08-1"), ("tray-2", 11, f"{new}-1")):
        item = answer(recorded, slot, new)
        item["imex"].update(installed=True, version=daemon)
        answers[name] = item
    host = verify_wave(WAVE, answers, wanted("580"), "host")
    mismatch = [problem for problem in host["domains"][0]["problems"] if "runs over driver" in problem]
    assert mismatch == [f"tray-1 (rack {RACK}, slot 10): nvidia-imex 570.172.08 runs over driver {new}: nvidia-imex "
                        "is a user-space component of the driver and must be of its version (the kernel module "
                        "refuses a client of another one)"]
    assert not host["passed"]
    assert not [problem for problem in verify_wave(WAVE, answers, wanted("580"), "dra")["domains"][0]["problems"]
                if "runs over driver" in problem]
    answers["tray-1"]["imex"].update(version=f"{new}-1")
    assert not [problem for problem in verify_wave(WAVE, answers, wanted("580"), "host")["domains"][0]["problems"]
                if "runs over driver" in problem]


def test_a_member_in_another_chassis_is_named_with_its_own_rack(recorded):
    """A tray whose GPUs name another chassis is named with that rack, so the operator finds the tray."""
    other = answer(recorded, 10, "570.124.06")
    other["gpu"]["platform"]["chassis_serials"] = ["1823124190999"] * len(other["gpu"]["platform"]["chassis_serials"])
    answers = {"tray-1": other, "tray-2": answer(recorded, 11, "580.95.05")}
    verdict = verify_wave(WAVE, answers, wanted("580"), "dra")
    problems = " ".join(verdict["domains"][0]["problems"])
    assert "tray-1 (rack 1823124190999, slot 10)" in problems and f"tray-2 (rack {RACK}, slot 11)" in problems
    assert verdict["failed_hosts"] == ["tray-1", "tray-2"]


def test_hosts_in_no_domain_are_judged_one_by_one(recorded):
    wave = {"number": 3, "canary": False, "domains": [], "hosts": ["hgx-1", "hgx-2"], "changing": ["hgx-1", "hgx-2"]}
    loaded = recorded["hgx_h100"]["gpu"]["driver_version"]
    answers = {"hgx-1": {"gpu": recorded["hgx_h100"]["gpu"]},
               "hgx-2": {"gpu": dict(recorded["hgx_h100"]["gpu"], driver_loaded=False, driver_version=None)}}
    verdict = verify_wave(wave, answers, wanted(loaded.split(".")[0], "hgx-1", "hgx-2"), "none")
    assert [(domain["kind"], domain["name"], domain["passed"]) for domain in verdict["domains"]] == [
        ("host", "hgx-1", True), ("host", "hgx-2", False)]
    assert verdict["failed_hosts"] == ["hgx-2"]
    assert verdict["reasons"]["hgx-2"].startswith("host hgx-2 failed verification after the change: hgx-2: the NVIDIA "
                                                  "driver is not loaded")


def test_the_reason_is_one_short_line():
    domain = {"kind": "domain", "name": "c", "problems": [f"problem {index}" for index in range(7)]}
    assert failure_reason(domain) == ("NVLink domain c failed verification after the change: problem 0; problem 1; "
                                      "problem 2; and 4 more")


@pytest.mark.parametrize(("argument", "value"), [("wave", "w"), ("answers", []), ("wanted", None), ("imex_mode", 3),
                                                 ("steps", "drain")])
def test_arguments_of_the_wrong_shape_are_refused(argument, value):
    arguments = {"wave": WAVE, "answers": {}, "wanted": {}, "imex_mode": "dra", "steps": {}, argument: value}
    with pytest.raises(ArgumentError, match=rf"^{argument}"):
        verify_wave(**arguments)


_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children,
                                                                                      max_size=4), max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(answers=st.dictionaries(st.sampled_from(["tray-1", "tray-2", "other"]),
                               st.fixed_dictionaries({"gpu": _ANY, "imex": _ANY}) | _ANY, max_size=3),
       wanted_values=st.dictionaries(st.sampled_from(["tray-1", "tray-2"]), _ANY, max_size=2),
       mode=st.sampled_from(["none", "dra", "host", "dra_host_managed"]))
def test_any_answer_gives_a_verdict_never_a_crash(answers, wanted_values, mode):
    """Whatever the probes answered (a shape the module never returns included): a verdict, every domain named, a
    domain with a member that gave no usable answer failing."""
    verdict = verify_wave(WAVE, answers, wanted_values, mode, "/run/imex.sock")
    assert isinstance(verdict["passed"], bool)
    assert [domain["name"] for domain in verdict["domains"]] == ["clique-1"]
    usable = all(isinstance(answers.get(host), dict) and isinstance(answers[host].get("gpu"), dict)
                 and answers[host]["gpu"] for host in WAVE["hosts"])
    if not usable:
        assert not verdict["passed"] and verdict["failed_hosts"] == WAVE["hosts"]
