#!/usr/bin/env bash
# TEST FIXTURE: pack the stand-in repository built by build-repo.sh (and signed by sign-repo.sh, where a scenario
# signs it) into one archive that unpacks at /opt as /opt/gpufabric-standin-repo, for the scenarios' prepare steps:
# one `ansible.builtin.unarchive` a host instead of a copy of the directory, which runs two modules a file.
# Owned by root, files 0644 and directories 0755, whatever the umask of the machine that built it.
#
# Usage: pack-repo.sh REPO ARCHIVE   (REPO: the directory build-repo.sh wrote; ARCHIVE: the .tar.gz to write)
set -euo pipefail

repo="${1:?usage: pack-repo.sh REPO ARCHIVE}"
archive="${2:?usage: pack-repo.sh REPO ARCHIVE}"
[ -f "$repo/Packages" ] || { echo "pack-repo.sh: $repo/Packages is missing (run build-repo.sh first)" >&2; exit 2; }
tar -C "$repo" -czf "$archive" --owner=0 --group=0 --mode=u=rwX,go=rX \
  --transform='s,^\.,gpufabric-standin-repo,' .
