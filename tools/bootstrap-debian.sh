#!/bin/sh
# Install the OS packages the set-up needs on Debian/Ubuntu (only those missing): make, the Python venv
# module, git, rsync, shellcheck (ansible-test sanity's shell script check) and chromium (the test that renders the
# validation report headless). Runs apt-get as root, or through sudo for another user.
set -eu
set --
command -v make >/dev/null 2>&1 || set -- "$@" make
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || set -- "$@" python3-venv
command -v git >/dev/null 2>&1 || set -- "$@" git
command -v rsync >/dev/null 2>&1 || set -- "$@" rsync
command -v shellcheck >/dev/null 2>&1 || set -- "$@" shellcheck
command -v chromium >/dev/null 2>&1 || set -- "$@" chromium
[ "$#" -gt 0 ] || exit 0
echo "installing: $*"
if [ "$(id -u)" = 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
else
  sudo apt-get update -q
  sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
fi
