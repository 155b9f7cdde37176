#!/bin/sh
# Install OS packages on Debian/Ubuntu, only those missing, without recommended packages; as root, or through sudo
# for another user.
#
#   sh tools/bootstrap-debian.sh                  what running the playbooks needs: make, the Python venv module (of
#                                                 $PYTHON, else of tools/venv-python.sh's choice), git
#   sh tools/bootstrap-debian.sh COMMAND[:PACKAGE] ...
#                                                 the package of each COMMAND not found (PACKAGE defaults to COMMAND):
#                                                 how the test targets of the Makefile add their own tools
#                                                 (rsync and shellcheck for sanity, chromium and accton for unit)
set -eu
missing=
if [ "$#" = 0 ]; then
  command -v make >/dev/null 2>&1 || missing="$missing make"
  # the interpreter `make venv` will use (PYTHON, as the Makefile passes it, else tools/venv-python.sh's choice)
  case "$0" in */*) tools="${0%/*}" ;; *) tools=. ;; esac
  python="${PYTHON:-$(sh "$tools/venv-python.sh")}"
  "$python" -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$missing python3-venv"
  command -v git >/dev/null 2>&1 || missing="$missing git"
else
  for tool in "$@"; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || missing="$missing ${tool#*:}"
  done
fi
[ -n "$missing" ] || exit 0
echo "installing:$missing"
if [ "$(id -u)" = 0 ]; then
  as_root=
else
  as_root=sudo
fi
$as_root apt-get update -q
# shellcheck disable=SC2086  # a list of package names
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
