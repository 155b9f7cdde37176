# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight playbook run by ansible-playbook, as a user runs it, over hosts that read recorded trees.

NVML is not replayed here (the hosts are real processes reading trees, and NVML only describes
the running machine), so the GPU probe lists GPUs from PCI and says so; the rules that need NVML
answers are covered by the filter tests.
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import (
    ansible_playbook,
    local_hosts_inventory,
    write_local_hosts_inventory,
)


@pytest.fixture(scope="module")
def fleet(host_trees, tmp_path_factory):
    """An inventory of three local hosts, each probing its own recorded tree."""
    return write_local_hosts_inventory(tmp_path_factory.mktemp("preflight"), host_trees,
                                       {"hgx": "hgx_h100", "broken": "broken_node", "plain": "no_nvidia"})


def run_preflight(workdir, *extra, env=None):
    return ansible_playbook(["-i", str(workdir / "hosts.yml"), "gpufabric.cluster.preflight", "-e",
                             f"gpufabric_report_dir={workdir / 'reports'}", *extra], workdir, env=env)


def test_report_written_and_run_passes(fleet):
    completed = run_preflight(fleet)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads((fleet / "reports" / "preflight.json").read_text())
    statuses = {name: entry["status"] for name, entry in report["hosts"].items()}
    assert statuses == {"hgx": "warn", "broken": "fail", "plain": "no_hardware"}
    fabric = next(check for check in report["hosts"]["hgx"]["checks"] if check["name"] == "fabric")
    assert fabric["message"] == "fabric state is unknown: NVML was not usable, GPUs were listed from PCI"
    assert report["summary"]["failed_hosts"] == ["broken"]
    markdown = (fleet / "reports" / "preflight.md").read_text()
    assert "**NOT READY: broken**" in markdown
    page = (fleet / "reports" / "preflight.html").read_text()
    tiles = re.findall(r'<div class="tile (\w+)" id="host-\w+" data-host="(\w+)"', page)
    assert sorted(tiles) == [("fail", "broken"), ("no_hardware", "plain"), ("warn", "hgx")]
    assert "No IMEX domain" in page and 'class="validation"' not in page  # no validation.html in the directory
    assert "broken: FAIL - failed: driver, imex, rdma_ports, gpudirect_rdma" in completed.stdout
    assert "plain: NO_HARDWARE - no NVIDIA GPU or ConnectX port found" in completed.stdout
    # hgx reads a tree, so NVML is not used: the warning says so and the GPUs come from PCI
    assert "listing GPUs from PCI sysfs instead" in completed.stderr


def test_the_page_links_validation_html_when_the_report_directory_has_one_and_has_the_title_given(fleet, tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "validation.html").write_text("<!DOCTYPE html>")
    completed = run_preflight(fleet, "-e", f"gpufabric_report_dir={reports}",
                              "-e", "gpufabric_preflight_report_title='Rack <A17> readiness'")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    page = (reports / "preflight.html").read_text()
    assert '<a class="validation" href="validation.html">' in page
    assert '<h1>Rack &lt;A17&gt; readiness: <span class="fail">NOT READY</span></h1>' in page


def test_second_run_changes_nothing(fleet):
    run_preflight(fleet)
    completed = run_preflight(fleet)
    assert completed.returncode == 0
    recap = [line for line in completed.stdout.splitlines() if "changed=" in line]
    assert recap and all("changed=0" in line for line in recap), recap


def test_fail_switch_fails_only_the_broken_host(fleet):
    completed = run_preflight(fleet, "-e", "gpufabric_preflight_fail_on_error=true")
    assert completed.returncode == 2
    assert "broken failed preflight (failed: driver, imex, rdma_ports, gpudirect_rdma)" in completed.stdout
    recap = {line.split()[0]: line for line in completed.stdout.splitlines() if "failed=" in line}
    assert "failed=1" in recap["broken"]
    assert "failed=0" in recap["hgx"] and "failed=0" in recap["plain"]


def test_bad_variable_is_named(fleet):
    completed = run_preflight(fleet, "-e", '{"gpufabric_preflight_fail_on_error": "perhaps"}')
    assert completed.returncode != 0
    assert "gpufabric_preflight_fail_on_error" in completed.stdout


@pytest.mark.parametrize("extra, line", [
    ('{"gpufabric_imex_mode": "bogus"}',
     "gpufabric_imex_mode must be one of: host, dra, dra_host_managed, got 'bogus'"),
    ('{"gpufabric_preflight_settings": "fast"}',
     "gpufabric_preflight_settings must be a mapping of min_driver_version, rdma_min_rate_gbps, rdma_mtu, "
     "rdma_require_active, imex_domain_members, imex_domain_single_chassis, port_counter_thresholds, "
     "gpu_health_thresholds, got a string"),
    ('{"gpufabric_imex_address_family": "ipv5"}', "gpufabric_imex_address_family must be one of: ipv4, ipv6, got "
                                                  "'ipv5'"),
    ('{"gpufabric_preflight_report_title": ""}', "gpufabric_preflight_report_title is empty: leave it unset for its "
                                                 "default ('GPU fabric readiness') or set a value"),
])
def test_site_settings_checked_once_for_every_host_before_any_judgement(fleet, extra, line):
    """The site-wide settings are checked by one task on the controller, for every host, not once per host: an extra
    var is every host's value, so one line names them all (the hosts differ in their probe root)."""
    completed = run_preflight(fleet, "-e", extra)
    assert completed.returncode != 0
    output = " ".join(completed.stdout.split())
    assert f"hosts broken, hgx, plain, localhost: {line}" in output, output
    assert "Validating arguments against arg spec" not in output
    assert "Gather the GPU fabric facts of every host" not in output  # no host is probed with a bad setting
    assert "Judge readiness of every host" not in output
    assert len(re.findall(r"fatal: \[", output)) == 1, output


def test_fail_switch_given_as_the_string_false_fails_no_host(fleet):
    """-e passes "false" as a string: it must turn the switch off, not on."""
    completed = run_preflight(fleet, "-e", "gpufabric_preflight_fail_on_error=false")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "failed preflight" not in completed.stdout


def test_a_bad_value_two_hosts_share_is_named_once_for_both(host_trees, tmp_path):
    """Hosts with the same values are one group: one error line naming both, and the good host is not named."""
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "gpufabric_probe_root": host_trees["hgx_h100"]}
    inventory = {"all": {"hosts": {"left": {**host, "gpufabric_imex_address_family": "ipv5"},
                                   "right": {**host, "gpufabric_imex_address_family": "ipv5"},
                                   "good": dict(host)}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = run_preflight(tmp_path)
    assert completed.returncode != 0
    output = " ".join(completed.stdout.split())
    errors = re.findall(r"hosts? ((?:\w+, )*\w+): gpufabric_imex_address_family must be one of: ipv4, ipv6, got 'ipv5'",
                        output)
    assert set(errors) == {"left, right"}, output
    assert "Judge readiness of every host" not in output


@pytest.fixture(scope="module")
def fleet_with_empty_root(host_trees, tmp_path_factory):
    """A good host and one whose probe root is an empty directory: its probes read nothing."""
    workdir = tmp_path_factory.mktemp("preflight-empty")
    empty = workdir / "empty-root"
    empty.mkdir()
    hosts = {"hgx": host_trees["hgx_h100"], "empty": str(empty)}
    inventory = {"all": {"hosts": {
        name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
               "gpufabric_probe_root": root}
        for name, root in hosts.items()}}}
    (workdir / "hosts.yml").write_text(yaml.safe_dump(inventory))
    return workdir


def test_a_host_whose_probe_read_nothing_fails_and_trips_fail_on_error(fleet_with_empty_root):
    """On the starting commit the empty host was no_hardware, the verdict READY and fail_on_error passed."""
    completed = run_preflight(fleet_with_empty_root, "-e", "gpufabric_preflight_fail_on_error=true")
    assert completed.returncode == 2, completed.stdout + completed.stderr
    report = json.loads((fleet_with_empty_root / "reports" / "preflight.json").read_text())
    assert report["hosts"]["empty"]["status"] == "fail"
    assert report["summary"]["ready"] is False
    assert "empty" in report["summary"]["failed_hosts"]
    recap = {line.split()[0]: line for line in completed.stdout.splitlines() if "failed=" in line}
    assert "failed=1" in recap["empty"]
    assert "READY:" not in completed.stdout.replace("NOT READY:", "")


@pytest.mark.parametrize("fail_on_error", ["true", "false"])
def test_a_host_pattern_that_matches_no_host_fails_naming_the_groups(fleet, tmp_path, fail_on_error):
    """A pattern matching nothing (a misspelt group) judged nothing and ended green on the starting commit, and until
    issue 45 still did without fail_on_error; it fails either way now, naming the inventory's groups."""
    inventory = yaml.safe_load((fleet / "hosts.yml").read_text())
    inventory["all"]["children"] = {"gpu_nodes": {"hosts": {"hgx": None}}, "kube_control_plane": {"hosts": {"cp": {}}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = ansible_playbook(["-i", str(tmp_path / "hosts.yml"), "gpufabric.cluster.preflight",
                                  "-e", f"gpufabric_report_dir={tmp_path / 'reports'}",
                                  "-e", "gpufabric_preflight_hosts=gpu_nodes_typo",
                                  "-e", f"gpufabric_preflight_fail_on_error={fail_on_error}"], tmp_path)
    assert completed.returncode == 2, completed.stdout + completed.stderr
    output = " ".join(completed.stdout.split())
    assert ('gpufabric_preflight_hosts \\"gpu_nodes_typo\\" matches no host of the inventory, so nothing would be '
            "judged; the inventory's groups: gpu_nodes, kube_control_plane") in output, output
    assert "TASK [Gather the GPU fabric facts" not in output
    assert not (tmp_path / "reports").exists()


def test_check_mode_writes_nothing_and_says_so(fleet, tmp_path):
    completed = run_preflight(fleet, "--check", "-e", f"gpufabric_report_dir={tmp_path / 'reports'}")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert not (tmp_path / "reports").exists()
    assert f"Check mode: would write {tmp_path / 'reports'}/preflight.json, preflight.md and preflight.html " \
        "(3 host(s)); nothing is written" in completed.stdout
    assert f"Report not written (check mode); it would go to {tmp_path / 'reports'}/preflight.md" in completed.stdout
    assert "Report: " not in completed.stdout


def test_imported_elsewhere_it_reads_the_settings_spec(fleet, tmp_path):
    """The settings spec is read from the collection's role wherever the importing playbook lives."""
    (tmp_path / "elsewhere").mkdir()
    playbook = tmp_path / "elsewhere" / "bringup.yml"
    playbook.write_text("- ansible.builtin.import_playbook: gpufabric.cluster.preflight\n", encoding="utf-8")
    arguments = ["-i", str(fleet / "hosts.yml"), str(playbook), "-e", f"gpufabric_report_dir={tmp_path / 'reports'}"]
    good = ansible_playbook(arguments, tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert (tmp_path / "reports" / "preflight.json").is_file()
    bad = ansible_playbook([*arguments, "-e", '{"gpufabric_imex_mode": "bogus"}'], tmp_path)
    assert bad.returncode != 0
    assert "must be one of: host, dra, dra_host_managed" in " ".join(bad.stdout.split()), bad.stdout


def test_a_fact_cache_with_smart_gathering_does_not_hide_what_changed(host_trees, tmp_path):
    """Preflight probes every run: with `gathering = smart` and a fact cache the play's own gathering had judged the
    facts an earlier run left in the cache, so a host whose GPUs went away still passed."""
    cache = tmp_path / "facts"
    env = {"ANSIBLE_GATHERING": "smart", "ANSIBLE_CACHE_PLUGIN": "ansible.builtin.jsonfile",
           "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(cache), "ANSIBLE_CACHE_PLUGIN_TIMEOUT": "3600"}

    def judge(tree):
        inventory = {"all": {"hosts": {"node": {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "gpufabric_probe_root": host_trees[tree]}}}}
        (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
        completed = run_preflight(tmp_path, env=env)
        assert completed.returncode == 0, completed.stdout + completed.stderr
        return json.loads((tmp_path / "reports" / "preflight.json").read_text())["hosts"]["node"]["status"]

    assert judge("hgx_h100") == "warn"
    assert any(cache.iterdir()), "the fact cache was not written: the test would prove nothing"
    assert judge("no_nvidia") == "no_hardware"


def test_no_probed_text_in_the_output_at_vvv_or_the_reports(tree_builder, tmp_path):
    """Issue 39 item 1: a marker written into a nodes file, config.cfg settings, sysfs attributes, /proc files and the
    dpkg status file appears nowhere in the -vvv output of the run or in the reports it writes. On the starting commit
    the nodes file's invalid line was in the facts, the summary line and all three reports."""
    letters = "qxzjkQXZJKqxzjk"
    marker = f"%{letters}!"
    trays = {"tray": tree_builder.build_tree("gb200_tray", str(tmp_path / "trees")),
             "hgx": tree_builder.build_tree("hgx_h100", str(tmp_path / "trees"))}

    def host_file(name: str, path: str, text: str, mode: str = "a") -> None:
        with open(os.path.realpath(os.path.join(trays[name], path)), mode, encoding="utf-8") as handle:
            handle.write(text)

    host_file("tray", "etc/nvidia-imex/nodes_config.cfg", f"root:{marker}:19876:0:99999:7:::\n")
    host_file("tray", "etc/nvidia-imex/config.cfg",
              f"LOG_FILE_NAME=/var/log/{marker}\nIMEX_CMD_UNIX_DOMAIN_PATH=/run/{marker}.sock\nSERVER_PORT=5{marker}\n"
              f"NETWORK_INTERFACE=eth{marker}\n{marker}\n")
    host_file("tray", "var/lib/dpkg/status", "Package: nvidia-imex-570\nStatus: install ok installed\n"
              f"Version: 570.{marker}\n\n", "w")
    host_file("hgx", "sys/class/infiniband/mlx5_0/fw_ver", f"28.39.{marker}\n", "w")
    host_file("hgx", "sys/class/infiniband/mlx5_1/board_id", f"MT_{marker}\n", "w")
    host_file("hgx", "sys/class/infiniband/mlx5_2/ports/1/state", f"4: {marker}\n", "w")
    host_file("hgx", "sys/class/infiniband/mlx5_3/ports/1/rate", f"400 Gb/sec (4X {marker})\n", "w")
    host_file("hgx", "sys/module/nvidia/version", f"570.{marker}\n", "w")
    host_file("hgx", "proc/sys/kernel/osrelease", f"6.8.0-{marker}\n", "w")
    host_file("hgx", "proc/modules", f"{marker} 16384 0 - Live 0x0\n")
    inventory = {"all": {"hosts": {
        name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
               "gpufabric_probe_root": root, "gpufabric_imex_mode": "dra_host_managed"}
        for name, root in trays.items()}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = run_preflight(tmp_path, "-vvv")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads((tmp_path / "reports" / "preflight.json").read_text())
    assert report["hosts"]["tray"]["status"] == "fail"
    imex = next(check for check in report["hosts"]["tray"]["checks"] if check["name"] == "imex")
    assert "nodes file /etc/nvidia-imex/nodes_config.cfg has entries that are not IP addresses on line 20" \
        in imex["message"]
    assert "tray: FAIL - failed: " in completed.stdout
    # -vvv prints each host's facts as gathered: what is searched below holds them
    assert '"invalid": [' in completed.stdout and '"fw_ver": null' in completed.stdout
    assert "/etc/nvidia-imex/config.cfg: line 11: LOG_FILE_NAME holds a character other than" in completed.stdout
    texts = {"output": completed.stdout + completed.stderr,
             **{name: (tmp_path / "reports" / name).read_text() for name in
                ("preflight.json", "preflight.md", "preflight.html")}}
    for name, text in texts.items():
        assert letters not in text, f"{name} quotes a probed file"


def test_the_verdict_is_job_data(fleet, tmp_path):
    """Issue 44: the verdict, its counts and the failing hosts are returned with set_stats (what the automation
    platform keeps with the job and hands to a workflow's next node); the same data a second time passes the settings
    check, as a workflow's next job gets it as extra vars."""
    reports = tmp_path / "reports"
    arguments = ["-i", str(fleet / "hosts.yml"), "gpufabric.cluster.preflight", "-e", f"gpufabric_report_dir={reports}"]
    completed = ansible_playbook(arguments, tmp_path, env={"ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
                                                           "ANSIBLE_SHOW_CUSTOM_STATS": "true"})
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr
    stats = json.loads(completed.stdout)["global_custom_stats"]["gpufabric_stats"]
    assert stats == {"preflight": {"hosts": 3, "pass": 0, "warn": 1, "fail": 1, "no_hardware": 1,
                                   "failed_hosts": ["broken"], "ready": False, "report": f"{reports}/preflight.json"}}
    again = ansible_playbook([*arguments, "-e", json.dumps({"gpufabric_stats": stats})], tmp_path)
    assert again.returncode == 0, again.stdout[-3000:]


def test_the_hgx_frontend_tree_passes_preflight(tree_builder, tmp_path):
    """Issue 45 acceptance, as a user runs it: an HGX node whose frontend ConnectX-6 Dx port (100 Gb/s, MTU 1500)
    carries the default route and whose BlueField-3 port has no board_id. On the starting commit its rdma_ports check
    failed on both ports; now only its rails are judged (the host warns for NVML alone, not replayed here), and a
    group's rdma_network_* selection is read the way the rdma_network role reads it."""
    trees = {"hgx": tree_builder.build_tree("hgx_h100_frontend", str(tmp_path / "trees"))}
    inventory = local_hosts_inventory(trees, {"hgx": "hgx"})
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = run_preflight(tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads((tmp_path / "reports" / "preflight.json").read_text())
    checks = {check["name"]: check for check in report["hosts"]["hgx"]["checks"]}
    assert checks["rdma_ports"]["status"] == "pass", checks["rdma_ports"]
    assert checks["rdma_ports"]["message"].endswith(
        "2 non-rail port(s) not judged: enp12s0f0np0 (protected: default route), enp181s0f0np0 (BlueField-3, device "
        "id 0xa2dc in rdma_network_exclude_device_ids)")
    assert report["hosts"]["hgx"]["summary"] == "warnings: driver_lifecycle, fabric, fabric_health"
    inventory["all"]["vars"] = {"rdma_network_netdev_pattern": "enp181s0f0np0"}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(inventory))
    completed = run_preflight(tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = json.loads((tmp_path / "reports" / "preflight.json").read_text())
    rdma_ports = next(check for check in report["hosts"]["hgx"]["checks"] if check["name"] == "rdma_ports")
    assert rdma_ports["status"] == "fail"
    assert rdma_ports["message"].startswith("mlx5_11/1 (enp181s0f0np0): mtu 1500 instead of 9000; 11 non-rail port(s)")
