# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_network reads host addresses from one source (issue 40 item 2): the shared facts step's network subset.

On the starting commit tasks/facts.yml ran ``ansible.builtin.setup`` (network) and ``ip -json -details address show``
of its own, and published the links' ``max_mtu`` and ``addresses`` in ``__rdma_network_input``.
"""

from __future__ import annotations

import glob
import os

import yaml

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_network")


def _yaml(*parts):
    with open(os.path.join(ROLE, *parts), encoding="utf-8") as handle:
        return yaml.safe_load(handle) or []


def _tasks():
    for path in sorted(glob.glob(os.path.join(ROLE, "tasks", "*.yml"))):
        for task in _yaml("tasks", os.path.basename(path)):
            yield os.path.basename(path), task


def test_the_shared_facts_step_gathers_the_network_subset():
    steps = [task for task in _yaml("tasks", "main.yml")
             if (task.get("ansible.builtin.include_role") or {}).get("name") == "gpufabric.cluster._fabric_facts"]
    assert len(steps) == 1
    assert steps[0]["vars"]["_fabric_facts_subsets"] == ["connectx", "network"]
    assert steps[0]["vars"]["_fabric_facts_root"] == "{{ rdma_network_probe_root }}"


def test_no_setup_and_no_ip_command_of_its_own():
    for name, task in _tasks():
        assert "ansible.builtin.setup" not in task and "setup" not in task, (name, task.get("name"))
        for module in ("ansible.builtin.command", "ansible.builtin.shell"):
            argv = (task.get(module) or {}).get("argv") or str((task.get(module) or {}).get("cmd") or "").split()
            assert not argv or os.path.basename(str(argv[0])) != "ip", (name, task.get("name"))
    for path in glob.glob(os.path.join(ROLE, "**", "*.yml"), recursive=True):
        with open(path, encoding="utf-8") as handle:
            assert "__rdma_network_links" not in handle.read(), path


def test_the_published_input_carries_no_addresses_or_mtu_limits():
    published = [task["ansible.builtin.set_fact"]["__rdma_network_input"] for _name, task in _tasks()
                 if "__rdma_network_input" in (task.get("ansible.builtin.set_fact") or {})]
    assert len(published) == 1
    assert not {"max_mtu", "addresses"} & set(published[0])
    assert "ansible_facts['gpufabric']['network']" in _yaml("vars", "main.yml")["__rdma_network_live_links"]
