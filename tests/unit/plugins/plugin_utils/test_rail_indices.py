# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stable rail addresses (issue 41): a host's RDMA rail addresses never move because other hosts joined, left or
were left out of a run.

On the starting commit a host's index was its position in natural order of the play's hosts: on the recorded HGX
facts with four hosts a full run gave hgx-3 172.31.0.3 on rail 0, ``--limit hgx-3`` gave it 172.31.0.1 (hgx-1's),
and adding hgx-2b to the inventory moved hgx-3 to .4 and hgx-4 to .5. Here a simulated site keeps what the role
leaves on each host (the record file, the live addresses) and, optionally, a fact cache of the published plans, and
runs the real ``derive_rail_plan`` over it run after run.
"""

from __future__ import annotations

import copy
import ipaddress
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.module_utils.network import parse_ip_addr
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_indices import PLAN_FACT, RECORD_FILE, RECORD_LIMIT
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import RailPlanError, derive_rail_plan

RAILS = [{"ipv4": "172.31.0.0/24", "ipv6": "fd00:31::/64"}, {"ipv4": "172.31.1.0/24"}]
NETDEVS = ["enp170s0f0np0", "enp170s0f1np1"]  # the recorded HGX H100's two RoCE ports: rails 0 and 1
FOUR = ["hgx-1", "hgx-2", "hgx-3", "hgx-4"]


@pytest.fixture(scope="module")
def connectx(host_trees):
    """``ansible_facts['gpufabric']['connectx']`` of the recorded HGX H100, from the real collector."""
    facts = collect_connectx(host_trees["hgx_h100"])
    assert [port["netdev"] for port in facts["ports"] if port["link_layer"] == "Ethernet"] == NETDEVS
    return facts


class Site:
    """A fleet as the role sees it: per host the record file and the live addresses the role left, an optional fact
    cache of the published plans (``None``: no cache, every run starts without facts), explicit indices."""

    def __init__(self, connectx, cache=True):
        self.connectx = connectx
        self.records: dict[str, str] = {}
        self.live: dict[str, dict[str, list]] = {}
        self.cache: dict[str, dict] | None = {} if cache else None
        self.explicit: dict[str, int] = {}
        self.settings: dict[str, dict] = {}

    def hostvars(self, run, **settings):
        hostvars = {}
        for host in {*run, *self.records, *self.explicit, *(self.cache or {})}:
            facts = {}
            if self.cache is not None and host in self.cache:
                facts[PLAN_FACT] = copy.deepcopy(self.cache[host])
            host_vars = {"ansible_facts": facts}
            if host in self.explicit:
                host_vars["rdma_network_host_index"] = self.explicit[host]
            if host in run:
                live = self.live.get(host, {})  # every port's link exists, with the addresses the role left
                links = [{"ifname": port["netdev"], "addr_info": live.get(port["netdev"], [])}
                         for port in self.connectx["ports"]]
                facts["gpufabric"] = {"connectx": copy.deepcopy(self.connectx), "network": {
                    "default_ipv4": {}, "default_ipv6": {}, "interfaces": parse_ip_addr(json.dumps(links))}}
                text = self.records.get(host)
                record = ({"path": RECORD_FILE, "exists": True, "regular": True, "size": len(text), "content": text}
                          if text is not None else {"path": RECORD_FILE, "exists": False})
                host_vars["__rdma_network_input"] = {
                    "rails": RAILS, "link_layers": ["Ethernet"], "record": record,
                    "host_index": self.explicit.get(host, -1), **settings, **self.settings.get(host, {})}
            hostvars[host] = host_vars
        return hostvars

    def converge(self, run, fleet=None, **settings):
        """One run of the role on ``run`` (the whole inventory ``fleet``); what it leaves on the hosts is kept."""
        plan = derive_rail_plan(self.hostvars(run, **settings), list(run),
                                fleet=None if fleet is None else list(fleet))
        for host in run:
            self.records[host] = json.dumps(plan[host]["record"], sort_keys=True)
            self.live[host] = live_of(plan[host]["rails"])
            if self.cache is not None:
                self.cache[host] = copy.deepcopy(plan[host])
        return plan

    def addresses(self, host):
        """``{(rail, family): address}`` the host holds (its record)."""
        record = json.loads(self.records[host])
        return {(int(rail), family): value for rail, entry in record["rails"].items()
                for family, value in entry.items() if family != "netdev"}


def live_of(rails):
    """``ip -json address``'s ``addr_info`` of the planned rails (with the link-local address the kernel adds); the
    host's network facts are what fabric_facts' parser makes of them."""
    live = {}
    for rail in rails:
        entries = [{"family": "inet6", "local": "fe80::1", "prefixlen": 64, "scope": "link"}]
        for family, kind in (("ipv4", "inet"), ("ipv6", "inet6")):
            if rail[family]:
                entries.append({"family": kind, "local": rail[family], "prefixlen": rail[f"{family}_prefix"],
                                "scope": "global"})
        live[rail["netdev"]] = entries
    return live


def rail0(plan, host):
    return plan[host]["rails"][0]["ipv4"]


def refusal(site, run, fleet=None, **settings):
    with pytest.raises(RailPlanError) as caught:
        site.converge(run, fleet, **settings)
    return caught.value.errors


# --- the cases of the issue


def test_a_limited_run_keeps_the_addresses_the_host_holds(connectx):
    site = Site(connectx)
    plan = site.converge(FOUR, FOUR)
    assert [rail0(plan, host) for host in FOUR] == ["172.31.0.1", "172.31.0.2", "172.31.0.3", "172.31.0.4"]
    assert [plan[host]["host_index_source"] for host in FOUR] == ["allocated"] * 4
    before = dict(site.records)
    # --limit hgx-3: its record gives it its index; the starting commit gave it .1, hgx-1's address
    plan = site.converge(["hgx-3"], FOUR)
    assert rail0(plan, "hgx-3") == "172.31.0.3"
    assert plan["hgx-3"]["host_index_source"] == "record"
    assert site.records == before
    # also when the filter is told of no other host at all (no fleet): the record decides
    assert rail0(derive_rail_plan(site.hostvars(["hgx-3"]), ["hgx-3"]), "hgx-3") == "172.31.0.3"


def test_a_host_added_to_the_inventory_takes_a_free_index_and_moves_nobody(connectx):
    site = Site(connectx, cache=False)
    site.converge(FOUR, FOUR)
    before = {host: site.addresses(host) for host in FOUR}
    five = ["hgx-1", "hgx-2", "hgx-2b", "hgx-3", "hgx-4"]
    plan = site.converge(five, five)
    assert {host: site.addresses(host) for host in FOUR} == before
    assert [rail0(plan, host) for host in five] == ["172.31.0.1", "172.31.0.2", "172.31.0.5", "172.31.0.3",
                                                    "172.31.0.4"]
    assert (plan["hgx-2b"]["host_index"], plan["hgx-2b"]["host_index_source"]) == (4, "allocated")
    assert plan["hgx-2b"]["rails"][0]["ipv6"] == "fd00:31::5"


def test_a_new_host_alone_needs_the_indices_of_the_others(connectx):
    # no fact cache: under --limit the other hosts' indices are unknown, and any index might be one of theirs
    site = Site(connectx, cache=False)
    site.converge(FOUR, FOUR)
    five = [*FOUR, "hgx-5"]
    assert refusal(site, ["hgx-5"], five) == [
        "host hgx-5: a new host index is needed, but the index of hgx-1, hgx-2, hgx-3, hgx-4 (rdma_network_fleet, "
        "not in this run) is unknown: neither rdma_network_host_index nor a rail plan in their facts; run the role "
        "on them too (or keep a fact cache), leave them out of rdma_network_fleet if they have no rails, or set "
        "rdma_network_host_index for hgx-5"]
    assert "hgx-5" not in site.records
    # an explicit index needs no allocation
    site.explicit["hgx-5"] = 9
    assert rail0(site.converge(["hgx-5"], five), "hgx-5") == "172.31.0.10"
    # with a fact cache the others are known: the lowest free index
    site = Site(connectx)
    site.converge(FOUR, FOUR)
    site.converge(["hgx-2"], FOUR)
    plan = site.converge(["hgx-5"], five)
    assert (plan["hgx-5"]["host_index"], rail0(plan, "hgx-5")) == (4, "172.31.0.5")


def test_a_host_down_during_a_run_keeps_its_index_from_its_facts(connectx):
    site = Site(connectx)
    site.converge(["hgx-1", "hgx-2", "hgx-3"], ["hgx-1", "hgx-2", "hgx-3"])
    site.explicit["hgx-9"] = 3  # another host's explicit index is never handed out
    plan = site.converge(["hgx-1", "hgx-3", "hgx-4"], ["hgx-1", "hgx-2", "hgx-3", "hgx-4", "hgx-9"])
    assert [plan[host]["host_index"] for host in ("hgx-1", "hgx-3", "hgx-4")] == [0, 2, 4]


def test_hosts_converged_by_a_build_without_records_keep_their_live_addresses(connectx):
    # hgx-3 was .3 by its position; no record, only its live addresses (and no fact cache)
    site = Site(connectx, cache=False)
    site.live["hgx-3"] = live_of([{"netdev": NETDEVS[0], "ipv4": "172.31.0.3", "ipv4_prefix": 24,
                                   "ipv6": "fd00:31::3", "ipv6_prefix": 64},
                                  {"netdev": NETDEVS[1], "ipv4": "172.31.1.3", "ipv4_prefix": 24, "ipv6": None}])
    site.live["hgx-3"][NETDEVS[1]].append({"family": "inet", "local": "10.9.9.9", "prefixlen": 8, "scope": "global"})
    plan = site.converge(["hgx-3"], ["hgx-3"])
    assert (plan["hgx-3"]["host_index"], plan["hgx-3"]["host_index_source"]) == (2, "addresses")
    assert json.loads(site.records["hgx-3"]) == {
        "version": 1, "host_index": 2, "address_offset": 1,
        "rails": {"0": {"netdev": NETDEVS[0], "ipv4": "172.31.0.3/24", "ipv6": "fd00:31::3/64"},
                  "1": {"netdev": NETDEVS[1], "ipv4": "172.31.1.3/24"}}}
    # and with only an old plan in the fact cache (a build that published no record): its index and addresses
    site = Site(connectx)
    site.cache["hgx-3"] = {"host": "hgx-3", "host_index": 2, "rails": [
        {"rail": 0, "netdev": NETDEVS[0], "ipv4": "172.31.0.3", "ipv4_prefix": 24, "ipv6": None}], "skipped": []}
    plan = site.converge(["hgx-3"], ["hgx-3"])
    assert (plan["hgx-3"]["host_index"], plan["hgx-3"]["host_index_source"]) == (2, "facts")


def test_live_addresses_of_two_indices_are_refused_naming_the_addresses(connectx):
    site = Site(connectx)
    site.live["h"] = live_of([{"netdev": NETDEVS[0], "ipv4": "172.31.0.3", "ipv4_prefix": 24, "ipv6": None},
                              {"netdev": NETDEVS[1], "ipv4": "172.31.1.5", "ipv4_prefix": 24, "ipv6": None}])
    assert refusal(site, ["h"]) == [
        "host h: its live rail addresses are not of one host index: 172.31.0.3 on rail 0 (enp170s0f0np0, index 2), "
        "172.31.1.5 on rail 1 (enp170s0f1np1, index 4); set rdma_network_host_index to the index it keeps"]
    site.live["h"] = live_of([{"netdev": NETDEVS[0], "ipv4": "172.31.0.1", "ipv4_prefix": 24, "ipv6": None}])
    assert refusal(site, ["h"], address_offset=2) == [
        "host h: its live rail addresses are below rdma_network_address_offset 2: 172.31.0.1 on rail 0 "
        "(enp170s0f0np0, index -1); set rdma_network_address_offset and rdma_network_host_index to what they were "
        "made with"]


# --- refusals before any change: moves and shared addresses


def test_a_changed_explicit_index_is_refused_naming_host_rail_addresses_and_cause(connectx):
    site = Site(connectx)
    site.converge(FOUR, FOUR)
    before = dict(site.records)
    site.explicit["hgx-3"] = 7
    assert refusal(site, ["hgx-3"], FOUR) == [
        f"host hgx-3: rail 0 ({NETDEVS[0]}) ipv4: the plan moves the host's address 172.31.0.3 to 172.31.0.8 "
        "(rdma_network_host_index 7, its recorded host index 2); a host keeps its rail addresses, set "
        "rdma_network_allow_readdress to move them",
        f"host hgx-3: rail 0 ({NETDEVS[0]}) ipv6: the plan moves the host's address fd00:31::3 to fd00:31::8 "
        "(rdma_network_host_index 7, its recorded host index 2); a host keeps its rail addresses, set "
        "rdma_network_allow_readdress to move them",
        f"host hgx-3: rail 1 ({NETDEVS[1]}) ipv4: the plan moves the host's address 172.31.1.3 to 172.31.1.8 "
        "(rdma_network_host_index 7, its recorded host index 2); a host keeps its rail addresses, set "
        "rdma_network_allow_readdress to move them"]
    assert site.records == before
    plan = site.converge(["hgx-3"], FOUR, allow_readdress="yes")
    assert plan["hgx-3"]["moved"][0] == {"rail": 0, "netdev": NETDEVS[0], "family": "ipv4", "from": "172.31.0.3",
                                         "to": "172.31.0.8",
                                         "cause": "rdma_network_host_index 7, its recorded host index 2"}
    assert json.loads(site.records["hgx-3"])["host_index"] == 7
    # once moved, the explicit index and the record agree: nothing moves any more
    assert site.converge(["hgx-3"], FOUR)["hgx-3"]["moved"] == []


def test_a_changed_offset_or_subnet_names_its_cause(connectx):
    site = Site(connectx)
    site.converge(["h"])
    errors = refusal(site, ["h"], address_offset=5)
    assert errors[0] == (f"host h: rail 0 ({NETDEVS[0]}) ipv4: the plan moves the host's address 172.31.0.1 to "
                         "172.31.0.5 (rdma_network_address_offset 5, 1 before); a host keeps its rail addresses, "
                         "set rdma_network_allow_readdress to move them")
    moved_subnet = [{"ipv4": "10.8.0.0/24", "ipv6": "fd00:31::/64"}, RAILS[1]]
    errors = refusal(site, ["h"], rails=moved_subnet)
    assert errors == [f"host h: rail 0 ({NETDEVS[0]}) ipv4: the plan moves the host's address 172.31.0.1 to "
                      "10.8.0.1 (rdma_network_rails[0].ipv4 10.8.0.0/24, 172.31.0.0/24 before); a host keeps its rail "
                      "addresses, set rdma_network_allow_readdress to move them"]
    # a resized subnet keeps the address: no move
    resized = [{"ipv4": "172.31.0.0/25", "ipv6": "fd00:31::/64"}, RAILS[1]]
    assert site.converge(["h"], rails=resized)["h"]["rails"][0]["ipv4_network"] == "172.31.0.0/25"


def test_one_address_for_two_hosts_is_refused_naming_both(connectx):
    site = Site(connectx)
    site.converge(FOUR, FOUR)
    five = ["hgx-1", "hgx-2", "hgx-2b", "hgx-3", "hgx-4"]
    site.explicit["hgx-2b"] = 0
    errors = refusal(site, ["hgx-2b"], five)
    assert errors[0] == (
        f"host hgx-2b: rdma_network_host_index 0 gives 172.31.0.1 on rail 0 ({NETDEVS[0]}), already the address of "
        f"host hgx-1 (rail 0 ({NETDEVS[0]}), from its facts (not in this run)); give every host a distinct "
        "rdma_network_host_index")
    assert len(errors) == 3 and all("already the address of host hgx-1" in error for error in errors)
    assert "hgx-2b" not in site.records


def test_hosts_that_already_share_an_address_are_named(connectx):
    # what the starting commit left after `--limit hgx-3`: hgx-3 holds hgx-1's index
    site = Site(connectx)
    site.converge(FOUR, FOUR)
    site.records["hgx-3"] = site.records["hgx-1"]
    errors = refusal(site, FOUR, FOUR)
    assert errors[0] == (
        f"host hgx-3: its recorded host index 0 gives 172.31.0.1 on rail 0 ({NETDEVS[0]}), already the address of "
        f"host hgx-1 (rail 0 ({NETDEVS[0]})); give every host a distinct rdma_network_host_index")


def test_two_hosts_outside_the_run_that_share_an_address_are_named(connectx):
    # hgx-1 and hgx-3 share index 0 in the fact cache (what the starting commit's --limit left): any run is refused
    site = Site(connectx)
    site.converge(FOUR, FOUR)
    site.cache["hgx-3"] = copy.deepcopy(site.cache["hgx-1"])
    assert refusal(site, ["hgx-2"], FOUR)[0] == (
        f"host hgx-3: host index 0 (of its rail plan in the facts) gives 172.31.0.1 on rail 0 ({NETDEVS[0]}), already "
        f"the address of host hgx-1 (rail 0 ({NETDEVS[0]}), from its facts (not in this run)); give every host a "
        "distinct rdma_network_host_index")


def test_a_host_of_the_run_outside_the_fleet_is_refused(connectx):
    site = Site(connectx)
    assert refusal(site, ["hgx-1", "gpu-7"], ["hgx-1", "hgx-2"])[0] == (
        "host gpu-7: not in rdma_network_fleet (2 host(s)), the hosts whose rail addresses are kept apart; set it "
        "to a host pattern that holds every GPU host of the fabric")


# --- the record


def test_a_down_rail_keeps_its_recorded_address_and_prune_drops_a_rail_that_left(connectx):
    site = Site(connectx)
    site.converge(["h", "k"])
    down = copy.deepcopy(connectx)
    next(port for port in down["ports"] if port["netdev"] == NETDEVS[1])["state"] = "DOWN"
    site.connectx = down
    plan = site.converge(["k"], ["h", "k"], prune=True)
    assert [rail["rail"] for rail in plan["k"]["rails"]] == [0]
    assert plan["k"]["record"]["rails"]["1"] == {"netdev": NETDEVS[1], "ipv4": "172.31.1.2/24"}
    # not selected this run: kept without prune, dropped with it
    site.connectx = connectx
    assert "1" in site.converge(["k"], ["h", "k"], netdev_pattern=NETDEVS[0])["k"]["record"]["rails"]
    assert "1" not in site.converge(["k"], ["h", "k"], netdev_pattern=NETDEVS[0], prune=True)["k"]["record"]["rails"]


def test_a_down_rail_address_stays_the_hosts_own(connectx):
    # k's rail 1 is down this run; another host may not be given its address there
    site = Site(connectx)
    site.converge(["h", "k"])
    site.settings["k"] = {"netdev_pattern": NETDEVS[0]}
    site.converge(["h", "k"])
    site.settings["h"] = {"host_index": 1}
    errors = refusal(site, ["h", "k"], allow_readdress=True)
    assert (f"host k: its recorded host index 1 gives 172.31.1.2 on rail 1 ({NETDEVS[1]}), already the address of "
            f"host h (rail 1 ({NETDEVS[1]})); give every host a distinct rdma_network_host_index") in errors


@pytest.mark.parametrize(("record", "problem"), [
    ({"exists": True, "regular": False}, "is not a regular file"),
    ({"exists": True, "regular": True, "size": RECORD_LIMIT + 1},
     f"is larger than {RECORD_LIMIT} bytes, not a record the role wrote"),
    ({"exists": True, "regular": True, "size": 20, "content": "PLANTED-TEXT {"}, "is not JSON (line 1)"),
    ({"exists": True, "regular": True, "size": 9, "content": '["PLANTED-TEXT"]'},
     "is not a record the role wrote: not a JSON object"),
    ({"exists": True, "regular": True, "size": 9, "content": '{"version": 2}'},
     "is not a record the role wrote: version is not 1"),
    ({"exists": True, "regular": True, "size": 9,
      "content": '{"version": 1, "host_index": -3, "address_offset": 1, "rails": {}}'},
     "is not a record the role wrote: host_index is not an integer of 0 or more"),
    ({"exists": True, "regular": True, "size": 9,
      "content": '{"version": 1, "host_index": 0, "address_offset": 1, "rails": {"0": {"ipv4": "PLANTED-TEXT"}}}'},
     "is not a record the role wrote: rails.0.ipv4 is not an IPv4 address with its prefix"),
    ({"exists": True, "regular": True, "size": 9,
      "content": '{"version": 1, "host_index": 0, "address_offset": 1, "rails": {"0": {"ipv4": "fd00::1/64"}}}'},
     "is not a record the role wrote: rails.0.ipv4 is not an IPv4 address with its prefix"),
    ({"exists": True, "regular": True, "size": 9,
      "content": '{"version": 1, "host_index": 0, "address_offset": 1, "rails": {"x": {}}}'},
     "is not a record the role wrote: a key of rails is not a rail number"),
])
def test_a_record_that_is_not_the_roles_is_refused_without_its_text(connectx, record, problem):
    hostvars = Site(connectx).hostvars(["h"])
    hostvars["h"]["__rdma_network_input"]["record"] = {"path": RECORD_FILE, **record}
    with pytest.raises(RailPlanError) as caught:
        derive_rail_plan(hostvars, ["h"])
    assert caught.value.errors == [
        f"host h: {RECORD_FILE} (the record of its rail addresses) {problem}; remove it, and set "
        "rdma_network_host_index to the index the host's rail addresses were made with if it has some"]
    assert "PLANTED" not in str(caught.value)


@pytest.mark.parametrize("fact", ["x", {"host_index": "2", "rails": []}, {"host_index": 1, "rails": [{"rail": None}]},
                                  {"record": {"version": 1}}])
def test_a_cached_plan_of_another_shape_is_named(connectx, fact):
    site = Site(connectx)
    site.cache["other"] = fact
    with pytest.raises(RailPlanError) as caught:
        site.converge(["h"], ["h", "other"])
    assert caught.value.errors[0].startswith(
        "host other: ansible_facts['rdma_network_rail_plan'] (its rail plan of an earlier run, from the facts) is not "
        "a rail plan of the role")
    assert caught.value.errors[0].endswith(
        "; clear this host's facts in the fact cache, or set rdma_network_host_index for it")


# --- any fleet, any run, any order of new hosts

NAMES = ["a", "b", "hgx-1", "hgx-2", "hgx-2b", "hgx-3", "hgx-10", "node-7", "z"]


@st.composite
def histories(draw):
    """Steps of a site's life: each adds some hosts to the inventory, then runs the role on some of them."""
    order = draw(st.permutations(NAMES))
    steps, inventory = [], []
    for _step in range(draw(st.integers(1, 6))):
        added = draw(st.integers(0 if inventory else 1, 3))
        inventory = inventory + list(order[len(inventory):len(inventory) + added])
        run = draw(st.lists(st.sampled_from(inventory), min_size=1, unique=True))
        steps.append((list(inventory), run))
    return steps


def holdings(site):
    return {host: site.addresses(host) for host in site.records}


def assert_no_address_twice(site):
    owners = {}
    for host, addresses in holdings(site).items():
        for address in addresses.values():
            ip = str(ipaddress.ip_interface(address).ip)
            assert owners.setdefault(ip, host) == host, (ip, host, owners[ip])


@settings(max_examples=120, deadline=None)
@given(history=histories(), cache=st.booleans())
def test_property_converged_hosts_never_move_and_a_refusal_names_the_unknown_hosts(connectx, history, cache):
    site = Site(connectx, cache=cache)
    for inventory, run in history:
        before = holdings(site)
        # a host of the run needs a new index when it holds none; then every other host's index must be known
        new = sorted((host for host in run if host not in site.records), key=natural_key)
        unknown = sorted((host for host in inventory if host not in run
                          and (site.cache is None or host not in site.cache)), key=natural_key)
        if new and unknown:
            errors = refusal(site, run, inventory)
            assert errors == [
                f"host {', '.join(new)}: a new host index is needed, but the index of {', '.join(unknown)} "
                "(rdma_network_fleet, not in this run) is unknown: neither rdma_network_host_index nor a rail plan "
                "in their facts; run the role on them too (or keep a fact cache), leave them out of rdma_network_fleet "
                f"if they have no rails, or set rdma_network_host_index for {', '.join(new)}"]
            assert holdings(site) == before
            continue
        plan = site.converge(run, inventory)
        after = holdings(site)
        assert {host: after[host] for host in before} == before
        assert all(plan[host]["host_index_source"] == ("allocated" if host in new else "record") for host in run)
        assert_no_address_twice(site)


@settings(max_examples=120, deadline=None)
@given(history=histories(), explicit=st.dictionaries(st.sampled_from(NAMES), st.integers(0, 6), max_size=4),
       readdress=st.booleans())
def test_property_explicit_indices_never_give_one_address_to_two_hosts(connectx, history, explicit, readdress):
    site = Site(connectx)
    for inventory, run in history:
        site.explicit = {host: index for host, index in explicit.items() if host in inventory}
        before = holdings(site)
        try:
            site.converge(run, inventory, allow_readdress=readdress)
        except RailPlanError as exc:
            assert holdings(site) == before
            for error in exc.errors:
                named = error.removeprefix("host ").split(":")[0].split(", ")
                assert set(named) <= set(inventory), error
                if "already the address of host" in error:
                    assert error.split("already the address of host ")[1].split(" ")[0] in inventory, error
            continue
        after = holdings(site)
        if not readdress:
            assert {host: after[host] for host in before} == before
        assert_no_address_twice(site)
