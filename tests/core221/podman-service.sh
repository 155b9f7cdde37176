#!/usr/bin/env bash
# Run a command with this machine's podman served on a socket that CONTAINER_HOST names, for the ansible-core 2.21
# leg's molecule scenarios: inside the chroot, the podman client of Debian 13 (podman --remote, as CONTAINER_HOST
# asks) drives this machine's podman, its storage and the molecule image built here (make molecule-image), and
# tests/core221/chroot-run.sh mounts the socket at the same path. The service runs as long as the command, no longer.
#
#   tests/core221/podman-service.sh COMMAND [ARG ...]     as root
set -euo pipefail

[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARG ...]" >&2; exit 2; }
directory=/run/gpufabric
socket="$directory/core221-podman-$$.sock"
mkdir -p "$directory"
podman system service --time=0 "unix://$socket" &
service=$!
# shellcheck disable=SC2064  # expand $service and $socket now
trap "kill $service 2>/dev/null || true; wait $service 2>/dev/null || true; rm -f '$socket'" EXIT
for _ in $(seq 100); do
  [ -S "$socket" ] && break
  kill -0 "$service" 2>/dev/null || { echo "$0: podman system service ended before it opened $socket" >&2; exit 1; }
  sleep 0.1
done
[ -S "$socket" ] || { echo "$0: podman system service did not open $socket in 10 s" >&2; exit 1; }
CONTAINER_HOST="unix://$socket" "$@"
