#!/usr/bin/env bash
# TEST FIXTURE: build a flat apt repository of stand-in NVIDIA packages for the molecule scenarios.
#
# NVIDIA's repositories are not reachable from the test machines, so the scenarios serve packages with the
# real names (nvidia-imex-570, nvidia-imex) that install the files the real ones ship: /usr/bin/nvidia-imex
# (a daemon stand-in that counts its starts and listens on SERVER_PORT for its peers), /usr/bin/nvidia-imex-ctl
# (answers -N, -N -j and -q in the real formats; a peer is READY/CONNECTED only when its stand-in daemon was
# reached over the network and holds the same nodes list; `-q --u=PATH` asks the daemon over the Unix socket it
# opens at IMEX_CMD_UNIX_DOMAIN_PATH when it loaded IMEX_CMD_ENABLED=1), /lib/systemd/system/nvidia-imex.service and
# /etc/nvidia-imex/config.cfg, with the network side in /usr/lib/nvidia-imex-standin/standin.py. They are NOT
# NVIDIA software; every description says so.
#
# Driver packages of the CUDA repository for the 570 and 580 branches (nvidia_driver scenario): the open and
# proprietary meta packages nvidia-open-<branch> and cuda-drivers-<branch>, the unsuffixed nvidia-persistenced
# and nvidia-modprobe in both branches' versions (so that only the role's branch pin picks the right one),
# nvidia-fabricmanager-570 and nvidia-fabricmanager (580 on), with their units, daemons and configuration. The
# driver meta packages also ship and enable gpufabric-standin-driver-load.service, a oneshot that "loads" the
# installed driver at each boot of a test host that asks for it (molecule/domain_upgrade): see driver_loader below.
# It does nothing on a host without /etc/gpufabric-standin/probe-root, so scenarios that never reboot are as before.
# DOCA host packages (doca_ofed scenario): the profiles doca-ofed and doca-roce, ofed-scripts (ofed_info),
# mlnx-ofed-kernel-dkms (the DKMS source marker) and mlnx-ofed-kernel-utils. None of them loads or builds
# anything.
#
# Usage: build-standin-repo.sh DEST   (DEST/Packages, DEST/Release and the .deb files; use as `deb [trusted=yes] file:DEST /`)
set -euo pipefail

dest="${1:?usage: build-standin-repo.sh DEST}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$dest"
rm -f "$dest"/*.deb

daemon() {
  cat <<'SCRIPT'
#!/bin/sh
# TEST FIXTURE: stand-in for NVIDIA's nvidia-imex daemon (gpufabric.cluster molecule tests). It does not do IMEX:
# it checks its configuration as the real daemon needs it, counts its starts, keeps a copy of the two files it
# loaded (what a real daemon holds in memory until its next start) and runs the network side of the stand-in
# (standin.py serve: listens on SERVER_PORT, default 50000, and answers its peers with the nodes it loaded).
set -eu
VERSION="@VERSION@"
config=/etc/nvidia-imex/config.cfg
while [ $# -gt 0 ]; do
  case "$1" in
    --version|-v) echo "IMEX version is: $VERSION"; exit 0 ;;
    -c) config="$2"; shift ;;
  esac
  shift
done
setting() { sed -n "s/^$1=//p" "$config" | tail -n 1; }
[ -r "$config" ] || { echo "nvidia-imex: cannot read $config" >&2; exit 1; }
nodes="$(setting IMEX_NODE_CONFIG_FILE)"
nodes="${nodes:-/etc/nvidia-imex/nodes_config.cfg}"
[ -r "$nodes" ] || { echo "nvidia-imex: cannot read the nodes file $nodes" >&2; exit 1; }
if grep -v '^[[:space:]]*\(#\|$\)' "$nodes" | grep -qv '^[0-9a-fA-F.:]*$'; then
  echo "nvidia-imex: $nodes holds an entry that is not an IP address" >&2; exit 1
fi
state=/var/lib/nvidia-imex-standin
mkdir -p "$state"
count="$(cat "$state/starts" 2>/dev/null || echo 0)"
echo $((count + 1)) > "$state/starts"
cp "$config" "$state/loaded-config.cfg"
cp "$nodes" "$state/loaded-nodes"
rm -f /run/nvidia-imex-standin.pid "$state/listen"
serve="/usr/lib/nvidia-imex-standin/standin.py serve $state/loaded-config.cfg $state/loaded-nodes"
# TEST FIXTURE timeline of molecule/domain_upgrade (see driver_loader in build-repo.sh): one line a start
started() {
  if [ -s /etc/gpufabric-standin/timeline ]; then
    echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ) $(hostname) imex-started $VERSION" >> "$(cat /etc/gpufabric-standin/timeline)"
  fi
}
if [ "$(setting DAEMONIZE)" != 1 ]; then
  started
  exec python3 $serve
fi
# Like the real daemon: the start succeeds once it listens (the server writes its pid after binding), fails when
# it cannot (port taken, bad address).
python3 $serve </dev/null >/dev/null 2>"$state/serve.err" &
server=$!
tries=0
while [ ! -s /run/nvidia-imex-standin.pid ]; do
  if ! kill -0 "$server" 2>/dev/null || [ "$tries" -ge 100 ]; then
    echo "nvidia-imex: cannot listen on port $(setting SERVER_PORT): $(tail -n 1 "$state/serve.err")" >&2; exit 1
  fi
  tries=$((tries + 1)); sleep 0.1
done
started
exit 0
SCRIPT
}

standin_lib() {
  cat <<'SCRIPT'
#!/usr/bin/env python3
# TEST FIXTURE: stand-in for NVIDIA's IMEX daemon and nvidia-imex-ctl (gpufabric.cluster molecule tests). It does
# not do IMEX. `serve CONFIG` is the daemon's network side: it listens on SERVER_PORT (BIND_INTERFACE_IP, else every
# interface) and answers peers with the nodes list it loaded, and, when it loaded IMEX_CMD_ENABLED=1 with an
# IMEX_CMD_UNIX_DOMAIN_PATH, answers READY on that Unix socket; `ctl ARGS` is nvidia-imex-ctl (-N, -N -j, -q,
# -q --u=PATH), which asks the local daemon. A node is READY, and a pair CONNECTED, only when a TCP connection over the network
# reached that node's daemon and it holds the same nodes list: a stopped peer, an unreachable address or a tray
# with another nodes file shows up as not connected.
import datetime
import json
import os
import socket
import socketserver
import sys
import threading

VERSION = "@VERSION@"
STATE = "/var/lib/nvidia-imex-standin"
PIDFILE = "/run/nvidia-imex-standin.pid"
LISTEN = STATE + "/listen"
HELLO_TIMEOUT = 1.0   # one TCP connect and answer, daemon to daemon
ROW_TIMEOUT = 3.0     # a daemon's answer with its own probes of its nodes (concurrent)
STATUS_TIMEOUT = 6.0  # the local daemon's answer with every node's row (concurrent)


def settings(path):
    found = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if "=" in line and not line.lstrip().startswith("#"):
                key, value = line.strip().split("=", 1)
                found[key] = value
    return found


def read_nodes(path):
    with open(path, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip() and not line.strip().startswith("#")]


def ask(address, port, request, timeout):
    """Send one request line to the daemon at address:port; return its JSON answer."""
    with socket.create_connection((address, port), timeout=timeout) as connection:
        connection.settimeout(timeout)
        connection.sendall(request.encode() + b"\n")
        data = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data.decode())


def each(function, items):
    """function(item) for every item, concurrently; the results in order."""
    results = [None] * len(items)

    def run(index, item):
        results[index] = function(item)
    threads = [threading.Thread(target=run, args=(index, item)) for index, item in enumerate(items)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class Daemon:
    """What the daemon loaded at its start (the copies the start script made) and its answers to peers."""

    def __init__(self, config, nodes):
        loaded = settings(config)
        self.port = int(loaded.get("SERVER_PORT") or 50000)
        self.bind = loaded.get("BIND_INTERFACE_IP") or ""
        self.nodes = read_nodes(nodes)
        enabled = loaded.get("IMEX_CMD_ENABLED", "").strip() == "1"
        self.control = loaded.get("IMEX_CMD_UNIX_DOMAIN_PATH", "").strip() if enabled else ""

    def hello(self):
        return {"version": VERSION.rsplit(".", 1)[0], "nodes": self.nodes}

    def probe(self, address):
        """This daemon's connection to the node at address: reached over TCP, with the same nodes list?"""
        try:
            answer = ask(address, self.port, "hello", HELLO_TIMEOUT)
        except (OSError, ValueError):
            return "NEVER_CONNECTED"
        return "CONNECTED" if answer.get("nodes") == self.nodes else "NODE_MAP_MISMATCH"

    def row(self):
        return dict(self.hello(), row=each(self.probe, self.nodes))

    def status(self):
        """The domain as this daemon sees it: every node's own row, asked over the network."""
        def ask_row(address):
            try:
                return ask(address, self.port, "row", ROW_TIMEOUT)
            except (OSError, ValueError):
                return None
        return dict(self.hello(), rows=each(ask_row, self.nodes))

    def answer(self, request):
        if request == "hello":
            return self.hello()
        if request == "row":
            return self.row()
        if request == "status":
            return self.status()
        return {"error": "unknown request"}


def serve(config, nodes):
    daemon = Daemon(config, nodes)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            self.request.settimeout(STATUS_TIMEOUT)
            request = self.rfile.readline(256).decode(errors="replace").strip()
            self.wfile.write(json.dumps(daemon.answer(request)).encode())

    class Server(socketserver.ThreadingTCPServer):
        allow_reuse_address = True
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in daemon.bind or (not daemon.bind and socket.has_ipv6) \
            else socket.AF_INET

        def server_bind(self):
            if self.address_family == socket.AF_INET6 and not daemon.bind:
                self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            super().server_bind()

    try:
        server = Server((daemon.bind or "::", daemon.port), Handler)
    except OSError:
        if daemon.bind:
            raise
        Server.address_family = socket.AF_INET
        server = Server(("0.0.0.0", daemon.port), Handler)
    if daemon.control:
        class Control(socketserver.StreamRequestHandler):
            def handle(self):
                self.wfile.write(b"READY\n")

        if os.path.lexists(daemon.control):
            os.unlink(daemon.control)  # the socket of the previous start
        os.makedirs(os.path.dirname(daemon.control) or "/", exist_ok=True)
        control = socketserver.ThreadingUnixStreamServer(daemon.control, Control)
        control.daemon_threads = True
        threading.Thread(target=control.serve_forever, daemon=True).start()
    local = daemon.bind or "localhost"
    with open(LISTEN, "w", encoding="utf-8") as handle:
        handle.write(f"{local} {daemon.port}\n")
    with open(PIDFILE, "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    server.serve_forever()


def local_daemon():
    """(address, port) of the running local daemon, or None."""
    try:
        with open(PIDFILE, encoding="utf-8") as handle:
            os.kill(int(handle.read().strip()), 0)
        with open(LISTEN, encoding="utf-8") as handle:
            address, port = handle.read().split()
        return address, int(port)
    except (OSError, ValueError):
        return None


def domain(status):
    """Node states, the connection matrix and the domain state from the local daemon's status answer."""
    nodes = status["nodes"]
    states, versions, matrix = [], [], []
    for address, answer in zip(nodes, status["rows"]):
        if answer is None:
            states.append("UNAVAILABLE")
            versions.append("")
            matrix.append(["INVALID"] * len(nodes))
        elif answer.get("nodes") != nodes:
            states.append("UNAVAILABLE")
            versions.append(answer.get("version", ""))
            matrix.append(["NODE_MAP_MISMATCH"] * len(nodes))
        else:
            states.append("READY")
            versions.append(answer.get("version", ""))
            matrix.append(list(answer["row"]))
    if all(state == "READY" for state in states) and all(cell == "CONNECTED" for row in matrix for cell in row):
        overall = "UP"
    elif states.count("READY") > 1:
        overall = "DEGRADED"
    else:
        overall = "DOWN"
    return nodes, states, versions, matrix, overall


LETTERS = {"CONNECTED": "C", "NEVER_CONNECTED": "N", "INVALID": "I", "NODE_MAP_MISMATCH": "!M!"}


def query(path):
    """nvidia-imex-ctl -q --u=PATH: the answer of the daemon on its control socket."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(HELLO_TIMEOUT)
            connection.connect(path)
            answer = connection.recv(256).decode(errors="replace")
    except OSError:
        print("Connection to the IMEX daemon failed", file=sys.stderr)
        return 1
    sys.stdout.write(answer)
    return 0


def ctl(args):
    sockets = [arg[len("--u="):] for arg in args if arg.startswith("--u=")]
    if "-q" in args and sockets:
        return query(sockets[-1])
    found = local_daemon()
    answer = None
    if found:
        try:
            answer = ask(found[0], found[1], "status" if "-N" in args else "hello", STATUS_TIMEOUT)
        except (OSError, ValueError):
            answer = None
    if answer is None:
        print("Connection to the IMEX daemon failed", file=sys.stderr)
        return 1
    if "-q" in args:
        sys.stdout.write("READY\n")
        return 0
    if "-N" not in args:
        print("usage: nvidia-imex-ctl -N [-j] | -q [-c config]", file=sys.stderr)
        return 2
    nodes, states, versions, matrix, overall = domain(answer)
    now = datetime.datetime.now()
    stamp = f"{now.day}/{now.month}/{now.year} {now:%H:%M:%S}.{now.microsecond // 1000:03d}"
    if "-j" in args:
        out = {"nodes": {}, "timestamp": stamp, "status": overall}
        for index, address in enumerate(nodes):
            out["nodes"][str(index)] = {
                "status": states[index], "host": address, "hostName": "", "version": versions[index],
                "connections": {str(peer): {"host": other, "status": matrix[index][peer], "changed": False}
                                for peer, other in enumerate(nodes)}}
        print(json.dumps(out))
        return 0
    print("Connectivity Table Legend:\nI - Invalid - Node wasn't reachable, no connection status available\n"
          "N - Never Connected\n!M! - Node map mismatch, communication disabled.\n"
          "C - Connected - Ready for operation\n")
    print(stamp)
    print("Nodes:")
    for index, address in enumerate(nodes):
        print(f"Node #{index:<3} - {address:<15} - {states[index]:<20} - Version: {versions[index]}")
    print("\n Nodes From\\To  " + "   ".join(str(index) for index in range(len(nodes))))
    for index in range(len(nodes)):
        print(f"{index:>8}        " + "   ".join(LETTERS.get(cell, "I") for cell in matrix[index]))
    print(f"\nDomain State: {overall}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(sys.argv[2], sys.argv[3])
    else:
        sys.exit(ctl(sys.argv[2:] if sys.argv[1:2] == ["ctl"] else sys.argv[1:]))
SCRIPT
}

ctl() {
  cat <<'SCRIPT'
#!/bin/sh
# TEST FIXTURE: stand-in for NVIDIA's nvidia-imex-ctl (gpufabric.cluster molecule tests). Answers -N, -N -j and -q
# in the real formats from what the local stand-in daemon finds over the network (see standin.py).
exec python3 /usr/lib/nvidia-imex-standin/standin.py ctl "$@"
SCRIPT
}

unit() {
  cat <<'UNIT'
[Unit]
Description=NVIDIA IMEX service
After=network-online.target
Wants=network-online.target

[Service]
User=root
PrivateTmp=false
Type=forking
TimeoutStartSec=infinity
ExecStart=/usr/bin/nvidia-imex -c /etc/nvidia-imex/config.cfg
LimitCORE=infinity

[Install]
WantedBy=multi-user.target
UNIT
}

build() {
  local package="$1" version="$2" conflicts="$3"
  local root="$work/$package"
  mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/nvidia-imex" \
    "$root/usr/lib/nvidia-imex-standin"
  daemon | sed "s/@VERSION@/${version%-*}/" > "$root/usr/bin/nvidia-imex"
  ctl > "$root/usr/bin/nvidia-imex-ctl"
  standin_lib | sed "s/@VERSION@/${version%-*}/" > "$root/usr/lib/nvidia-imex-standin/standin.py"
  chmod 0755 "$root/usr/bin/nvidia-imex" "$root/usr/bin/nvidia-imex-ctl" "$root/usr/lib/nvidia-imex-standin/standin.py"
  unit > "$root/lib/systemd/system/nvidia-imex.service"
  printf 'LOG_LEVEL=4\nDAEMONIZE=1\nSERVER_PORT=50000\nIMEX_NODE_CONFIG_FILE=/etc/nvidia-imex/nodes_config.cfg\nIMEX_CMD_PORT=50005\nIMEX_CMD_ENABLED=1\n' \
    > "$root/etc/nvidia-imex/config.cfg"
  printf '/etc/nvidia-imex/config.cfg\n' > "$root/DEBIAN/conffiles"
  cat > "$root/DEBIAN/control" <<CONTROL
Package: $package
Version: $version
Architecture: all
Maintainer: gpufabric.cluster contributors <noreply@example.invalid>
Depends: python3
Conflicts: $conflicts
Provides: nvidia-imex-standin
Section: non-free/utils
Priority: optional
Description: TEST FIXTURE - stand-in for NVIDIA IMEX, not NVIDIA software
 Built by the gpufabric.cluster molecule tests. Installs the paths of the real
 package (nvidia-imex, nvidia-imex-ctl, nvidia-imex.service, config.cfg) with
 stand-ins that answer in the real formats but do no IMEX at all: the daemon
 only listens on its server port and answers peers with its nodes list.
CONTROL
  cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
POSTINST
  chmod 0755 "$root/DEBIAN/postinst"
  dpkg-deb --root-owner-group --build "$root" "$dest/${package}_${version}_all.deb" >/dev/null
}

# A stand-in package from a staged tree: standin_deb ROOT PACKAGE VERSION DEPENDS CONFLICTS SUMMARY [ENABLE_UNIT]
# (ENABLE_UNIT: a unit of the package that its postinst enables and its prerm disables, as deb-systemd-helper would)
standin_deb() {
  local root="$1" package="$2" version="$3" depends="$4" conflicts="$5" summary="$6" enable="${7:-}"
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$package"
  printf 'TEST FIXTURE - stand-in, not NVIDIA software (gpufabric.cluster molecule tests).\n' \
    > "$root/usr/share/doc/$package/STANDIN"
  {
    printf 'Package: %s\nVersion: %s\nArchitecture: all\n' "$package" "$version"
    printf 'Maintainer: gpufabric.cluster contributors <noreply@example.invalid>\n'
    [ -z "$depends" ] || printf 'Depends: %s\n' "$depends"
    [ -z "$conflicts" ] || printf 'Conflicts: %s\n' "$conflicts"
    printf 'Section: non-free/utils\nPriority: optional\n'
    printf 'Description: TEST FIXTURE - stand-in, not NVIDIA software: %s\n' "$summary"
    printf ' Built by the gpufabric.cluster molecule tests. It installs the paths of the\n'
    printf ' real package with stand-ins; it loads, builds and configures nothing.\n'
  } > "$root/DEBIAN/control"
  if [ -d "$root/lib/systemd/system" ]; then
    printf '#!/bin/sh\nset -e\nif [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi\n' \
      > "$root/DEBIAN/postinst"
    chmod 0755 "$root/DEBIAN/postinst"
  fi
  if [ -n "$enable" ]; then
    printf 'systemctl enable %s\n' "$enable" >> "$root/DEBIAN/postinst"
    # shellcheck disable=SC2016  # $1 is the prerm's own argument, written as text
    printf '#!/bin/sh\nset -e\nif [ "$1" = remove ]; then systemctl disable %s || true; fi\n' "$enable" \
      > "$root/DEBIAN/prerm"
    chmod 0755 "$root/DEBIAN/prerm"
  fi
  dpkg-deb --root-owner-group --build "$root" "$dest/${package}_${version}_all.deb" >/dev/null
}

# A daemon stand-in that forks, records its pid and stays running: standin_daemon NAME
standin_daemon() {
  cat <<SCRIPT
#!/bin/sh
# TEST FIXTURE: stand-in for NVIDIA's $1 (gpufabric.cluster molecule tests); it only stays running.
case "\${1:-}" in --version|-v) echo "$1 stand-in"; exit 0 ;; esac
sh -c 'echo \$\$ > /run/$1-standin.pid; while :; do sleep 3600; done' </dev/null >/dev/null 2>&1 &
exit 0
SCRIPT
}

forking_unit() {
  local description="$1" exec_start="$2"
  printf '[Unit]\nDescription=%s\nAfter=network-online.target\n\n' "$description"
  printf '[Service]\nType=forking\nExecStart=%s\nLimitCORE=infinity\n\n' "$exec_start"
  printf '[Install]\nWantedBy=multi-user.target\n'
}

# TEST FIXTURE: the stand-in driver's "load" at boot (molecule/domain_upgrade). Where the test wrote
# /etc/gpufabric-standin/probe-root (the root the probes read, e.g. /opt/gpufabric-fixture/gb200_tray), each boot
# writes the installed version in the real formats into <root>/proc/driver/nvidia/version and the
# <root>/sys/module/nvidia*/version files, and into the recorded NVML answers <root>.nvml.json (driver_version,
# nvml_version) when there are some; with /etc/gpufabric-standin/fail-load the old version stays (a driver that did
# not load). With /etc/gpufabric-standin/timeline (the path of a file shared by the scenario's trays) it appends one
# line a boot: "<UTC time> <host> driver-loaded <version> previous=<version before>" or
# "<UTC time> <host> driver-load-failed <version> loaded=<version still loaded>"; the stand-in IMEX daemon appends
# "<UTC time> <host> imex-started <version>" at each successful start. (GPUFABRIC_STANDIN_CONF: another directory
# than /etc/gpufabric-standin, for the unit tests.)
driver_loader() {
  cat <<'SCRIPT'
#!/bin/sh
# TEST FIXTURE: stand-in for the NVIDIA kernel module's load at boot (gpufabric.cluster molecule tests). It loads
# nothing: it writes the installed stand-in driver's version where the probes read the loaded driver.
set -eu
VERSION="@VERSION@"
NVRM="@NVRM@"
conf="${GPUFABRIC_STANDIN_CONF:-/etc/gpufabric-standin}"
[ -s "$conf/probe-root" ] || exit 0
root="$(cat "$conf/probe-root")"
loaded="$(sed -n '1s/^NVRM version:.*Kernel Module.*  \([0-9]*\.[0-9.]*\)  Release Build.*/\1/p' \
  "$root/proc/driver/nvidia/version" 2>/dev/null || true)"
if [ -e "$conf/fail-load" ]; then
  event="driver-load-failed $VERSION loaded=${loaded:-none}"
else
  mkdir -p "$root/proc/driver/nvidia" "$root/sys/module/nvidia"
  printf 'NVRM version: %s  %s  Release Build  (gpufabric-standin)  %s\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n' \
    "$NVRM" "$VERSION" "$(date -u '+%a %b %e %H:%M:%S UTC %Y')" > "$root/proc/driver/nvidia/version"
  for module in "$root"/sys/module/nvidia "$root"/sys/module/nvidia_*; do
    if [ -d "$module" ]; then printf '%s\n' "$VERSION" > "$module/version"; fi
  done
  if [ -f "$root.nvml.json" ]; then
    python3 - "$root.nvml.json" "$VERSION" <<'PYTHON'
import json, sys
path, version = sys.argv[1], sys.argv[2]
with open(path, encoding="utf-8") as handle:
    recording = json.load(handle)
recording["driver_version"] = version
if "nvml_version" in recording:
    recording["nvml_version"] = recording["nvml_version"].split(".", 1)[0] + "." + version
with open(path + ".new", "w", encoding="utf-8") as handle:
    json.dump(recording, handle, indent=1)
PYTHON
    mv "$root.nvml.json.new" "$root.nvml.json"
  fi
  event="driver-loaded $VERSION previous=${loaded:-none}"
fi
if [ -s "$conf/timeline" ]; then
  echo "$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ) $(hostname) $event" >> "$(cat "$conf/timeline")"
fi
SCRIPT
}

driver_loader_unit() {
  cat <<'UNIT'
[Unit]
Description=TEST FIXTURE - stand-in NVIDIA driver load at boot (gpufabric.cluster molecule tests)
ConditionPathExists=/etc/gpufabric-standin/probe-root
Before=nvidia-persistenced.service nvidia-fabricmanager.service nvidia-imex.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/lib/gpufabric-standin/driver-load

[Install]
WantedBy=multi-user.target
UNIT
}

# The driver packages of one branch: driver_branch BRANCH VERSION FABRICMANAGER_PACKAGE OTHER_FABRICMANAGER OTHER_BRANCH
driver_branch() {
  local branch="$1" version="$2" fm="$3" other_fm="$4" other_branch="$5" root
  local upstream="${version%-*}"

  root="$work/nvidia-persistenced-$branch"
  mkdir -p "$root/usr/bin" "$root/lib/systemd/system"
  standin_daemon nvidia-persistenced > "$root/usr/bin/nvidia-persistenced"
  chmod 0755 "$root/usr/bin/nvidia-persistenced"
  forking_unit "NVIDIA Persistence Daemon" \
    "/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose" \
    > "$root/lib/systemd/system/nvidia-persistenced.service"
  standin_deb "$root" nvidia-persistenced "$version" "" "" "NVIDIA persistence daemon $upstream"

  root="$work/nvidia-modprobe-$branch"
  mkdir -p "$root/usr/bin"
  printf '#!/bin/sh\n# TEST FIXTURE: stand-in for nvidia-modprobe; it creates no device node.\nexit 0\n' \
    > "$root/usr/bin/nvidia-modprobe"
  chmod 0755 "$root/usr/bin/nvidia-modprobe"
  standin_deb "$root" nvidia-modprobe "$version" "" "" "NVIDIA device node helper $upstream"

  local flavour meta others nvrm
  for flavour in open proprietary; do
    if [ "$flavour" = open ]; then meta="nvidia-open-$branch"; others="cuda-drivers-$branch"
    else meta="cuda-drivers-$branch"; others="nvidia-open-$branch"; fi
    root="$work/$meta"
    mkdir -p "$root/usr/bin" "$root/usr/src/nvidia-$upstream" "$root/usr/lib/gpufabric-standin" "$root/lib/systemd/system"
    if [ "$flavour" = open ]; then nvrm='NVIDIA UNIX Open Kernel Module for x86_64'
    else nvrm='NVIDIA UNIX x86_64 Kernel Module'; fi
    driver_loader | sed "s/@VERSION@/$upstream/; s/@NVRM@/$nvrm/" > "$root/usr/lib/gpufabric-standin/driver-load"
    chmod 0755 "$root/usr/lib/gpufabric-standin/driver-load"
    driver_loader_unit > "$root/lib/systemd/system/gpufabric-standin-driver-load.service"
    printf '#!/bin/sh\n# TEST FIXTURE: stand-in for nvidia-smi; there is no driver behind it.\n%s\nexit 9\n' \
      "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\"" \
      > "$root/usr/bin/nvidia-smi"
    chmod 0755 "$root/usr/bin/nvidia-smi"
    printf 'PACKAGE_NAME="nvidia"\nPACKAGE_VERSION="%s"\n# TEST FIXTURE: %s kernel modules stand-in, builds nothing\n' \
      "$upstream" "$flavour" > "$root/usr/src/nvidia-$upstream/dkms.conf"
    standin_deb "$root" "$meta" "$version" \
      "nvidia-persistenced (>= $branch), nvidia-modprobe (>= $branch)" \
      "$others, nvidia-open-$other_branch, cuda-drivers-$other_branch" \
      "NVIDIA driver $upstream, $flavour kernel modules (meta package)" gpufabric-standin-driver-load.service
  done

  root="$work/$fm"
  mkdir -p "$root/usr/bin" "$root/lib/systemd/system" "$root/usr/share/nvidia/nvswitch"
  standin_daemon nv-fabricmanager > "$root/usr/bin/nv-fabricmanager"
  chmod 0755 "$root/usr/bin/nv-fabricmanager"
  forking_unit "NVIDIA fabric manager service" \
    "/usr/bin/nv-fabricmanager -c /usr/share/nvidia/nvswitch/fabricmanager.cfg" \
    > "$root/lib/systemd/system/nvidia-fabricmanager.service"
  printf 'LOG_LEVEL=4\nLOG_FILE_NAME=/var/log/fabricmanager.log\nFABRIC_MODE=0\nFM_CMD_PORT_NUMBER=6666\n' \
    > "$root/usr/share/nvidia/nvswitch/fabricmanager.cfg"
  standin_deb "$root" "$fm" "$version" "" "$other_fm" "NVIDIA Fabric Manager $upstream"
}

# The DOCA host profiles and the packages behind them: doca VERSION OFED_VERSION
doca() {
  local version="$1" ofed="$2" root
  root="$work/ofed-scripts"
  mkdir -p "$root/usr/bin"
  cat > "$root/usr/bin/ofed_info" <<SCRIPT
#!/bin/sh
# TEST FIXTURE: stand-in for ofed_info of DOCA-OFED; prints the version only.
if [ "\${1:-}" = "-s" ]; then echo "OFED-internal-$ofed:"; exit 0; fi
echo "OFED-internal-$ofed:"
echo ""
echo "stand-in: no packages listed"
SCRIPT
  chmod 0755 "$root/usr/bin/ofed_info"
  standin_deb "$root" ofed-scripts "$ofed-1" "" "" "ofed_info of DOCA-OFED $ofed"

  root="$work/mlnx-ofed-kernel-dkms"
  mkdir -p "$root/usr/src/mlnx-ofed-kernel-${ofed%%-*}"
  printf 'PACKAGE_NAME="mlnx-ofed-kernel"\nPACKAGE_VERSION="%s"\n# TEST FIXTURE: builds nothing\n' "${ofed%%-*}" \
    > "$root/usr/src/mlnx-ofed-kernel-${ofed%%-*}/dkms.conf"
  standin_deb "$root" mlnx-ofed-kernel-dkms "$ofed-1" "" "" "DOCA-OFED kernel modules source for DKMS"

  root="$work/mlnx-ofed-kernel-utils"
  mkdir -p "$root/usr/sbin"
  printf '#!/bin/sh\n# TEST FIXTURE: stand-in for ibdev2netdev; there is no device behind it.\nexit 0\n' \
    > "$root/usr/sbin/ibdev2netdev"
  chmod 0755 "$root/usr/sbin/ibdev2netdev"
  standin_deb "$root" mlnx-ofed-kernel-utils "$ofed-1" "" "" "DOCA-OFED kernel module utilities"

  root="$work/doca-ofed"
  mkdir -p "$root"
  standin_deb "$root" doca-ofed "$version" "ofed-scripts, mlnx-ofed-kernel-dkms, mlnx-ofed-kernel-utils" "" \
    "DOCA-OFED host profile $version (meta package)"
  root="$work/doca-roce"
  mkdir -p "$root"
  standin_deb "$root" doca-roce "$version" "ofed-scripts, mlnx-ofed-kernel-dkms" "" \
    "DOCA RoCE host profile $version (meta package)"
}

build nvidia-imex-570 570.172.08-1 nvidia-imex
build nvidia-imex 580.95.05-1 nvidia-imex-570
driver_branch 570 570.172.08-1 nvidia-fabricmanager-570 nvidia-fabricmanager 580
driver_branch 580 580.95.05-1 nvidia-fabricmanager nvidia-fabricmanager-570 570
doca 3.1.0-091000 25.07-0.9.7.0
(cd "$dest" && apt-ftparchive packages . > Packages && apt-ftparchive release . > Release)
echo "$dest"
