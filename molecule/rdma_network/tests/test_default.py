# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Verify rdma_network on four hosts, one per network stack, joined by two RoCE rails.

Live state (addresses, MTU, rules, routes, sysctls), the files in each stack's own format as the stack itself
reads them, reachability of every host from every host over every rail, and the RoCE lossless part (the
TEST FIXTURE mlnx_qos stand-in on rail-1, no tool elsewhere).
"""

from __future__ import annotations

import ipaddress
import json

import pytest

# host index = natural name order (rail-1: 0, ...), address = network + 1 + index
HOSTS = ("rail-1", "rail-2", "rail-3", "rail-4")
BACKEND = {"rail-1": "systemd-networkd", "rail-2": "netplan", "rail-3": "networkmanager", "rail-4": "ifupdown"}
RAILS = {
    0: {"netdev": "enp24s0np0", "ipv4": "172.31.0.{n}", "ipv6": "fd00:31::{n}", "table": 100, "priority": 1000},
    1: {"netdev": "enp64s0np0", "ipv4": "172.31.1.{n}", "ipv6": "fd00:31:1::{n}", "table": 101, "priority": 1001},
}
NETWORKS = {0: {"ipv4": "172.31.0.0/24", "ipv6": "fd00:31::/64"},
            1: {"ipv4": "172.31.1.0/24", "ipv6": "fd00:31:1::/64"}}
SKIPPED = "enp79s0np0"  # DOWN in the tree: rail 2, not configured
SYSCTL_FILE = "/etc/sysctl.d/90-gpufabric-rdma-network.conf"
NETPLAN_FILE = "/etc/netplan/60-gpufabric-rail{rail}.yaml"
NETWORKD_FILE = "/etc/systemd/network/60-gpufabric-rail{rail}.network"
NM_FILE = "/etc/NetworkManager/system-connections/gpufabric-rail{rail}.nmconnection"
IFUPDOWN_FILE = "/etc/network/interfaces.d/gpufabric-rail{rail}"
MARKER = "# managed-by: gpufabric.cluster.rdma_network rail"  # the line of every rail file the role writes
QOS_LOG = "/var/log/gpufabric-test-fixture-mlnx_qos.log"  # written by the TEST FIXTURE stand-in of mlnx_qos

# ICMP echoes bound to one netdev and source address, with "don't fragment": the rail carries the packet
# unfragmented end to end or it fails. The image has no ping; this is the same exchange on a raw socket.
PING = r"""
import os, socket, struct, sys
dev, src, size, dsts = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
v6 = ":" in src
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
for seq, dst in enumerate(dsts, 1):
    header = struct.pack("!BBHHH", 128 if v6 else 8, 0, 0, ident, seq)
    if not v6:
        header = struct.pack("!BBHHH", 8, 0, checksum(header + payload), ident, seq)
    sock.settimeout(3)
    sock.sendto(header + payload, (dst, 0))
    while True:
        data, peer = sock.recvfrom(65535)
        icmp = data if v6 else data[(data[0] & 0x0F) * 4:]
        kind, _, _, got_ident, got_seq = struct.unpack("!BBHHH", icmp[:8])
        if kind == (129 if v6 else 0) and got_ident == ident and got_seq == seq and peer[0] == dst:
            print("reply from %s, %d bytes" % (peer[0], len(icmp) - 8), flush=True)
            break
"""


def _n(host):
    return HOSTS.index(host.backend.name) + 1


def _backend(host):
    return BACKEND[host.backend.name]


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
    for path in (NETWORKD_FILE, NETPLAN_FILE, NM_FILE, IFUPDOWN_FILE):
        assert not host.file(path.format(rail=2)).exists
    assert not host.interface(SKIPPED).exists


def test_only_the_stack_in_use_holds_rail_files(host):
    backend = _backend(host)
    assert host.file(NETWORKD_FILE.format(rail=0)).exists == (backend == "systemd-networkd")
    assert host.file(NETPLAN_FILE.format(rail=0)).exists == (backend == "netplan")
    assert host.file(NM_FILE.format(rail=0)).exists == (backend == "networkmanager")
    assert host.file(IFUPDOWN_FILE.format(rail=0)).exists == (backend == "ifupdown")


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_policy_routing_is_live(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    for family in ("ipv4", "ipv6"):
        flag = "-4" if family == "ipv4" else "-6"
        rules = [{key: rule.get(key) for key in ("priority", "src", "table")}
                 for rule in _json(host, f"ip -json {flag} rule show")]
        assert {"priority": spec["priority"], "src": spec[family].format(n=n), "table": str(spec["table"])} in rules
        # the rail subnet in the rail's table, on the rail, from the rail address (NetworkManager adds its
        # link-local route to the table too: only the rail subnet is asserted)
        network = str(ipaddress.ip_network(NETWORKS[rail][family]))
        routes = [route for route in _json(host, f"ip -json {flag} route show table {spec['table']}")
                  if route["dst"] == network]
        assert [route["dev"] for route in routes] == [spec["netdev"]]
        if family == "ipv4":
            assert routes[0].get("prefsrc") == spec["ipv4"].format(n=n)
        # and reachable from anywhere on the host through the main table
        main = _json(host, f"ip -json {flag} route show table main {network}")
        assert [route["dev"] for route in main] == [spec["netdev"]]


def test_management_network_is_untouched(host):
    # the default route and the podman interface keep their own configuration; the rails' stack does not manage it
    default = _json(host, "ip -json -4 route show default")
    assert [route["dev"] for route in default] == ["eth0"]
    assert {rule["priority"] for rule in _json(host, "ip -json -4 rule show")} >= {0, 32766, 32767}
    backend = _backend(host)
    if backend in ("systemd-networkd", "netplan"):
        assert "unmanaged" in host.check_output("networkctl --no-pager list eth0")
    elif backend == "networkmanager":
        devices = dict(line.split(":", 1) for line in
                       host.check_output("nmcli -t -f DEVICE,STATE device status").splitlines())
        assert devices["eth0"] == "connected (externally)"
    else:
        assert "eth0" not in host.check_output("ifquery --state")


@pytest.mark.parametrize("rail", sorted(RAILS))
def test_sysctls_are_live_and_persisted(host, rail):
    netdev = RAILS[rail]["netdev"]
    expected = {"arp_ignore": "1", "arp_announce": "2", "rp_filter": "2"}
    persisted = host.file(SYSCTL_FILE).content_string.splitlines()
    for key, value in expected.items():
        assert host.check_output(f"cat /proc/sys/net/ipv4/conf/{netdev}/{key}") == value
        assert f"net.ipv4.conf.{netdev}.{key}={value}" in persisted


@pytest.mark.backend("systemd-networkd")
@pytest.mark.parametrize("rail", sorted(RAILS))
def test_networkd_file_persists_the_rail(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    network = host.file(NETWORKD_FILE.format(rail=rail))
    assert network.user == "root" and network.mode == 0o644
    text = network.content_string
    assert text.startswith(f"#\n# Ansible managed\n#\n{MARKER} {rail}\n")
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
    assert NETWORKD_FILE.format(rail=rail) in status
    assert "configured" in status


@pytest.mark.backend("netplan")
def test_netplan_file_is_valid_and_rendered(host):
    n = _n(host)
    for rail in RAILS:
        netplan = host.file(NETPLAN_FILE.format(rail=rail))
        assert netplan.user == "root" and netplan.mode == 0o600
        assert netplan.content_string.startswith(f"#\n# Ansible managed\n#\n{MARKER} {rail}\n")
    # netplan's own parser accepts the file (it writes the same networkd files again) and prints no warning
    result = host.run("netplan generate")
    assert result.rc == 0 and result.stderr.strip() == "", result.stderr
    # netplan's view of the rails, then networkd's: configured from netplan's generated files
    config = host.check_output("netplan get ethernets")
    for spec in RAILS.values():
        assert spec["netdev"] in config
        assert f"{spec['ipv4'].format(n=n)}/24" in config and f"{spec['ipv6'].format(n=n)}/64" in config
        status = host.check_output(f"networkctl --no-pager status {spec['netdev']}")
        assert f"/run/systemd/network/10-netplan-{spec['netdev']}.network" in status
        assert "configured" in status
    assert host.service("systemd-networkd").is_enabled and host.service("systemd-networkd").is_running


@pytest.mark.backend("networkmanager")
@pytest.mark.parametrize("rail", sorted(RAILS))
def test_networkmanager_connection_is_active(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    keyfile = host.file(NM_FILE.format(rail=rail))
    assert keyfile.user == "root" and keyfile.mode == 0o600
    # NetworkManager loaded the keyfile and activated it on the rail
    active = host.check_output("nmcli -t -f NAME,DEVICE,FILENAME connection show --active").splitlines()
    assert f"gpufabric-rail{rail}:{spec['netdev']}:{NM_FILE.format(rail=rail)}" in active
    # terse mode escapes the colons of the values
    fields = dict(line.replace("\\:", ":").split(":", 1) for line in host.check_output(
        f"nmcli -t -f ipv4.addresses,ipv6.addresses,ipv4.route-table,ipv4.routing-rules,802-3-ethernet.mtu "
        f"connection show gpufabric-rail{rail}").splitlines())
    assert fields["ipv4.addresses"] == f"{spec['ipv4'].format(n=n)}/24"
    assert fields["ipv6.addresses"] == f"{spec['ipv6'].format(n=n)}/64"
    assert fields["ipv4.route-table"] == str(spec["table"])
    assert f"from {spec['ipv4'].format(n=n)}" in fields["ipv4.routing-rules"]
    assert fields["802-3-ethernet.mtu"] == "9000"
    assert host.service("NetworkManager").is_running


@pytest.mark.backend("ifupdown")
@pytest.mark.parametrize("rail", sorted(RAILS))
def test_ifupdown_stanzas_are_read_and_up(host, rail):
    spec = RAILS[rail]
    n = _n(host)
    stanza = host.file(IFUPDOWN_FILE.format(rail=rail))
    assert stanza.user == "root" and stanza.mode == 0o644
    assert "source /etc/network/interfaces.d/*" in host.file("/etc/network/interfaces").content_string
    # ifupdown's own parser reads the rail from the interfaces files, and holds it up
    query = host.check_output(f"ifquery {spec['netdev']}").splitlines()
    assert f"address: {spec['ipv4'].format(n=n)}" in query
    assert f"address: {spec['ipv6'].format(n=n)}" in query
    assert "mtu: 9000" in query
    assert f"{spec['netdev']}={spec['netdev']}" in host.check_output("ifquery --state").splitlines()
    assert host.service("networking").is_enabled


def test_roce_lossless_settings(host):
    if host.backend.name == "rail-1":
        # the TEST FIXTURE stand-in recorded the role's calls: read, set once per rail, read again (idempotence
        # and side effect), never set again
        calls = host.file(QOS_LOG).content_string.splitlines()
        for spec in RAILS.values():
            netdev = spec["netdev"]
            assert calls.count(f"-i {netdev} --trust dscp --pfc 0,0,0,1,0,0,0,0") == 1
            assert calls.count(f"-i {netdev}") >= 2
            state = host.check_output(f"mlnx_qos -i {netdev}")
            assert "Priority trust state: dscp" in state
            assert "enabled     0   0   0   1   0   0   0   0" in state
    else:
        # no tool on this host: the role skipped the lossless part (and the run did not fail)
        assert not host.exists("mlnx_qos")
        assert not host.file(QOS_LOG).exists


@pytest.mark.parametrize("rail", sorted(RAILS))
@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_hosts_reach_each_other_over_every_rail_with_jumbo_frames(host, rail, family):
    spec = RAILS[rail]
    n = _n(host)
    peers = [spec[family].format(n=peer) for peer in range(1, len(HOSTS) + 1) if peer != n]
    size = 9000 - 8 - (20 if family == "ipv4" else 40)  # a full 9000-byte IP packet, not fragmented
    src = spec[family].format(n=n)
    result = host.run(f"python3 - {spec['netdev']} {src} {size} {' '.join(peers)} <<'EOF'\n{PING}\nEOF")
    assert result.rc == 0, result.stderr
    assert result.stdout.splitlines() == [f"reply from {dst}, {size} bytes" for dst in peers]
    # one byte more than the MTU does not pass: the MTU is 9000, not larger
    too_big = host.run(f"python3 - {spec['netdev']} {src} {size + 1} {peers[0]} <<'EOF'\n{PING}\nEOF")
    assert too_big.rc != 0
