#!/usr/bin/env bash
# Build (or reuse) the Debian 12 systemd image the molecule host-role scenarios run on.
#
# No container registry is reachable, so the image is made from scratch with debootstrap and
# `podman import`ed as localhost/gpufabric/debian12-systemd:latest. The image carries a label with the
# hash of this script; when an image with the same hash exists it is reused and nothing is built.
# Also installs podman and its helpers from the distribution when missing (Debian/Ubuntu, as root)
# and writes /etc/containers/containers.conf (runc runtime, container ulimits) when absent.
#
# Environment: GPUFABRIC_IMAGE (image name), DEBIAN_MIRROR (bootstrap mirror), FORCE=1 (rebuild).
set -euo pipefail

IMAGE="${GPUFABRIC_IMAGE:-localhost/gpufabric/debian12-systemd:latest}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
PACKAGES=systemd,systemd-sysv,dbus,python3,python3-apt,iproute2,procps,ca-certificates,gnupg,apt-transport-https,sudo,less
# What the scenarios' prepare steps install from Debian, as a site's hosts would have it (kmod, initramfs-tools, the
# network stacks of rdma_network): downloaded into the image's apt cache, NOT installed, so each scenario still
# installs them where it does today, from the cache instead of the mirror. The package lists stay in the image too.
PREPARE_PACKAGES="initramfs-tools kmod netplan.io network-manager ifupdown"
# TEST FIXTURE: a bytecode cache for the sources Python imports from zip archives (every Ansible module run's AnsiballZ
# payload), imported at interpreter start by a .pth file; see the file. Its hash is part of the build hash.
COMPILE_CACHE="$(dirname "${BASH_SOURCE[0]}")/../zipimport_cache/gpufabric_zipimport_compile_cache.py"
HASH="$(cat "${BASH_SOURCE[0]}" "$COMPILE_CACHE" | sha256sum | cut -c1-16)"

log() { printf '%s build-debian12-systemd: %s\n' "$(date +%T)" "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

install_podman() {
  local missing=()
  local tool
  for tool in podman:podman runc:runc debootstrap:debootstrap apt-ftparchive:apt-utils \
              dpkg-deb:dpkg-dev fuse-overlayfs:fuse-overlayfs slirp4netns:slirp4netns \
              aardvark-dns:aardvark-dns netavark:netavark iptables:iptables; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || [ -x "/usr/lib/podman/${tool%%:*}" ] || missing+=("${tool##*:}")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    log "installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ! -s /etc/containers/containers.conf ]; then
    log "writing /etc/containers/containers.conf (runc; crun cannot start containers in this sandbox)"
    as_root mkdir -p /etc/containers
    as_root tee /etc/containers/containers.conf >/dev/null <<'CONF'
# Written by gpufabric.cluster tests/images/build-debian12-systemd.sh
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
CONF
  fi
}

image_hash() {
  podman image inspect --format '{{ index .Config.Labels "org.gpufabric.build-hash" }}' "$IMAGE" 2>/dev/null || true
}

main() {
  install_podman
  if [ "${FORCE:-0}" != 1 ] && [ "$(image_hash)" = "$HASH" ]; then
    log "$IMAGE is up to date (build hash $HASH)"
    return 0
  fi
  local work
  work="$(mktemp -d /var/tmp/gpufabric-debian12.XXXXXX)"
  # shellcheck disable=SC2064  # expand $work now
  trap "as_root rm -rf '$work'" EXIT
  log "debootstrap $SUITE into $work/rootfs (variant minbase)"
  as_root debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 40 "$work/debootstrap.log" >&2; exit 1; }
  local root="$work/rootfs"
  printf 'deb %s %s main\n' "$MIRROR" "$SUITE" | as_root tee "$root/etc/apt/sources.list" >/dev/null
  log "downloading (not installing) the prepare steps' packages: $PREPARE_PACKAGES"
  as_root cp /etc/resolv.conf "$root/etc/resolv.conf"
  as_root rm -f "$root"/var/cache/apt/archives/*.deb
  # shellcheck disable=SC2086  # a list of package names
  as_root chroot "$root" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -qq \
      --download-only --no-install-recommends $PREPARE_PACKAGES" >"$work/download.log" 2>&1 \
    || { tail -n 40 "$work/download.log" >&2; exit 1; }
  as_root rm -f "$root/etc/resolv.conf"
  log "trimming the tree for a container"
  as_root rm -rf "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/partial/* "$root"/usr/share/doc/* \
    "$root"/usr/share/man/*
  # units that make no sense or hang in a container
  local unit
  for unit in systemd-udevd.service systemd-udevd-control.socket systemd-udevd-kernel.socket \
              getty@tty1.service console-getty.service systemd-remount-fs.service \
              systemd-firstboot.service sys-kernel-config.mount sys-kernel-debug.mount \
              sys-kernel-tracing.mount dev-hugepages.mount systemd-modules-load.service \
              apt-daily.timer apt-daily-upgrade.timer; do
    as_root ln -sfn /dev/null "$root/etc/systemd/system/$unit"
  done
  as_root install -m 0644 "$COMPILE_CACHE" "$root/usr/lib/python3/dist-packages/gpufabric_zipimport_compile_cache.py"
  printf 'import gpufabric_zipimport_compile_cache\n' \
    | as_root tee "$root/usr/lib/python3/dist-packages/gpufabric-zipimport-compile-cache.pth" >/dev/null
  printf 'container\n' | as_root tee "$root/etc/hostname" >/dev/null
  : | as_root tee "$root/etc/machine-id" >/dev/null
  log "importing as $IMAGE"
  as_root tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
  podman import \
    --change 'CMD ["/sbin/init"]' \
    --change 'STOPSIGNAL SIGRTMIN+3' \
    --change 'ENV container=podman' \
    --change "LABEL org.gpufabric.build-hash=$HASH" \
    --change 'LABEL org.opencontainers.image.description="gpufabric.cluster test image: Debian 12 with systemd (molecule host-role scenarios)"' \
    --quiet "$work/rootfs.tar" "$IMAGE" >/dev/null
  log "built $IMAGE (build hash $HASH)"
}

main "$@"
