# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_network never loses the configuration of a rail that is down or not selected (issue 17).

The role's own expressions (vars/main.yml) are evaluated with Ansible's templar over rail plans, and its task and
handler files are read as data: only files the role marked are ever removed, only with ``rdma_network_prune``,
never for a down or unselected rail; replaced files get a backup; only the rails applied this run are reloaded,
and systemd-networkd is reloaded, never restarted. The molecule scenario (molecule/rdma_network/rail_down.yml)
takes a rail's link down between two converges on every network stack.
"""

from __future__ import annotations

import glob
import json
import os
import re

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from test_templates import ROCE_RAILS, plan_rails, render

from ansible_collections.gpufabric.cluster.plugins.module_utils.network import parse_ip_addr

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_network")
RAIL_TEMPLATES = ("rail.network.j2", "rail.nmconnection.j2", "rail.interfaces.j2", "netplan.yaml.j2")


def _yaml(*parts):
    with open(os.path.join(ROLE, *parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


ROLE_VARS = _yaml("vars", "main.yml")
DEFAULTS = _yaml("defaults", "main.yml")


def evaluate(expression, **variables):
    """An expression of the role evaluated as Ansible does, with the role's vars and defaults and ``variables``."""
    context = {key: trust_as_template(value) if isinstance(value, str) else value
               for key, value in {**DEFAULTS, **ROLE_VARS}.items()}
    context.update(variables)
    return Templar(loader=DataLoader(), variables=context).template(trust_as_template(expression))


def tasks_of(name):
    return _yaml("tasks", name) or []


def all_tasks():
    for path in sorted(glob.glob(os.path.join(ROLE, "tasks", "*.yml"))):
        for task in tasks_of(os.path.basename(path)):
            yield os.path.basename(path), task


PLAN = {"rails": [{"rail": 0, "netdev": "enp24s0np0", "ipv4": "172.31.0.1", "ipv6": "fd00:31::1"},
                  {"rail": 3, "netdev": "enp94s0np0", "ipv4": "172.31.3.1", "ipv6": None}],
        "skipped": [{"rail": 1, "netdev": "enp64s0np0", "reason": "state DOWN, not ACTIVE"}]}


@pytest.mark.parametrize("template", RAIL_TEMPLATES)
def test_every_rail_file_carries_the_marker_the_prune_finds(hgx_connectx, template):
    rails = plan_rails(hgx_connectx, ["Ethernet"], ROCE_RAILS)
    marker = re.compile(ROLE_VARS["__rdma_network_marker_regex"])
    for rail in rails:
        # ansible.builtin.find `contains` matches each line from its start
        lines = [line for line in render(template, rails, rail).splitlines(keepends=True) if marker.match(line)]
        assert lines == [f"# managed-by: gpufabric.cluster.rdma_network rail {rail['rail']}\n"]


def test_the_marker_regex_refuses_foreign_files():
    marker = re.compile(ROLE_VARS["__rdma_network_marker_regex"])
    for line in ("#\n", "# Ansible managed\n", "# RDMA rail 1: enp64s0np0\n",
                 "# managed-by: gpufabric.cluster.rdma_network rail\n",
                 "x # managed-by: gpufabric.cluster.rdma_network rail 1\n"):
        assert not marker.match(line), line


def test_prune_is_off_by_default_and_string_false_is_false():
    assert DEFAULTS["rdma_network_prune"] is False
    assert evaluate("{{ __rdma_network_prune }}", rdma_network_rail_indices=[]) is False
    for value in ("false", "no", "0", 0, False):
        assert evaluate("{{ __rdma_network_prune }}", rdma_network_prune=value, rdma_network_rail_indices=[]) is False
    assert evaluate("{{ __rdma_network_prune }}", rdma_network_prune="yes", rdma_network_rail_indices=[]) is True


def test_a_run_narrowed_to_some_rails_never_prunes():
    assert evaluate("{{ __rdma_network_prune }}", rdma_network_prune=True, rdma_network_rail_indices=[0]) is False


def test_down_rails_are_kept_with_the_planned_ones():
    kept = evaluate("{{ __rdma_network_kept_rails }}", rdma_network_rail_plan=PLAN)
    assert sorted(kept) == ["0", "1", "3"]


def test_only_prune_removes_files_and_only_unkept_marked_ones():
    removals = [(name, task["name"]) for name, task in all_tasks()
                if (task.get("ansible.builtin.file") or {}).get("state") == "absent"]
    assert removals == [("prune.yml", "Remove the files this role wrote for rails that left the plan")]
    find, remove = tasks_of("prune.yml")
    assert find["when"] == "__rdma_network_prune | bool"
    assert find["ansible.builtin.find"]["contains"] == "{{ __rdma_network_marker_regex }}"
    assert "difference(__kept)" in remove["loop"]
    # the kept paths of each backend are the files of the planned and the skipped (down) rails
    for backend, directory, prefix, suffix in (
            ("systemd_networkd", "/etc/systemd/network", "60-gpufabric-rail", ".network"),
            ("netplan", "/etc/netplan", "60-gpufabric-rail", ".yaml"),
            ("networkmanager", "/etc/NetworkManager/system-connections", "gpufabric-rail", ".nmconnection"),
            ("ifupdown", "/etc/network/interfaces.d", "gpufabric-rail", "")):
        include = [task for task in tasks_of(f"backend_{backend}.yml")
                   if task.get("ansible.builtin.include_tasks") == "prune.yml"]
        assert len(include) == 1, backend
        variables = {key: evaluate(value) for key, value in include[0]["vars"].items()}
        assert variables == {"__rdma_network_prune_dir": directory, "__rdma_network_prune_prefix": prefix,
                             "__rdma_network_prune_suffix": suffix}
        kept = evaluate(remove["vars"]["__kept"], rdma_network_rail_plan=PLAN, **variables)
        assert sorted(kept) == [f"{directory}/{prefix}{rail}{suffix}" for rail in (0, 1, 3)], backend


def test_only_the_planned_rails_are_written():
    for backend in ("systemd_networkd", "netplan", "networkmanager", "ifupdown"):
        rail_files = [task for task in tasks_of(f"backend_{backend}.yml")
                      if "ansible.builtin.template" in task and task.get("register") == "__rdma_network_rail_files"]
        assert len(rail_files) == 1, backend
        assert rail_files[0]["loop"] == "{{ __rdma_network_rails }}"
        assert "{{ item.rail }}" in rail_files[0]["ansible.builtin.template"]["dest"]


def test_replaced_files_are_backed_up():
    # every template the role writes gets a backup, except the ifupdown stanzas: `source interfaces.d/*` would read
    # the backup copy too and define the rail twice
    for name, task in all_tasks():
        template = task.get("ansible.builtin.template")
        if template is None:
            continue
        expected = not template["dest"].startswith("{{ __rdma_network_interfaces_dir }}")
        assert template.get("backup", False) is expected, (name, task["name"])


def test_networkd_is_reloaded_never_restarted():
    documents = [pair[1] for pair in all_tasks()] + _yaml("handlers", "main.yml")
    for task in documents:
        service = task.get("ansible.builtin.systemd_service") or {}
        assert service.get("state") != "restarted", task["name"]
        assert "restart" not in str((task.get("ansible.builtin.command") or {}).get("argv", "")), task["name"]
    settings = [task for task in _yaml("handlers", "main.yml")
                if task.get("listen") == "rdma_network networkd settings changed"]
    assert [task["ansible.builtin.systemd_service"] for task in settings] == [
        {"name": "systemd-networkd.service", "state": "reloaded"}]


def test_handlers_apply_only_the_rails_applied_this_run():
    for task in _yaml("handlers", "main.yml"):
        argv = (task.get("ansible.builtin.command") or {}).get("argv") or []
        if "item.netdev" in str(argv) or "item.rail" in str(argv):
            assert task["loop"] == "{{ __rdma_network_apply }}", task["name"]


def addr(local, secondary=False):
    """One entry of ``ip -json address``'s ``addr_info``."""
    return {"family": "inet6" if ":" in local else "inet", "local": local, "prefixlen": 64 if ":" in local else 24,
            "scope": "host" if local.startswith("127.") else "global", **({"secondary": True} if secondary else {})}


LINKS = [{"ifname": "lo", "addr_info": [addr("127.0.0.1")]},
         {"ifname": "enp24s0np0", "addr_info": [addr("172.31.0.1"), addr("fd00:31::1")]},
         {"ifname": "enp94s0np0", "addr_info": []},
         {"ifname": "enp64s0np0"}]


def applied(changed_netdevs, links=None):
    """The rails applied, the host's network facts being what fabric_facts makes of ``links`` (ip's JSON)."""
    links = LINKS if links is None else links
    facts = {"gpufabric": {"network": {"default_ipv4": {}, "default_ipv6": {},
                                       "interfaces": parse_ip_addr(json.dumps(links))}}}
    results = [{"changed": rail["netdev"] in changed_netdevs, "item": rail} for rail in PLAN["rails"]]
    return [rail["netdev"] for rail in evaluate(
        "{{ __rdma_network_apply }}", rdma_network_rail_plan=PLAN, __rdma_network_rail_files={"results": results},
        ansible_facts=facts)]


def test_a_rail_missing_its_live_address_is_applied_again():
    # enp94s0np0 lost its address (its link came back without it): applied though its file did not change;
    # the down rail enp64s0np0 is not planned, so never applied
    assert applied([]) == ["enp94s0np0"]
    assert applied(["enp24s0np0"]) == ["enp24s0np0", "enp94s0np0"]
    live = [*LINKS[:2], {"ifname": "enp94s0np0", "addr_info": [addr("172.31.3.1")]}]
    assert applied([], live) == []
    # one family missing is enough
    partial = [LINKS[0], {"ifname": "enp24s0np0", "addr_info": [addr("172.31.0.1")]}, live[2]]
    assert applied([], partial) == ["enp24s0np0"]


def test_a_rail_address_held_as_a_secondary_address_is_live():
    # enp24s0np0's IPv4 rail address is a secondary address (another address of its subnet came first), and
    # enp94s0np0's comes after an address of another subnet: both are live, nothing is applied again (the old
    # ip-based list held them too; fabric_facts' network subset lists them under ipv4_secondaries)
    links = [{"ifname": "enp24s0np0", "addr_info": [addr("172.31.0.77"), addr("172.31.0.1", secondary=True),
                                                    addr("fd00:31::1")]},
             {"ifname": "enp94s0np0", "addr_info": [addr("10.9.0.1"), addr("172.31.3.1")]}]
    assert applied([], links) == []
    # and without the secondary list, the rail would be applied again
    assert applied([], [links[0], {"ifname": "enp94s0np0", "addr_info": [addr("10.9.0.1")]}]) == ["enp94s0np0"]
