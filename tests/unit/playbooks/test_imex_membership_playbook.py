# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 41 item 1: an IMEX domain's membership comes from the whole fleet, never from the hosts of the play.

On the starting commit ``nvidia_imex`` derived the domains from ``ansible_play_hosts_all``: ``--limit tray-02``, the
usual way to re-run one tray, wrote a nodes file listing tray-02 alone, so the tray left its rack's domain while the
other members still listed it. Here the role's own steps run for real (ansible-playbook, local hosts: its input check
and derivation, tasks/validate.yml, then tasks/configure.yml, which writes the files) over three trays of one recorded
GB200 clique; the facts of the trays are in a jsonfile fact cache (NVML cannot describe a recorded tree: an earlier
run puts in the cache the facts the real collectors gathered from the tray's tree with its recorded NVML answers).

TEST FIXTURE: no package repository and no systemd here, so the install and service steps are not run, the restart
of nvidia-imex is kept out by the role's own flag for a service check mode cannot look at
(``__nvidia_imex_not_installed_in_check``), and the paths the role writes lie under each tray's directory of the
test (the unit drop-in and its record too: the trays share this machine).
"""

from __future__ import annotations

import json
import re
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

TRAYS = {"tray-01": "10.0.0.11", "tray-02": "10.0.0.2", "tray-03": "10.0.0.3"}
WHOLE_DOMAIN = "10.0.0.2\n10.0.0.3\n10.0.0.11\n"
# TEST FIXTURE module of the run that fills the fact cache: returns the recorded tray's facts as fabric_facts would.
RECORDED_FACTS_MODULE = """#!/usr/bin/python
import json
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule({"path": {"type": "path", "required": True}})
with open(module.params["path"]) as handle:
    module.exit_json(changed=False, ansible_facts={"gpufabric": json.load(handle)})
"""


def make_site(workdir, tray_facts: dict, root: str, cached: tuple[str, ...], unreachable: tuple[str, ...] = ()):
    """An inventory of the trays in gpu_nodes, each writing under its own directory, and a fact cache holding the
    facts of the trays in ``cached``; the trays in ``unreachable`` are reached over ssh on a port where nothing
    listens."""
    hosts = {}
    for name, address in TRAYS.items():
        own = workdir / name
        own.mkdir(parents=True, exist_ok=True)
        hosts[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                       "gpufabric_probe_root": root, "nvidia_imex_address": address,
                       "nvidia_imex_config_file": str(own / "config.cfg"),
                       "nvidia_imex_nodes_config_file": str(own / "nodes_config.cfg")}
        if name in unreachable:
            hosts[name].update({"ansible_connection": "ssh", "ansible_host": "127.0.0.1", "ansible_port": 9,
                                "ansible_ssh_common_args": "-o ConnectTimeout=5"})
    (workdir / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    (workdir / "tray.json").write_text(json.dumps(tray_facts))
    (workdir / "library").mkdir(exist_ok=True)
    (workdir / "library" / "recorded_tray_facts.py").write_text(RECORDED_FACTS_MODULE)
    prime = [{"name": "An earlier run: the trays' facts into the cache", "hosts": "gpu_nodes", "gather_facts": False,
              "tasks": [{"name": "Return the recorded facts",
                         "recorded_tray_facts": {"path": str(workdir / "tray.json")}}]}]
    (workdir / "prime.yml").write_text(yaml.safe_dump(prime, sort_keys=False))
    if cached:
        returncode, output = run(workdir, "--limit", ",".join(cached), playbook="prime.yml")
        assert returncode == 0, output[-3000:]
    play = [{"name": "IMEX", "hosts": "gpu_nodes", "gather_facts": False, "tasks": [
        {"name": "Check the input and derive the domains", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.nvidia_imex", "tasks_from": "validate"}},
        {"name": "Render config.cfg and the nodes file", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.nvidia_imex", "tasks_from": "configure"},
         # each tray's own unit drop-in and record, as on separate hosts (the drop-in names the tray's files)
         "vars": {"__nvidia_imex_loaded_record_dropin": "{{ playbook_dir }}/{{ inventory_hostname }}/dropin.conf",
                  "__nvidia_imex_loaded_record": "{{ playbook_dir }}/{{ inventory_hostname }}/loaded.sha256"}}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    return workdir


def run(workdir, *extra: str, playbook: str = "play.yml") -> tuple[int, str]:
    env = {"ANSIBLE_CACHE_PLUGIN": "jsonfile", "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(workdir / "facts"),
           "ANSIBLE_LIBRARY": str(workdir / "library")}
    fixture = {"__nvidia_imex_not_installed_in_check": True}
    if playbook.startswith("gpufabric.cluster."):
        arguments = [playbook, "-e", f"gpufabric_report_dir={workdir / 'reports'}"]
    else:
        arguments = [str(workdir / playbook), "-e", json.dumps(fixture)]
    completed = ansible_playbook(["-i", str(workdir / "hosts.yml"), *arguments, *extra], workdir, env=env)
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


def recap(output: str) -> dict[str, str]:
    return dict(re.findall(r"(tray-\d+)\s+: (ok=\d+ changed=\d+ unreachable=\d+ failed=\d+)", output))


def test_a_run_limited_to_one_tray_writes_the_whole_domain_and_changes_nothing_once_converged(tmp_path, tray_facts,
                                                                                              host_trees):
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=tuple(TRAYS))
    returncode, output = run(site)
    assert returncode == 0, output[-3000:]
    files = {name: (site / name / "nodes_config.cfg").read_text() for name in TRAYS}
    assert files == dict.fromkeys(TRAYS, WHOLE_DOMAIN), output[-3000:]

    # the usual way to re-run one tray: the others are outside the play, known by their (cached) facts
    returncode, output = run(site, "--limit", "tray-02")
    assert returncode == 0, output[-3000:]
    assert list(recap(output)) == ["tray-02"], output[-3000:]
    changed = re.findall(r"TASK \[([^\]]*)\] \** (?:[^*]*? )?changed: \[tray-02\]", output)
    assert re.fullmatch(r"ok=\d+ changed=0 unreachable=0 failed=0", recap(output)["tray-02"]), changed
    assert (site / "tray-02" / "nodes_config.cfg").read_text() == WHOLE_DOMAIN


def test_a_tray_alone_writes_the_nodes_file_of_its_whole_domain(tmp_path, tray_facts, host_trees):
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=tuple(TRAYS))
    returncode, output = run(site, "--limit", "tray-03")
    assert returncode == 0, output[-3000:]
    assert (site / "tray-03" / "nodes_config.cfg").read_text() == WHOLE_DOMAIN
    assert not (site / "tray-01" / "nodes_config.cfg").exists()  # nothing outside the play is written


def test_a_member_without_facts_is_probed_once_delegated_and_its_facts_kept(tmp_path, tray_facts, host_trees):
    """tray-03 has no cached facts: the role probes it from the run (delegated), and decides with what it found. The
    real probe on a recorded tree cannot read NVML, so tray-03 reports no clique and is no member here."""
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=("tray-01", "tray-02"))
    returncode, output = run(site, "--limit", "tray-02")
    assert returncode == 0, output[-3000:]
    probes = re.findall(r"TASK \[gpufabric.cluster._fabric_facts : Gather the fabric facts of (tray-\d+)\] \** "
                        r"ok: \[tray-02 -> (tray-\d+)\]", output)
    assert probes == [("tray-03", "tray-03")], output[-3000:]
    assert (site / "tray-02" / "nodes_config.cfg").read_text() == "10.0.0.2\n10.0.0.11\n"


def test_a_member_without_facts_that_cannot_be_reached_is_refused_by_name_before_any_change(tmp_path, tray_facts,
                                                                                            host_trees):
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=("tray-01", "tray-02"),
                     unreachable=("tray-03",))
    returncode, output = run(site, "--limit", "tray-02")
    assert returncode == 2, output[-3000:]
    assert ("IMEX domain membership: no fabric facts of tray-03 of nvidia_imex_fleet (unreachable, or the probe "
            "failed); any of this run's IMEX domains") in output, output[-3000:]
    assert "set nvidia_imex_domains, or leave them out of nvidia_imex_fleet" in output
    assert "TASK [gpufabric.cluster.nvidia_imex : Render" not in output
    assert not (site / "tray-02" / "nodes_config.cfg").exists()
    assert not (site / "tray-02" / "config.cfg").exists()


def test_the_preflight_of_a_limited_run_probes_exactly_the_fleet_hosts_it_lacks_and_records_the_peers(
        tmp_path, tray_facts, host_trees):
    """The preflight judges whole IMEX domains: the GPU hosts outside the play whose facts nothing holds are probed
    once, delegated (tray-01's come from the cache, tray-03 cannot be reached), and the report says which hosts it
    judged as members outside the run. (The play's tray is probed for real on its recorded tree, where NVML cannot
    tell its clique, so here it is in no domain; the judgement of a whole domain is tested on the filters.)"""
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=("tray-01",), unreachable=("tray-03",))
    returncode, output = run(site, "--limit", "tray-02", playbook="gpufabric.cluster.preflight")
    assert returncode == 0, output[-3000:]
    probes = re.findall(r"TASK \[gpufabric.cluster._fabric_facts : Gather the fabric facts of (tray-\d+)\] \** "
                        r"\[ERROR\].*? fatal: \[tray-02 -> (tray-\d+)\]: UNREACHABLE", output)
    assert probes == [("tray-03", "tray-03")], output[-3000:]
    assert "Gather the fabric facts of tray-01" not in output
    report = json.loads((site / "reports" / "preflight.json").read_text())
    assert report["imex_domain_peers"] == {"members": [], "unknown": []}
    assert sorted(report["hosts"]) == ["tray-02"]


@pytest.mark.parametrize(("check", "plan", "refused"), [
    (True, None, "the NVIDIA driver (570.172.08, ansible_facts['gpufabric']['gpu']['driver_version']) is older"),
    (True, {"action": "install", "branch": "580", "version": ""}, None),
    (True, {"action": "install", "branch": "575", "version": "575.0.9"},
     "the NVIDIA driver (575.0.9, which nvidia_driver would install in this run (check mode)) is older"),
    (True, {"action": "install", "branch": "575", "version": ""},
     "the NVIDIA driver (branch 575, which nvidia_driver would install in this run (check mode)) is older"),
    (True, {"action": "present", "branch": "580", "version": ""}, "the NVIDIA driver (570.172.08, ansible_facts"),
    (False, {"action": "install", "branch": "580", "version": ""}, "the NVIDIA driver (570.172.08, ansible_facts"),
    # what -e can pass instead of a mapping: not a plan, so the loaded driver is judged
    (True, "install", "the NVIDIA driver (570.172.08, ansible_facts"),
    (True, "", "the NVIDIA driver (570.172.08, ansible_facts"),
])
def test_check_mode_judges_the_driver_that_nvidia_driver_would_install(tmp_path, tray_facts, host_trees, check, plan,
                                                                       refused):
    """Issue 45: --check of a site run over trays whose driver nvidia_driver installs failed every tray, judged
    against the loaded driver that run replaces. In check mode nvidia_imex now judges nvidia_driver_plan (what the
    driver role publishes); outside check mode, or when the driver role installs nothing, the loaded driver."""
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=tuple(TRAYS))
    play = [{"name": "IMEX", "hosts": "gpu_nodes", "gather_facts": False, "tasks": [
        {"name": "Check the input", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.nvidia_imex", "tasks_from": "validate"}}]}]
    (site / "validate.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    variables = {"nvidia_imex_mode": "dra", "nvidia_imex_dra_min_driver_version": "575.1.1"}
    if plan is not None:
        variables["nvidia_driver_plan"] = plan
    returncode, output = run(site, "--limit", "tray-01", "-e", json.dumps(variables), *(["--check"] if check else []),
                             playbook="validate.yml")
    if refused is None:
        assert returncode == 0, output[-3000:]
    else:
        assert returncode == 2, output[-3000:]
        assert f"host tray-01: nvidia_imex_mode is dra but {refused}" in output, output[-3000:]
        assert "nvidia_imex_dra_min_driver_version 575.1.1, the minimum for ComputeDomains" in output


def test_the_driver_role_publishes_what_it_would_install(tmp_path, tray_facts, host_trees):
    """The other half: nvidia_driver's own decision (tasks/validate.yml) is published as nvidia_driver_plan, in check
    mode too; the recorded tray runs 570.172.08, the role's default branch is newer, so it would install."""
    site = make_site(tmp_path, tray_facts, host_trees["gb200_tray"], cached=tuple(TRAYS))
    play = [{"name": "Driver", "hosts": "gpu_nodes", "gather_facts": True, "tasks": [
        {"name": "Load the variables of this OS", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._os_vars", "tasks_from": "load"}, "vars": {"_os_vars_role": "nvidia_driver"}},
        {"name": "Decide", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.nvidia_driver", "tasks_from": "validate"}},
        {"name": "Show the plan", "ansible.builtin.debug": {"msg": "PLAN {{ nvidia_driver_plan | to_json }}"}}]}]
    (site / "driver.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    returncode, output = run(site, "--limit", "tray-01", "--check", "-e", '{"nvidia_driver_branch": "580"}',
                             playbook="driver.yml")
    assert returncode == 0, output[-3000:]
    assert '"msg": "PLAN {\\"action\\": \\"install\\", \\"branch\\": \\"580\\", \\"version\\": \\"\\"}"' in output, \
        output[-3000:]
