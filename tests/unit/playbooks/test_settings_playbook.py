# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 1 at playbook level: one check of every setting, once, on the controller, one clear line each.

Every playbook checks the settings of the hosts it reads (inventory and extra vars) against the collection's argument
specs before any host is probed or changed (gpufabric.cluster.settings_problems): a typo is named with the nearest
known variable, a wrong value in one line naming the variable, what it must be and the hosts, and null or empty
where the site setting's default is neither is refused the same way by every playbook. On the starting commit a typo
left the default in place without a word, a wrong role variable was judged (if at all) only when its role ran, and an
empty or null setting did something different in each playbook (an empty host pattern matched no host, a null
switch was false in one playbook and its default in another).
"""

from __future__ import annotations

import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

# What no run with a bad setting may reach: a probe, a host role, a cluster or validation role, a report.
NOTHING_RAN = ("TASK [Gather the GPU fabric facts of every host]", "TASK [gpufabric.cluster.nvidia_", "TASK [Write",
               "TASK [gpufabric.cluster.gpu_operator", "TASK [gpufabric.cluster.validate_",
               "TASK [Gather the fabric facts")
PLAYBOOKS = {
    "preflight": ("gpufabric.cluster.preflight",),
    "site": ("gpufabric.cluster.site", "-e", '{"gpufabric_host_roles": []}'),
    "hosts": ("gpufabric.cluster.hosts", "-e", '{"gpufabric_host_roles": []}'),
    "cluster": ("gpufabric.cluster.cluster",),
    "validate": ("gpufabric.cluster.validate",),
}


def write_inventory(workdir, host_trees, extra_hgx: dict | None = None) -> None:
    """Two local GPU hosts reading recorded trees; ``hgx`` with the extra variables of a test."""
    hosts = {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                    "gpufabric_probe_root": host_trees[tree]}
             for name, tree in {"hgx": "hgx_h100", "plain": "no_nvidia"}.items()}
    hosts["hgx"].update(extra_hgx or {})
    (workdir / "hosts.yml").write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))


def run(workdir, playbook: str, *extra: str) -> tuple[int, str]:
    completed = ansible_playbook(["-i", str(workdir / "hosts.yml"), *PLAYBOOKS.get(playbook, (playbook,)), "-e",
                                  f"gpufabric_report_dir={workdir / 'reports'}", *extra], workdir,
                                 env={"KUBECONFIG": str(workdir / "no-kubeconfig")})
    return completed.returncode, " ".join((completed.stdout + completed.stderr).split())


def assert_nothing_ran(output: str) -> None:
    for task in NOTHING_RAN:
        assert task not in output, output[-3000:]


def test_a_typo_in_the_inventory_is_named_with_the_nearest_variable_and_its_host(host_trees, tmp_path):
    write_inventory(tmp_path, host_trees, {"gpufabric_imex_mdoe": "dra"})
    returncode, output = run(tmp_path, "preflight")
    assert returncode == 2, output[-3000:]
    assert "host hgx: unknown variable gpufabric_imex_mdoe (did you mean gpufabric_imex_mode?)" in output, \
        output[-3000:]
    assert "hosts hgx, plain" not in output and "host plain" not in output
    assert_nothing_ran(output)


def test_a_wrong_role_value_is_one_line_before_any_host_changes(host_trees, tmp_path):
    """nvidia_imex_mode: DRA, in a host phase that applies no role: refused by the settings check, one line, no spec."""
    write_inventory(tmp_path, host_trees, {"nvidia_imex_mode": "DRA"})
    returncode, output = run(tmp_path, "hosts")
    assert returncode == 2, output[-3000:]
    line = "host hgx: nvidia_imex_mode must be one of: host, dra, dra_host_managed, got 'DRA'"
    assert output.count(line) >= 1 and output.count("nvidia_imex_mode must be") == output.count(line), output[-3000:]
    assert "argument_spec" not in output and "Supported parameters" not in output and "description" not in output
    assert_nothing_ran(output)


@pytest.mark.parametrize(("extra", "line"), [
    (("-e", "gpufabric_host_targets="),
     "gpufabric_host_targets is empty: leave it unset for its default ('gpu_nodes') or set a value"),
    (("-e", '{"gpufabric_imex_mode": null}'),
     "gpufabric_imex_mode is null: leave it unset for its default ('host') or set a value"),
    (("-e", '{"gpufabric_defer_failures": null}'),
     "gpufabric_defer_failures is null: leave it unset for its default (false) or set a value"),
], ids=["empty-pattern", "null-mode", "null-switch"])
@pytest.mark.parametrize("playbook", list(PLAYBOOKS))
def test_an_empty_or_null_setting_is_refused_the_same_by_every_playbook(host_trees, tmp_path, playbook, extra, line):
    write_inventory(tmp_path, host_trees)
    returncode, output = run(tmp_path, playbook, *extra)
    assert returncode == 2, output[-3000:]
    assert f": {line}" in output, output[-3000:]
    assert_nothing_ran(output)
    assert not (tmp_path / "reports").exists()


def test_a_setting_built_on_the_inventory_directory_passes_the_check(host_trees, tmp_path):
    """inventories/example sets gpufabric_report_dir from inventory_dir in group_vars/all, which the implicit localhost
    holds too without an inventory_dir: the check leaves that value to the plays that use it. On the first version of
    the check every playbook failed there with "'inventory_dir' is undefined"."""
    inventory = tmp_path / "inventory"
    (inventory / "group_vars").mkdir(parents=True)
    write_inventory(inventory, host_trees)
    (inventory / "group_vars" / "all.yml").write_text('gpufabric_report_dir: "{{ inventory_dir }}/reports"\n')
    completed = ansible_playbook(["-i", str(inventory), "gpufabric.cluster.preflight"], tmp_path)
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-3000:]
    assert (inventory / "reports" / "preflight.json").is_file()
