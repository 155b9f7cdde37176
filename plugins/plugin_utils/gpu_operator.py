# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPU Operator chart values from the host facts, the logic of the ``gpufabric.cluster.gpu_operator_values`` filter.

Decides, from ``ansible_facts['gpufabric']`` of the GPU hosts and the intent settings, who owns the driver,
how GPUDirect RDMA works (DMA-BUF by default, legacy ``nvidia-peermem`` only when asked or when DMA-BUF is
impossible somewhere, naming where and why), whether the hosts' OFED is used, CDI, the device plugin and
NFD, the image registry and the pull secrets; returns the values and the reasons.  The DMA-BUF verdicts are
read by their reason codes (:mod:`.dma_buf`).  Errors are :class:`...cluster_roles.ClusterRoleError`.

Experimental, as upstream marks it: with ``dra_driver_via_gpu_cluster`` the chart creates a ``GPUCluster``
(``gpuCluster.deployCR``) instead of the ``ClusterPolicy`` and the operator deploys the DRA driver itself;
:func:`gpu_cluster_refusals` says why a cluster or a site cannot take that path.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import (
    ClusterRoleError,
    chosen_settings,
    host_facts,
    registry_repository,
    secret_names,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dma_buf import blocking_messages
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import at_least, version_key

# The role's settings the values are derived from (gpu_operator_<name>); their defaults are the role's argument spec's.
SETTINGS = ("driver", "driver_version", "kernel_module_type", "gpudirect_rdma", "legacy_peermem", "mofed", "cdi",
            "device_plugin", "nfd", "image_registry", "image_pull_secrets", "dra_driver_via_gpu_cluster")
# The GPUCluster path: Kubernetes with DRA on by default (GPU Operator 26.7 DRA prerequisites).
GPU_CLUSTER_MIN_KUBERNETES = "1.34.2"
# app.kubernetes.io/name of a standalone DRA driver's objects (25.x chart, 0.4+ chart without nameOverride).
STANDALONE_DRA_DRIVER_NAMES = ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
CHOICES = {
    "driver": ("auto", "host", "operator"),
    "kernel_module_type": ("auto", "open", "proprietary"),
    "gpudirect_rdma": ("auto", "dma_buf", "off"),
    "mofed": ("auto", "host", "container"),
}
# Components of the chart and their default repositories (values.yaml of gpu-operator v26.7.0).
COMPONENTS = {
    "operator": "nvcr.io/nvidia",
    "validator": "nvcr.io/nvidia",
    "driver": "nvcr.io/nvidia",
    "toolkit": "nvcr.io/nvidia/k8s",
    "devicePlugin": "nvcr.io/nvidia",
    "dcgm": "nvcr.io/nvidia/cloud-native",
    "dcgmExporter": "nvcr.io/nvidia/k8s",
    "gfd": "nvcr.io/nvidia",
    "migManager": "nvcr.io/nvidia/cloud-native",
    "nodeStatusExporter": "nvcr.io/nvidia",
    "gds": "nvcr.io/nvidia/cloud-native",
    "gdrcopy": "nvcr.io/nvidia/cloud-native",
    "vgpuDeviceManager": "nvcr.io/nvidia/cloud-native",
    "vfioManager": "nvcr.io/nvidia/cloud-native",
    "sandboxDevicePlugin": "nvcr.io/nvidia",
    "kataSandboxDevicePlugin": "nvcr.io/nvidia/cloud-native",
    "ccManager": "nvcr.io/nvidia/cloud-native",
}
# Components whose values take imagePullSecrets (a list of Secret names).
PULL_SECRET_COMPONENTS = ("operator", "validator", "driver", "toolkit", "devicePlugin", "gfd", "migManager",
                          "nodeStatusExporter", "gds", "gdrcopy", "vgpuDeviceManager", "vfioManager",
                          "sandboxDevicePlugin", "kataSandboxDevicePlugin", "ccManager")


def _settings(settings: Mapping | None) -> dict:
    return chosen_settings(settings, site_settings.role_defaults("gpu_operator", "gpu_operator_", SETTINGS), CHOICES,
                           "gpu_operator_")


def _driver(facts: Mapping[str, Mapping], wanted: str) -> tuple[str, str]:
    loaded = sorted(host for host, item in facts.items() if (item.get("gpu") or {}).get("driver_loaded"))
    missing = sorted(set(facts) - set(loaded))
    if wanted != "auto":
        return wanted, f"gpu_operator_driver is {wanted}"
    if not facts:
        raise ClusterRoleError("gpu_operator_driver is auto but gpu_operator_hosts is empty: no facts to decide from")
    if loaded and missing:
        raise ClusterRoleError(
            f"gpu_operator_driver is auto but the NVIDIA driver is loaded on {', '.join(loaded)} and not on "
            f"{', '.join(missing)}; install it on every GPU host or set gpu_operator_driver to host or operator")
    if loaded:
        return "host", f"the NVIDIA driver is loaded on every GPU host ({len(loaded)})"
    return "operator", f"no GPU host has the NVIDIA driver loaded ({len(missing)}): the operator installs it"


def _dma_buf_problems(facts: Mapping[str, Mapping], driver: str) -> dict[str, list[str]]:
    problems = {}
    for host, item in sorted(facts.items()):
        messages = blocking_messages((item.get("peermem") or {}).get("dma_buf"), operator_driver=driver == "operator")
        if messages:
            problems[host] = messages
    return problems


def _describe(problems: Mapping[str, t.Sequence[str]]) -> str:
    return "; ".join(f"{host}: {', '.join(reasons)}" for host, reasons in problems.items())


def _rdma(facts: Mapping[str, Mapping], wanted: str, legacy: bool, driver: str,
          kernel_module_type: str = "auto") -> tuple[str, str, dict]:
    problems = _dma_buf_problems(facts, driver)
    if driver == "operator" and kernel_module_type == "proprietary":
        # DMA-BUF needs the open kernel modules (GPU Operator GPUDirect RDMA docs), whatever the hosts run now.
        if wanted == "dma_buf" and not legacy:
            raise ClusterRoleError("gpu_operator_gpudirect_rdma is dma_buf but gpu_operator_kernel_module_type is "
                                   "proprietary: DMA-BUF needs the NVIDIA open kernel modules; set one of them")
        if wanted == "auto" and not legacy:
            return ("legacy", "gpu_operator_kernel_module_type is proprietary and DMA-BUF needs the open kernel "
                    "modules: legacy nvidia-peermem instead", problems)
    if legacy and wanted == "dma_buf":
        raise ClusterRoleError("gpu_operator_legacy_peermem is true but gpu_operator_gpudirect_rdma is dma_buf: "
                               "legacy nvidia-peermem and DMA-BUF exclude each other; set one of them")
    if legacy and wanted == "off":
        raise ClusterRoleError("gpu_operator_legacy_peermem is true but gpu_operator_gpudirect_rdma is off")
    if wanted == "off":
        return "off", "gpu_operator_gpudirect_rdma is off", problems
    if legacy:
        return "legacy", "gpu_operator_legacy_peermem is true", problems
    if wanted == "dma_buf" and problems:
        raise ClusterRoleError(f"gpu_operator_gpudirect_rdma is dma_buf but DMA-BUF is impossible on "
                               f"{_describe(problems)}")
    if problems:
        return "legacy", f"DMA-BUF is impossible on {_describe(problems)}: legacy nvidia-peermem instead", problems
    return "dma_buf", "DMA-BUF is possible on every GPU host", problems


def _mofed(facts: Mapping[str, Mapping], wanted: str) -> tuple[str, str]:
    if wanted != "auto":
        return wanted, f"gpu_operator_mofed is {wanted}"
    with_ofed = sorted(host for host, item in facts.items()
                       if ((item.get("peermem") or {}).get("ofed") or {}).get("installed"))
    if facts and len(with_ofed) == len(facts):
        return "host", f"OFED is installed on every GPU host ({len(with_ofed)})"
    if with_ofed:
        return "container", (f"OFED is installed on {', '.join(with_ofed)} only, not on every GPU host: "
                             "the network operator's OFED container")
    return "container", "no GPU host has OFED installed: the network operator's OFED container"


def _kernel_module_type(driver: str, wanted: str, rdma: str) -> tuple[str | None, str]:
    """``driver.kernelModuleType`` for a driver the operator installs (None: the hosts' own driver)."""
    if driver != "operator":
        if wanted != "auto":
            raise ClusterRoleError(f"gpu_operator_kernel_module_type is {wanted} but the NVIDIA driver is the hosts' "
                                   "own (gpu_operator_driver decided host): the setting applies only to a driver "
                                   "the operator installs; leave it auto")
        return None, "the hosts' own driver: its modules are the hosts'"
    if wanted != "auto":
        return wanted, f"gpu_operator_kernel_module_type is {wanted}"
    if rdma == "dma_buf":
        # "to make sure you are using the open kernel module, include --set driver.kernelModuleType=open"
        # (GPU Operator docs, GPUDirect RDMA: DMA-BUF is only supported with the open kernel modules)
        return "open", "GPUDirect RDMA through DMA-BUF needs the NVIDIA open kernel modules"
    return "auto", "the operator picks the module type by GPU and driver branch"


def gpu_operator_values(hostvars: Mapping, hosts: t.Sequence[str], settings: Mapping | None = None) -> dict:
    """Return ``{values, decisions}`` for the GPU Operator chart; see the filter documentation.

    Raises :class:`ClusterRoleError` naming the host and the variable.
    """
    chosen = _settings(settings)
    facts = host_facts(hostvars, hosts, "gpu_operator_hosts")
    without_gpu = sorted(h for h, item in facts.items() if not (item.get("gpu") or {}).get("count"))
    if without_gpu:
        raise ClusterRoleError(f"{', '.join(without_gpu)} in gpu_operator_hosts report no NVIDIA GPU "
                               "(ansible_facts['gpufabric']['gpu']['count'] is 0)")
    driver, driver_reason = _driver(facts, chosen["driver"])
    rdma, rdma_reason, problems = _rdma(facts, chosen["gpudirect_rdma"], bool(chosen["legacy_peermem"]), driver,
                                        chosen["kernel_module_type"])
    module_type, module_type_reason = _kernel_module_type(driver, chosen["kernel_module_type"], rdma)
    mofed, mofed_reason = _mofed(facts, chosen["mofed"])
    pull_secrets = secret_names(chosen["image_pull_secrets"], "gpu_operator_image_pull_secrets")
    values: dict[str, t.Any] = {
        "driver": {"enabled": driver == "operator",
                   "rdma": {"enabled": rdma == "legacy", "useHostMofed": rdma != "off" and mofed == "host"}},
        "cdi": {"enabled": bool(chosen["cdi"])},
        "devicePlugin": {"enabled": bool(chosen["device_plugin"])},
        "nfd": {"enabled": bool(chosen["nfd"])},
    }
    if driver == "operator" and chosen["driver_version"]:
        values["driver"]["version"] = str(chosen["driver_version"])
    if module_type is not None:
        values["driver"]["kernelModuleType"] = module_type
    via_gpu_cluster = bool(chosen["dra_driver_via_gpu_cluster"])
    if via_gpu_cluster:
        # Only one of the two CRs may exist (the chart fails otherwise); with an operator-installed driver the
        # GPUCluster stack takes it through NVIDIADriver resources (the chart makes the default one).
        values["clusterPolicy"] = {"deployCR": False}
        values["gpuCluster"] = {"deployCR": True}
        if driver == "operator":
            values["driver"]["nvidiaDriverCRD"] = {"enabled": True}
    for component, default in COMPONENTS.items():
        if chosen["image_registry"]:
            values.setdefault(component, {})["repository"] = registry_repository(default, chosen["image_registry"])
    for component in PULL_SECRET_COMPONENTS if pull_secrets else ():
        values.setdefault(component, {})["imagePullSecrets"] = list(pull_secrets)
    return {
        "values": values,
        "decisions": {
            "driver": {"mode": driver, "reason": driver_reason},
            "kernel_module_type": {"mode": module_type, "reason": module_type_reason},
            "gpudirect_rdma": {"mode": rdma, "reason": rdma_reason, "dma_buf_impossible": problems},
            "mofed": {"mode": mofed, "reason": mofed_reason},
            "dra_driver": ({"mode": "gpu_cluster", "reason": "gpu_operator_dra_driver_via_gpu_cluster is true: the "
                            "operator deploys the DRA driver through the GPUCluster gpu-cluster (experimental)"}
                           if via_gpu_cluster else
                           {"mode": "none", "reason": "the ClusterPolicy (device plugin); no DRA driver from the "
                            "operator"}),
            "hosts": sorted(facts),
        },
    }


def _names(name: str, value: t.Any) -> list[str]:
    items = arguments.sequence(name, value)
    for item in items:
        arguments.text(f"{name} item", item)
    return items


def gpu_cluster_refusals(cluster: Mapping, site: Mapping) -> list[str]:
    """Why the GPUCluster path cannot be taken here (empty: it can); see the ``gpu_cluster_refusals`` filter.

    ``cluster``: ``version`` (the API server's gitVersion), ``cluster_policies`` (names of the ClusterPolicies),
    ``daemonsets`` (the DaemonSets of standalone DRA driver releases, as ``metadata`` mappings with ``name``,
    ``namespace``, ``labels`` and ``ownerReferences``). ``site``: ``roles`` (the cluster roles the site applies,
    ``gpufabric_cluster_roles``), ``min_kubernetes_version``.
    Raises :class:`arguments.ArgumentError` on input of the wrong shape.
    """
    arguments.mapping("cluster", cluster)
    arguments.mapping("site", site)
    unknown = sorted(str(key) for key in set(cluster) - {"version", "cluster_policies", "daemonsets"})
    unknown += sorted(str(key) for key in set(site) - {"roles", "min_kubernetes_version"})
    if unknown:
        raise arguments.ArgumentError(f"unknown key(s) {', '.join(unknown)}")
    version = arguments.text("cluster.version", cluster.get("version") or "", allow_empty=True)
    policies = _names("cluster.cluster_policies", cluster.get("cluster_policies") or [])
    daemonsets = [arguments.mapping("cluster.daemonsets item", item)
                  for item in arguments.sequence("cluster.daemonsets", cluster.get("daemonsets") or [])]
    roles = _names("site.roles", site.get("roles") or [])
    minimum = arguments.text("site.min_kubernetes_version", site.get("min_kubernetes_version")
                             or GPU_CLUSTER_MIN_KUBERNETES)
    if not version_key(minimum):
        raise arguments.ArgumentError(f"site.min_kubernetes_version must be a version, got {minimum!r}")
    refusals = []
    if not version_key(version):
        refusals.append(f"the API server reported no Kubernetes version ({version!r}); the GPUCluster needs "
                        f"Kubernetes >= {minimum}")
    elif not at_least(version, minimum):
        refusals.append(f"Kubernetes {version} is older than {minimum}, which the GPU Operator's GPUCluster needs "
                        "(Dynamic Resource Allocation on by default)")
    if policies:
        refusals.append(f"ClusterPolicy {', '.join(sorted(policies))} exists: a cluster has either a ClusterPolicy "
                        "or a GPUCluster, and the GPU Operator does not migrate one to the other in place; use a "
                        "new cluster or set gpu_operator_dra_driver_via_gpu_cluster to false")
    if "dra_driver" in roles:
        refusals.append("gpu_operator_dra_driver_via_gpu_cluster and the role gpufabric.cluster.dra_driver exclude "
                        "each other, and the site applies both (gpufabric_cluster_roles: "
                        f"{', '.join(roles)}): drop dra_driver from gpufabric_cluster_roles or set "
                        "gpu_operator_dra_driver_via_gpu_cluster to false")
    standalone = []
    for item in daemonsets:
        labels = item.get("labels") if isinstance(item.get("labels"), Mapping) else {}
        owners = item.get("ownerReferences") if isinstance(item.get("ownerReferences"), list) else []
        if labels.get("app.kubernetes.io/name") in STANDALONE_DRA_DRIVER_NAMES and not any(
                isinstance(owner, Mapping) and owner.get("kind") == "GPUCluster" for owner in owners):
            standalone.append(f"{item.get('namespace')}/{item.get('name')}")
    if standalone:
        refusals.append(f"a standalone DRA driver runs (DaemonSet {', '.join(sorted(standalone))}; the role "
                        "gpufabric.cluster.dra_driver or another release): it and the GPUCluster's DRA driver "
                        "exclude each other; uninstall it or set gpu_operator_dra_driver_via_gpu_cluster to false")
    return refusals
