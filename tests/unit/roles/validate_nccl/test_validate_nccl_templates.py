# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validate_nccl MPIJob and ComputeDomain templates of both shapes, rendered from the role's defaults and
placements made by the real filters (compute_domain_placement over GB200 tray Nodes, nccl_rdma_plan over the
recorded HGX H100 facts), and read back as YAML. The cluster tier (tests/cluster/test_role_validate_nccl.py)
creates them for real."""

from __future__ import annotations

import copy
import os

import jinja2
import pytest
import yaml
from ansible.plugins.filter.core import FilterModule as CoreFilters

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_placement import compute_domain_placement
from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_spec import compute_domain_spec
from ansible_collections.gpufabric.cluster.plugins.filter.nccl_rdma_plan import nccl_rdma_plan

ROLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "validate_nccl")
SHARED = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "shared"))
# The ComputeDomain CRDs of the charts under test (read in place, never copied).
CHART_CRDS = {
    "25.12.0": "charts/nvidia-dra-driver-gpu/crds/resource.nvidia.com_computedomains.yaml",
    "0.4.1": "charts/dra-driver-nvidia-gpu-0.4.1/crds/resource.nvidia.com_computedomains.yaml",
}
CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.2"


def defaults():
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        values = yaml.safe_load(handle)
    values.pop("validate_nccl_kubeconfig")
    return values


def render(template, **context):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(os.path.join(ROLE, "templates")),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters.update(CoreFilters().filters())
    context = {"ansible_managed": "Ansible managed", **defaults(), **context}
    return yaml.safe_load(env.get_template(template).render(context))


def tray(name, clique=CLIQUE, gpus="4"):
    return {"metadata": {"name": name, "labels": {"nvidia.com/gpu.clique": clique,
                                                  "nvidia.com/gpu.product": "NVIDIA-GB200"}},
            "status": {"allocatable": {"nvidia.com/gpu": gpus}, "conditions": [{"type": "Ready", "status": "True"}]}}


@pytest.fixture
def nvlink_placement():
    nodes = [tray(f"gb200-tray-{index:02d}", clique=CLIQUE.replace(".2", ".1") if index < 3 else CLIQUE)
             for index in range(1, 7)]
    chosen = compute_domain_placement(nodes, 2, 4, clique=CLIQUE)
    return {**chosen, "shape": "nvlink", "env": {"NCCL_MNNVL_ENABLE": "1"},
            "threshold_facts": {"shape": "nvlink", "gpu_model": chosen["gpu_model"]}}


@pytest.fixture
def rdma_placement(fleet_facts):
    hostvars = {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts["hgx_h100"])}}
                for name in ("hgx-a", "hgx-b", "hgx-c")}
    plan = nccl_rdma_plan(hostvars, ["hgx-a", "hgx-b", "hgx-c"], gpus_per_node=8)
    return {**plan, "shape": "rdma", "clique": None, "gpu_model": "", "slots_per_worker": 8, "ppr": "ppr:8:node"}


def env_of(container):
    return {item["name"]: item["value"] for item in container.get("env") or []}


def test_nvlink_job_in_a_compute_domain_placed_by_the_clique(nvlink_placement):
    job = render("mpijob.yml.j2", __validate_nccl_placement=nvlink_placement, validate_nccl_shape="nvlink")
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    worker_spec = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert job["spec"]["slotsPerWorker"] == 4 and job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2
    assert env_of(launcher) == {"NCCL_DEBUG": "INFO", "NCCL_MNNVL_ENABLE": "1"}
    args = launcher["args"]
    assert args[:7] == ["--allow-run-as-root", "--bind-to", "none", "--map-by", "ppr:4:node", "-np", "8"]
    assert args[7:11] == ["-x", "NCCL_DEBUG", "-x", "NCCL_MNNVL_ENABLE"]
    assert args[11:] == ["/opt/nccl_tests/build/all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "1",
                         "-n", "20", "-w", "5"]
    worker = worker_spec["containers"][0]
    assert worker["resources"] == {"limits": {"nvidia.com/gpu": 4}, "claims": [{"name": "compute-domain-channel"}]}
    assert worker_spec["resourceClaims"] == [{"name": "compute-domain-channel",
                                              "resourceClaimTemplateName": "nccl-tests-channel"}]
    [term] = worker_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert term["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["gb200-tray-03", "gb200-tray-04"]},
        {"key": "nvidia.com/gpu.clique", "operator": "In", "values": [CLIQUE]}]
    assert "hostNetwork" not in worker_spec and "annotations" not in job["spec"]["mpiReplicaSpecs"]["Worker"][
        "template"]["metadata"]


@pytest.mark.parametrize(("chart", "api_version", "num_nodes"),
                         [("25.12.0", "resource.nvidia.com/v1beta1", 2), ("0.4.1", "resource.nvidia.com/v1beta1", 0)])
def test_compute_domain_is_written_as_the_installed_crd_serves_it(nvlink_placement, chart, api_version, num_nodes):
    with open(os.path.join(SHARED, CHART_CRDS[chart]), encoding="utf-8") as handle:
        crd = yaml.safe_load(handle)
    spec = compute_domain_spec([crd], len(nvlink_placement["nodes"]))
    domain = render("compute_domain.yml.j2", __validate_nccl_placement=nvlink_placement, __validate_nccl_cd_spec=spec)
    assert domain["apiVersion"] == api_version
    assert domain["spec"] == {"numNodes": num_nodes,
                              "channel": {"resourceClaimTemplate": {"name": "nccl-tests-channel"}}}


def test_rdma_job_one_rank_per_gpu_with_the_rails_and_gpudirect(rdma_placement):
    job = render("mpijob.yml.j2", __validate_nccl_placement=rdma_placement, validate_nccl_shape="rdma",
                 validate_nccl_network="rail-net", validate_nccl_host_network=True,
                 validate_nccl_env={"NCCL_IB_GID_INDEX": 3, "NCCL_SOCKET_IFNAME": "=eno1"},
                 validate_nccl_max_bytes="4G", validate_nccl_iterations="50")
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    worker_template = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 3 and job["spec"]["slotsPerWorker"] == 8
    assert env_of(launcher) == {
        "NCCL_DEBUG": "INFO", "NCCL_IB_HCA": "=" + ",".join(f"mlx5_{index}:1" for index in range(8)),
        "NCCL_SOCKET_IFNAME": "=eno1", "NCCL_DMABUF_ENABLE": "1", "NCCL_IB_GID_INDEX": "3"}
    args = launcher["args"]
    assert args[4:7] == ["ppr:8:node", "-np", "24"]
    assert [args[index + 1] for index, arg in enumerate(args) if arg == "-x"] == sorted(env_of(launcher))
    assert args[args.index("-e") + 1] == "4G" and args[args.index("-n") + 1] == "50"
    worker = worker_template["spec"]["containers"][0]
    assert worker["resources"] == {"limits": {"nvidia.com/gpu": 8, "rdma/rdma_shared_device_a": 1}}
    assert worker["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert worker_template["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/networks": "rail-net"}
    assert worker_template["spec"]["hostNetwork"] is True
    assert "resourceClaims" not in worker_template["spec"]
    [term] = worker_template["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    assert term["matchExpressions"] == [{"key": "kubernetes.io/hostname", "operator": "In",
                                         "values": ["hgx-a", "hgx-b", "hgx-c"]}]


def test_defaults_and_argument_specs_agree():
    with open(os.path.join(ROLE, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        options = yaml.safe_load(handle)["argument_specs"]["main"]["options"]
    with open(os.path.join(ROLE, "defaults", "main.yml"), encoding="utf-8") as handle:
        values = yaml.safe_load(handle)
    assert set(options) == set(values)
    for name, value in values.items():
        assert options[name]["default"] == value, name
