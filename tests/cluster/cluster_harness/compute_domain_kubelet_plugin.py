# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE: what the DRA driver's compute-domain kubelet plugin does when a pod's claim is prepared on a tray.

The real plugin (cmd/compute-domain-kubelet-plugin of sigs.k8s.io/dra-driver-nvidia-gpu v0.4.1) needs a GPU
driver and a kubelet, neither of which runs under kwok. Its decisions at prepare time are what the ComputeDomain's
promises rest on, so the harness runs this stand-in beside kwok (``up`` starts it as the process
``compute-domain-kubelet-plugin``). For a scheduled pod whose claims the real DRA allocator allocated on
``compute-domain.nvidia.com`` devices, as ``device_state.go`` and ``computedomain.go`` of v0.4.1 do:

- a channel claim (opaque ``ComputeDomainChannelConfig``) is refused when no ComputeDomain has its ``domainID``
  ("ComputeDomain not found: <uid>") or the claim's namespace is not the domain's ("the ResourceClaim's namespace
  is different than the ComputeDomain's namespace", ``AssertComputeDomainNamespace``); otherwise the node gets the
  label ``resource.nvidia.com/computeDomain=<uid>`` ("label already exists for a different ComputeDomain" when it
  has another), which is what the controller's IMEX daemon DaemonSet selects, and the claim is prepared once the
  domain's daemon runs on that node ("current node not ready in ComputeDomain" until then);
- a daemon claim (``ComputeDomainDaemonConfig``) is prepared at once.

A refusal is a ``FailedPrepareDynamicResources`` event on the pod, as the kubelet reports it, and the pod stays
Pending. A pod whose every claim is prepared is annotated ``PREPARED_ANNOTATION``; kwok's pod-ready stage starts a
pod with claims only then (``kwok.kwok_stages``). When no pod on a node holds a channel of the labelled domain any
more, the label goes, as the plugin's unprepare does.

The namespace assertion can be turned off (``set_namespace_assertion``) to stand for a driver that lost it: the
tests prove with it that ``validate_compute_domain``'s isolation check fails when isolation is broken.
"""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.parse
from pathlib import Path

from cluster_harness.api import Api
from cluster_harness.common import DOMAIN_ANNOTATION, PREPARED_ANNOTATION, HarnessError, log
from cluster_harness.processes import read_state

DRIVER = "compute-domain.nvidia.com"
DOMAIN_LABEL = "resource.nvidia.com/computeDomain"
COMPUTE_DOMAINS = "/apis/resource.nvidia.com/v1beta1/computedomains"
CHANNEL_CONFIG = "ComputeDomainChannelConfig"
DAEMON_CONFIG = "ComputeDomainDaemonConfig"
SETTINGS_FILE = "compute-domain-kubelet-plugin.json"
EVENT_REASON = "FailedPrepareDynamicResources"
# Until the domain's daemon runs on the node the real plugin returns this error, and the kubelet retries.
NOT_READY = "current node not ready in ComputeDomain"
# the pods prepare_pods looks at: scheduled and still Pending (a field selector: the API server filters)
PREPARABLE = urllib.parse.quote("status.phase=Pending,spec.nodeName!=")


class PrepareError(Exception):
    """The plugin refused a claim; the message is the driver's."""


def settings(run_dir: Path) -> dict:
    """The stand-in's settings: ``{"assert_namespace": bool}`` (default true)."""
    path = run_dir / SETTINGS_FILE
    try:
        value = json.loads(path.read_text())
    except FileNotFoundError:
        return {"assert_namespace": True}
    if not isinstance(value, dict) or not isinstance(value.get("assert_namespace", True), bool):
        raise HarnessError(f'{path}: expected {{"assert_namespace": true|false}}, got {value!r}')
    return {"assert_namespace": value.get("assert_namespace", True)}


def set_namespace_assertion(run_dir: Path, enabled: bool) -> None:
    """Turn the plugin's namespace assertion on (the driver's behaviour) or off (isolation broken, for tests)."""
    if not isinstance(enabled, bool):
        raise HarnessError(f"set_namespace_assertion: enabled must be a boolean, got {enabled!r}")
    path = Path(run_dir).resolve() / SETTINGS_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({"assert_namespace": enabled}) + "\n")
    temporary.replace(path)


def _compute_domains(api: Api) -> dict[str, dict]:
    """Every ComputeDomain by uid (none when the CRD is not installed)."""
    try:
        items = api.request("GET", COMPUTE_DOMAINS, timeout=30)["items"]
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return {}
        raise
    return {item["metadata"]["uid"]: item for item in items}


def _opaque_configs(claim: dict) -> list[dict]:
    """The opaque parameters of ``DRIVER`` in the claim's allocation (what the plugin reads at prepare)."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    devices = allocation.get("devices") or {}
    if not any(result.get("driver") == DRIVER for result in devices.get("results") or []):
        return []
    return [
        (entry.get("opaque") or {}).get("parameters") or {}
        for entry in devices.get("config") or []
        if (entry.get("opaque") or {}).get("driver") == DRIVER
    ]


def prepare_channel(api: Api, claim: dict, node: dict, domains: dict, assert_namespace: bool) -> str:
    """Prepare one channel claim on ``node`` as the plugin does; return the domain's uid or raise PrepareError."""
    uid = next((c.get("domainID") for c in _opaque_configs(claim) if c.get("kind") == CHANNEL_CONFIG), None)
    domain = domains.get(uid)
    if domain is None:
        raise PrepareError(f"error getting ComputeDomain: ComputeDomain not found: {uid}")
    if assert_namespace and domain["metadata"]["namespace"] != claim["metadata"]["namespace"]:
        raise PrepareError("the ResourceClaim's namespace is different than the ComputeDomain's namespace")
    labels = node["metadata"].get("labels") or {}
    if labels.get(DOMAIN_LABEL, uid) != uid:
        raise PrepareError("error updating Node with label: label already exists for a different ComputeDomain")
    if labels.get(DOMAIN_LABEL) != uid:
        api.request(
            "PATCH",
            f"/api/v1/nodes/{node['metadata']['name']}",
            {"metadata": {"labels": {DOMAIN_LABEL: uid}}},
            content_type="application/merge-patch+json",
        )
    return uid


def _daemon_running(pods: list[dict], uid: str, node: str) -> bool:
    return any(
        (pod["metadata"].get("labels") or {}).get(DOMAIN_LABEL) == uid
        and pod["spec"].get("nodeName") == node
        and (pod.get("status") or {}).get("phase") == "Running"
        and not pod["metadata"].get("deletionTimestamp")
        for pod in pods
    )


def _event(api: Api, pod: dict, message: str) -> None:
    meta = pod["metadata"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    api.request(
        "POST",
        f"/api/v1/namespaces/{meta['namespace']}/events",
        {
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": {
                "kind": "Pod",
                "namespace": meta["namespace"],
                "name": meta["name"],
                "uid": meta["uid"],
                "apiVersion": "v1",
            },
            "reason": EVENT_REASON,
            "message": message,
            "type": "Warning",
            "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        },
    )


def _annotate(api: Api, pod: dict, annotations: dict) -> None:
    meta = pod["metadata"]
    api.request(
        "PATCH",
        f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
        {"metadata": {"annotations": annotations}},
        content_type="application/merge-patch+json",
    )


def prepare_pods(api: Api, assert_namespace: bool = True, reported: set | None = None) -> list[str]:
    """One round of prepares: every scheduled, unprepared pod with claims; return what happened, one line each.

    ``reported`` holds the (pod uid, message) refusals already reported as events (one event per refusal).
    """
    reported = set() if reported is None else reported
    # the API server keeps only the pods a kubelet could still prepare (scheduled, Pending) instead of sending every
    # pod twice a second for as long as the harness runs (with Api's kept connection and unprepare_nodes' selector:
    # an idle harness's stand-in 1.2 -> 0.1 CPU seconds a minute, the API server's 3.7 -> 2.5;
    # bench/results/2026-11-27-test-tier-cpu.md)
    pods = [
        pod
        for pod in api.request("GET", f"/api/v1/pods?fieldSelector={PREPARABLE}", timeout=30)["items"]
        if pod["spec"].get("resourceClaims")
        and pod["spec"].get("nodeName")
        and not pod["metadata"].get("deletionTimestamp")
    ]
    waiting = [
        pod
        for pod in pods
        if (pod.get("status") or {}).get("phase") == "Pending"
        and (pod["metadata"].get("annotations") or {}).get(PREPARED_ANNOTATION) != "true"
    ]
    if not waiting:
        return []
    domains = _compute_domains(api)
    nodes = {item["metadata"]["name"]: item for item in api.request("GET", "/api/v1/nodes", timeout=30)["items"]}
    done = []
    for pod in waiting:
        meta = pod["metadata"]
        statuses = {
            s["name"]: s.get("resourceClaimName") for s in (pod.get("status") or {}).get("resourceClaimStatuses") or []
        }
        names = [statuses.get(c["name"]) or c.get("resourceClaimName") for c in pod["spec"]["resourceClaims"]]
        if not all(names):
            continue  # the claim from the template is not created yet
        node = nodes.get(pod["spec"]["nodeName"])
        if node is None:
            continue
        try:
            domain_uids = []
            for name in names:
                claim = api.request(
                    "GET",
                    f"/apis/resource.k8s.io/v1/namespaces/{meta['namespace']}"
                    f"/resourceclaims/{urllib.parse.quote(name)}",
                    timeout=30,
                )
                kinds = {config.get("kind") for config in _opaque_configs(claim)}
                if CHANNEL_CONFIG in kinds:
                    uid = prepare_channel(api, claim, node, domains, assert_namespace)
                    domain_uids.append(uid)
                    # The node's label is set: keep it while this pod holds the channel (see unprepare_nodes).
                    _annotate(api, pod, {DOMAIN_ANNOTATION: uid})
                    node["metadata"].setdefault("labels", {})[DOMAIN_LABEL] = uid
            daemon_pods = api.request(
                "GET", f"/api/v1/pods?labelSelector={urllib.parse.quote(DOMAIN_LABEL)}", timeout=30
            )["items"]
            for uid in domain_uids:
                if not _daemon_running(daemon_pods, uid, node["metadata"]["name"]):
                    raise PrepareError(f"error applying config: {NOT_READY}")
        except PrepareError as error:
            message = (
                f"Failed to prepare dynamic resources: NodePrepareResources failed for claims of pod "
                f"{meta['namespace']}/{meta['name']}: {error}"
            )
            if (meta["uid"], str(error)) not in reported and NOT_READY not in str(error):
                _event(api, pod, message)
                reported.add((meta["uid"], str(error)))
                done.append(f"refused {meta['namespace']}/{meta['name']} on {node['metadata']['name']}: {error}")
            continue
        _annotate(api, pod, {PREPARED_ANNOTATION: "true"})
        done.append(f"prepared {meta['namespace']}/{meta['name']} on {node['metadata']['name']}")
    return done


def unprepare_nodes(api: Api) -> list[str]:
    """Remove a node's domain label once no live pod on it holds (or waits for) that domain's channel."""
    # only the labelled nodes, and the pods only when there is one: most rounds there is none
    selector = urllib.parse.quote(DOMAIN_LABEL)
    labelled = api.request("GET", f"/api/v1/nodes?labelSelector={selector}", timeout=30)["items"]
    if not labelled:
        return []
    pods = api.request("GET", "/api/v1/pods", timeout=30)["items"]
    holding = {
        (pod["spec"].get("nodeName"), (pod["metadata"].get("annotations") or {}).get(DOMAIN_ANNOTATION))
        for pod in pods
        if (pod["metadata"].get("annotations") or {}).get(DOMAIN_ANNOTATION)
        and (pod.get("status") or {}).get("phase") in ("Pending", "Running")
    }
    removed = []
    for node in labelled:
        name = node["metadata"]["name"]
        uid = (node["metadata"].get("labels") or {}).get(DOMAIN_LABEL)
        if uid and (name, uid) not in holding:
            api.request(
                "PATCH",
                f"/api/v1/nodes/{name}",
                {"metadata": {"labels": {DOMAIN_LABEL: None}}},
                content_type="application/merge-patch+json",
            )
            removed.append(f"unlabelled {name} (domain {uid})")
    return removed


def run_compute_domain_kubelet_plugin(run_dir: Path, interval: float = 0.5) -> None:
    """Loop of the ``compute-domain-kubelet-plugin`` process until stopped (SIGTERM)."""
    run_dir = run_dir.resolve()
    state = read_state(run_dir)
    if not state:
        raise HarnessError(f"no harness state in {run_dir}")
    api = Api(state["server"], Path(state["run_dir"]) / "pki")
    reported: set = set()
    while True:
        try:
            assert_namespace = settings(run_dir)["assert_namespace"]
            for line in prepare_pods(api, assert_namespace, reported) + unprepare_nodes(api):
                log(f"compute-domain kubelet plugin (TEST FIXTURE): {line}")
        except urllib.error.HTTPError as error:
            if error.code not in (404, 409):  # changed or gone since the list: the next round sees it again
                log(f"compute-domain kubelet plugin (TEST FIXTURE): HTTP {error.code}")
        except (OSError, urllib.error.URLError, ssl.SSLError, ValueError, KeyError, HarnessError) as error:
            log(f"compute-domain kubelet plugin (TEST FIXTURE): {error}")
        time.sleep(interval)
