# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 44 item 3: the playbooks run through ansible-runner as the automation platform runs a sliced job.

AWX slices the inventory itself: ``Inventory.get_script_data`` (awx/main/models/inventory.py) orders the hosts by name
and hands slice k of N the hosts ``[k-1::N]`` (``get_sliced_hosts``), with the groups holding only those, in an
inventory script it writes into the job's private data directory (``BaseTask.write_inventory_file``,
awx/main/tasks/jobs.py); a job with fact caching gets ``fact_cache_type: jsonfile`` and a fact cache holding only
the slice's hosts (``Job.get_hosts_for_fact_cache``, awx/main/models/jobs.py; ``start_fact_cache``,
awx/main/tasks/facts.py).

Two recorded racks (6 trays each, one IMEX domain each) in 3 slices, so every slice holds 2 trays of every rack.
With one fact cache shared by the runs (the facts job's, unsliced, first), the preflight's domain verdicts and host
verdicts (what the site gate decides from) and the nodes files nvidia_imex writes are the same in every slice as in
the unsliced run; with a fact cache as AWX gives a slice (its own hosts only), both domains are refused by name,
and no nodes file is written.  Before the fix each slice judged and wrote its domains from its 2 trays of each
rack (the nodes files listed 2 addresses).

TEST FIXTURES: every tray is a copy of one recorded GB200 tree with its own NVML recording (its rack's cluster UUID,
chassis serial and its slot), which the probe reads through ``recorded_nvml_site`` (see there); the nodes-file play
runs the role's own validate and configure steps with the files under each tray's directory, as
test_imex_membership_playbook.py does (no package repository or systemd here).  About 150 s on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import ansible_runner
import pytest
import yaml
from fixtures import build_trees

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import COLLECTIONS_PATH

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(os.path.dirname(HERE))
RACKS = 2
# Six trays a rack, not an NVL72's 18: nothing here depends on the count, and each tray costs the run about 5 s.
TRAYS_PER_RACK = 6
SLICES = 3
CLUSTER_UUIDS = {1: "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21", 2: "7d2b6a3f-0c8e-4d3b-9f70-2e1c8b0d5f32"}


def tray_name(rack: int, tray: int) -> str:
    return f"rack{rack:02d}-tray{tray:02d}"


def address(rack: int, tray: int) -> str:
    return f"10.0.{rack}.{10 + tray}"


def build_racks(workdir) -> dict[str, dict]:
    """The trays (links to one recorded tree, each with its rack's NVML recording) and their host vars."""
    source = build_trees.build_tree("gb200_tray", str(workdir / "source"))
    with open(source + ".nvml.json", encoding="utf-8") as handle:
        recording = json.load(handle)
    (workdir / "trays").mkdir()
    hostvars = {}
    for rack in range(1, RACKS + 1):
        for tray in range(1, TRAYS_PER_RACK + 1):
            name = tray_name(rack, tray)
            root = workdir / "trays" / name
            shutil.copytree(source, root, symlinks=True)
            own = json.loads(json.dumps(recording))
            for device in own["devices"]:
                device["fabric"]["cluster_uuid"] = CLUSTER_UUIDS[rack]
                device["platform"]["chassis_serial_number"] = f"18231{rack:08d}".encode().ljust(16, b"\0").hex()
                device["platform"]["slot_number"] = tray
                device["platform"]["tray_index"] = tray
            (workdir / "trays" / f"{name}.nvml.json").write_text(json.dumps(own))
            hostvars[name] = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                              "gpufabric_probe_root": str(root), "gpufabric_imex_address": address(rack, tray)}
    return hostvars


def script_data(hostvars: dict[str, dict], slice_number: int = 1, slice_count: int = 1) -> dict:
    """The inventory AWX's ``Inventory.get_script_data`` gives slice ``slice_number`` of ``slice_count``."""
    hosts = sorted(hostvars)
    if slice_count > 1:
        hosts = hosts[slice_number - 1::slice_count]
    return {"all": {"hosts": [], "children": ["gpu_nodes"]}, "gpu_nodes": {"hosts": hosts},
            "_meta": {"hostvars": {name: hostvars[name] for name in hosts}}}


NODES_PLAY = [{"name": "IMEX nodes files", "hosts": "gpu_nodes", "gather_facts": False, "tasks": [
    {"name": "Check the input and derive the domains", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster.nvidia_imex", "tasks_from": "validate"}},
    {"name": "Render config.cfg and the nodes file", "ansible.builtin.include_role": {
        "name": "gpufabric.cluster.nvidia_imex", "tasks_from": "configure"},
     "vars": {"__nvidia_imex_loaded_record_dropin": "{{ slice_test_files }}/{{ inventory_hostname }}/dropin.conf",
              "__nvidia_imex_loaded_record": "{{ slice_test_files }}/{{ inventory_hostname }}/loaded.sha256"}}]}]


def run_job(workdir, label: str, playbook: str, inventory: dict, cache, extravars: dict | None = None):
    """One job as the platform runs it: its private data directory with the inventory script, ansible-runner with a
    jsonfile fact cache at ``cache``; returns the runner and its artifacts directory."""
    private = workdir / label
    (private / "inventory").mkdir(parents=True)
    (private / "project").mkdir()
    script = private / "inventory" / "hosts"
    script.write_text(f"#! /usr/bin/env python3\n# -*- coding: utf-8 -*-\nprint({json.dumps(inventory)!r})\n")
    script.chmod(0o700)
    if not playbook.startswith("gpufabric.cluster."):
        (private / "project" / "play.yml").write_text(yaml.safe_dump(NODES_PLAY, sort_keys=False))
        playbook = "play.yml"
    files = workdir / "files" / label
    for name in inventory["_meta"]["hostvars"]:
        (files / name).mkdir(parents=True)
    variables = {"gpufabric_report_dir": str(private / "reports"), **(extravars or {})}
    if playbook == "play.yml":
        variables.update({"slice_test_files": str(files), "__nvidia_imex_not_installed_in_check": True,
                          "nvidia_imex_config_file": str(files) + "/{{ inventory_hostname }}/config.cfg",
                          "nvidia_imex_nodes_config_file": str(files) + "/{{ inventory_hostname }}/nodes_config.cfg"})
    environment = {"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS_PATH, "ANSIBLE_NOCOLOR": "1",
                   "ANSIBLE_LOCALHOST_WARNING": "false", "ANSIBLE_FORKS": "8",
                   "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
                   "PYTHONPATH": os.pathsep.join([os.path.join(HERE, "recorded_nvml_site"), TESTS,
                                                  COLLECTIONS_PATH])}
    runner = ansible_runner.run(private_data_dir=str(private), playbook=playbook, ident=label, quiet=True,
                                extravars=variables, envvars=environment, fact_cache_type="jsonfile",
                                fact_cache=str(cache))
    return runner, private / "artifacts" / label


def cache_file(directory, name: str):
    """The file of host ``name`` in a jsonfile fact cache (ansible-core 2.19 names it with a prefix, ``s1_<name>``)."""
    found = [path for path in directory.iterdir() if path.name == name or path.name.endswith("_" + name)]
    assert len(found) == 1, (name, sorted(path.name for path in directory.iterdir()))
    return found[0]


def untagged(value):
    """A value of ansible-core's cache payload without its tags (``{value, tags, __ansible_type}``)."""
    if isinstance(value, dict):
        if "__ansible_type" in value and "value" in value:
            return untagged(value["value"])
        return {key: untagged(item) for key, item in value.items()}
    if isinstance(value, list):
        return [untagged(item) for item in value]
    return value


def cached_facts(directory, name: str) -> dict:
    """The facts of host ``name`` a jsonfile fact cache holds (ansible-core 2.19: a JSON ``__payload__``)."""
    stored = json.loads(cache_file(directory, name).read_text())
    return untagged(json.loads(stored["__payload__"]) if "__payload__" in stored else stored)


def stdout(artifacts) -> str:
    return " ".join((artifacts / "stdout").read_text().split())


def custom_stats(artifacts) -> dict:
    """The set_stats data of the run, from ansible-runner's job events."""
    for path in sorted((artifacts / "job_events").iterdir()):
        event = json.loads(path.read_text())
        if event.get("event") == "playbook_on_stats":
            return event["event_data"].get("artifact_data") or {}
    raise AssertionError(f"no playbook_on_stats event in {artifacts}")


def domain_verdicts(report: dict) -> list[dict]:
    keys = ("clique", "members", "status", "own_status", "expected_nodes", "problems", "notes", "member_problems")
    return [{key: domain.get(key) for key in keys} for domain in report["imex_domains"]]


def nodes_files(workdir, label: str) -> dict[str, str]:
    found = {}
    for path in sorted((workdir / "files" / label).glob("*/nodes_config.cfg")):
        found[path.parent.name] = path.read_text()
    return found


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """The two racks, and the unsliced facts job over them that fills the shared fact cache."""
    workdir = tmp_path_factory.mktemp("sliced")
    hostvars = build_racks(workdir)
    shared = workdir / "shared_fact_cache"
    runner, artifacts = run_job(workdir, "unsliced-preflight", "gpufabric.cluster.preflight", script_data(hostvars),
                                shared)
    assert runner.rc == 0, stdout(artifacts)[-4000:]
    report = json.loads((workdir / "unsliced-preflight" / "reports" / "preflight.json").read_text())
    return {"workdir": workdir, "hostvars": hostvars, "shared": shared, "report": report,
            "stats": custom_stats(artifacts)}


def test_the_unsliced_run_judges_both_racks_whole(fleet):
    domains = fleet["report"]["imex_domains"]
    assert [len(domain["members"]) for domain in domains] == [TRAYS_PER_RACK] * RACKS
    assert [len(domain["expected_nodes"]) for domain in domains] == [TRAYS_PER_RACK] * RACKS
    assert fleet["stats"]["gpufabric_stats"]["preflight"]["hosts"] == RACKS * TRAYS_PER_RACK
    assert [domain["expected_nodes"] for domain in domains] == [
        [address(rack, tray) for tray in range(1, TRAYS_PER_RACK + 1)] for rack in range(1, RACKS + 1)]
    cached = cached_facts(fleet["shared"], tray_name(1, 1))
    assert sorted(cached["gpufabric_imex_membership"]["members"]) == \
        [tray_name(1, tray) for tray in range(1, TRAYS_PER_RACK + 1)]


def test_every_slice_with_the_shared_fact_cache_judges_and_writes_what_the_unsliced_run_does(fleet):
    workdir, hostvars = fleet["workdir"], fleet["hostvars"]
    unsliced = fleet["report"]
    written = {}
    for number in range(1, SLICES + 1):
        inventory = script_data(hostvars, number, SLICES)
        hosts = inventory["gpu_nodes"]["hosts"]
        assert len(hosts) == RACKS * TRAYS_PER_RACK // SLICES
        assert {name[:6] for name in hosts} == {"rack01", "rack02"}  # every slice holds part of every rack
        runner, artifacts = run_job(workdir, f"slice{number}-preflight", "gpufabric.cluster.preflight", inventory,
                                    fleet["shared"])
        assert runner.rc == 0, stdout(artifacts)[-4000:]
        report = json.loads((workdir / f"slice{number}-preflight" / "reports" / "preflight.json").read_text())
        assert domain_verdicts(report) == domain_verdicts(unsliced)
        for name in hosts:
            assert report["hosts"][name] == unsliced["hosts"][name], name
        stats = custom_stats(artifacts)["gpufabric_stats"]["preflight"]
        assert stats["ready"] == unsliced["summary"]["ready"]
        assert runner.stats["ok"].keys() >= set(hosts)
        runner, nodes = run_job(workdir, f"slice{number}-nodes", "play", inventory, fleet["shared"])
        assert runner.rc == 0, stdout(nodes)[-4000:]
        written.update(nodes_files(workdir, f"slice{number}-nodes"))
    # the nodes file of every tray lists its whole rack (unsliced, the role writes that: test_imex_membership_playbook)
    assert written == {tray_name(rack, tray): "".join(address(rack, member) + "\n"
                                                      for member in range(1, TRAYS_PER_RACK + 1))
                       for rack in range(1, RACKS + 1) for tray in range(1, TRAYS_PER_RACK + 1)}


def test_a_slice_whose_fact_cache_holds_only_its_own_hosts_refuses_both_domains_by_name(fleet):
    """As AWX gives a sliced job its fact cache: the facts of the slice's hosts alone (start_fact_cache writes those
    of Job.get_hosts_for_fact_cache, sliced)."""
    workdir, hostvars = fleet["workdir"], fleet["hostvars"]
    inventory = script_data(hostvars, 1, SLICES)
    hosts = inventory["gpu_nodes"]["hosts"]
    own_cache = workdir / "slice1-own-cache"
    own_cache.mkdir()
    for name in hosts:
        source = cache_file(fleet["shared"], name)
        shutil.copyfile(source, own_cache / source.name)
    runner, artifacts = run_job(workdir, "slice1-awx-preflight", "gpufabric.cluster.preflight", inventory, own_cache)
    assert runner.rc == 0, stdout(artifacts)[-4000:]
    report = json.loads((workdir / "slice1-awx-preflight" / "reports" / "preflight.json").read_text())
    for rack, domain in zip(range(1, RACKS + 1), report["imex_domains"], strict=True):
        lacking = [tray_name(rack, tray) for tray in range(1, TRAYS_PER_RACK + 1) if tray_name(rack, tray) not in hosts]
        assert domain["status"] == "fail"
        assert domain["expected_nodes"] is None
        assert f"no facts of its member(s) {', '.join(lacking)}, recorded" in domain["problems"][0]
    stats = custom_stats(artifacts)["gpufabric_stats"]["preflight"]
    assert stats["ready"] is False
    assert sorted(stats["failed_hosts"]) == sorted(hosts)

    runner, nodes = run_job(workdir, "slice1-awx-nodes", "play", inventory, own_cache)
    assert runner.rc == 2, stdout(nodes)[-4000:]
    output = stdout(nodes)
    assert f"IMEX domain {CLUSTER_UUIDS[1]}." in output and "no facts of its member(s) rack01-tray02" in output
    assert nodes_files(workdir, "slice1-awx-nodes") == {}


def test_a_refused_domain_leaves_the_slices_other_domain_written_whole(fleet):
    """A cache holding the slice's hosts and every member of rack 2 but not rack 1's: nvidia_imex refuses rack 1's
    domain on its trays, by name, and writes rack 2's nodes files whole; the refusal is the domain's, not the run's."""
    workdir, hostvars = fleet["workdir"], fleet["hostvars"]
    inventory = script_data(hostvars, 1, SLICES)
    hosts = inventory["gpu_nodes"]["hosts"]
    cache = workdir / "slice1-rack2-cache"
    cache.mkdir()
    for name in {*hosts, *(tray_name(2, tray) for tray in range(1, TRAYS_PER_RACK + 1))}:
        source = cache_file(fleet["shared"], name)
        shutil.copyfile(source, cache / source.name)
    runner, nodes = run_job(workdir, "slice1-rack2-nodes", "play", inventory, cache)
    assert runner.rc == 2, stdout(nodes)[-4000:]
    output = stdout(nodes)
    lacking = [tray_name(1, tray) for tray in range(1, TRAYS_PER_RACK + 1) if tray_name(1, tray) not in hosts]
    assert f"IMEX domain {CLUSTER_UUIDS[1]}.1: no facts of its member(s) {', '.join(lacking)}" in output
    assert sorted(runner.stats["failures"]) == sorted(name for name in hosts if name.startswith("rack01"))
    assert nodes_files(workdir, "slice1-rack2-nodes") == {
        name: "".join(address(2, member) + "\n" for member in range(1, TRAYS_PER_RACK + 1))
        for name in hosts if name.startswith("rack02")}
