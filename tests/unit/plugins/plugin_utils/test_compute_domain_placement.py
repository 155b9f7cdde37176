# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compute_domain_placement on Nodes as k8s_info returns them."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_placement import compute_domain_placement

RACK1 = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
RACK2 = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2"


def node(name, clique=RACK1, gpus="4", ready="True", product="NVIDIA-GB200"):
    labels = {"nvidia.com/gpu.product": product}
    if clique:
        labels["nvidia.com/gpu.clique"] = clique
    return {"metadata": {"name": name, "labels": labels},
            "status": {"allocatable": {"nvidia.com/gpu": gpus}, "conditions": [{"type": "Ready", "status": ready}]}}


NODES = [node("tray-03"), node("tray-01"), node("tray-02", ready="False"), node("tray-04", RACK2),
         node("tray-05", RACK2), node("tray-06", RACK2), node("cpu-01", clique=None, gpus="0")]


def test_first_clique_with_enough_ready_nodes_in_name_order():
    assert compute_domain_placement(NODES, 2, 4) == {
        "clique": RACK1, "nodes": ["tray-01", "tray-03"], "gpu_model": "NVIDIA-GB200",
        "slots_per_worker": 4, "np": 8, "ppr": "ppr:4:node"}


def test_a_not_ready_node_does_not_count():
    assert compute_domain_placement(NODES, 3, 2)["nodes"] == ["tray-04", "tray-05", "tray-06"]


def test_clique_and_node_names_narrow_the_choice():
    assert compute_domain_placement(NODES, 2, 4, clique=RACK2)["nodes"] == ["tray-04", "tray-05"]
    assert compute_domain_placement(NODES, 2, 1, node_names=["tray-06", "tray-05"])["nodes"] == ["tray-05", "tray-06"]


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    ((NODES, 2, 4), {"node_names": ["tray-01", "tray-04"]},
     f"the nodes are not in one NVLink clique: tray-01 ({RACK1}), tray-04 ({RACK2})"),
    ((NODES, 2, 4), {"node_names": ["tray-01", "cpu-01"]},
     f"the nodes are not in one NVLink clique: tray-01 ({RACK1}), cpu-01 (no clique label)"),
    ((NODES, 2, 8), {}, "8 GPUs per node asked, more than these nodes can allocate: tray-03 (4), tray-01 (4)"),
    ((NODES, 4, 4), {}, f"4 Ready nodes with 4 allocatable GPUs wanted in any clique; Ready nodes per clique: "
                        f"{RACK1}: 2, {RACK2}: 3"),
    ((NODES, 3, 4), {"clique": RACK1}, f"wanted in clique {RACK1}"),
    ((NODES, 2, 4), {"node_names": ["tray-09"]}, "node(s) not in the cluster: tray-09"),
    ((NODES, 2, 4), {"node_names": ["tray-05", "tray-05"]}, "node_names names tray-05 more than once"),
    ((NODES, 3, 1), {"node_names": ["tray-06", "tray-04", "tray-06", "tray-04"]},
     "node_names names tray-04, tray-06 more than once"),
    ((NODES, 0, 4), {}, "nodes must be a positive integer, got 0"),
    ((NODES, 2, True), {}, "gpus_per_node must be a positive integer, got True"),
    (({"resources": []}, 2, 4), {}, "expected the resources list of k8s_info for Nodes"),
])
def test_bad_input_is_explained(args, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=r"^compute_domain_placement: ") as caught:
        compute_domain_placement(*args, **kwargs)
    assert message in str(caught.value)
