#!/usr/bin/env bash
# TEST FIXTURE: build a flat apt repository of stand-in NVIDIA packages for the molecule scenarios.
#
# NVIDIA's repositories are not reachable from the test machines, so the scenarios serve packages with the
# real names (nvidia-imex-570, nvidia-imex) that install the files the real ones ship: /usr/bin/nvidia-imex
# (a daemon stand-in that only stays running and counts its starts), /usr/bin/nvidia-imex-ctl (answers -N,
# -N -j and -q in the real formats from the nodes file), /lib/systemd/system/nvidia-imex.service and
# /etc/nvidia-imex/config.cfg. They are NOT NVIDIA software; every description says so.
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
# it checks its configuration as the real daemon needs it, counts its starts and stays running.
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
loop='echo $$ > /run/nvidia-imex-standin.pid; while :; do sleep 3600; done'
if [ "$(setting DAEMONIZE)" = 1 ]; then
  sh -c "$loop" </dev/null >/dev/null 2>&1 &
  exit 0
fi
exec sh -c "$loop"
SCRIPT
}

ctl() {
  cat <<'SCRIPT'
#!/usr/bin/env python3
# TEST FIXTURE: stand-in for NVIDIA's nvidia-imex-ctl (gpufabric.cluster molecule tests). Answers -N, -N -j
# and -q in the real formats from the nodes file; every node is READY while the local stand-in daemon runs.
import datetime, json, os, sys

args = sys.argv[1:]
config = args[args.index("-c") + 1] if "-c" in args else "/etc/nvidia-imex/config.cfg"
settings = {}
with open(config, encoding="utf-8") as handle:
    for line in handle:
        if "=" in line and not line.lstrip().startswith("#"):
            key, value = line.strip().split("=", 1)
            settings[key] = value
nodes_file = settings.get("IMEX_NODE_CONFIG_FILE") or "/etc/nvidia-imex/nodes_config.cfg"
with open(nodes_file, encoding="utf-8") as handle:
    nodes = [line.strip() for line in handle if line.strip() and not line.strip().startswith("#")]
try:
    with open("/run/nvidia-imex-standin.pid", encoding="utf-8") as handle:
        os.kill(int(handle.read().strip()), 0)
    running = True
except (OSError, ValueError):
    running = False
if not running:
    print("Connection to the IMEX daemon failed", file=sys.stderr)
    sys.exit(1)
if "-q" in args:
    sys.stdout.write("READY\n")
    sys.exit(0)
if "-N" not in args:
    print("usage: nvidia-imex-ctl -N [-j] | -q [-c config]", file=sys.stderr)
    sys.exit(2)
now = datetime.datetime.now()
stamp = f"{now.day}/{now.month}/{now.year} {now:%H:%M:%S}.{now.microsecond // 1000:03d}"
version = "@VERSION@".rsplit(".", 1)[0]
if "-j" in args:
    out = {"nodes": {}, "timestamp": stamp, "status": "UP"}
    for index, address in enumerate(nodes):
        out["nodes"][str(index)] = {
            "status": "READY", "host": address, "hostName": "", "version": version,
            "connections": {str(peer): {"host": other, "status": "CONNECTED", "changed": False}
                            for peer, other in enumerate(nodes)}}
    print(json.dumps(out))
    sys.exit(0)
print("Connectivity Table Legend:\nI - Invalid - Node wasn't reachable, no connection status available\n"
      "N - Never Connected\nC - Connected - Ready for operation\n")
print(stamp)
print("Nodes:")
for index, address in enumerate(nodes):
    print(f"Node #{index:<3} - {address:<15} - READY                - Version: {version}")
print("\n Nodes From\\To  " + "   ".join(str(index) for index in range(len(nodes))))
for index in range(len(nodes)):
    print(f"{index:>8}        " + "   ".join("C" for _ in nodes))
print("\nDomain State: UP")
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
  mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/lib/systemd/system" "$root/etc/nvidia-imex"
  daemon | sed "s/@VERSION@/${version%-*}/" > "$root/usr/bin/nvidia-imex"
  ctl | sed "s/@VERSION@/${version%-*}/" > "$root/usr/bin/nvidia-imex-ctl"
  chmod 0755 "$root/usr/bin/nvidia-imex" "$root/usr/bin/nvidia-imex-ctl"
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
 stand-ins that answer in the real formats but do no IMEX at all.
CONTROL
  cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
POSTINST
  chmod 0755 "$root/DEBIAN/postinst"
  dpkg-deb --root-owner-group --build "$root" "$dest/${package}_${version}_all.deb" >/dev/null
}

build nvidia-imex-570 570.172.08-1 nvidia-imex
build nvidia-imex 580.95.05-1 nvidia-imex-570
(cd "$dest" && apt-ftparchive packages . > Packages && apt-ftparchive release . > Release)
echo "$dest"
