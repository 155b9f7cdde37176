#!/bin/sh
# Print the Python interpreter `make venv` builds .venv with (`make PYTHON=...` chooses another).
#
#   sh tools/venv-python.sh                 the distribution's /usr/bin/python3 when it is Python 3.11 or newer
#                                           (ansible-core 2.19's minimum on the controller), else python3 from PATH
#   sh tools/venv-python.sh CANDIDATE ...   the first CANDIDATE that runs as Python 3.11 or newer; when none does,
#                                           the last one, so that the venv step fails naming it
#
# The distribution's interpreter comes first even where another python3 is earlier on PATH (pyenv, a build from
# source): Debian and Ubuntu build theirs with profile-guided optimisation and LTO, and an interpreter built without
# --enable-optimizations spent 19 % more user CPU on the same play (bench/venv_interpreter.py;
# bench/results/2026-11-27-venv-interpreter.md). The Makefile and tools/bootstrap-debian.sh both ask this script, so
# the interpreter whose venv module the bootstrap checks is the one `make venv` runs.
#   sh tools/venv-python.sh --check PYTHON  exit 0 when PYTHON runs as Python 3.11 or newer, else 1 (the Makefile's
#                                           check before it builds .venv; the minimum is written here only)
set -eu
fits() { "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; }
if [ "${1:-}" = --check ]; then
  [ "$#" = 2 ] || { echo "usage: $0 --check PYTHON" >&2; exit 2; }
  fits "$2"
  exit
fi
[ "$#" -gt 0 ] || set -- /usr/bin/python3 python3
for candidate in "$@"; do
  if fits "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done
echo "$candidate"  # after the loop: the last candidate
