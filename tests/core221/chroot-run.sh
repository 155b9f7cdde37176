#!/usr/bin/env bash
# Run a command in this checkout as the Debian 13 root file system sees it (tests/images/build-debian13-rootfs.sh):
# the ansible-core 2.21 leg's controller, Python 3.13, on a Debian 12 machine.
#
#   tests/core221/chroot-run.sh COMMAND [ARG ...]     as root; COMMAND runs in the checkout's root, inside the chroot
#
# In a mount namespace of its own (unshare), so every mount below goes away with the command: the checkout at its own
# path (and its git directory where that lies outside it, as a worktree's does), /proc, /sys and /dev, the machine's
# resolv.conf and CA bundle (a site's proxy CA included: the chroot reaches PyPI and the Debian mirror as the machine
# does), and over the checkout's .venv and .build the leg's own, .build/core221/venv and .build/core221/build: inside,
# `make` finds a .venv and a .build as on any machine, and the 2.19 ones of the checkout are neither read nor written.
# The environment is emptied but for HOME, PATH, LANG, TERM, the machine's proxy and package index settings, and
# CONTAINER_HOST where it names a podman socket (mounted at the same path; tests/core221/podman-service.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"

inside_namespace() {
  local rootfs="$1"
  shift
  mount --rbind /proc "$rootfs/proc"
  mount --rbind /sys "$rootfs/sys"
  mount --rbind /dev "$rootfs/dev"
  mkdir -p "$rootfs$ROOT"
  mount --bind "$ROOT" "$rootfs$ROOT"
  local git_dir
  git_dir="$(git -C "$ROOT" rev-parse --path-format=absolute --git-common-dir)"
  case "$git_dir/" in
    "$ROOT"/*) ;;
    *) mkdir -p "$rootfs$git_dir" && mount --bind "$git_dir" "$rootfs$git_dir" ;;
  esac
  # the design notes and reference data the project keeps beside the checkout (../shared), which tests read
  local shared
  shared="$(readlink -m "$ROOT/../shared")"
  if [ -d "$shared" ]; then
    mkdir -p "$rootfs$shared" "$rootfs$(dirname "$ROOT")"
    mount --bind -o ro "$shared" "$rootfs$shared"
    [ "$shared" = "$(dirname "$ROOT")/shared" ] || [ -e "$rootfs$(dirname "$ROOT")/shared" ] \
      || ln -s "$shared" "$rootfs$(dirname "$ROOT")/shared"
  fi
  # .venv may be a link to another checkout's (a worktree sharing one): the leg's venv goes where the link leads
  local venv
  venv="$(readlink -m "$ROOT/.venv")"
  mkdir -p "$rootfs$venv"
  mount --bind "$ROOT/.build/core221/venv" "$rootfs$venv"
  mount --bind "$ROOT/.build/core221/build" "$rootfs$ROOT/.build"
  local file
  for file in /etc/resolv.conf /etc/ssl/certs/ca-certificates.crt; do
    if [ -f "$file" ]; then
      mkdir -p "$(dirname "$rootfs$file")" && touch "$rootfs$file"
      mount --bind -o ro "$file" "$rootfs$file"
    fi
  done
  # the machine's podman, where CONTAINER_HOST names its socket (tests/core221/podman-service.sh)
  local socket=
  if [[ "${CONTAINER_HOST:-}" == unix://* ]]; then
    socket="${CONTAINER_HOST#unix://}"
    mkdir -p "$(dirname "$rootfs$socket")" && touch "$rootfs$socket"
    mount --bind "$socket" "$rootfs$socket"
  fi
  local environment=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
                     "TERM=${TERM:-dumb}")
  local name
  for name in http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY PIP_INDEX_URL PIP_EXTRA_INDEX_URL \
              PIP_DEFAULT_TIMEOUT DEBIAN_MIRROR; do
    [ -z "${!name:-}" ] || environment+=("$name=${!name}")
  done
  [ -z "$socket" ] || environment+=("CONTAINER_HOST=$CONTAINER_HOST")
  # the CA bundle the machine's tools are pointed at, where it is the one bound above
  for name in PIP_CERT SSL_CERT_FILE REQUESTS_CA_BUNDLE; do
    [ "${!name:-}" != /etc/ssl/certs/ca-certificates.crt ] || environment+=("$name=${!name}")
  done
  # shellcheck disable=SC2016  # expanded by the shell inside, from its arguments
  exec chroot "$rootfs" /usr/bin/env -i "${environment[@]}" /bin/sh -c 'cd "$0" && exec "$@"' "$ROOT" "$@"
}

main() {
  [ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARG ...]" >&2; exit 2; }
  [ "$(id -u)" = 0 ] || { echo "$0: needs root (unshare, mount, chroot)" >&2; exit 1; }
  local rootfs
  rootfs="$("$ROOT/tests/images/build-debian13-rootfs.sh")"
  mkdir -p "$ROOT/.build/core221/venv" "$ROOT/.build/core221/build"
  [ -e "$ROOT/.venv" ] || mkdir -p "$ROOT/.venv"
  export ROOT
  export -f inside_namespace
  # shellcheck disable=SC2016  # expanded by the bash in the new namespace, from its arguments
  exec unshare --mount --propagation private -- bash -c 'set -euo pipefail; inside_namespace "$@"' inside_namespace \
    "$rootfs" "$@"
}

main "$@"
