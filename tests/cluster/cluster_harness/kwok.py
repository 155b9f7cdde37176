# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""kwok: the fake GB200 nodes, kwok's stages (pod-complete by annotation) and its CRDs."""

from __future__ import annotations

from pathlib import Path

from cluster_harness.api import Api, wait_for
from cluster_harness.common import (
    CLUSTER_UUID,
    COMPLETE_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    GPUS_PER_TRAY,
    KWOK_API,
    KWOK_CRDS,
    KWOK_NODE_ANNOTATION,
    PREPARED_ANNOTATION,
    TRAYS_PER_RACK,
    HarnessError,
)


def node_names(gpu_nodes: int, control_plane_nodes: int) -> tuple[list[str], list[str]]:
    width = max(2, len(str(gpu_nodes)))
    trays = [f"gb200-tray-{index:0{width}d}" for index in range(1, gpu_nodes + 1)]
    control = [f"control-plane-{index:02d}" for index in range(1, control_plane_nodes + 1)]
    return trays, control


def node_manifest(name: str, kube_version: str, gpu_index: int | None, trays_per_clique: int = TRAYS_PER_RACK) -> dict:
    """A Node as kwok manages it, labelled as NFD and GPU Feature Discovery label a GB200 tray.

    Tray ``gpu_index`` (from 0) is in rack ``gpu_index // TRAYS_PER_RACK + 1`` and in NVLink clique
    ``gpu_index // trays_per_clique + 1``: one clique a rack by default, or a rack split into smaller cliques
    (an NVL72 rack cabled as two NVL36 halves: 9). ``trays_per_clique`` outside 1..TRAYS_PER_RACK is refused.
    """
    if isinstance(trays_per_clique, bool) or not isinstance(trays_per_clique, int) or not (
        1 <= trays_per_clique <= TRAYS_PER_RACK
    ):
        raise ValueError(
            f"trays_per_clique must be a whole number from 1 to {TRAYS_PER_RACK} (the trays of one NVL72 rack),"
            f" got {trays_per_clique!r}"
        )
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "arm64",
        "type": "kwok",
    }
    capacity = {"cpu": "144", "memory": "880Gi", "pods": "110", "ephemeral-storage": "3500Gi"}
    taints = []
    if gpu_index is None:
        labels["node-role.kubernetes.io/control-plane"] = ""
        capacity = {"cpu": "32", "memory": "128Gi", "pods": "110", "ephemeral-storage": "500Gi"}
        taints = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    else:
        rack = gpu_index // TRAYS_PER_RACK + 1
        clique = gpu_index // trays_per_clique + 1
        labels.update(
            {
                "feature.node.kubernetes.io/pci-10de.present": "true",
                "feature.node.kubernetes.io/pci-15b3.present": "true",
                "feature.node.kubernetes.io/cpu-model.vendor_id": "NVIDIA",
                "feature.node.kubernetes.io/kernel-version.major": "6",
                "feature.node.kubernetes.io/system-os_release.ID": "ubuntu",
                "feature.node.kubernetes.io/system-os_release.VERSION_ID": "24.04",
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.product": "NVIDIA-GB200",
                "nvidia.com/gpu.family": "blackwell",
                "nvidia.com/gpu.count": str(GPUS_PER_TRAY),
                "nvidia.com/gpu.memory": "189471",
                "nvidia.com/gpu.compute.major": "10",
                "nvidia.com/gpu.compute.minor": "0",
                "nvidia.com/gpu.clique": f"{CLUSTER_UUID}.{clique}",
                "nvidia.com/gpu.machine": "GB200-NVL72",
                "nvidia.com/mig.capable": "true",
                "nvidia.com/cuda.driver-version.major": "580",
                "nvidia.com/gpu.deploy.dcgm-exporter": "true",
                "gpufabric.cluster/rack": f"rack-{rack:02d}",
            }
        )
        capacity["nvidia.com/gpu"] = str(GPUS_PER_TRAY)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": labels,
            "annotations": {KWOK_NODE_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"},
        },
        "spec": {"taints": taints} if taints else {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "nodeInfo": {
                "architecture": "arm64",
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
                "kubeletVersion": kube_version,
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.8.0-1036-nvidia-64k",
            },
        },
    }


def pod_fail_stage(complete: dict, expressions: list[dict]) -> dict:
    """pod-complete's twin for pods also annotated EXIT_CODE_ANNOTATION: they end Failed with that exit code."""
    import copy

    stage = copy.deepcopy(complete)
    stage["metadata"]["name"] = "pod-fail"
    stage["spec"]["selector"]["matchExpressions"] = [
        *copy.deepcopy(expressions),
        {"key": f'.metadata.annotations["{EXIT_CODE_ANNOTATION}"]', "operator": "Exists"},
    ]
    template = stage["spec"]["next"]["statusTemplate"]
    replacements = {
        "exitCode: 0": f'exitCode: {{{{ index $root.metadata.annotations "{EXIT_CODE_ANNOTATION}" }}}}',
        "reason: Completed": "reason: Error",
        "phase: Succeeded": "phase: Failed",
    }
    for old, new in replacements.items():
        if template.count(old) != 1:
            raise HarnessError(f"kwok's pod-complete stage changed: no single {old!r} to turn into pod-fail")
        template = template.replace(old, new)
    stage["spec"]["next"]["statusTemplate"] = template
    return stage


def prepared_pod_ready_stage(ready: dict) -> dict:
    """pod-ready's twin for pods with resource claims: they start only once PREPARED_ANNOTATION says the
    compute-domain kubelet plugin stand-in prepared their claims (a real kubelet starts no container before)."""
    import copy

    stage = copy.deepcopy(ready)
    stage["metadata"]["name"] = "pod-ready-prepared"
    stage["spec"]["selector"]["matchExpressions"] += [
        {"key": ".spec.resourceClaims", "operator": "Exists"},
        {"key": f'.metadata.annotations["{PREPARED_ANNOTATION}"]', "operator": "In", "values": ["true"]},
    ]
    return stage


def kwok_stages(stage_dir: Path) -> str:
    """kwok's own default stages, with pod-complete selecting pods by COMPLETE_ANNOTATION.

    A pod with resource claims starts (pod-ready) only once its claims are prepared (pod-ready-prepared).
    kwok's default pod-complete finishes every pod a Job owns; here only the pods annotated
    ``gpufabric.cluster/kwok-complete: "true"`` finish (Job or not), the others keep running. Those also
    annotated ``gpufabric.cluster/kwok-exit-code: "<n>"`` end Failed with exit code n instead (pod-fail).
    """
    import yaml

    documents = []
    for path in sorted(stage_dir.glob("*.yaml")):
        stage = yaml.safe_load(path.read_text())
        if not isinstance(stage, dict) or stage.get("kind") != "Stage":
            continue
        if stage["metadata"]["name"] == "pod-ready":
            documents.append(prepared_pod_ready_stage(stage))
            claims = {"key": ".spec.resourceClaims", "operator": "DoesNotExist"}
            stage["spec"]["selector"]["matchExpressions"].append(claims)
        if stage["metadata"]["name"] == "pod-complete":
            expressions = [
                expression
                for expression in stage["spec"]["selector"]["matchExpressions"]
                if "ownerReferences" not in expression["key"]
            ]
            expressions.append(
                {"key": f'.metadata.annotations["{COMPLETE_ANNOTATION}"]', "operator": "In", "values": ["true"]}
            )
            documents.append(pod_fail_stage(stage, expressions))
            expressions.append({"key": f'.metadata.annotations["{EXIT_CODE_ANNOTATION}"]', "operator": "DoesNotExist"})
            stage["spec"]["selector"]["matchExpressions"] = expressions
        documents.append(stage)

    class Dumper(yaml.SafeDumper):
        """Multi-line strings (the status templates) as literal blocks, as kwok writes them."""

    def represent_str(dumper, value):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return yaml.dump_all(documents, Dumper=Dumper, sort_keys=False)


def install_kwok_crds(api: Api, directory: Path, timeout: float) -> None:
    """Create kwok's CRDs (KWOK_CRDS, from build.sh) and wait until the API server serves them."""
    import yaml

    for crd in KWOK_CRDS:
        path = directory / "kwok-crds" / f"kwok.x-k8s.io_{crd}.yaml"
        if not path.is_file():
            raise HarnessError(f"kwok CRD {path} is missing; run `make cluster-build`")
        api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(path.read_text()))

    def established() -> bool:
        for crd in KWOK_CRDS:
            item = api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}.kwok.x-k8s.io")
            conditions = (item.get("status") or {}).get("conditions") or []  # null until the API server sets them
            if not any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                return False
        api.request("GET", f"{KWOK_API}/clusterlogs")
        return True

    wait_for("kwok's CRDs to be served", established, timeout)
