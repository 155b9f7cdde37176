# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml run by ansible-playbook over local hosts that read recorded trees: the preflight gate, the summary,
the phase tags, and the change_summary callback.

Only the preflight and host phases run here (no host role: they change a machine; molecule tests them on
containers), with every host a GPU host, so the gate decides from the trees: the HGX H100 tree passes with a
warning (no NVML), the broken node fails checks the host roles repair (driver, IMEX, RDMA), the plain server has no
NVIDIA hardware.
"""

from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import (
    ansible_playbook,
    write_local_hosts_inventory,
)


@pytest.fixture(scope="module")
def fleet(host_trees, tmp_path_factory):
    """An inventory of three local GPU hosts, each probing its own recorded tree."""
    return write_local_hosts_inventory(tmp_path_factory.mktemp("site"), host_trees,
                                       {"hgx": "hgx_h100", "broken": "broken_node", "plain": "no_nvidia"}, "gpu_nodes")


def run_site(workdir, name, *extra):
    reports = workdir / name
    completed = ansible_playbook(["-i", str(workdir / "hosts.yml"), "gpufabric.cluster.site", "--tags",
                                  "preflight,hosts", "-e", f"gpufabric_report_dir={reports}", "-e",
                                  '{"gpufabric_host_roles": []}', *extra], workdir,
                                 env={"ANSIBLE_CALLBACKS_ENABLED": "gpufabric.cluster.change_summary",
                                      "GPUFABRIC_REPORT_DIR": str(reports)})
    summary = json.loads((reports / "site-summary.json").read_text())
    return completed, summary, reports


def test_gate_excludes_the_host_without_hardware_and_names_it(fleet):
    completed, summary, reports = run_site(fleet, "default-gate")
    assert completed.returncode == 2, completed.stdout
    assert summary["result"] == "fail"
    assert summary["preflight"]["status"] == {"hgx": "warn", "broken": "fail", "plain": "no_hardware"}
    assert summary["excluded_hosts"] == {"plain": ["no NVIDIA GPU or ConnectX port found"]}
    assert summary["failed_hosts"] == {}
    # the broken node's failures (driver not loaded, IMEX, RDMA) are what the host roles repair: it goes on
    assert sorted(summary["converged_hosts"]) == ["broken", "hgx"]
    assert summary["cluster_failure"] is None and summary["validation_ran"] is False
    markdown = (reports / "site-summary.md").read_text()
    assert "| plain | no_hardware | excluded: no NVIDIA GPU or ConnectX port found |" in markdown
    assert "site run incomplete: excluded plain; failed none" in completed.stdout
    assert (reports / "preflight.json").is_file()


def test_the_preflight_verdict_and_the_site_result_are_job_data(fleet):
    """Issue 44: set_stats returns the preflight's verdict and the site's result under one key, merged, for the
    automation platform's job data (the json callback shows what ansible-runner records)."""
    reports = fleet / "job-data"
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "--tags", "preflight,hosts",
                                  "-e", f"gpufabric_report_dir={reports}", "-e", '{"gpufabric_host_roles": []}'],
                                 fleet, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                             "ANSIBLE_SHOW_CUSTOM_STATS": "true"})
    assert completed.returncode == 2
    stats = json.loads(completed.stdout)["global_custom_stats"]["gpufabric_stats"]
    assert stats["preflight"]["failed_hosts"] == ["broken"] and stats["preflight"]["ready"] is False
    assert stats["site"] == {"result": "fail", "excluded_hosts": ["plain"], "failed_hosts": [],
                             "converged_hosts": ["broken", "hgx"], "cluster_failed": False, "validation_failures": 0,
                             "report": f"{reports}/site-summary.md"}


def test_gate_on_every_check_excludes_the_broken_node_with_its_reasons(fleet):
    _completed, summary, _reports = run_site(fleet, "strict-gate", "-e", '{"gpufabric_site_gate_checks": ["all"]}')
    assert sorted(summary["excluded_hosts"]) == ["broken", "plain"]
    assert any("driver" in reason for reason in summary["excluded_hosts"]["broken"])
    assert summary["converged_hosts"] == ["hgx"]


def test_a_host_lost_in_the_preflight_is_named_and_kept_out(fleet, tmp_path):
    inventory = yaml.safe_load((fleet / "hosts.yml").read_text())
    inventory["all"]["children"]["gpu_nodes"]["hosts"]["hgx"]["ansible_python_interpreter"] = "/nonexistent/python"
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed, summary, _reports = run_site(tmp_path, "lost")
    assert completed.returncode == 2
    assert summary["failed_hosts"] == {"hgx": "failed or unreachable in the preflight phase"}
    assert "hgx" not in summary["converged_hosts"]


def test_only_the_host_phase_still_gates_from_fresh_facts(fleet):
    """--tags hosts skips the preflight tasks, not its fact gathering: the gate still decides."""
    reports = fleet / "hosts-only"
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "--tags", "hosts", "-e",
                                  f"gpufabric_report_dir={reports}", "-e", '{"gpufabric_host_roles": []}'], fleet)
    summary = json.loads((reports / "site-summary.json").read_text())
    assert "TASK [Judge readiness of every host]" not in completed.stdout
    # the report is still written once, after the host phase, from the facts gathered again there
    assert "TASK [Write the preflight report as JSON, Markdown and HTML]" in completed.stdout
    assert json.loads((reports / "preflight.json").read_text())["hosts"]["plain"]["status"] == "no_hardware"
    assert summary["excluded_hosts"] == {"plain": ["no NVIDIA GPU or ConnectX port found"]}


def test_change_summary_callback_lists_changes_and_failures_per_play(fleet):
    completed, _summary, reports = run_site(fleet, "callback")
    assert "GPUFABRIC CHANGE SUMMARY" in completed.stdout
    ledger = json.loads((reports / "change-summary.json").read_text())
    plays = {play["play"]: play for play in ledger["plays"]}
    assert plays["Site summary"]["failed"]["localhost"]["task"] == (
        "Fail when a host was excluded, a host or a phase failed")
    assert "Write site-summary.json and site-summary.md" in plays["Site summary"]["changed"]["localhost"]
    assert ledger["hosts_failed"] == ["localhost"]


def test_unknown_host_role_fails_naming_the_variable_and_host(fleet):
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.hosts", "--limit", "hgx", "-e",
                                  '{"gpufabric_host_roles": ["nvidia_drvier"]}'], fleet)
    assert completed.returncode == 2
    output = " ".join(completed.stdout.split())
    assert ("host hgx: gpufabric_host_roles must list only nvidia_driver, doca_ofed, nvidia_peermem, nvidia_imex, "
            "rdma_network, got 'nvidia_drvier'") in output


def test_check_mode_writes_no_report_and_points_at_none(fleet):
    reports = fleet / "check-mode"
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "--check", "--tags",
                                  "preflight,hosts", "-e", f"gpufabric_report_dir={reports}", "-e",
                                  '{"gpufabric_host_roles": []}'], fleet)
    output = " ".join(completed.stdout.split())
    assert completed.returncode == 2, completed.stdout
    assert not reports.exists()
    assert f"Check mode - would write {reports}/site-summary.json and site-summary.md; nothing is written" in output
    assert "No report written (check mode)." in output
    assert f"See {reports}/site-summary.md" not in output


def test_a_truncated_or_empty_summary_from_an_earlier_run_is_written_whole_again(fleet):
    """An interrupted run can leave site-summary.json cut short; the next run replaces it, and the .md with it."""
    _completed, first, reports = run_site(fleet, "truncated")
    text = (reports / "site-summary.json").read_text()
    (reports / "site-summary.json").write_text(text[: len(text) // 2])
    (reports / "site-summary.md").write_text("")
    _completed, again, reports = run_site(fleet, "truncated")
    # the same summary, but for its time: the file was rewritten, so it says when
    assert {**again, "generated_at": None} == {**first, "generated_at": None}
    assert again["generated_at"] >= first["generated_at"]
    assert (reports / "site-summary.json").read_text() == text.replace(first["generated_at"], again["generated_at"])
    assert (reports / "site-summary.md").read_text().strip()


def test_a_second_run_with_the_same_outcome_leaves_the_summary_and_its_time_as_they_were(fleet):
    """The reports carry their time (issue 45), yet an unchanged outcome rewrites nothing: the time is left out of
    the comparison with the file on disk, so the files keep the time they were first written with."""
    _completed, first, reports = run_site(fleet, "same-outcome")
    names = ("site-summary.json", "site-summary.md", "preflight.json", "preflight.md", "preflight.html")
    written = {name: (reports / name).stat().st_ino for name in names}
    completed, again, _reports = run_site(fleet, "same-outcome")
    assert again == first
    assert {name: (reports / name).stat().st_ino for name in written} == written
    for task in ("Write site-summary.json and site-summary.md",
                 "Write the preflight report as JSON, Markdown and HTML"):
        said = completed.stdout.split(f"TASK [{task}]")[1].split("TASK [")[0]
        assert "ok: [" in said and "changed:" not in said, said


@pytest.mark.parametrize(("on_controller", "refused"), [(None, True), ("false", True), ("true", False)])
def test_a_local_host_probing_a_recorded_tree_is_not_changed_unless_the_controller_is_meant(
        fleet, on_controller, refused):
    """Issue 45: a local host with a probe root (the documented way to try recorded trees) had the host phase install
    and configure on the controller itself; it is refused, naming the host, unless the setting says so (its string
    "false" from -e refuses too). Check mode and one role: with the setting true the roles go on, in check mode."""
    extra = ["-e", f"gpufabric_host_phase_on_controller={on_controller}"] if on_controller else []
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.hosts", "--check",
                                  "--limit", "hgx", "-e", '{"gpufabric_host_roles": ["nvidia_peermem"]}', *extra],
                                 fleet)
    output = " ".join(completed.stdout.split())
    said = ("host hgx: the host phase would change this controller: the host's connection is local and "
            'gpufabric_probe_root is \\"')
    assert (said in output) is refused, output[-3000:]
    if refused:
        assert completed.returncode == 2
        assert "TASK [gpufabric.cluster.nvidia_peermem" not in output
    else:
        assert "TASK [gpufabric.cluster.nvidia_peermem" in output


def test_the_summary_is_written_when_every_host_fails_in_the_host_phase(fleet):
    """Issue 45: Ansible ends a playbook whose play lost every host, so a host phase in which every host failed ended
    site.yml before its summary. Here every host fails there (local hosts probing recorded trees, refused by the
    host phase): the summary is written, names each host with the step and the reason, and the run fails at the end."""
    completed, summary, reports = run_site(fleet, "every-host-fails", "-e",
                                           '{"gpufabric_host_roles": ["nvidia_peermem"]}')
    assert completed.returncode == 2, completed.stdout[-3000:]
    assert summary["result"] == "fail"
    assert summary["converged_hosts"] == []
    assert sorted(summary["failed_hosts"]) == ["broken", "hgx"]
    for host in ("broken", "hgx"):
        assert summary["failed_hosts"][host].startswith(
            "failed in the host phase: Refuse a local host that probes a recorded tree, unless the controller is "
            f"meant: host {host}: the host phase would change this controller"), summary["failed_hosts"][host]
    assert "TASK [gpufabric.cluster.nvidia_peermem" not in completed.stdout
    assert (reports / "site-summary.md").read_text().strip()


def test_a_missing_helm_stops_the_site_run_before_any_host_is_probed(fleet):
    """Issue 45: a missing helm was found when the cluster phase started, after the host phase (hours on real
    hardware), as "chart source not usable ... Error executing command."; site.yml checks it in its first play."""
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "-e",
                                  f"gpufabric_report_dir={fleet / 'no-helm'}", "-e",
                                  '{"gpufabric_host_roles": [], "gpufabric_cluster_roles": ["gpu_operator"], '
                                  '"gpu_operator_helm_binary": "/nonexistent/bin/helm"}'], fleet)
    output = " ".join(completed.stdout.split())
    assert completed.returncode == 2, output[-3000:]
    assert ("gpu_operator: helm not found on the controller: /nonexistent/bin/helm (gpu_operator_helm_binary, empty: "
            "helm on the PATH); install helm 3 on the controller or set gpu_operator_helm_binary to its path") in output
    assert "TASK [Gather the GPU fabric facts of every host]" not in output
    assert "Error executing command" not in output


def site_with_kubeconfig(fleet, fake_helm, tmp_path, content: str):
    """A site run whose one cluster role reads a kubeconfig file holding ``content``: (path, result, output)."""
    fake_helm.configure({"name": "gpu-operator", "version": "v26.7.0"})
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(content)
    variables = {"gpufabric_host_roles": [], "gpufabric_cluster_roles": ["gpu_operator"],
                 "gpufabric_kubeconfig": str(kubeconfig), "gpu_operator_helm_binary": str(fake_helm.path)}
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "-e",
                                  f"gpufabric_report_dir={tmp_path / 'reports'}", "-e", json.dumps(variables)], fleet)
    return kubeconfig, completed, " ".join(completed.stdout.split())


def test_an_unreachable_cluster_stops_the_site_run_before_any_host_is_probed_naming_the_site_setting(
        fleet, fake_helm, tmp_path):
    """The kubeconfig the user set (gpufabric_kubeconfig) is named, not only the role's variable it defaults."""
    kubeconfig, completed, output = site_with_kubeconfig(fleet, fake_helm, tmp_path, yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}], "users": [{"name": "u", "user": {}}]}))
    assert completed.returncode == 2, output[-3000:]
    assert (f"gpu_operator: cannot use the Kubernetes API with gpu_operator_kubeconfig {kubeconfig} (set by "
            "gpufabric_kubeconfig) and gpu_operator_context (current): ") in output
    assert "TASK [Gather the GPU fabric facts of every host]" not in output


def test_a_run_without_the_cluster_phase_does_not_check_the_controller_for_it(fleet):
    completed, _summary, _reports = run_site(fleet, "no-cluster-check", "-e",
                                             '{"gpu_operator_helm_binary": "/nonexistent/bin/helm"}')
    assert "helm not found" not in completed.stdout
    assert "TASK [Gather the GPU fabric facts of every host]" in completed.stdout


@pytest.mark.parametrize(("become", "refused"), [(None, False), ("nobody", True)])
def test_the_host_phase_refuses_a_host_where_the_roles_would_not_be_root(fleet, tmp_path, become, refused):
    """Issue 45: nothing checked become before the host phase acted; a host reached as another user failed inside
    its first role. Here the host is reached as user nobody (su, which root may use without a password) or as this
    test's root; check mode and one role, with the controller meant (the host is local)."""
    inventory = yaml.safe_load((fleet / "hosts.yml").read_text())
    hgx = inventory["all"]["children"]["gpu_nodes"]["hosts"]["hgx"]
    hgx["ansible_python_interpreter"] = "/usr/bin/python3"
    if become:
        hgx.update({"ansible_become": True, "ansible_become_method": "su", "ansible_become_user": become,
                    "ansible_become_flags": "-s /bin/sh"})
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = ansible_playbook(["-i", str(tmp_path / "hosts.yml"), "gpufabric.cluster.hosts", "--check", "--limit",
                                  "hgx", "-e", '{"gpufabric_host_roles": ["nvidia_peermem"], '
                                  '"gpufabric_host_phase_on_controller": true}'], tmp_path,
                                 env={"ANSIBLE_PIPELINING": "true"})
    output = " ".join(completed.stdout.split())
    said = "host hgx: the host roles would act as user id 65534, not root: set ansible_become to true for the host"
    assert (said in output) is refused, output[-3000:]
    if refused:
        assert completed.returncode == 2
        assert "TASK [gpufabric.cluster.nvidia_peermem" not in output
    else:
        assert "TASK [gpufabric.cluster.nvidia_peermem" in output, output[-3000:]


@pytest.mark.parametrize("setting", ["gpufabric_defer_failures=false", '{"gpufabric_defer_failures": false}'])
def test_the_summary_is_written_when_the_user_passes_no_deferral_to_the_site_run(fleet, setting):
    """site.yml defers its phases' failures so that its summary is always written; a user's ``-e
    gpufabric_defer_failures=false`` (text from key=value, or a boolean from JSON) outranks the playbook's own vars, and
    ended the run with every host failed and no summary. The site run defers whatever that setting says."""
    completed, summary, _reports = run_site(fleet, "no-deferral-" + str(len(setting)), "-e",
                                            '{"gpufabric_host_roles": ["nvidia_peermem"]}', "-e", setting)
    assert completed.returncode == 2, completed.stdout[-3000:]
    assert sorted(summary["failed_hosts"]) == ["broken", "hgx"]
    assert summary["failed_hosts"]["hgx"].startswith("failed in the host phase: "), summary["failed_hosts"]


@pytest.mark.parametrize("content", ["", "\n", "apiVersion: v1\nkind: Config\n", "clusters: [", "- a\n- b\n"],
                         ids=["empty", "newline", "no-context", "truncated", "a-list"])
def test_a_kubeconfig_that_is_empty_or_no_kubeconfig_stops_the_site_run_naming_the_site_setting(
        fleet, fake_helm, tmp_path, content):
    """An empty, truncated or context-less kubeconfig file is found in the first play, named by the setting the user
    set, without the file's text and before any host is probed."""
    kubeconfig, completed, output = site_with_kubeconfig(fleet, fake_helm, tmp_path, content)
    assert completed.returncode == 2, output[-3000:]
    assert f"gpu_operator_kubeconfig {kubeconfig} (set by gpufabric_kubeconfig)" in output, output[-3000:]
    assert "TASK [Gather the GPU fabric facts of every host]" not in output
    if content.strip():
        assert content.strip() not in output


def _unreachable_inventory(workdir):
    """Two GPU hosts whose SSH port refuses the connection."""
    unreachable = {"ansible_host": "127.0.0.1", "ansible_port": 1, "ansible_connection": "ssh"}
    (workdir / "hosts.yml").write_text(yaml.safe_dump(
        {"all": {"children": {"gpu_nodes": {"hosts": {"tray1": unreachable, "tray2": unreachable}}}}}))
    return workdir / "hosts.yml"


def test_the_summary_is_written_when_every_host_is_unreachable(tmp_path):
    """Issue 45: Ansible ends a playbook whose play lost every host, so a site run in which no host could be reached
    ended in the preflight without a report or a summary. The site's preflight keeps such hosts in its play without
    facts: each is judged and excluded, named in the summary, and the run fails at the end."""
    inventory = _unreachable_inventory(tmp_path)
    reports = tmp_path / "reports"
    completed = ansible_playbook(["-i", str(inventory), "gpufabric.cluster.site", "--tags", "preflight,hosts", "-e",
                                  f"gpufabric_report_dir={reports}", "-e", '{"gpufabric_host_roles": []}'], tmp_path)
    assert completed.returncode == 2, completed.stdout[-3000:]
    summary = json.loads((reports / "site-summary.json").read_text())
    assert summary["result"] == "fail"
    for host in ("tray1", "tray2"):
        assert summary["excluded_hosts"][host] == [
            "no gpufabric facts were gathered (unreachable, or the probe failed)"], summary["excluded_hosts"]
    preflight = json.loads((reports / "preflight.json").read_text())
    assert preflight["hosts"]["tray1"]["status"] == "fail"


def test_the_preflight_run_alone_still_reports_an_unreachable_host_as_unreachable(tmp_path):
    """Only the site run keeps an unreachable host in its preflight: run alone, the preflight ends with Ansible's exit
    status for an unreachable host (4), as documented."""
    inventory = _unreachable_inventory(tmp_path)
    completed = ansible_playbook(["-i", str(inventory), "gpufabric.cluster.preflight", "-e",
                                  f"gpufabric_report_dir={tmp_path / 'reports'}"], tmp_path)
    assert completed.returncode == 4, completed.stdout[-3000:]
    assert "unreachable=1" in completed.stdout


def test_a_limit_without_localhost_is_refused_before_any_host_is_probed(fleet):
    """The site's settings check, cluster phase and summary run on localhost: ``--limit hgx`` skipped them all and the
    run ended green with no summary. It is refused naming the limit that works; with localhost in the limit the run
    goes on and writes its summary."""
    completed = ansible_playbook(["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.site", "--tags", "preflight",
                                  "--limit", "hgx", "-e", f"gpufabric_report_dir={fleet / 'limited'}"], fleet)
    output = " ".join(completed.stdout.split())
    assert completed.returncode == 2, output[-3000:]
    assert ("--limit hgx leaves out localhost, where site.yml checks the settings, runs the cluster phase and writes "
            "its summary: add it, --limit 'hgx,localhost'") in output
    assert "TASK [Gather the GPU fabric facts of every host]" not in output
    completed, summary, _reports = run_site(fleet, "limited-with-localhost", "--limit", "hgx,localhost")
    assert sorted(summary["preflight"]["status"]) == ["hgx"], completed.stdout[-3000:]
    assert summary["limit"] == "hgx,localhost"
