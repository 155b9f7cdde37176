# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Evict a set of pods all at once and wait until every one is gone: the logic of ``gpufabric.cluster.pod_eviction``.

It works on a ``kubernetes.client.CoreV1Api`` (the Eviction subresource, ``pods/eviction``, which honours
PodDisruptionBudgets) as ``kubectl drain`` and ``kubernetes.core.k8s_drain`` do, with three differences: every pod is
asked to leave before any is waited for (a multi-node job leaves whole), an eviction refused for a
PodDisruptionBudget (HTTP 429) is asked again until the timeout as ``kubectl drain`` does (``k8s_drain`` fails at the
first), and a pod is named by its UID too, so that a pod of the same name made again elsewhere is not the one waited
for (the eviction and the deletion carry the UID as a precondition).
"""

from __future__ import annotations

import time
import typing as t

# How often a refused eviction is asked again and the pods' presence read, in seconds.
POLL_SECONDS = 2.0


class EvictionError(Exception):
    """The pods did not all leave; the message names them and why."""


def _status(error: Exception) -> int | None:
    return getattr(error, "status", None)


def present(api: t.Any, pod: dict) -> bool:
    """Whether ``pod`` (namespace, name, uid) still exists; another pod under its name is not it."""
    try:
        read = api.read_namespaced_pod(name=pod["name"], namespace=pod["namespace"])
    except Exception as error:  # the client's ApiException; anything else is raised
        if _status(error) == 404:
            return False
        raise
    return not pod.get("uid") or read.metadata.uid == pod["uid"]


def _ask(api: t.Any, models: t.Any, pod: dict, delete: bool) -> str:
    """Ask ``pod`` to leave: ``asked``, ``gone`` (404, or the UID precondition failed: another pod by now) or
    ``blocked`` (429: a PodDisruptionBudget allows no disruption now)."""
    preconditions = models.V1Preconditions(uid=pod["uid"]) if pod.get("uid") else None
    options = models.V1DeleteOptions(preconditions=preconditions)
    try:
        if delete:
            api.delete_namespaced_pod(name=pod["name"], namespace=pod["namespace"], body=options)
        else:
            body = models.V1Eviction(metadata=models.V1ObjectMeta(name=pod["name"], namespace=pod["namespace"]),
                                     delete_options=options)
            api.create_namespaced_pod_eviction(name=pod["name"], namespace=pod["namespace"], body=body)
    except Exception as error:  # the client's ApiException; anything else is raised
        if _status(error) in (404, 409):
            return "gone"
        if _status(error) == 429 and not delete:
            return "blocked"
        raise
    return "asked"


def key(pod: dict) -> str:
    return f"{pod['namespace']}/{pod['name']}"


def evict_and_wait(api: t.Any, models: t.Any, pods: list[dict], delete: bool, timeout: float,
                   clock: t.Callable[[], float] = time.monotonic,
                   pause: t.Callable[[float], None] = time.sleep) -> dict:
    """Ask every pod of ``pods`` to leave (evict, or delete when ``delete``), then wait until all are gone.

    ``models`` is ``kubernetes.client`` (its V1Eviction, V1DeleteOptions, V1Preconditions, V1ObjectMeta). Returns
    ``{asked, absent}``: the pods asked to leave and those already gone, as ``namespace/name``. Raises
    :class:`EvictionError` when pods are still there after ``timeout`` seconds, naming them and those whose eviction
    a PodDisruptionBudget kept refusing.
    """
    deadline = clock() + timeout
    absent = [key(pod) for pod in pods if not present(api, pod)]
    waiting = [pod for pod in pods if key(pod) not in absent]
    asked: list[str] = []
    blocked: list[dict] = list(waiting)
    while True:
        refused = []
        for pod in blocked:
            answer = _ask(api, models, pod, delete)
            if answer == "blocked":
                refused.append(pod)
            elif answer == "asked":
                asked.append(key(pod))
        blocked = refused
        waiting = [pod for pod in waiting if pod in blocked or present(api, pod)]
        if not waiting:
            return {"asked": asked, "absent": absent}
        if clock() >= deadline:
            still = ", ".join(key(pod) for pod in waiting)
            held = ", ".join(key(pod) for pod in blocked)
            raise EvictionError(f"after {timeout:g} seconds these pods are still there: {still}"
                                + (f"; their eviction was refused for a PodDisruptionBudget: {held}" if held else ""))
        pause(POLL_SECONDS)
