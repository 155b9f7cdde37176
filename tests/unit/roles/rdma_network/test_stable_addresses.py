# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_network's own tasks keep every converged host's rail addresses (issue 41), run by ansible-playbook.

A fleet of local hosts, each probing the recorded HGX H100 tree (its two RoCE ports are the rails), runs the role's
facts, plan and record steps (tasks/facts.yml, validate.yml, record.yml: everything main.yml does before a network
stack is touched) run after run: a full converge, ``--limit`` to one host, a host added to the inventory, a new host
alone without facts, an explicit index that would move a host. Each host keeps its record under a directory of its
own (``__rdma_network_record_file``) and probes a copy of the tree of its own, whose TEST FIXTURE ``ip`` (the one
fabric_facts' network subset runs, below the probe root) prints the links that host would have: the recorded tree's
netdevs with the addresses of its record, applied after each run as the network stack would. The molecule scenario
(molecule/rdma_network/stable_addresses.yml) does the same on five hosts with the addresses live.

On the starting commit the full run gave hgx-3 172.31.0.3, ``--limit hgx-3`` gave it 172.31.0.1 (hgx-1's), and
adding hgx-2b moved hgx-3 to .4 and hgx-4 to .5.
"""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

NETDEVS = ["enp170s0f0np0", "enp170s0f1np1"]
FOUR = ["hgx-1", "hgx-2", "hgx-3", "hgx-4"]
# TEST FIXTURE: the `ip` of a host's tree answers fabric_facts' `ip -json -details -force -batch -` with the links of
# that host (the file the fleet keeps) for `addr show`, and no route (nothing) for the route lookups.
FAKE_IP = """#!/bin/sh
# TEST FIXTURE: recorded links of one host of the fleet.
[ "$*" = "-json -details -force -batch -" ] || exit 2
while read -r line; do
  if [ "$line" = "addr show" ]; then cat '{links}'; echo; fi
done
"""
PLAY = [{
    "name": "rdma_network up to the rails: facts, plan and record",
    "hosts": "gpu_nodes",
    "gather_facts": False,
    "tasks": [
        # main.yml's shared facts step, then its own steps up to the record
        {"name": "The ConnectX and network facts", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._fabric_facts", "tasks_from": "gather"},
         "vars": {"_fabric_facts_subsets": ["connectx", "network"],
                  "_fabric_facts_root": "{{ rdma_network_probe_root }}"}},
        *({"name": f"rdma_network {step}", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster.rdma_network", "tasks_from": step}}
          for step in ("facts.yml", "validate.yml", "record.yml")),
    ],
}]


def links_json(addresses=None):
    """The TEST FIXTURE ip's output for a host, as the fleet keeps it."""
    return json.dumps(links_of(addresses)).encode()


def links_of(addresses=None):
    """``ip -json -details address show`` of a host with the tree's rail netdevs (``addresses``: netdev to IPs)."""
    addresses = addresses or {}
    links = [{"ifname": "lo", "max_mtu": 0, "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8,
                                                           "scope": "host"}]}]
    for netdev in NETDEVS:
        info = [{"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"}]
        for address in addresses.get(netdev, []):
            ip, prefix = address.split("/")
            info.append({"family": "inet6" if ":" in ip else "inet", "local": ip, "prefixlen": int(prefix),
                         "scope": "global"})
        links.append({"ifname": netdev, "max_mtu": 9978, "addr_info": info})
    return links


class Fleet:
    """An inventory of local GPU hosts, each on its copy of the recorded HGX tree, the records and links each keeps, a
    fact cache."""

    def __init__(self, tmp_path, tree):
        self.tmp = tmp_path
        for name in ("records", "links", "roots", "cache"):
            (tmp_path / name).mkdir()
        (tmp_path / "play.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
        self.tree = tree
        self.hosts: list[str] = []

    def add(self, host, addresses=None):
        self.hosts.append(host)
        (self.tmp / "links" / host).write_bytes(links_json(addresses))
        root = self.tmp / "roots" / host
        shutil.copytree(self.tree, root, symlinks=True)
        fake = root / "usr" / "sbin" / "ip"
        fake.parent.mkdir(parents=True, exist_ok=True)
        fake.write_text(FAKE_IP.format(links=self.tmp / "links" / host))
        fake.chmod(0o755)

    def run(self, *extra, cache=True):
        inventory = {"all": {"children": {"gpu_nodes": {
            "hosts": {host: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                             "rdma_network_probe_root": str(self.tmp / "roots" / host)}
                      for host in self.hosts},
            "vars": {"rdma_network_backend": "systemd-networkd",
                     "rdma_network_link_layers": ["Ethernet"],
                     "rdma_network_rails": [{"ipv4": "172.31.0.0/24", "ipv6": "fd00:31::/64"},
                                            {"ipv4": "172.31.1.0/24"}]}}}}}
        (self.tmp / "hosts.yml").write_text(yaml.safe_dump(inventory))
        env = {"ANSIBLE_INJECT_FACT_VARS": "false", "ANSIBLE_CACHE_PLUGIN": "jsonfile" if cache else "memory",
               "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(self.tmp / "cache")}
        variables = {"__rdma_network_record_file": str(self.tmp / "records") + "/{{ inventory_hostname }}/record.json"}
        completed = ansible_playbook(["-i", str(self.tmp / "hosts.yml"), "-e", json.dumps(variables),
                                      str(self.tmp / "play.yml"), *extra], self.tmp, env=env)
        # TEST FIXTURE: what the network stack does next, every recorded address live on its netdev
        for host in self.hosts:
            record = self.record(host)
            if record is not None:
                live = {}
                for entry in record["rails"].values():
                    live.setdefault(entry["netdev"], []).extend(entry[key] for key in ("ipv4", "ipv6") if key in entry)
                (self.tmp / "links" / host).write_bytes(links_json(live))
        return completed.returncode, " ".join((completed.stdout + completed.stderr).split())

    def record(self, host):
        path = self.tmp / "records" / host / "record.json"
        return json.loads(path.read_text()) if path.exists() else None

    def rail0(self, host):
        return (self.record(host) or {}).get("rails", {}).get("0", {}).get("ipv4")

    def state(self):
        """Every host's record and links, as the files are."""
        return {path.relative_to(self.tmp).as_posix(): path.read_bytes()
                for directory in ("records", "links") for path in sorted((self.tmp / directory).rglob("*"))
                if path.is_file()}


@pytest.fixture
def fleet(tmp_path, host_trees):
    return Fleet(tmp_path, host_trees["hgx_h100"])


def test_limited_runs_a_growing_inventory_and_refusals_keep_every_hosts_addresses(fleet):
    for host in FOUR[:3]:
        fleet.add(host)
    # hgx-4 was converged by a build that kept no record: .7 on both rails is what it holds
    fleet.add("hgx-4", {NETDEVS[0]: ["172.31.0.7/24", "fd00:31::7/64"], NETDEVS[1]: ["172.31.1.7/24"]})
    returncode, output = fleet.run()
    assert returncode == 0, output[-3000:]
    assert [fleet.rail0(host) for host in FOUR] == ["172.31.0.1/24", "172.31.0.2/24", "172.31.0.3/24",
                                                    "172.31.0.7/24"]
    assert "host hgx-4: host index 6, kept from its live rail addresses" in output
    assert "host hgx-3: host index 2, new, the lowest index free in rdma_network_fleet" in output
    assert fleet.record("hgx-3") == {
        "version": 1, "host_index": 2, "address_offset": 1,
        "rails": {"0": {"netdev": NETDEVS[0], "ipv4": "172.31.0.3/24", "ipv6": "fd00:31::3/64"},
                  "1": {"netdev": NETDEVS[1], "ipv4": "172.31.1.3/24"}}}
    assert oct((fleet.tmp / "records" / "hgx-3" / "record.json").stat().st_mode & 0o777) == "0o600"
    converged = fleet.state()

    # --limit hgx-3, without a fact cache: its record gives its index; nothing changes anywhere
    returncode, output = fleet.run("--limit", "hgx-3", cache=False)
    assert returncode == 0, output[-3000:]
    assert "host hgx-3: host index 2, kept from the record on the host" in output
    assert "hgx-3 : ok=" in output and " changed=0 " in output.split("hgx-3 : ok=")[1]
    assert fleet.state() == converged

    # a host added to the inventory, alone (--limit) and without facts: the others' indices are unknown
    fleet.add("hgx-2b")
    returncode, output = fleet.run("--limit", "hgx-2b", cache=False)
    assert returncode == 2, output[-3000:]
    assert ("host hgx-2b: a new host index is needed, but the index of hgx-1, hgx-2, hgx-3, hgx-4 (rdma_network_fleet, "
            "not in this run) is unknown") in output
    assert fleet.record("hgx-2b") is None and fleet.state() == {**converged, "links/hgx-2b": links_json()}

    # ... and with every host: it takes a free index, nobody else moves
    returncode, output = fleet.run()
    assert returncode == 0, output[-3000:]
    assert [fleet.rail0(host) for host in ("hgx-1", "hgx-2", "hgx-2b", "hgx-3", "hgx-4")] == [
        "172.31.0.1/24", "172.31.0.2/24", "172.31.0.4/24", "172.31.0.3/24", "172.31.0.7/24"]
    assert {key: value for key, value in fleet.state().items() if "hgx-2b" not in key} == converged
    converged = fleet.state()

    # hgx-3 alone, told index 0: its own address would move, onto hgx-1's (known from the fact cache); refused
    # before the record or anything else is written
    returncode, output = fleet.run("--limit", "hgx-3", "-e", "rdma_network_host_index=0")
    assert returncode == 2, output[-3000:]
    assert (f"host hgx-3: rail 0 ({NETDEVS[0]}) ipv4: the plan moves the host's address 172.31.0.3 to 172.31.0.1 "
            "(rdma_network_host_index 0, its recorded host index 2); a host keeps its rail addresses, set "
            "rdma_network_allow_readdress to move them") in output
    assert (f"host hgx-3: rdma_network_host_index 0 gives 172.31.0.1 on rail 0 ({NETDEVS[0]}), already the address "
            f"of host hgx-1 (rail 0 ({NETDEVS[0]}), from its facts (not in this run))") in output
    assert "Write the record" not in output
    assert fleet.state() == converged


def test_main_writes_the_record_after_the_plan_and_before_any_network_stack():
    """The test above runs the shared facts step, facts.yml, validate.yml and record.yml: main.yml runs them in that
    order, before the network stack, so a refused plan leaves the record and every stack's files as they were."""
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "rdma_network", "tasks",
                           "main.yml"), encoding="utf-8") as handle:
        included = [task.get("ansible.builtin.include_tasks") or task["ansible.builtin.include_role"]["tasks_from"]
                    for task in yaml.safe_load(handle)]
    assert included[1:6] == ["gather", "facts.yml", "validate.yml", "record.yml",
                             "backend_{{ __rdma_network_backend | replace('-', '_') }}.yml"]
