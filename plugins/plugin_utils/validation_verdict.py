# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The validation's verdict per Kubernetes node: which nodes each measurement ran on, and whether it passed.

:func:`node_report` reads ``gpufabric_validation`` as playbooks/validate.yml collects it and returns a report shaped as
the preflight's (``hosts``: node -> ``status`` and ``checks``), keyed by Kubernetes node name, which
:func:`...node_verdict.plan` puts on the nodes:

- each measurement is a check of every node it ran on: ``compute_domain`` (nvbandwidth in a ComputeDomain, on the
  nodes of its placement), ``nccl`` (nccl-tests, likewise), ``rdma_<rail>`` (ib_write_bw on that rail, on its server's
  and its client's node), ``dcgm_diag`` (dcgmi diag on the node, its ``host``), each ``pass`` or ``fail`` as the
  measurement's verdict says (``warn`` too for DCGM, whose judge warns where a test warned and none failed);
- a node's status is ``fail`` when a check of it failed, else ``warn`` when one warned, else ``pass``;
- a multi-node measurement judges all its nodes alike: a ComputeDomain's bandwidth is the domain's, and a failing
  all_reduce does not say which node held it back;
- a part that failed before it measured (the validation holds its failure message, no result) names no node, so it
  puts nothing on one: whatever stopped it (a chart, a quota) is the cluster's, not a node's.

A part that is not shaped as its role writes it raises :class:`ValidationVerdictError` naming the part.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

STATUSES = ("pass", "warn", "fail")
# A check name as node_verdict shows it in the annotation (letters, digits, "_", ".", "-").
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class ValidationVerdictError(ValueError):
    """The validation is not shaped as playbooks/validate.yml collects it; the message names the part."""


def _status(part: str, verdict: t.Any, statuses: tuple[str, ...] = ("pass", "fail")) -> str:
    status = verdict.get("status") if isinstance(verdict, Mapping) else None
    if status not in statuses:
        raise ValidationVerdictError(f"{part}: its verdict has no status {', '.join(statuses)}, got "
                                     f"{status if isinstance(status, str) else arguments.type_name(status)}")
    return t.cast(str, status)


def _node(part: str, value: t.Any) -> str:
    if not isinstance(value, str):
        raise ValidationVerdictError(f"{part}: a node name must be a string, got {arguments.type_name(value)}")
    if not value:
        raise ValidationVerdictError(f"{part}: a node name is empty")
    return value


def _placement_nodes(part: str, result: Mapping) -> list[str]:
    placement = result.get("placement")
    nodes = placement.get("nodes") if isinstance(placement, Mapping) else None
    if not isinstance(nodes, list) or not nodes:
        raise ValidationVerdictError(f"{part}: its placement names no node")
    return [_node(part, node) for node in nodes]


def measurements(validation: t.Any) -> list[tuple[str, str, list[str]]]:
    """Every measurement of ``validation`` as ``(check name, status, nodes)``, in the report's order."""
    validation = arguments.mapping("validation", validation)
    found: list[tuple[str, str, list[str]]] = []
    for part in ("compute_domain", "nccl"):
        result = validation.get(part)
        if result is None:
            continue
        if not isinstance(result, Mapping):
            raise ValidationVerdictError(f"{part}: a result is a mapping, got {arguments.type_name(result)}")
        found.append((part, _status(part, result.get("verdict")), _placement_nodes(part, result)))
    rdma = validation.get("rdma")
    for index, test in enumerate(arguments.sequence("rdma", [] if rdma is None else rdma)):
        part = f"rdma[{index}]"
        if not isinstance(test, Mapping):
            raise ValidationVerdictError(f"{part}: a test is a mapping, got {arguments.type_name(test)}")
        rail = test.get("rail")
        if not isinstance(rail, str) or not rail:
            raise ValidationVerdictError(f"{part}: its rail must be a non-empty string, got "
                                         f"{'an empty one' if rail == '' else arguments.type_name(rail)}")
        sides = [test.get(side) for side in ("server", "client")]
        nodes = [_node(part, side.get("node") if isinstance(side, Mapping) else None) for side in sides]
        found.append((f"rdma_{_NOT_IN_NAME.sub('_', rail)[:30]}", _status(part, test.get("verdict")), nodes))
    dcgm = validation.get("dcgm")
    for index, verdict in enumerate(arguments.sequence("dcgm", [] if dcgm is None else dcgm)):
        part = f"dcgm[{index}]"
        if not isinstance(verdict, Mapping):
            raise ValidationVerdictError(f"{part}: a verdict is a mapping, got {arguments.type_name(verdict)}")
        found.append(("dcgm_diag", _status(part, verdict, STATUSES), [_node(part, verdict.get("host"))]))
    return found


def node_report(validation: t.Any) -> dict:
    """``{hosts: {node: {status, checks: [{name, status}]}}}``: each measured node's verdict; see the module doc."""
    hosts: dict[str, dict] = {}
    for name, status, nodes in measurements(validation):
        for node in dict.fromkeys(nodes):
            entry = hosts.setdefault(node, {"status": "pass", "checks": []})
            checks = entry["checks"]
            same = next((check for check in checks if check["name"] == name), None)
            if same is None:
                checks.append({"name": name, "status": status})
            elif STATUSES.index(status) > STATUSES.index(same["status"]):
                same["status"] = status
            if STATUSES.index(status) > STATUSES.index(entry["status"]):
                entry["status"] = status
    return {"hosts": dict(sorted(hosts.items()))}
