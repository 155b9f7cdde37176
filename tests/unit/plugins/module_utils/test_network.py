# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The network subset of fabric_facts (module_utils/network.py): ip's JSON parsed as setup lays it out."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.network import (
    BATCH,
    collect_network,
    default_interface,
    parse_ip_addr,
    parse_route_get,
    split_batch,
)
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

# Recorded from iproute2 6.1 (Debian 12): `ip -json addr show` (lifetimes cut), and the two route lookups.
IP_ADDR = json.dumps([
    {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "link_type": "loopback",
     "addr_info": [{"family": "inet", "local": "127.0.0.1", "prefixlen": 8, "scope": "host", "label": "lo"},
                   {"family": "inet6", "local": "::1", "prefixlen": 128, "scope": "host"}]},
    {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
     "addr_info": [{"family": "inet", "local": "192.0.2.2", "prefixlen": 24, "broadcast": "192.0.2.255",
                    "scope": "global", "label": "eth0"},
                   {"family": "inet", "local": "192.0.2.9", "prefixlen": 24, "broadcast": "192.0.2.255",
                    "scope": "global", "secondary": True, "label": "eth0"},
                   {"family": "inet6", "local": "fd00::2", "prefixlen": 64, "scope": "global"},
                   {"family": "inet6", "local": "fe80::5054:ff:fe12:3456", "prefixlen": 64, "scope": "link"}]},
    {"ifindex": 3, "ifname": "ibp3s0", "flags": ["BROADCAST", "MULTICAST"], "mtu": 4092, "addr_info": []},
    {"ifindex": 4, "ifname": "tun0", "flags": ["POINTOPOINT", "UP"], "mtu": 1400,
     "addr_info": [{"family": "inet", "local": "10.8.0.1", "prefixlen": 32, "scope": "global"}]},
])
ROUTE_V4 = '[{"dst":"8.8.8.8","gateway":"192.0.2.1","dev":"eth0","prefsrc":"192.0.2.2","flags":[],"uid":0,"cache":[]}]'
ROUTE_V6 = ('[{"dst":"2404:6800:400a:800::1012","from":"::","gateway":"fd00::1","dev":"eth0","prefsrc":"fd00::2",'
            '"metric":1024,"flags":[],"pref":"medium"}]')


def run(argv, check_rc=False, environ_update=None, data=None):
    """A runner with AnsibleModule.run_command's signature, for the stand-in tools of the trees."""
    env = dict(os.environ, **(environ_update or {}))
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False,
                          input=None if data is None else data + "\n")
    return proc.returncode, proc.stdout, proc.stderr


def recorded_ip(root, addr=IP_ADDR, v4=ROUTE_V4, v6=None):
    """TEST FIXTURE: an `ip -json -details -force -batch -` below root answering each line from recordings, as ip does:
    one JSON line per answered command; a question answered None fails (nothing on stdout, exit 1 at the end)."""
    answers = {"addr show": addr, "route get 8.8.8.8": v4, "route get 2404:6800:400a:800::1012": v6}
    script = (f"#!{sys.executable}\n# TEST FIXTURE: recorded ip answers.\nimport sys\n"
              f"assert sys.argv[1:] == ['-json', '-details', '-force', '-batch', '-'], sys.argv\n"
              f"answers = {answers!r}\nrc = 0\n"
              "for number, line in enumerate(sys.stdin.read().splitlines(), 1):\n"
              "    if not line.strip():\n        continue\n"
              "    out = answers[line.strip()]\n"
              "    if out is None:\n"
              "        sys.stderr.write(f'RTNETLINK answers: Network is unreachable\\nCommand failed -:{number}\\n')\n"
              "        rc = 1\n"
              "    else:\n        sys.stdout.write(out + '\\n')\n"
              "sys.exit(rc)\n")
    write_host_file(str(root), "/usr/sbin/ip", script, 0o755)


def test_parse_ip_addr_primary_secondary_and_ipv6():
    interfaces = parse_ip_addr(IP_ADDR)
    assert list(interfaces) == ["lo", "eth0", "ibp3s0", "tun0"]
    assert interfaces["eth0"]["ipv4"] == {"address": "192.0.2.2", "broadcast": "192.0.2.255",
                                          "netmask": "255.255.255.0", "network": "192.0.2.0", "prefix": "24"}
    assert interfaces["eth0"]["ipv4_secondaries"] == [{"address": "192.0.2.9", "broadcast": "192.0.2.255",
                                                       "netmask": "255.255.255.0", "network": "192.0.2.0",
                                                       "prefix": "24"}]
    assert interfaces["eth0"]["mtu"] == 1500 and "max_mtu" not in interfaces["eth0"]
    assert interfaces["eth0"]["ipv6"] == [{"address": "fd00::2", "prefix": "64", "scope": "global"},
                                          {"address": "fe80::5054:ff:fe12:3456", "prefix": "64", "scope": "link"}]
    assert interfaces["ibp3s0"] == {"mtu": 4092}
    assert "ipv4_secondaries" not in interfaces["tun0"]
    assert interfaces["tun0"]["ipv4"] == {"address": "10.8.0.1", "broadcast": "", "netmask": "255.255.255.255",
                                          "network": "10.8.0.1", "prefix": "32"}
    assert interfaces["lo"]["ipv6"] == [{"address": "::1", "prefix": "128", "scope": "host"}]


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("", None, id="empty-is-no-interface"),
    pytest.param('{"ifname": "eth0"}', "expected a JSON list of objects", id="object"),
    pytest.param('[{"ifname": "eth0"', "not JSON", id="truncated"),
    pytest.param('[1]', "expected a JSON list of objects", id="not-objects"),
    pytest.param('[{"addr_info": []}]', "an interface without a name", id="no-name"),
    pytest.param('[{"ifname": "a"}, {"ifname": "a"}]', "interface a listed twice", id="duplicate"),
    pytest.param('[{"ifname": "a", "addr_info": {}}]', "addr_info is not a list", id="addr-info-object"),
    pytest.param('[{"ifname": "a", "addr_info": [{"family": "inet", "local": "a.b", "prefixlen": 8}]}]',
                 "'a.b' is not an IP address", id="bad-address"),
    pytest.param('[{"ifname": "a", "addr_info": [{"family": "inet", "local": "fd00::1", "prefixlen": 8}]}]',
                 "fd00::1 is not an ipv4 address", id="wrong-family"),
    pytest.param('[{"ifname": "a", "addr_info": [{"family": "inet", "local": "10.0.0.1", "prefixlen": "24"}]}]',
                 "prefix length '24' is not an integer from 0 to 32", id="string-prefix"),
    pytest.param('[{"ifname": "a", "addr_info": [{"family": "inet", "local": "10.0.0.1", "prefixlen": true}]}]',
                 "prefix length True is not an integer", id="boolean-prefix"),
    pytest.param('[{"ifname": "a", "addr_info": [{"family": "inet6", "local": "fd00::1", "prefixlen": 129}]}]',
                 "prefix length 129 is not an integer from 0 to 128", id="prefix-too-long"),
    pytest.param('[{"ifname": "a", "mtu": "1500"}]', "a: mtu '1500' is not an integer from 0 to 4294967295",
                 id="string-mtu"),
    pytest.param('[{"ifname": "a", "max_mtu": true}]', "a: max_mtu True is not an integer", id="boolean-max-mtu"),
    pytest.param('[{"ifname": "a", "max_mtu": -1}]', "a: max_mtu -1 is not an integer from 0", id="negative-max-mtu"),
    pytest.param('[{"ifname": "a", "mtu": 4294967296}]', "a: mtu 4294967296 is not an integer from 0 to 4294967295",
                 id="mtu-above-32-bits"),
    pytest.param('[{"ifname": "a", "max_mtu": 9000.0}]', "a: max_mtu 9000.0 is not an integer", id="float-max-mtu"),
])
def test_parse_ip_addr_refuses_what_is_not_the_tools_json(text, message):
    if message is None:
        assert parse_ip_addr(text) == {}
        return
    with pytest.raises(ParseError, match=message):
        parse_ip_addr(text)


# Recorded on a Debian 12 machine with iproute2 6.1.0 in a fresh network namespace: see the file's "recorded".
RECORDING = json.loads((Path(__file__).resolve().parents[3] / "fixtures" / "network" /
                        "ip-json-details-batch-iproute2-6.1.json").read_text(encoding="utf-8"))


def test_a_real_details_batch_gives_secondaries_mtu_and_routes(tmp_path):
    """The real `ip -json -details -force -batch -` output: -details keeps the route answers parsable and adds
    max_mtu and min_mtu per link; an address of another subnet and a secondary one are ipv4_secondaries."""
    assert RECORDING["stdin"] == BATCH
    addresses, routes = split_batch(RECORDING["stdout"])
    interfaces = parse_ip_addr(addresses)
    assert sorted(interfaces) == ["lo", "mgmt0", "mgmt0p", "rail0", "rail0p"]
    rail = interfaces["rail0"]
    assert (rail["mtu"], rail["max_mtu"]) == (9000, 65535)
    assert rail["ipv4"]["address"] == "172.31.0.3"
    assert [item["address"] for item in rail["ipv4_secondaries"]] == ["10.9.0.3", "172.31.0.9"]
    assert [item["address"] for item in rail["ipv6"] if item["scope"] == "global"] == ["fd00:31::3"]
    assert (interfaces["lo"]["mtu"], interfaces["lo"]["max_mtu"]) == (65536, 0)
    assert parse_route_get(routes["ipv4"], "ipv4") == {"interface": "mgmt0", "address": "192.0.2.2",
                                                       "gateway": "192.0.2.1"}
    assert parse_route_get(routes["ipv6"], "ipv6") == {"interface": "mgmt0", "address": "fd00::2",
                                                       "gateway": "fd00::1"}
    lines = RECORDING["stdout"].splitlines()
    recorded_ip(tmp_path, addr=lines[0], v4=lines[1], v6=lines[2])
    payload = collect_network(str(tmp_path), run)
    assert payload["errors"] == [] and payload["interfaces"] == interfaces
    assert payload["default_ipv4"]["interface"] == "mgmt0" and payload["default_ipv6"]["address"] == "fd00::2"


def test_parse_route_get():
    assert parse_route_get(ROUTE_V4, "ipv4") == {"interface": "eth0", "address": "192.0.2.2", "gateway": "192.0.2.1"}
    assert parse_route_get(ROUTE_V6, "ipv6") == {"interface": "eth0", "address": "fd00::2", "gateway": "fd00::1"}
    assert parse_route_get('[{"dst": "8.8.8.8", "dev": "eth0", "prefsrc": "192.0.2.2"}]', "ipv4") == \
        {"interface": "eth0", "address": "192.0.2.2"}
    assert parse_route_get("[]", "ipv4") == {}


@pytest.mark.parametrize(("text", "family", "message"), [
    pytest.param(ROUTE_V4, "ipv6", "prefsrc 192.0.2.2 is not an ipv6 address", id="other-family"),
    pytest.param(ROUTE_V4, "inet", "family must be one of ipv4, ipv6, got 'inet'", id="unknown-family"),
    pytest.param('[{"dev": "eth0", "gateway": "router"}]', "ipv4", "gateway 'router' is not an IP address",
                 id="gateway-name"),
    pytest.param('[{"dst": "8.8.8.8"', "ipv4", "not JSON", id="truncated"),
])
def test_parse_route_get_refuses_bad_output(text, family, message):
    with pytest.raises(ParseError, match=message):
        parse_route_get(text, family)


def test_split_batch():
    addresses, routes = split_batch("\n".join([IP_ADDR, ROUTE_V4, ROUTE_V6, ""]))
    assert addresses == IP_ADDR and routes == {"ipv4": ROUTE_V4, "ipv6": ROUTE_V6}
    assert split_batch(ROUTE_V6) == (None, {"ipv6": ROUTE_V6})
    assert split_batch("") == (None, {})
    assert split_batch("[]\n") == ("[]", {})
    with pytest.raises(ParseError, match="two address lists"):
        split_batch("[]\n[]")


def test_default_interface_takes_the_details_of_its_address():
    interfaces = parse_ip_addr(IP_ADDR)
    assert default_interface(parse_route_get(ROUTE_V4, "ipv4"), interfaces, "ipv4") == {
        "interface": "eth0", "address": "192.0.2.2", "gateway": "192.0.2.1", "broadcast": "192.0.2.255",
        "netmask": "255.255.255.0", "network": "192.0.2.0", "prefix": "24"}
    assert default_interface(parse_route_get(ROUTE_V6, "ipv6"), interfaces, "ipv6") == {
        "interface": "eth0", "address": "fd00::2", "gateway": "fd00::1", "prefix": "64", "scope": "global"}
    # the route's source is a secondary address: setup gives the route alone
    assert default_interface({"interface": "eth0", "address": "192.0.2.9"}, interfaces, "ipv4") == \
        {"interface": "eth0", "address": "192.0.2.9"}
    assert default_interface({}, interfaces, "ipv4") == {}


def test_collect_from_a_tree_with_a_recorded_ip(tmp_path):
    recorded_ip(tmp_path, v6=ROUTE_V6)
    payload = collect_network(str(tmp_path), run)
    assert payload["errors"] == [] and payload["warnings"] == []
    assert payload["default_ipv4"]["address"] == "192.0.2.2"
    assert payload["default_ipv6"]["address"] == "fd00::2"
    assert payload["interfaces"]["eth0"]["ipv4"]["address"] == "192.0.2.2"


def test_no_ipv6_route_leaves_default_ipv6_empty(tmp_path):
    recorded_ip(tmp_path)
    payload = collect_network(str(tmp_path), run)
    assert payload["errors"] == []
    assert payload["default_ipv6"] == {} and payload["default_ipv4"]["interface"] == "eth0"


def test_tree_without_ip_reports_it(tmp_path):
    payload = collect_network(str(tmp_path), run)
    assert payload["errors"] == ["ip: not found below the probe root"]
    assert payload["interfaces"] == {} and payload["default_ipv4"] == {}


def test_ip_leading_outside_the_root_is_not_run(tmp_path):
    outside = tmp_path / "outside"
    recorded_ip(outside)
    root = tmp_path / "root"
    (root / "usr/sbin").mkdir(parents=True)
    os.symlink(str(outside / "usr/sbin/ip"), str(root / "usr/sbin/ip"))
    # An absolute target resolves below the root, where there is no such tool.
    payload = collect_network(str(root), run)
    assert payload["errors"] == ["ip: not found below the probe root"]
    assert payload["interfaces"] == {}


def test_ip_climbing_out_of_the_root_is_not_run(tmp_path):
    outside = tmp_path / "outside"
    recorded_ip(outside)
    root = tmp_path / "root"
    (root / "usr/sbin").mkdir(parents=True)
    os.symlink("../../../outside/usr/sbin/ip", str(root / "usr/sbin/ip"))
    payload = collect_network(str(root), run)
    assert payload["errors"] == ["ip: not found below the probe root", "/usr/sbin/ip: outside root"]
    assert payload["interfaces"] == {}


def test_failing_or_garbled_ip_is_an_error(tmp_path):
    recorded_ip(tmp_path, addr=None)
    assert collect_network(str(tmp_path), run)["errors"] == \
        ["ip -json addr show exited 1: RTNETLINK answers: Network is unreachable"]
    recorded_ip(tmp_path, v4='[{"dst": "10.0.0.1", "dev": "eth0"}]')
    assert collect_network(str(tmp_path), run)["errors"] == \
        ["ip -json -batch: a route to '10.0.0.1', which was not asked for"]
    recorded_ip(tmp_path, v4="RTNETLINK")
    assert collect_network(str(tmp_path), run)["errors"][0].startswith("ip -json -batch: not JSON")
    recorded_ip(tmp_path, v4='[{"dst": "8.8.8.8", "dev": "eth0", "prefsrc": "fd00::1"}]')
    payload = collect_network(str(tmp_path), run)
    assert payload["errors"] == ["route ipv4: prefsrc fd00::1 is not an ipv4 address"]
    assert payload["interfaces"]["eth0"]["ipv4"]["address"] == "192.0.2.2"


def test_missing_root_is_an_error(tmp_path):
    payload = collect_network(str(tmp_path / "absent"), run)
    assert payload["errors"] and "does not exist" in payload["errors"][0]


def test_live_host_matches_setup_network_facts():
    """On this machine (root /), the addresses the IMEX rule reads equal those of setup's network subset."""
    payload = collect_network("/", run)
    if shutil.which("ip") is None and not os.path.exists("/usr/sbin/ip"):
        assert payload["errors"] == ["ip: not found below the probe root"]
        return
    setup = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible"), "localhost", "-c", "local",
                            "-m", "ansible.builtin.setup", "-a", "gather_subset=!all,!min,network",
                            "-e", f"ansible_python_interpreter={sys.executable}", "-o"],
                           capture_output=True, text=True, check=True, env=dict(os.environ, ANSIBLE_NOCOLOR="1"))
    facts = json.loads(setup.stdout.split("=>", 1)[1])["ansible_facts"]
    assert payload["errors"] == []
    for family in ("ipv4", "ipv6"):
        assert payload[f"default_{family}"].get("address") == facts[f"ansible_default_{family}"].get("address")
        assert payload[f"default_{family}"].get("interface") == facts[f"ansible_default_{family}"].get("interface")
    assert sorted(payload["interfaces"]) == sorted(facts["ansible_interfaces"])
    for name, entry in payload["interfaces"].items():
        setup_entry = facts.get("ansible_" + name.replace("-", "_").replace(".", "_"), {})
        assert entry.get("ipv4", {}).get("address") == setup_entry.get("ipv4", {}).get("address"), name
        assert [item["address"] for item in entry.get("ipv6", [])] == \
            [item["address"] for item in setup_entry.get("ipv6", [])], name


# --- properties ------------------------------------------------------------------------------

JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=3), max_leaves=10)
MTU = st.one_of(st.integers(-2, 2**33), st.sampled_from([0, 1500, 9000, 65535, 2**32 - 1, 2**32]), st.booleans(),
                st.floats(allow_nan=True), st.text(max_size=5), st.none())
ADDR_INFO = st.fixed_dictionaries({
    "family": st.sampled_from(["inet", "inet6", "link", None, 4]),
    "local": st.one_of(st.ip_addresses().map(str), st.text(max_size=6), st.none()),
    "prefixlen": st.one_of(st.integers(-1, 130), st.booleans(), st.text(max_size=3)),
}, optional={"secondary": st.booleans() | st.text(max_size=3), "scope": st.sampled_from(["global", "link"]),
             "broadcast": st.ip_addresses(v=4).map(str)})


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=40), JSONISH.map(json.dumps),
                 st.lists(st.fixed_dictionaries({"ifname": st.text(max_size=4),
                                                 "addr_info": st.lists(ADDR_INFO, max_size=3)},
                                                optional={"mtu": MTU, "max_mtu": MTU, "min_mtu": MTU}),
                          max_size=3).map(json.dumps)))
def test_parse_ip_addr_gives_interfaces_or_a_parse_error(text):
    try:
        interfaces = parse_ip_addr(text)
    except ParseError:
        return
    for name, entry in interfaces.items():
        assert isinstance(name, str) and name
        assert set(entry) <= {"ipv4", "ipv4_secondaries", "ipv6", "mtu", "max_mtu"}
        for key in ("mtu", "max_mtu"):
            if key in entry:
                assert isinstance(entry[key], int) and not isinstance(entry[key], bool) and 0 <= entry[key] <= 2**32 - 1
        assert entry.get("ipv4_secondaries", [None]) != []  # absent when there are none, as in setup
        for item in [entry["ipv4"]] if "ipv4" in entry else []:
            assert set(item) == {"address", "broadcast", "netmask", "network", "prefix"}
            assert 0 <= int(item["prefix"]) <= 32
        for item in entry.get("ipv4_secondaries", []):
            assert set(item) == {"address", "broadcast", "netmask", "network", "prefix"}
            assert "." in item["address"] and 0 <= int(item["prefix"]) <= 32
        for item in entry.get("ipv6", []):
            assert ":" in item["address"] and 0 <= int(item["prefix"]) <= 128


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=40), JSONISH.map(json.dumps),
                 st.lists(st.dictionaries(st.sampled_from(["dev", "prefsrc", "gateway", "dst"]),
                                          st.one_of(st.ip_addresses().map(str), st.text(max_size=5), st.none(),
                                                    st.integers())), max_size=2).map(json.dumps)),
       st.sampled_from(["ipv4", "ipv6"]))
def test_parse_route_get_gives_a_route_or_a_parse_error(text, family):
    try:
        route = parse_route_get(text, family)
    except ParseError:
        return
    assert set(route) <= {"interface", "address", "gateway"}
    for key in ("address", "gateway"):
        if key in route:
            assert (":" in route[key]) == (family == "ipv6")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=20), st.just(ROUTE_V4), st.just(ROUTE_V6), st.just(IP_ADDR),
                          JSONISH.map(json.dumps)), max_size=4).map("\n".join))
def test_split_batch_gives_the_answers_or_a_parse_error(text):
    try:
        addresses, routes = split_batch(text)
    except ParseError:
        return
    assert addresses is None or isinstance(json.loads(addresses), list)
    assert set(routes) <= {"ipv4", "ipv6"}
    for family, line in routes.items():
        assert (":" in json.loads(line)[0]["dst"]) == (family == "ipv6")
