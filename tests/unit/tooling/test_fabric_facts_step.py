"""One shared facts step (issue 40 item 2): the host roles read the fabric facts through _fabric_facts.

On the starting commit five roles had a facts.yml of their own, each gathering its subset (and dropping the others'),
and nvidia_imex ran setup's network subset for the addresses besides fabric_facts' own.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[3] / "roles"
HOST_ROLES = {"nvidia_driver": ["gpu"], "doca_ofed": ["peermem"], "nvidia_peermem": ["peermem"],
              "nvidia_imex": None, "rdma_network": ["connectx", "network"]}


def _tasks(role: str, name: str = "main.yml") -> list[dict]:
    return yaml.safe_load((ROLES / role / "tasks" / name).read_text(encoding="utf-8")) or []


@pytest.mark.parametrize("role", list(HOST_ROLES))
def test_every_host_role_reads_its_facts_through_the_shared_step(role):
    steps = [task for task in _tasks(role)
             if (task.get("ansible.builtin.include_role") or {}).get("name") == "gpufabric.cluster._fabric_facts"]
    assert len(steps) == 1, f"{role}: tasks/main.yml does not include gpufabric.cluster._fabric_facts once"
    assert steps[0]["ansible.builtin.include_role"]["tasks_from"] == "gather"
    assert steps[0]["vars"]["_fabric_facts_root"] == f"{{{{ {role}_probe_root }}}}"
    if HOST_ROLES[role] is not None:
        assert steps[0]["vars"]["_fabric_facts_subsets"] == HOST_ROLES[role]
    # no probe of its own besides the shared step
    for path in (ROLES / role / "tasks").glob("*.yml"):
        assert "gpufabric.cluster.fabric_facts:" not in path.read_text(encoding="utf-8"), path


@pytest.mark.parametrize("role", [role for role in HOST_ROLES if role != "rdma_network"])
def test_no_facts_file_and_no_setup_network_of_its_own(role):
    assert not (ROLES / role / "tasks" / "facts.yml").exists()
    for path in (ROLES / role / "tasks").glob("*.yml"):
        assert "ansible.builtin.setup" not in path.read_text(encoding="utf-8") or "network" not in \
            path.read_text(encoding="utf-8"), path
