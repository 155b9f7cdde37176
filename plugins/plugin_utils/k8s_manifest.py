# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A Kubernetes manifest made fit for a server-side apply that forces its ownership.

A server-side apply with ``force_conflicts`` takes every field it sends. For a ClusterRole with an
``aggregationRule`` the ``rules`` are not the manifest's to set: the control plane's aggregation controller
writes them from the ClusterRoles the rule selects. Sending the manifest's ``rules: []`` (the MPI operator's
``kubeflow-mpijobs-admin`` has them) empties the aggregated rules on every apply, the controller fills them again,
and every run reports a change while the role is briefly without its rules. :func:`for_server_side_apply` leaves
those ``rules`` out, so the apply owns what the manifest decides and nothing else.
"""

from __future__ import annotations

import copy
import typing as t
from collections.abc import Mapping, Sequence


class ManifestError(ValueError):
    """A manifest document that is not a Kubernetes object."""


def _is_aggregated_cluster_role(document: Mapping) -> bool:
    return (
        document.get("kind") == "ClusterRole"
        and str(document.get("apiVersion", "")).startswith("rbac.authorization.k8s.io/")
        and document.get("aggregationRule") is not None
    )


def for_server_side_apply(documents: t.Any) -> list[dict]:
    """The objects of a manifest (the documents of ``from_yaml_all``) to apply server-side.

    Empty documents (``---`` with nothing after it) are left out; an aggregated ClusterRole loses its ``rules``;
    every other object comes back as it is (a copy: the input is not changed). Raises :class:`ManifestError`
    naming the document (counted from 1) that is not a mapping with a string ``apiVersion`` and ``kind``, and when
    no object is left (an empty or truncated file).
    """
    if isinstance(documents, (str, bytes, Mapping)) or not isinstance(documents, Sequence):
        raise ManifestError(f"the input must be the list of a manifest's documents, got {type(documents).__name__}")
    objects = []
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue
        if not isinstance(document, Mapping):
            raise ManifestError(f"document {number} is not a Kubernetes object: got {type(document).__name__}")
        for key in ("apiVersion", "kind"):
            if not isinstance(document.get(key), str) or not document.get(key):
                raise ManifestError(f"document {number} has no {key} (a non-empty string)")
        obj = copy.deepcopy(dict(document))
        if _is_aggregated_cluster_role(obj):
            obj.pop("rules", None)
        objects.append(obj)
    if not objects:
        # An empty or cut-off file: applying nothing would pass, and the wait for the operator would time out later.
        raise ManifestError("the manifest holds no Kubernetes object (an empty or truncated file?)")
    return objects
