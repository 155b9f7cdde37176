# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify rdma_network on two hosts joined by two RoCE rails: live state, systemd-networkd files, reachability."""

from __future__ import annotations

import ipaddress
import json

import pytest
import testinfra

HOSTS = ("rail-1", "rail-2")
# host index = natural name order (rail-1: 0, rail-2: 1), address = network + 1 + index
RAILS = {
    0: {"netdev": "enp24s0np0", "ipv4": "172.31.0.{n}", "ipv6": "fd00:31::{n}", "table": 100, "priority": 1000},
    1: {"netdev": "enp64s0np0", "ipv4": "172.31.1.{n}", "ipv6": "fd00:31:1::{n}", "table": 101, "priority": 1001},
}
SKIPPED = "enp79s0np0"  # DOWN in the tree: rail 2, not configured
SYSCTL_FILE = "/etc/sysctl.d/90-gpufabric-rdma-network.conf"

# An ICMP echo bound to one netdev and source address, with "don't fragment": the rail carries the packet
# unfragmented end to end or it fails. The image has no ping; this is the same exchange on a raw socket.
PING = r"""
import os, socket, struct, sys
dev, src, dst, size = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
v6 = ":" in dst
sock = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_RAW,
                     socket.IPPROTO_ICMPV6 if v6 else socket.IPPROTO_ICMP)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
sock.bind((src, 0))
if v6:
    sock.setsockopt(socket.IPPROTO_IPV6, 62, 1)  # IPV6_DONTFRAG
else:
    sock.setsockopt(socket.IPPROTO_IP, 10, 2)  # IP_MTU_DISCOVER = IP_PMTUDISC_DO
ident = os.getpid() & 0xFFFF
payload = b"r" * size
def checksum(data):
    data += b"\0" * (len(data) % 2)
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    total = (total >> 16) + (total & 0xFFFF)
    return ~(total + (total >> 16)) & 0xFFFF
header = struct.pack("!BBHHH", 128 if v6 else 8, 0, 0, ident, 1)
if not v6:
    header = struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident, 1)
sock.settimeout(3)
sock.sendto(header + payload, (dst, 0))
while True:
    data, peer = sock.recvfrom(65535)
    icmp = data if v6 else data[(data[0] & 0x0F) * 4:]
    kind, _, _, got_ident, _ = struct.unpack("!BBHHH", icmp[:8])
    if kind == (129 if v6 else 0) and got_ident == ident and peer[0] == dst:
        print("reply from %s, %d bytes" % (peer[0], len(icmp) - 8))
        break
"""


def _host(name):
    return testinfra.get_host(f"podman://{name}")


def _n(host):
    return HOSTS.index(host.backend.name) + 1


def _json(host, command):
    return json.loads(host.check_output(command) or "[]")


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_addresses_and_mtu_are_live(host, rail):
    spec = RAILS[rail]
    link = _json(host, f"ip -json address show dev {spec['netdev']}")[0]
    assert link["mtu"] == 9000
    assert link["operstate"] == "UP"
    addresses = {(item["local"], item["prefixlen"]) for item in link["addr_info"] if item.get("scope") == "global"}
    assert addresses == {(spec["ipv4"].format(n=_n(host)), 24), (spec["ipv6"].format(n=_n(host)), 64)}


def test_inactive_port_is_left_alone(host):
    assert not host.file("/etc/systemd/network/60-gpufabric-rail2.network").exists
    assert not host.interface(SKIPPED).exists


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_policy_routing_is_live(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    rules4 = _json(host, "ip -json -4 rule show")
    rules6 = _json(host, "ip -json -6 rule show")
    assert {"priority": spec["priority"], "src": spec["ipv4"].format(n=n), "table": str(spec["table"])} in [
        {key: rule.get(key) for key in ("priority", "src", "table")} for rule in rules4]
    assert {"priority": spec["priority"], "src": spec["ipv6"].format(n=n), "table": str(spec["table"])} in [
        {key: rule.get(key) for key in ("priority", "src", "table")} for rule in rules6]
    routes4 = _json(host, f"ip -json -4 route show table {spec['table']}")
    assert [(route["dst"], route["dev"], route.get("prefsrc")) for route in routes4] == [
        (f"172.31.{rail}.0/24", spec["netdev"], spec["ipv4"].format(n=n))]
    routes6 = _json(host, f"ip -json -6 route show table {spec['table']}")
    assert [(route["dst"], route["dev"]) for route in routes6] == [
        (str(ipaddress.ip_network(f"fd00:31:{rail}::/64")), spec["netdev"])]


def test_management_network_is_untouched(host):
    # the default route and the podman interface keep their own configuration; networkd does not manage them
    default = _json(host, "ip -json -4 route show default")
    assert [route["dev"] for route in default] == ["eth0"]
    assert "unmanaged" in host.check_output("networkctl --no-pager list eth0")
    assert {rule["priority"] for rule in _json(host, "ip -json -4 rule show")} >= {0, 32766, 32767}


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_sysctls_are_live_and_persisted(host, rail):
    netdev = RAILS[rail]["netdev"]
    expected = {"arp_ignore": "1", "arp_announce": "2", "rp_filter": "2"}
    persisted = host.file(SYSCTL_FILE).content_string.splitlines()
    for key, value in expected.items():
        assert host.check_output(f"cat /proc/sys/net/ipv4/conf/{netdev}/{key}") == value
        assert f"net.ipv4.conf.{netdev}.{key}={value}" in persisted


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_networkd_file_persists_the_rail(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    network = host.file(f"/etc/systemd/network/60-gpufabric-rail{rail}.network")
    assert network.user == "root" and network.mode == 0o644
    text = network.content_string
    assert text.startswith("#\n# Ansible managed\n")
    for line in (f"Name={spec['netdev']}", "MTUBytes=9000", f"Address={spec['ipv4'].format(n=n)}/24",
                 f"Address={spec['ipv6'].format(n=n)}/64", f"Table={spec['table']}",
                 f"From={spec['ipv4'].format(n=n)}", f"From={spec['ipv6'].format(n=n)}",
                 f"Priority={spec['priority']}"):
        assert line in text.splitlines(), line
    assert host.service("systemd-networkd").is_enabled
    assert host.service("systemd-networkd").is_running
    conf = host.file("/etc/systemd/networkd.conf.d/90-gpufabric-rdma-network.conf").content_string
    assert "ManageForeignRoutingPolicyRules=no" in conf.splitlines()
    # networkd itself reports the rail configured from this file
    status = host.check_output(f"networkctl --no-pager status {spec['netdev']}")
    assert f"/etc/systemd/network/60-gpufabric-rail{rail}.network" in status
    assert "configured" in status


@pytest.mark.parametrize("rail", sorted(RAILS))
@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_hosts_reach_each_other_over_every_rail_with_jumbo_frames(host, rail, family):
    spec = RAILS[rail]
    n = _n(host)
    peer = 3 - n
    size = 9000 - 8 - (20 if family == "ipv4" else 40)  # a full 9000-byte IP packet, not fragmented
    src, dst = spec[family].format(n=n), spec[family].format(n=peer)
    result = host.run(f"python3 - {spec['netdev']} {src} {dst} {size} <<'EOF'\n{PING}\nEOF")
    assert result.rc == 0, result.stderr
    assert f"reply from {dst}, {size} bytes" in result.stdout
    # one byte more than the MTU does not pass: the MTU is 9000, not larger
    too_big = host.run(f"python3 - {spec['netdev']} {src} {dst} {size + 1} <<'EOF'\n{PING}\nEOF")
    assert too_big.rc != 0
