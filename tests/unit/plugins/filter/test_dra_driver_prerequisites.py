# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_prerequisites filter, including Kubernetes without DRA (the harness always has it on)."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_prerequisites import (
    FilterModule,
    dra_driver_prerequisites,
)

CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
TRAY = {"gpu": {"driver_loaded": True, "driver_version": "570.172.08", "cliques": [CLIQUE], "count": 4},
        "imex": {"service": {"exists": True, "enabled": False, "active": False, "masked": True}}}
CLUSTER = {"version": "v1.35.4", "apis": ["v1", "resource.k8s.io/v1"],
           "nodes": [{"name": "t1", "labels": {"nvidia.com/gpu.clique": CLIQUE}}], "gpu_operator": {}}


def run(facts=None, cluster=None, settings=None, hostvars_extra=None):
    hostvars = {"t1": {"ansible_facts": {"gpufabric": facts or TRAY}, **(hostvars_extra or {})}}
    return dra_driver_prerequisites(hostvars, ["t1"], cluster or CLUSTER, settings)


def failed(result):
    return {c["name"]: c["message"] for c in result["checks"] if c["status"] == "fail"}


def test_registered():
    assert FilterModule().filters() == {"dra_driver_prerequisites": dra_driver_prerequisites}


def test_all_met():
    result = run()
    assert result["ok"] and result["problems"] == []
    assert [c["name"] for c in result["checks"]] == ["kubernetes", "driver", "imex", "cliques"]


@pytest.mark.parametrize(("cluster", "message"), [
    ({"version": "v1.35.4", "apis": ["v1"]}, "Kubernetes v1.35.4 serves no resource.k8s.io API: Dynamic Resource "
                                             "Allocation is off"),
    ({"version": "v1.31.0", "apis": ["resource.k8s.io/v1beta1"]}, "older than 1.32.0"),
])
def test_kubernetes_without_dra_fails(cluster, message):
    assert message in failed(run(cluster=CLUSTER | cluster))["kubernetes"]


def test_older_kubernetes_with_the_gates_passes():
    result = run(cluster=CLUSTER | {"version": "v1.33.5", "apis": ["resource.k8s.io/v1beta1"]})
    assert result["ok"] and "through the feature gates" in result["checks"][0]["message"]


def test_driver_imex_and_clique_problems_name_the_host():
    facts = copy.deepcopy(TRAY)
    facts["gpu"]["driver_version"] = "565.57.01"
    facts["imex"]["service"].update(masked=False, active=True)
    nodes = CLUSTER | {"nodes": [{"name": "t1", "labels": {}}]}
    problems = failed(run(facts, nodes))
    assert problems["driver"] == "host t1: driver 565.57.01 is older than 570.158.01 (dra_driver_min_driver_version)"
    assert problems["imex"].startswith("host t1: the host nvidia-imex service is active")
    assert problems["cliques"] == ("node t1 (host t1): label nvidia.com/gpu.clique is missing, "
                                   f"its GPUs are in clique {CLIQUE}")


def test_node_name_variable_and_operator_driver():
    facts = copy.deepcopy(TRAY)
    facts["gpu"].update(driver_loaded=False, driver_version=None)
    cluster = CLUSTER | {"nodes": [{"name": "node-a", "labels": {"nvidia.com/gpu.clique": CLIQUE}}],
                         "gpu_operator": {"driver_enabled": True, "driver_version": "580.95.05"}}
    assert run(facts, cluster, hostvars_extra={"dra_driver_node_name": "node-a"})["ok"]
    assert "no Kubernetes node t1" in failed(run(facts, cluster))["cliques"]


def test_without_compute_domains_imex_and_cliques_are_not_checked():
    facts = copy.deepcopy(TRAY)
    facts["imex"]["service"]["masked"] = False
    assert run(facts, settings={"compute_domains": False})["ok"]


def test_bad_arguments():
    with pytest.raises(AnsibleFilterError, match="unknown setting"):
        run(settings={"colour": 1})
    with pytest.raises(AnsibleFilterError, match=r"no ansible_facts\['gpufabric'\] for t1"):
        dra_driver_prerequisites({"t1": {}}, ["t1"], CLUSTER)
