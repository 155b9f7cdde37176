#!/usr/bin/env bash
# Build (or reuse) the Debian 13 (trixie) root file system the ansible-core 2.21 leg runs in, and print its path.
#
# ansible-core 2.20 and later need Python 3.12 or newer on the controller; Debian 12 has 3.11 only. Debian 13's
# python3 is 3.13, so the newest ansible-core runs on a distribution's interpreter, as the README asks of users, in a
# debootstrap'ed trixie tree that tests/core221/chroot-run.sh enters with chroot. It is built the way
# build-debian12-systemd.sh builds the molecule image (debootstrap from the Debian mirror, no registry) and kept in
# the same cache as the harness binaries, under a name carrying the hash of this script: an existing tree of the same
# hash is reused and nothing is built. The tree holds the interpreter with its venv module, make and git only; each
# make target installs its own tools into it on first use (tools/bootstrap-debian.sh, run inside), where they stay.
#
# As root (debootstrap, chroot). Environment: DEBIAN_MIRROR (bootstrap mirror), GPUFABRIC_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/gpufabric), FORCE=1 (rebuild).
set -euo pipefail

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=trixie
PACKAGES=python3,python3-venv,make,git,ca-certificates
CACHE="${GPUFABRIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpufabric}"
HASH="$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)"
ROOTFS="$CACHE/debian13-rootfs-$HASH"

log() { printf '%s build-debian13-rootfs: %s\n' "$(date +%T)" "$*" >&2; }

install_debootstrap() {
  command -v debootstrap >/dev/null 2>&1 && return 0
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}

main() {
  [ "$(id -u)" = 0 ] || { log "needs root (debootstrap, chroot)"; exit 1; }
  if [ "${FORCE:-0}" != 1 ] && [ -f "$ROOTFS/.gpufabric-complete" ]; then
    echo "$ROOTFS"
    return 0
  fi
  install_debootstrap
  mkdir -p "$CACHE"
  local work
  work="$(mktemp -d "$CACHE/debian13-rootfs.build.XXXXXX")"
  # shellcheck disable=SC2064  # expand $work now
  trap "rm -rf '$work'" EXIT
  log "debootstrap $SUITE into $work/rootfs (variant minbase, $PACKAGES)"
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 40 "$work/debootstrap.log" >&2; exit 1; }
  printf 'deb %s %s main\n' "$MIRROR" "$SUITE" >"$work/rootfs/etc/apt/sources.list"
  rm -rf "$work"/rootfs/var/cache/apt/archives/*.deb "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/*
  touch "$work/rootfs/.gpufabric-complete"
  # the trees of older hashes of this script are of no further use
  find "$CACHE" -maxdepth 1 -name 'debian13-rootfs-*' ! -name "debian13-rootfs-$HASH" -exec rm -rf {} +
  rm -rf "$ROOTFS" && mv "$work/rootfs" "$ROOTFS"
  log "built $ROOTFS ($(chroot "$ROOTFS" python3 --version))"
  echo "$ROOTFS"
}

main "$@"
