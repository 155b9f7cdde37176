# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ComputeDomain workloads on the nodes of a wave: the pods a domain's drain evicts first, all at once.

The logic of the ``gpufabric.cluster.compute_domain_workloads`` filter; errors are :class:`WorkloadsError`.

A multi-node job in a ComputeDomain has a pod on several trays of a rack, each holding a ResourceClaim for the
ComputeDomain's IMEX channel. Drained node by node, such a job would run on with half its pods gone; evicted first,
all at once, it leaves whole, and the DRA driver's IMEX daemons (DaemonSet pods the drain leaves alone) are released
by its controller before the driver changes under them.

How a pod is recognised, from what ``kubernetes.core.k8s_info`` returns for the Pods and the ResourceClaims
(resource.k8s.io/v1):

- the pod's claims are its ``spec.resourceClaims``: by ``resourceClaimName``, or made from a
  ``resourceClaimTemplateName`` under the name given in ``status.resourceClaimStatuses`` (claims are namespaced);
- a claim is a ComputeDomain channel claim when its allocation (``status.allocation.devices.results``) holds a device
  of the driver ``compute-domain.nvidia.com`` (:data:`COMPUTE_DOMAIN_DRIVER`, the driver of the DeviceClasses
  ``compute-domain-default-channel.nvidia.com`` and ``compute-domain-daemon.nvidia.com`` of the charts
  nvidia-dra-driver-gpu 25.12.0 and dra-driver-nvidia-gpu 0.4/0.5) for a request that is not one of the daemon
  class (:data:`DAEMON_CLASS`, in ``spec.devices.requests[].exactly.deviceClassName`` or the older
  ``.deviceClassName``, or its alternatives in ``firstAvailable``). The allocation is what the scheduler gave the
  pod, whatever class or CEL selector the user wrote, so a claim of another class name that got a channel counts,
  and a claim not allocated holds nothing on any node (a pod that is bound to a node has its claims allocated);
- the pods of a DaemonSet (the ComputeDomain's IMEX daemons hold the daemon claim) and mirror pods are left to the
  drain, which ignores them, and so are finished pods (``Succeeded``, ``Failed``), which hold no device.

A workload is the ComputeDomain its channel claims name (the ``domainID`` of the driver's opaque
``ComputeDomainChannelConfig`` in ``status.allocation.devices.config`` or ``spec.devices.config``), or the claim
itself when none is named. A workload with pods on nodes outside the wave spans beyond it: its pods on the wave's
nodes are evicted and the workload ends there too; the result names it.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
DAEMON_CLASS = "compute-domain-daemon.nvidia.com"
CHANNEL_CONFIG = "ComputeDomainChannelConfig"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
FINISHED_PHASES = ("Succeeded", "Failed")


class WorkloadsError(ValueError):
    """Input the ``compute_domain_workloads`` filter cannot use; the message says what is wrong."""


def _mapping(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _list(value: t.Any) -> list:
    return value if isinstance(value, list) else []


def _objects(name: str, value: t.Any, kind: str) -> list[Mapping]:
    """The ``resources`` list of k8s_info for ``kind``; each object must have a name and a namespace."""
    if isinstance(value, Mapping) and "resources" in value:
        value = value["resources"]
    if not isinstance(value, list):
        raise WorkloadsError(f"{name} must be the resources list of k8s_info for {kind}, "
                             f"got {arguments.type_name(value)}")
    for index, item in enumerate(value):
        metadata = _mapping(_mapping(item).get("metadata"))
        if not (isinstance(metadata.get("name"), str) and metadata["name"]
                and isinstance(metadata.get("namespace"), str) and metadata["namespace"]):
            raise WorkloadsError(f"{name}[{index}] is not a {kind[:-1]} with a name and a namespace")
    return value


def _class_of_request(request: Mapping) -> set[str]:
    """The device classes a request of ``spec.devices.requests`` may be allocated from."""
    classes = {_mapping(request.get("exactly")).get("deviceClassName"), request.get("deviceClassName")}
    classes |= {_mapping(alternative).get("deviceClassName") for alternative in _list(request.get("firstAvailable"))}
    return {name for name in classes if isinstance(name, str)}


def _opaque_domains(configs: t.Any) -> set[str]:
    domains = set()
    for config in _list(configs):
        opaque = _mapping(_mapping(config).get("opaque"))
        parameters = _mapping(opaque.get("parameters"))
        if opaque.get("driver") == COMPUTE_DOMAIN_DRIVER and parameters.get("kind") == CHANNEL_CONFIG \
                and isinstance(parameters.get("domainID"), str) and parameters["domainID"]:
            domains.add(parameters["domainID"])
    return domains


def channel_claim_domains(claim: Mapping) -> list[str] | None:
    """The domainIDs a ComputeDomain channel claim names (sorted; empty when it names none); None for a claim that
    holds no ComputeDomain channel."""
    spec_devices = _mapping(_mapping(claim.get("spec")).get("devices"))
    daemon_requests = {_mapping(request).get("name") for request in _list(spec_devices.get("requests"))
                       if DAEMON_CLASS in _class_of_request(_mapping(request))}
    devices = _mapping(_mapping(_mapping(claim.get("status")).get("allocation")).get("devices"))
    channel = False
    for result in _list(devices.get("results")):
        result = _mapping(result)
        request = result.get("request")
        # a request of firstAvailable is named "<request>/<subrequest>" in the result
        parent = request.split("/", 1)[0] if isinstance(request, str) else None
        if result.get("driver") == COMPUTE_DOMAIN_DRIVER and parent not in daemon_requests:
            channel = True
    if not channel:
        return None
    return sorted(_opaque_domains(devices.get("config")) or _opaque_domains(spec_devices.get("config")))


def pod_claim_names(pod: Mapping) -> list[str]:
    """The names of the ResourceClaims ``pod`` holds (in its namespace), in the order of ``spec.resourceClaims``."""
    generated = {}
    for status in _list(_mapping(pod.get("status")).get("resourceClaimStatuses")):
        status = _mapping(status)
        if isinstance(status.get("name"), str) and isinstance(status.get("resourceClaimName"), str):
            generated[status["name"]] = status["resourceClaimName"]
    names = []
    for entry in _list(_mapping(pod.get("spec")).get("resourceClaims")):
        entry = _mapping(entry)
        name = entry.get("resourceClaimName")
        if not isinstance(name, str) or not name:
            name = generated.get(entry.get("name"))
        if isinstance(name, str) and name and name not in names:
            names.append(name)
    return names


def _left_to_the_drain(pod: Mapping) -> bool:
    metadata = pod["metadata"]
    owners = [_mapping(owner).get("kind") for owner in _list(metadata.get("ownerReferences"))]
    return ("DaemonSet" in owners or MIRROR_ANNOTATION in _mapping(metadata.get("annotations"))
            or _mapping(pod.get("status")).get("phase") in FINISHED_PHASES)


def _domain_names(compute_domains: t.Any) -> dict[str, str]:
    """``{uid: "ComputeDomain <namespace>/<name>"}`` of the ComputeDomains (k8s_info), to name the workloads."""
    if compute_domains is None:
        return {}
    names = {}
    for domain in _objects("compute_domains", compute_domains, "ComputeDomains"):
        metadata = domain["metadata"]
        if isinstance(metadata.get("uid"), str) and metadata["uid"]:
            names[metadata["uid"]] = f"ComputeDomain {metadata['namespace']}/{metadata['name']}"
    return names


def stuck_reason(pod: Mapping) -> str | None:
    """Why a drain that does not delete (``kubectl drain`` without ``--force`` and ``--delete-emptydir-data``,
    ``kubernetes.core.k8s_drain`` alike) would refuse ``pod``: no controller would make it again, or its emptyDir
    data would be lost; None when it would evict it."""
    if not _list(pod["metadata"].get("ownerReferences")):
        return "not managed by a controller"
    if any("emptyDir" in _mapping(volume) for volume in _list(_mapping(pod.get("spec")).get("volumes"))):
        return "emptyDir data"
    return None


def compute_domain_workloads(pods: t.Any, claims: t.Any, nodes: t.Any, compute_domains: t.Any = None) -> dict:
    """The pods on ``nodes`` that hold a ComputeDomain channel claim, and their workloads.

    ``pods`` and ``claims`` are the ``resources`` of ``kubernetes.core.k8s_info`` for the Pods and the ResourceClaims
    (of every namespace; the registered result itself is taken too), ``nodes`` the names of the wave's nodes. Returns
    ``pods``: ``{namespace, name, uid, node, workload, stuck}`` of each pod to evict, by node, namespace and name
    (``stuck``: why a drain that does not delete would refuse it, or None); ``stuck``: those pods as
    ``namespace/name (reason)``; ``workloads``: ``{name, pods, nodes, outside}`` of each workload with a pod on the
    wave's nodes (``outside``: its nodes outside the wave), by name; ``summary``: a line for each of them;
    ``beyond``: the names of the workloads with ``outside`` nodes. A workload is named
    ``ComputeDomain <namespace>/<name>`` when ``compute_domains`` (k8s_info's ComputeDomains) has its domainID,
    ``ComputeDomain <domainID>`` otherwise, or ``ResourceClaim <namespace>/<name>`` for a claim naming no domain.
    A pod listed twice (the same namespace and name) is taken once when both copies are the same pod (same uid and
    node), and refused otherwise.
    """
    pods = _objects("pods", pods, "Pods")
    claims = _objects("claims", claims, "ResourceClaims")
    nodes = arguments.sequence("nodes", nodes)
    if not all(isinstance(node, str) and node for node in nodes):
        raise WorkloadsError(f"nodes must be a list of node names, got {nodes!r}")
    wave = set(nodes)
    names = _domain_names(compute_domains)
    domains: dict[tuple[str, str], str | None] = {}
    for claim in claims:
        key = (claim["metadata"]["namespace"], claim["metadata"]["name"])
        uids = channel_claim_domains(claim)
        if uids is None:
            domain = None
        elif uids:
            domain = ", ".join(names.get(uid, f"ComputeDomain {uid}") for uid in uids)
        else:
            domain = f"ResourceClaim {key[0]}/{key[1]}"
        if key in domains and domains[key] != domain:
            raise WorkloadsError(f"claims lists ResourceClaim {key[0]}/{key[1]} twice, differently")
        domains[key] = domain
    seen: dict[tuple[str, str], tuple] = {}
    selected: list[dict] = []
    workloads: dict[str, dict] = {}
    for pod in pods:
        metadata = pod["metadata"]
        key = (metadata["namespace"], metadata["name"])
        node = _mapping(pod.get("spec")).get("nodeName")
        uid = metadata.get("uid") if isinstance(metadata.get("uid"), str) else ""
        if key in seen:
            if seen[key] != (uid, node):
                raise WorkloadsError(f"pods lists Pod {key[0]}/{key[1]} twice, as different pods")
            continue
        seen[key] = (uid, node)
        if not isinstance(node, str) or not node or _left_to_the_drain(pod):
            continue
        held = sorted({domains.get((key[0], claim)) for claim in pod_claim_names(pod)} - {None})
        if not held:
            continue
        workload = " + ".join(held)
        entry = workloads.setdefault(workload, {"name": workload, "pods": [], "nodes": set(), "outside": set()})
        if node in wave:
            entry["pods"].append(f"{key[0]}/{key[1]}")
            entry["nodes"].add(node)
            selected.append({"namespace": key[0], "name": key[1], "uid": uid, "node": node, "workload": workload,
                             "stuck": stuck_reason(pod)})
        else:
            entry["outside"].add(node)
    in_wave = [{"name": entry["name"], "pods": sorted(entry["pods"]), "nodes": sorted(entry["nodes"]),
                "outside": sorted(entry["outside"])}
               for entry in sorted(workloads.values(), key=lambda entry: entry["name"]) if entry["pods"]]
    selected.sort(key=lambda pod: (pod["node"], pod["namespace"], pod["name"]))
    return {"pods": selected,
            "workloads": in_wave,
            "beyond": [entry["name"] for entry in in_wave if entry["outside"]],
            "stuck": [f"{pod['namespace']}/{pod['name']} ({pod['stuck']})" for pod in selected if pod["stuck"]],
            "summary": [summary_line(entry) for entry in in_wave]}


def summary_line(workload: Mapping) -> str:
    """One line of the report for a workload: its pods on the wave's nodes, and where else it runs."""
    line = (f"{workload['name']}: {len(workload['pods'])} pod(s) on {', '.join(workload['nodes'])} "
            f"({', '.join(workload['pods'])}) leave first, all at once")
    if workload["outside"]:
        line += (f"; it also runs on {', '.join(workload['outside'])} outside the wave: the workload ends there "
                 f"too")
    return line
