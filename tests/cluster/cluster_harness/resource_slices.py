# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ResourceSlices of the DRA driver's ComputeDomain kubelet plugin, one per kwok GPU tray.

No kubelet plugin runs under kwok, so ``up`` publishes what the compute-domain kubelet plugin of
sigs.k8s.io/dra-driver-nvidia-gpu v0.4.1 publishes on a node (cmd/compute-domain-kubelet-plugin: driver.go,
deviceinfo.go, types.go): driver ``compute-domain.nvidia.com``, one pool named after the node with one slice,
``nodeName`` set, owned by the Node, and two devices: ``channel-0`` (attributes ``type: channel``, ``id: 0``; the
plugin leaves the other IMEX channels out) and ``daemon-0`` (``type: daemon``, ``id: 0``). The chart's
DeviceClasses ``compute-domain-default-channel.nvidia.com`` and ``compute-domain-daemon.nvidia.com`` select them
by those attributes, so the real kube-scheduler's DRA allocator allocates claims on them. A slice goes with its
Node (owner reference) and with the control plane at ``down``.
"""

from __future__ import annotations

import urllib.error
import urllib.parse

from cluster_harness.api import Api
from cluster_harness.common import MANAGED_BY_LABEL

COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"
SLICES_API = "/apis/resource.k8s.io/v1/resourceslices"
# Marks the slices the harness published (the plugin's own are marked by nothing of the kind).
SLICE_MANAGER = "gpufabric-cluster-harness"
# The devices a node's compute-domain kubelet plugin advertises: (name, type, id).
COMPUTE_DOMAIN_DEVICES = (("channel-0", "channel", 0), ("daemon-0", "daemon", 0))


def slice_name(node: str) -> str:
    return f"{node}-{COMPUTE_DOMAIN_DRIVER}"


def compute_domain_slice(node: str, node_uid: str) -> dict:
    """The ResourceSlice the compute-domain kubelet plugin publishes for ``node`` (resource.k8s.io/v1)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": slice_name(node),
            "labels": {MANAGED_BY_LABEL: SLICE_MANAGER},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node_uid, "controller": True}
            ],
        },
        "spec": {
            "driver": COMPUTE_DOMAIN_DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [
                {"name": name, "attributes": {"type": {"string": kind}, "id": {"int": index}}}
                for name, kind, index in COMPUTE_DOMAIN_DEVICES
            ],
        },
    }


def publish_compute_domain_slices(api: Api, nodes: list[str]) -> list[str]:
    """Create (or replace) the compute-domain ResourceSlice of every node in ``nodes``; return their names."""
    uids = {
        item["metadata"]["name"]: item["metadata"]["uid"]
        for item in api.request("GET", "/api/v1/nodes", timeout=30)["items"]
    }
    published = []
    for node in nodes:
        body = compute_domain_slice(node, uids[node])
        try:
            api.request("POST", SLICES_API, body)
        except urllib.error.HTTPError as error:
            if error.code != 409:
                raise
            api.request("DELETE", f"{SLICES_API}/{body['metadata']['name']}")
            api.request("POST", SLICES_API, body)
        published.append(body["metadata"]["name"])
    return published


def compute_domain_slices(api: Api) -> list[dict]:
    """The compute-domain ResourceSlices the harness published."""
    selector = urllib.parse.quote(f"{MANAGED_BY_LABEL}={SLICE_MANAGER}")
    items = api.request("GET", f"{SLICES_API}?labelSelector={selector}", timeout=30)["items"]
    return [item for item in items if item["spec"].get("driver") == COMPUTE_DOMAIN_DRIVER]


def remove_compute_domain_slices(api: Api, nodes: list[str] | None = None) -> list[str]:
    """Delete the harness's compute-domain ResourceSlices (of ``nodes``; all when None); return their names."""
    removed = []
    for item in compute_domain_slices(api):
        if nodes is None or item["spec"].get("nodeName") in nodes:
            try:
                api.request("DELETE", f"{SLICES_API}/{item['metadata']['name']}")
            except urllib.error.HTTPError as error:
                if error.code != 404:
                    raise
            removed.append(item["metadata"]["name"])
    return removed
