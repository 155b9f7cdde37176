# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""How validate_compute_domain writes its ComputeDomain and judges it ready, and its isolation verdict.

Decided from what the API server holds: the installed ``computedomains.resource.nvidia.com`` CRD. The CRD of
NVIDIA's ``nvidia-dra-driver-gpu`` 25.x requires ``spec.numNodes``; the CRD of kubernetes-sigs'
``dra-driver-nvidia-gpu`` 0.4 and later makes it optional (default 0) and recommends 0, with which the domain's
``status`` means little: readiness is then judged from the workload's pods and the per-node IMEX daemon pods the
controller starts for the domain (label ``resource.nvidia.com/computeDomain=<domain uid>``). A chart version, when
known, decides instead and must agree with the CRD (Helm never updates CRDs, so a 0.4 release over 25.x CRDs is
the migration left half done).

The logic of the filters ``gpufabric.cluster.compute_domain_spec``, ``compute_domain_readiness`` and
``compute_domain_isolation``; errors are :class:`ComputeDomainError`.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dra_driver_chart import LEGACY, SIGS, chart_line

CRD_NAME = "computedomains.resource.nvidia.com"
GROUP = "resource.nvidia.com"
# The label the ComputeDomain controller puts on the IMEX daemon pods (and DaemonSet) of one domain: its uid.
DAEMON_LABEL = "resource.nvidia.com/computeDomain"
_KUBE_VERSION = re.compile(r"\Av([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?\Z")


class ComputeDomainError(ValueError):
    """Input from which no decision can be made; the message says what is wrong."""


def _version_priority(name: str) -> tuple:
    """Kubernetes' version priority: GA before beta before alpha, then the higher number; other names last."""
    found = _KUBE_VERSION.match(name)
    if not found:
        return (0, 0, 0, name)
    major, stage, minor = found.groups()
    rank = {None: 3, "beta": 2, "alpha": 1}[stage]
    return (rank, int(major), int(minor or 0), "")


def _the_crd(crd: t.Any) -> Mapping:
    """The CRD object from ``crd``: the object itself or ``k8s_info``'s ``resources`` (exactly one)."""
    if isinstance(crd, (list, tuple)):
        if not crd:
            raise ComputeDomainError(f"the cluster has no ComputeDomain CRD ({CRD_NAME}): install the NVIDIA DRA "
                                     "driver with ComputeDomains first (gpufabric.cluster.dra_driver)")
        if len(crd) > 1:
            raise ComputeDomainError(f"expected one {CRD_NAME} CRD, got {len(crd)}")
        crd = crd[0]
    if crd is None:
        raise ComputeDomainError(f"the cluster has no ComputeDomain CRD ({CRD_NAME}): install the NVIDIA DRA driver "
                                 "with ComputeDomains first (gpufabric.cluster.dra_driver)")
    crd = arguments.mapping("_input", crd)
    spec = crd.get("spec")
    if not isinstance(spec, Mapping) or spec.get("group") != GROUP or \
            not isinstance(spec.get("names"), Mapping) or spec["names"].get("kind") != "ComputeDomain":
        raise ComputeDomainError(f"_input is not the {CRD_NAME} CustomResourceDefinition (spec.group {GROUP}, "
                                 "spec.names.kind ComputeDomain)")
    return crd


def _served_version(crd: Mapping) -> Mapping:
    """The version to write: the storage version when served, else the served one of highest priority."""
    versions = crd["spec"].get("versions")
    if not isinstance(versions, list) or not all(isinstance(v, Mapping) for v in versions):
        raise ComputeDomainError(f"the {CRD_NAME} CRD has no list of versions (spec.versions)")
    served = [v for v in versions if v.get("served") is True and isinstance(v.get("name"), str) and v["name"]]
    if not served:
        raise ComputeDomainError(f"the {CRD_NAME} CRD serves no version: "
                                 f"{', '.join(str(v.get('name')) for v in versions) or 'none listed'}")
    names = [v["name"] for v in served]
    if len(set(names)) != len(names):
        raise ComputeDomainError(f"the {CRD_NAME} CRD lists a version twice: {', '.join(names)}")
    storage = [v for v in served if v.get("storage") is True]
    if storage:
        return storage[0]
    return max(served, key=lambda v: _version_priority(v["name"]))


def _requires_num_nodes(version: Mapping) -> bool:
    """Whether the version's schema requires ``spec.numNodes`` (25.x) or leaves it optional (0.4 and later)."""
    try:
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    except (KeyError, TypeError):
        raise ComputeDomainError(f"the {CRD_NAME} CRD's version {version['name']} has no schema of spec "
                                 "(schema.openAPIV3Schema.properties.spec)") from None
    if not isinstance(spec, Mapping):
        raise ComputeDomainError(f"the {CRD_NAME} CRD's version {version['name']} has no schema of spec")
    required = spec.get("required") or []
    if not isinstance(required, list):
        raise ComputeDomainError(f"the {CRD_NAME} CRD's version {version['name']}: spec.required is not a list")
    return "numNodes" in required


def compute_domain_spec(crd: t.Any, nodes: t.Any, driver_version: t.Any = None) -> dict:
    """How to write the ComputeDomain of a job over ``nodes`` nodes and how to judge it ready.

    Returns ``{api_version, version, served_versions, line, num_nodes, readiness, daemon_label, decided_by,
    reason}``: ``line`` is ``legacy`` (25.x: ``numNodes`` = nodes, ready when ``status.status`` is Ready on
    that many nodes) or ``sigs`` (0.4 and later: ``numNodes`` 0, ready when the workload's pods and the IMEX
    daemon pods labelled ``daemon_label=<uid>`` are Ready on every node).
    """
    the_crd = _the_crd(crd)
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 1:
        raise ComputeDomainError(f"nodes must be a whole number of nodes greater than 0, got {nodes!r}")
    version = _served_version(the_crd)
    requires = _requires_num_nodes(version)
    crd_line = LEGACY if requires else SIGS
    served = [v["name"] for v in the_crd["spec"]["versions"] if v.get("served") is True]
    if driver_version is None or driver_version == "":
        line, decided_by = crd_line, "crd"
        reason = ("the ComputeDomain CRD requires numNodes (nvidia-dra-driver-gpu 25.x)" if requires else
                  "the ComputeDomain CRD makes numNodes optional (dra-driver-nvidia-gpu 0.4 or later)")
    else:
        try:
            line = chart_line(driver_version, "driver_version")
        except ClusterRoleError as exc:
            raise ComputeDomainError(str(exc)) from None
        decided_by = "driver_version"
        if line == SIGS and requires:
            raise ComputeDomainError(
                f"the DRA driver is {str(driver_version).strip()} (0.4 or later) but the installed {CRD_NAME} CRD is "
                "25.x's (numNodes required): Helm does not update CRDs; apply the chart's CRDs "
                "(gpufabric.cluster.dra_driver does) before validating")
        reason = f"the DRA driver is {str(driver_version).strip()}"
    return {
        "api_version": f"{GROUP}/{version['name']}",
        "version": version["name"],
        "served_versions": served,
        "line": line,
        "num_nodes": nodes if line == LEGACY else 0,
        "readiness": "status" if line == LEGACY else "pods",
        "daemon_label": DAEMON_LABEL,
        "decided_by": decided_by,
        "reason": reason,
    }


def _pods(name: str, value: t.Any) -> list[Mapping]:
    """``value`` as a list of pod objects (``k8s_info``'s ``resources``)."""
    pods = arguments.sequence(name, value)
    for index, pod in enumerate(pods):
        if not isinstance(pod, Mapping) or not isinstance(pod.get("metadata"), Mapping) or \
                not isinstance(pod["metadata"].get("name"), str):
            raise ComputeDomainError(f"{name}[{index}] is not a pod (a mapping with metadata.name)")
    return pods


def _node_of(pod: Mapping) -> str | None:
    spec = pod.get("spec")
    node = spec.get("nodeName") if isinstance(spec, Mapping) else None
    return node if isinstance(node, str) and node else None


def _ready(pod: Mapping) -> bool:
    """Whether the pod runs and reports the condition Ready True (and is not being deleted)."""
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    status = pod.get("status")
    if not isinstance(status, Mapping) or status.get("phase") != "Running":
        return False
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return False
    return any(isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _node_names(value: t.Any) -> list[str]:
    names = arguments.sequence("nodes", value)
    if not names:
        raise ComputeDomainError("nodes must name at least one node")
    for name in names:
        arguments.text("nodes[]", name)
    if len(set(names)) != len(names):
        raise ComputeDomainError(f"nodes names a node twice: {', '.join(names)}")
    return names


def compute_domain_readiness(daemon_pods: t.Any, workload_pods: t.Any, nodes: t.Any,
                             launcher_started: t.Any = False) -> dict:
    """Whether a 0.4+ ComputeDomain is ready on ``nodes``: an IMEX daemon pod and a workload pod Ready on each.

    Returns ``{ready, daemons_ready, inferred, nodes: [{name, daemon, workload}], stray, message}``; ``daemon`` and
    ``workload`` are ``Ready``, ``NotReady`` or ``missing``; ``stray`` lists workload pods on other nodes.

    ``launcher_started``: the MPIJob's launcher has started. The MPI operator creates it only once every worker is
    Ready (``launcherCreationPolicy: WaitForWorkersReady``), and the driver starts a worker only once the domain's
    IMEX daemon on its node is ready, so the domain was ready even when its pods are gone by the time they are read
    (a short job: the workers and then the daemons go when it ends). The result is then ``ready`` with
    ``inferred`` true and the rows as seen; a stray workload pod still makes it not ready.
    """
    started = arguments.boolean("launcher_started", launcher_started)
    names = _node_names(nodes)
    daemons = _pods("daemon_pods", daemon_pods)
    workloads = _pods("workload_pods", workload_pods)

    def state(pods: list[Mapping], node: str) -> str:
        on_node = [pod for pod in pods if _node_of(pod) == node]
        if not on_node:
            return "missing"
        return "Ready" if any(_ready(pod) for pod in on_node) else "NotReady"

    rows = [{"name": node, "daemon": state(daemons, node), "workload": state(workloads, node)} for node in names]
    stray = sorted(pod["metadata"]["name"] for pod in workloads if _node_of(pod) not in (None, *names))
    daemons_ready = all(row["daemon"] == "Ready" for row in rows)
    ready = daemons_ready and all(row["workload"] == "Ready" for row in rows) and not stray
    problems = []
    for what in ("daemon", "workload"):
        label = "IMEX daemon" if what == "daemon" else "workload pod"
        for wanted in ("missing", "NotReady"):
            bad = [row["name"] for row in rows if row[what] == wanted]
            if bad:
                problems.append(f"{label} {'missing' if wanted == 'missing' else 'not Ready'} on {', '.join(bad)}")
    if stray:
        problems.append(f"workload pods on nodes outside the placement: {', '.join(stray)}")
    inferred = started and not ready and not stray
    if inferred:
        message = ("Ready on " + ", ".join(names) + ": the MPIJob's launcher started, which the MPI operator does only"
                   " once every worker is Ready, and a worker starts only once the domain's IMEX daemon on its node is"
                   " ready (the pods as read: " + "; ".join(problems) + ")")
        return {"ready": True, "daemons_ready": True, "inferred": True, "nodes": rows, "stray": stray,
                "message": message}
    message = "Ready on " + ", ".join(names) if ready else "; ".join(problems)
    return {"ready": ready, "daemons_ready": daemons_ready, "inferred": False, "nodes": rows, "stray": stray,
            "message": message}


def _started(pod: Mapping) -> bool:
    """Whether any container of the pod started: the pod was admitted to the node with its claims prepared."""
    status = pod.get("status")
    if not isinstance(status, Mapping):
        return False
    if status.get("phase") in ("Running", "Succeeded"):
        return True
    for key in ("containerStatuses", "initContainerStatuses"):
        for container in status.get(key) or []:
            if not isinstance(container, Mapping):
                continue
            if container.get("started") is True:
                return True
            states = container.get("state")
            if isinstance(states, Mapping) and ("running" in states or "terminated" in states):
                return True
    return False


def _stage(pod: Mapping) -> str:
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    scheduled = any(isinstance(c, Mapping) and c.get("type") == "PodScheduled" and c.get("status") == "True"
                    for c in status.get("conditions") or [])
    if _started(pod):
        return "started"
    return "scheduled, not started" if scheduled or _node_of(pod) else "not scheduled"


def compute_domain_isolation(probe_pods: t.Any, expected: t.Any, skipped: t.Any = None) -> dict:
    """The isolation verdict: no probe pod of the second namespace got into the domain.

    ``probe_pods`` are the pods of the probe namespace, ``expected`` the names of the probe pods the role created
    (each must be there: a probe that is missing proved nothing). ``skipped`` (a reason) gives the verdict
    ``skipped`` without looking at pods. Returns ``{status, admitted, probes, message}``; ``status`` is ``held``
    (no probe pod started), ``broken`` (``admitted`` names each that did, with its node) or ``skipped``.
    """
    if skipped is not None and skipped != "":
        reason = arguments.text("skipped", skipped)
        return {"status": "skipped", "admitted": [], "probes": [], "message": f"isolation: skipped ({reason})"}
    names = arguments.sequence("expected", expected)
    if not names:
        raise ComputeDomainError("expected must name the probe pods the role created")
    for name in names:
        arguments.text("expected[]", name)
    pods = {pod["metadata"]["name"]: pod for pod in _pods("_input", probe_pods)}
    missing = [name for name in names if name not in pods]
    if missing:
        raise ComputeDomainError(f"the probe pods {', '.join(missing)} are missing: the isolation check proved nothing")
    probes = [{"pod": name, "node": _node_of(pods[name]), "stage": _stage(pods[name])} for name in names]
    admitted = [probe for probe in probes if probe["stage"] == "started"]
    if admitted:
        got_in = ", ".join(f"{probe['pod']} on {probe['node'] or 'an unknown node'}" for probe in admitted)
        return {"status": "broken", "admitted": admitted, "probes": probes,
                "message": f"isolation: broken, admitted from the second namespace: {got_in}"}
    return {"status": "held", "admitted": [], "probes": probes, "message": "isolation: held"}
