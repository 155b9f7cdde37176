#!/usr/bin/env bash
# TEST FIXTURE: sign the stand-in repository built by build-repo.sh with a throw-away key, as NVIDIA signs theirs.
#
# Generates a GPG key (no passphrase) in a temporary GNUPGHOME, writes DEST/InRelease (clear-signed Release) and
# DEST/Release.gpg (detached signature), and exports the public key as DEST/standin-key.asc, for the scenarios that
# configure the repository signed (`deb [signed-by=<keyring>] file:DEST /` with the key fetched from
# file:DEST/standin-key.asc). The key signs nothing else and is thrown away with its GNUPGHOME.
#
# Usage: sign-repo.sh DEST
set -euo pipefail

dest="${1:?usage: sign-repo.sh DEST}"
[ -f "$dest/Release" ] || { echo "sign-repo.sh: $dest/Release is missing (run build-repo.sh first)" >&2; exit 2; }
GNUPGHOME="$(mktemp -d)"
export GNUPGHOME
trap 'gpgconf --kill all >/dev/null 2>&1 || true; rm -rf "$GNUPGHOME"' EXIT

uid="gpufabric.cluster stand-in repository (TEST FIXTURE, not NVIDIA) <noreply@example.invalid>"
gpg --batch --quiet --passphrase '' --quick-generate-key "$uid" ed25519 sign 1d
gpg --batch --quiet --yes --armor --export "$uid" > "$dest/standin-key.asc"
gpg --batch --quiet --yes --local-user "$uid" --clearsign --output "$dest/InRelease" "$dest/Release"
gpg --batch --quiet --yes --local-user "$uid" --armor --detach-sign --output "$dest/Release.gpg" "$dest/Release"
echo "$dest/standin-key.asc"
