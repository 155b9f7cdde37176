# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pod logs under kwok: kwok ClusterLogs objects make pods log the content of a file."""

from __future__ import annotations

import contextlib
import datetime
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from cluster_harness.api import Api
from cluster_harness.common import COMPLETE_ANNOTATION, KWOK_API, MANAGED_BY_LABEL, HarnessError


def _safe_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")
    return name[:253] or "logs"


def cri_log(text: str, stream: str = "stdout") -> str:
    """``text`` as a container runtime writes it (the CRI log format kwok's server reads): one
    ``<RFC 3339 time> <stream> F <line>`` per line."""
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return "".join(f"{stamp} {stream} F {line}\n" for line in text.splitlines())


def serve_logs(
    api: Api,
    run_dir: Path,
    name: str,
    log_file: Path,
    namespaces: list[str] | None = None,
    pods: list[str] | None = None,
    containers: list[str] | None = None,
    complete: bool = False,
) -> dict:
    """Pods matching ``namespaces``/``pods`` (empty: all) log the content of ``log_file`` from now on.

    A ClusterLogs ``name`` (created or replaced) tells kwok's kubelet endpoint which file to serve for
    ``GET .../pods/<pod>/log`` (``containers``: only those; empty: every container); kwok reads the CRI log
    format, so the file is served from a CRI copy in ``<run_dir>/served-logs/``. With ``complete``
    the pod completer (``up --complete-helm-hooks``, or ``complete_served_pods``) also has those pods
    finish once Running, as a container that printed that output would. Returns the object.
    """
    source = Path(log_file).resolve()
    if not source.is_file():
        raise HarnessError(f"serve_logs {name}: no log file {source}")
    name = _safe_name(name)
    path = run_dir.resolve() / "served-logs" / f"{name}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(cri_log(source.read_text(errors="replace")))
    selector = {}
    if namespaces:
        selector["matchNamespaces"] = list(namespaces)
    if pods:
        selector["matchNames"] = list(pods)
    entry: dict = {"logsFile": str(path)}
    if containers:
        entry["containers"] = list(containers)
    body = {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {
            "name": name,
            "labels": {MANAGED_BY_LABEL: "gpufabric-cluster-harness"},
            "annotations": {COMPLETE_ANNOTATION: "true", "gpufabric.cluster/log-source": str(source)}
            if complete
            else {"gpufabric.cluster/log-source": str(source)},
        },
        "spec": {"selector": selector, "logs": [entry]},
    }
    with contextlib.suppress(urllib.error.HTTPError):
        api.request("DELETE", f"{KWOK_API}/clusterlogs/{name}")
    return api.request("POST", f"{KWOK_API}/clusterlogs", body)


def unserve_logs(api: Api, name: str) -> bool:
    """Remove the ClusterLogs ``name``; False when there was none."""
    try:
        api.request("DELETE", f"{KWOK_API}/clusterlogs/{_safe_name(name)}")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise
    return True
