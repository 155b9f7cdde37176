# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How the playbook tests run ansible-playbook, and the inventories of local hosts reading recorded trees.

Every playbook test runs the real ``ansible-playbook`` of the test venv on the collection under test, as a user runs
it; what differs between tests (the inventory, the playbook, extra variables and environment) is theirs to give.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

import yaml

import ansible_collections

COLLECTIONS_PATH = next(os.path.dirname(path) for path in ansible_collections.__path__
                        if os.path.isdir(os.path.join(path, "gpufabric", "cluster")))
ANSIBLE_PLAYBOOK = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")


def ansible_playbook(arguments: Sequence[str], cwd, env: Mapping[str, str] | None = None,
                     quiet: bool = True) -> subprocess.CompletedProcess:
    """Run ``ansible-playbook *arguments`` in ``cwd`` with the collection under test on its path and no colour.

    ``quiet`` (the default) also turns off the host key check and the localhost warning, which say nothing about the
    playbook; ``env`` adds or overrides variables of this process's environment.
    """
    environment = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_NOCOLOR="1")
    if quiet:
        environment.update(ANSIBLE_HOST_KEY_CHECKING="false", ANSIBLE_LOCALHOST_WARNING="false")
    environment.update(env or {})
    return subprocess.run([ANSIBLE_PLAYBOOK, *arguments], capture_output=True, text=True, env=environment,
                          cwd=str(cwd), check=False)


def local_hosts_inventory(host_trees: Mapping[str, str], hosts: Mapping[str, str], group: str | None = None) -> dict:
    """An inventory of local hosts, each named in ``hosts`` and probing the recorded tree ``hosts[name]`` names.

    The hosts are in ``group`` when one is given (the playbooks' GPU hosts are ``gpu_nodes``), else in ``all``.
    """
    members = {"hosts": {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                "gpufabric_probe_root": host_trees[tree]}
                         for name, tree in hosts.items()}}
    return {"all": {"children": {group: members}} if group else members}


def write_local_hosts_inventory(workdir, host_trees: Mapping[str, str], hosts: Mapping[str, str],
                                group: str | None = None):
    """Write :func:`local_hosts_inventory` as ``workdir/hosts.yml`` and return ``workdir``."""
    (workdir / "hosts.yml").write_text(yaml.safe_dump(local_hosts_inventory(host_trees, hosts, group)))
    return workdir
