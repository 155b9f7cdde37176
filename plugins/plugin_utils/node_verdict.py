# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's verdict on a host where Kubernetes sees it: labels, one annotation and a taint on its Node.

:func:`plan` reads the preflight report (``gpufabric.cluster.preflight_report``: ``hosts`` maps a host to its
``status``, ``pass``, ``warn``, ``fail`` or ``no_hardware``, and its ``checks``), each host's Kubernetes node name (the
setting ``gpufabric_kubernetes_node``, handed in as ``nodes`` as the driver's waves take it) and the Node objects
as ``kubernetes.core.k8s_info`` returns them, and returns for each node what must change so that it carries:

- the verdict label (``pass``, ``warn`` or ``fail``) and the date label (``YYYY-MM-DD``, the day of the run that
  judged it, UTC): both valid label values whatever the report holds;
- the problems annotation while the host does not pass: the names of its failing and warning checks with their
  counts, at most :data:`SHOWN_CHECKS` names per status and :data:`ANNOTATION_MAX` characters; never a check's message
  (which may quote a host file);
- the ``NoSchedule`` taint while the host fails, when tainting is on; removed when it passes again or tainting is off.

Only the node's own keys change: every other label, annotation and taint is kept as it is (the taints go back as
the node holds them, in their order, with ours added or removed). A node already as wanted gets no patch, so a second
run changes nothing. Hosts without a verdict (``no_hardware``, not in the report) and hosts whose node the API does not
hold are skipped, each with one line; so is a host without fabric facts (unreachable: the report's ``fail`` says
nothing about its fabric, and tainting a node for a lost connection would take it out of service for no fault of it).

The names are settings (:data:`DEFAULT_NAMES`); :func:`check_key` refuses one that is not a Kubernetes label key
(qualified name: an optional DNS subdomain prefix and ``/``, a name of at most 63 characters), naming the setting.
"""

from __future__ import annotations

import datetime
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# The settings that name the keys, and their defaults: one prefix, the collection's. In this order: the verdict
# label, the date label, the problems annotation, the taint key.
DEFAULT_NAMES = {
    "gpufabric_node_verdict_label": "gpufabric.cluster/fabric-verdict",
    "gpufabric_node_verdict_date_label": "gpufabric.cluster/fabric-verdict-date",
    "gpufabric_node_verdict_annotation": "gpufabric.cluster/fabric-problems",
    "gpufabric_node_verdict_taint_key": "gpufabric.cluster/fabric-unhealthy",
}
# The validation's verdict (plugin_utils/validation_verdict.py) has keys of its own: a node can pass its preflight
# and fail a measurement, and each run must leave the other's verdict as it is.
VALIDATION_NAMES = {
    "gpufabric_validation_verdict_label": "gpufabric.cluster/validation-verdict",
    "gpufabric_validation_verdict_date_label": "gpufabric.cluster/validation-verdict-date",
    "gpufabric_validation_verdict_annotation": "gpufabric.cluster/validation-problems",
    "gpufabric_validation_verdict_taint_key": "gpufabric.cluster/validation-failed",
}
KINDS = {"preflight": DEFAULT_NAMES, "validation": VALIDATION_NAMES}
# The report's statuses that are verdicts; a host of another status (no_hardware) gets none.
VERDICTS = ("pass", "warn", "fail")
TAINT_EFFECT = "NoSchedule"
# The annotation: at most this many check names per status, then how many more; at most this many characters.
SHOWN_CHECKS = 8
ANNOTATION_MAX = 256
# A check name as the annotation shows it (the report's are identifiers); anything else is shown as "?".
_CHECK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
# Kubernetes: a DNS-1123 subdomain (the prefix, at most 253) and a qualified name (at most 63).
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DATE = re.compile(r"\d{4}-\d\d-\d\d")
NAME_MAX = 63
PREFIX_MAX = 253


class NodeVerdictError(ValueError):
    """A setting or an input from which no plan can be made; the message names it."""


def key_problem(key: t.Any) -> str | None:
    """Why ``key`` is no Kubernetes label key (qualified name), or None when it is one."""
    if not isinstance(key, str) or not key:
        return "it must be a non-empty string"
    prefix, _slash, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "the prefix before / is empty"
    if not name:
        return "the name after / is empty"
    if len(name) > NAME_MAX:
        return f"the name is longer than {NAME_MAX} characters"
    if not _NAME.fullmatch(name):
        return ("the name must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
    if prefix:
        if len(prefix) > PREFIX_MAX:
            return f"the prefix is longer than {PREFIX_MAX} characters"
        if not all(_DNS_LABEL.fullmatch(part) and len(part) <= NAME_MAX for part in prefix.split(".")):
            return "the prefix must be a DNS subdomain (lower-case letters, digits, '-' and '.')"
    return None


def check_key(variable: str, key: t.Any) -> str:
    """``key`` when it is a Kubernetes label key; else raise :class:`NodeVerdictError` naming ``variable``."""
    why = key_problem(key)
    if why:
        shown = repr(key) if isinstance(key, str) and len(key) <= 80 else f"a {arguments.type_name(key)}"
        raise NodeVerdictError(f"{variable} {shown} is not a Kubernetes label key: {why}")
    return t.cast(str, key)


def _defaults(kind: t.Any) -> dict[str, str]:
    if not isinstance(kind, str) or kind not in KINDS:
        raise NodeVerdictError(f"kind must be one of {', '.join(KINDS)}, got "
                               f"{kind[:40] if isinstance(kind, str) else arguments.type_name(kind)}")
    return KINDS[kind]


def names_of(names: t.Any, kind: t.Any = "preflight") -> dict[str, str]:
    """The key settings of ``kind``: its defaults (:data:`KINDS`) with those of ``names`` (setting -> key), checked."""
    defaults = _defaults(kind)
    given = arguments.mapping("names", names or {})
    unknown = sorted(str(name) for name in given if name not in defaults)
    if unknown:
        raise NodeVerdictError(f"names: unknown setting(s) {', '.join(unknown)}; known: {', '.join(defaults)}")
    merged = {**defaults, **given}
    checked = {variable: check_key(variable, key) for variable, key in merged.items()}
    (label, label_key), (date, date_key) = list(checked.items())[:2]
    if label_key == date_key:
        raise NodeVerdictError(f"{label} and {date} must differ, both are {label_key!r}")
    return checked


def _day(today: t.Any) -> str:
    if today is None:
        return datetime.datetime.now(datetime.UTC).date().isoformat()
    if isinstance(today, datetime.date):
        return today.isoformat()[:10]
    if isinstance(today, str) and _DATE.fullmatch(today):
        try:
            return datetime.date.fromisoformat(today).isoformat()
        except ValueError:
            pass
    raise NodeVerdictError(f"today must be a date (YYYY-MM-DD), got {arguments.type_name(today)}")


def _shown_names(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN_CHECKS])
    return shown + (f" and {len(names) - SHOWN_CHECKS} more" if len(names) > SHOWN_CHECKS else "")


def problems_text(checks: t.Any) -> str:
    """The annotation of a host's ``checks``: ``fail 2: a, b; warn 1: c``, names only, capped; empty when none."""
    by_status: dict[str, list[str]] = {"fail": [], "warn": []}
    for check in checks if isinstance(checks, list) else []:
        if not isinstance(check, Mapping) or not isinstance(check.get("status"), str) \
                or check["status"] not in by_status:
            continue
        name = check.get("name")
        by_status[check["status"]].append(name if isinstance(name, str) and _CHECK_NAME.fullmatch(name) else "?")
    text = "; ".join(f"{status} {len(found)}: {_shown_names(found)}" for status, found in by_status.items() if found)
    return text if len(text) <= ANNOTATION_MAX else text[:ANNOTATION_MAX - 3] + "..."


def _node_names(nodes: t.Any, nodes_variable: str) -> dict[str, str]:
    node_of = {}
    for host, node in arguments.mapping(nodes_variable, nodes).items():
        if not isinstance(host, str) or not isinstance(node, str) or not node:
            raise NodeVerdictError(f"{nodes_variable} must map each host to its Kubernetes node name (a string), "
                                   f"got a {arguments.type_name(node)} for {str(host)[:80]}")
        node_of[host] = node
    shared: dict[str, list[str]] = {}
    for host, node in node_of.items():
        shared.setdefault(node, []).append(host)
    shared = {node: hosts for node, hosts in shared.items() if len(hosts) > 1}
    if shared:
        raise NodeVerdictError(f"{nodes_variable} must name one Kubernetes node per host: "
                               + "; ".join(f"{', '.join(sorted(hosts))} all name {node}"
                                           for node, hosts in sorted(shared.items())))
    return node_of


def _existing(existing: t.Any) -> dict[str, Mapping]:
    """The Node objects by name (``k8s_info``'s ``resources``)."""
    found = {}
    for node in arguments.sequence("existing", existing):
        metadata = node.get("metadata") if isinstance(node, Mapping) else None
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        if isinstance(name, str):
            found[name] = node
    return found


def _part(node: Mapping, *path: str) -> t.Any:
    value: t.Any = node
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def node_change(node: Mapping, verdict: str, day: str, problems: str, names: Mapping[str, str],
                taint: bool) -> dict:
    """The merge patch that gives ``node`` its verdict (``{}`` when it has it already).

    ``names`` holds the keys in the order of :data:`KINDS`' mappings (as :func:`names_of` returns them): the verdict
    label, the date label, the annotation, the taint key.
    """
    labels = _part(node, "metadata", "labels")
    labels = labels if isinstance(labels, Mapping) else {}
    annotations = _part(node, "metadata", "annotations")
    annotations = annotations if isinstance(annotations, Mapping) else {}
    taints = _part(node, "spec", "taints")
    taints = [item for item in taints if isinstance(item, Mapping)] if isinstance(taints, list) else []
    metadata: dict[str, dict] = {}
    label, date_label, annotation, key = names.values()
    wanted_labels = {label: verdict, date_label: day}
    changed_labels = {key: value for key, value in wanted_labels.items() if labels.get(key) != value}
    if changed_labels:
        metadata["labels"] = changed_labels
    wanted_annotation = problems or None
    if annotations.get(annotation) != wanted_annotation:
        metadata["annotations"] = {annotation: wanted_annotation}
    others = [dict(item) for item in taints if item.get("key") != key]
    ours = [dict(item) for item in taints if item.get("key") == key]
    wanted_ours = [{"key": key, "value": "fail", "effect": TAINT_EFFECT}] if taint and verdict == "fail" else []
    same = len(ours) == len(wanted_ours) and all(
        item.get("effect") == want["effect"] and item.get("value") == want["value"]
        for item, want in zip(ours, wanted_ours, strict=False))
    patch: dict[str, t.Any] = {"metadata": metadata} if metadata else {}
    if not same:
        # A JSON merge patch replaces the list whole: the others' taints go back as they are, ours after them.
        patch["spec"] = {"taints": others + wanted_ours}
    return patch


def plan(report: t.Any, nodes: t.Any, existing: t.Any, names: t.Any = None, taint: t.Any = False,
         today: t.Any = None, nodes_variable: str = "nodes", kind: t.Any = "preflight") -> dict:
    """What to change on each host's Node: ``{nodes: [{host, node, verdict, problems, patch}], skipped: [line]}``.

    ``nodes`` maps each host to label to its Kubernetes node name (``nodes_variable`` in messages; two hosts with one
    name are refused); ``existing`` are the Node objects (``k8s_info`` resources); ``names`` the key settings that
    differ from :data:`DEFAULT_NAMES`; ``taint`` whether failing nodes are tainted; ``today`` the date label's day
    (default: the controller's, UTC). ``nodes`` lists every host with a verdict, sorted by host, ``patch`` empty when
    the node holds its verdict already; ``skipped`` one line per host not labelled, naming why. ``kind`` is whose
    verdict it is: ``preflight`` (the report of gpufabric.cluster.preflight_report) or ``validation`` (that of
    :func:`...validation_verdict.node_report`, keyed by node, whose entries hold no fabric facts), each with its own
    keys.
    """
    checked = names_of(names, kind)
    taint = arguments.boolean("taint", taint)
    day = _day(today)
    hosts = arguments.mapping("report.hosts", arguments.mapping("report", report).get("hosts"))
    node_of = _node_names(nodes, nodes_variable)
    found = _existing(existing)
    planned, skipped = [], []
    for host in sorted(node_of):
        node = node_of[host]
        entry = hosts.get(host)
        status = entry.get("status") if isinstance(entry, Mapping) else None
        if status not in VERDICTS or (kind == "preflight" and "gpus" not in entry):
            why = "not in the report" if entry is None else \
                ("no NVIDIA GPU or ConnectX port" if status == "no_hardware" else
                 "no verdict in the report" if status not in VERDICTS else
                 "no fabric facts (unreachable, or the probe failed), so no verdict on its fabric")
            skipped.append(f"{host}: {why}; Kubernetes node {node} is left as it is")
            continue
        if node not in found:
            skipped.append(f"{host}: no Kubernetes node {node} in the cluster ({nodes_variable}); its verdict "
                           f"{status} is not put on a node")
            continue
        problems = problems_text(entry.get("checks")) if status != "pass" else ""
        planned.append({"host": host, "node": node, "verdict": status, "problems": problems,
                        "patch": node_change(found[node], status, day, problems, checked, taint)})
    return {"nodes": planned, "skipped": skipped}
