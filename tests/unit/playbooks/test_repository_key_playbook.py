# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The signing key step of gpufabric.cluster._nvidia_repository (tasks/key.yml, imported by apt.yml) run by
ansible-playbook on localhost, into a keyring path under the test's directory: check mode never fails where the key's
server cannot be reached, it reports that a run would fetch the key; a real run fails naming the key.
"""

from __future__ import annotations

import subprocess
import sys

import yaml

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import ansible_playbook

# Nothing listens on the discard port: the connection is refused at once. A mirror's key URL may carry
# credentials: every message shows it redacted.
UNREACHABLE = "http://mirror-user:mirror-s3cr3t@127.0.0.1:9/3bf863cc.pub"
SHOWN = "http://***@127.0.0.1:9/3bf863cc.pub"
REPOSITORY = "https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/"


def run_key(workdir, key_url: str, *extra: str) -> subprocess.CompletedProcess:
    keyrings = workdir / "keyrings"
    keyrings.mkdir(exist_ok=True)
    play = [{"name": "Signing key", "hosts": "localhost", "gather_facts": False, "tasks": [
        {"name": "Fetch the key", "ansible.builtin.include_role": {
            "name": "gpufabric.cluster._nvidia_repository", "tasks_from": "key"},
         "vars": {"_nvidia_repository_url": REPOSITORY, "__nvidia_repository_key_url": key_url,
                  "__nvidia_repository_keyring": str(keyrings / "nvidia.asc"),
                  "__nvidia_repository_keyring_dir": {"changed": False}}},
        {"name": "Show what the caller reads", "ansible.builtin.debug": {
            "msg": "unreachable={{ __nvidia_repository_key_unreachable }}"}}]}]
    (workdir / "play.yml").write_text(yaml.safe_dump(play, sort_keys=False))
    return ansible_playbook(["-i", "localhost,", "-c", "local", "-e", f"ansible_python_interpreter={sys.executable}",
                             str(workdir / "play.yml"), *extra], workdir)


def test_check_mode_reports_a_key_it_cannot_reach_as_would_fetch(tmp_path):
    completed = run_key(tmp_path, UNREACHABLE, "--check")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert f"would fetch {SHOWN} as {tmp_path / 'keyrings' / 'nvidia.asc'} (not reachable in check mode: " in output
    assert "mirror-s3cr3t" not in output
    assert "unreachable=True" in output
    assert "failed=0" in output and "changed=1" in output
    assert not (tmp_path / "keyrings" / "nvidia.asc").exists()


def test_a_run_fails_naming_the_key_it_cannot_fetch(tmp_path):
    completed = run_key(tmp_path, UNREACHABLE)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 2, output
    assert f"cannot fetch the signing key {SHOWN} of the repository {REPOSITORY}: " in output
    assert "mirror-s3cr3t" not in output


def test_check_mode_with_a_reachable_key_reports_the_change_and_writes_nothing(tmp_path):
    key = tmp_path / "key.pub"
    key.write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n")
    completed = run_key(tmp_path, key.as_uri(), "--check")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "would fetch" not in output and "unreachable=False" in output
    assert "changed=1" in output
    assert not (tmp_path / "keyrings" / "nvidia.asc").exists()
