#!/bin/sh
# Install the OS packages the set-up needs on Debian/Ubuntu (only those missing): make, the Python venv
# module, git and rsync. Runs apt-get as root, or through sudo for another user.
set -eu
missing=""
command -v make >/dev/null 2>&1 || missing="$missing make"
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
command -v git >/dev/null 2>&1 || missing="$missing git"
command -v rsync >/dev/null 2>&1 || missing="$missing rsync"
[ -n "$missing" ] || exit 0
if [ "$(id -u)" = 0 ]; then run=""; else run="sudo"; fi
echo "installing:$missing"
$run apt-get update -q
DEBIAN_FRONTEND=noninteractive $run apt-get install -y -q $missing
