# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The helm-hook-completer: under kwok no container runs, so the pods of Helm hook Jobs (and served pods marked
to complete) are annotated for kwok's pod-complete stage to finish them, as their container would."""

from __future__ import annotations

import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from cluster_harness.api import Api
from cluster_harness.common import COMPLETE_ANNOTATION, KWOK_API, HarnessError, log
from cluster_harness.processes import read_state


def complete_helm_hook_pods(api: Api) -> list[str]:
    """Annotate the Running pods of Helm hook Jobs so that kwok's pod-complete stage finishes them.

    Under kwok no container runs, so a chart's pre-install or post-delete hook Job would never end and
    ``helm install --wait`` would time out; a real container would exit. Returns the pods annotated now.
    """
    jobs = api.request("GET", "/apis/batch/v1/jobs", timeout=30)["items"]
    hooks = {
        (job["metadata"]["namespace"], job["metadata"]["name"])
        for job in jobs
        if "helm.sh/hook" in (job["metadata"].get("annotations") or {})
    }
    if not hooks:
        return []
    selector = urllib.parse.quote("batch.kubernetes.io/job-name")
    pods = api.request("GET", f"/api/v1/pods?labelSelector={selector}", timeout=30)["items"]
    completed = []
    for pod in pods:
        meta = pod["metadata"]
        job = (meta.get("labels") or {}).get("batch.kubernetes.io/job-name")
        done = (meta.get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true"
        if (meta["namespace"], job) in hooks and not done and pod.get("status", {}).get("phase") == "Running":
            api.request(
                "PATCH",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"metadata": {"annotations": {COMPLETE_ANNOTATION: "true"}}},
                content_type="application/merge-patch+json",
            )
            completed.append(f"{meta['namespace']}/{meta['name']}")
    return completed


def _served_containers(item: dict) -> set[str] | None:
    """The containers a ClusterLogs serves (None: every container)."""
    containers: set[str] = set()
    for entry in item["spec"].get("logs") or []:
        if not entry.get("containers"):
            return None
        containers.update(entry["containers"])
    return containers


def complete_served_pods(api: Api) -> list[str]:
    """Annotate the Running pods that a ClusterLogs annotated COMPLETE_ANNOTATION serves, so that they finish.

    Their log is the recorded output of a program that ran to its end: the container would have exited. A
    ClusterLogs that serves only some containers finishes only the pods that have one of them (an MPIJob's
    launcher, not its workers). Returns the pods annotated now.
    """
    rules = [
        ((item["spec"].get("selector") or {}), _served_containers(item))
        for item in api.request("GET", f"{KWOK_API}/clusterlogs", timeout=30)["items"]
        if (item["metadata"].get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true"
    ]
    if not rules:
        return []
    completed = []
    for pod in api.request("GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning", timeout=30)["items"]:
        meta = pod["metadata"]
        if (meta.get("annotations") or {}).get(COMPLETE_ANNOTATION) == "true":
            continue
        names = {container["name"] for container in pod["spec"].get("containers") or []}
        if any(
            (not rule.get("matchNamespaces") or meta["namespace"] in rule["matchNamespaces"])
            and (not rule.get("matchNames") or meta["name"] in rule["matchNames"])
            and (containers is None or names & containers)
            for rule, containers in rules
        ):
            api.request(
                "PATCH",
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"metadata": {"annotations": {COMPLETE_ANNOTATION: "true"}}},
                content_type="application/merge-patch+json",
            )
            completed.append(f"{meta['namespace']}/{meta['name']}")
    return completed


def run_helm_hook_completer(run_dir: Path, interval: float = 1.0) -> None:
    """Loop of the helm-hook-completer process until stopped (SIGTERM): finish Helm hook pods, and the pods
    that a ClusterLogs marked to complete serves (``serve_logs(..., complete=True)``)."""
    state = read_state(run_dir.resolve())
    if not state:
        raise HarnessError(f"no harness state in {run_dir}")
    api = Api(state["server"], Path(state["run_dir"]) / "pki")
    while True:
        for what, step in (("Helm hook pod", complete_helm_hook_pods), ("served pod", complete_served_pods)):
            try:
                for pod in step(api):
                    log(f"completed {what} {pod}")
            except urllib.error.HTTPError as error:
                if error.code != 409:  # a pod that changed since the list: the next round sees it again
                    log(f"pod completer: {what}: HTTP {error.code}")
            except (OSError, urllib.error.URLError, ssl.SSLError, ValueError, KeyError) as error:
                log(f"pod completer: {what}: {error}")
        time.sleep(interval)
