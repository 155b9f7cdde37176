# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render the preflight report as one self-contained HTML page: the fleet as tiles grouped by IMEX domain.

The logic of the ``gpufabric.cluster.preflight_report_html`` filter, over the dict of
:func:`.preflight.preflight_report`; errors are :class:`.report_markdown.ReportError` and
:class:`.arguments.ArgumentError`.  Every text is redacted and escaped by :func:`.report_html.escape`; the page frame
and base style are those of ``validation.html`` (:func:`.report_html.document`).

One section per IMEX domain (a fabric clique: an NVL72 rack or part of one), headed by its verdict (the worst of its
own checks and its members'), its member count against the expected count, its problems and the members that do not
pass, then one tile per member, grouped by rack and ordered by slot where the report has the trays' platform info
(``racks``; each tile then says ``rack <chassis serial>, slot <N>``); the hosts of no domain (no multi-node clique,
GPUs split over cliques, no facts) follow in a last section.  A host is drawn once: a report that lists it in two
domains shows it in the first.  Each tile is coloured by the host's verdict and lists its failed and warned checks; a
member's ``imex_domain`` check whose message is its domain's problems says so rather than repeating them on every tile.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_fixes import grouped_problems, named_hosts
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_html import BASE_STYLE, document, escape
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import ReportError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_stamp import stamp_line

# Host and domain verdicts the page knows; anything else is drawn as "unknown" (grey), never as a pass.
VERDICTS = ("pass", "warn", "fail", "no_hardware")
LABELS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "no_hardware": "NO HW", "unknown": "UNKNOWN"}

STYLE = BASE_STYLE + """h1 .warn, span.warn { color: #9a6700; }
p.counts span { margin-right: 1rem; }
section.domain { margin: 1rem 0 1.5rem; }
section.domain h2 { font-size: 1.1rem; margin-bottom: 0.25rem; }
.members.short, .members.over { color: #a40e26; font-weight: bold; }
ul.problems li, ul.member_problems li { color: #a40e26; } ul.notes li { color: #9a6700; }
h3.rack { font-size: 0.95rem; margin: 0.5rem 0 0.25rem; }
.tile .place { color: #57606a; }
.tiles { display: flex; flex-wrap: wrap; gap: 0.5rem; }
.tile { width: 13rem; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.4rem 0.5rem; font-size: 0.8rem; }
.tile h3 { font-size: 0.9rem; margin: 0 0 0.2rem; overflow-wrap: anywhere; }
.tile ul { margin: 0.2rem 0 0; padding-left: 1rem; } .tile li { overflow-wrap: anywhere; }
.tile.pass { background: #dafbe1; border-color: #2da44e; }
.tile.warn { background: #fff8c5; border-color: #bf8700; }
.tile.fail { background: #ffebe9; border-color: #cf222e; }
.tile.no_hardware, .tile.unknown { background: #eaeef2; border-color: #8c959f; }
li.fail { color: #a40e26; } li.warn { color: #7d4e00; }
"""


class _Args(t.NamedTuple):
    title: str
    validation_link: str | None
    expected_members: int | None


def _verdict(value: t.Any) -> str:
    return value if isinstance(value, str) and value in VERDICTS else "unknown"


def _is_count(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _members_expected(name: str, value: t.Any) -> int:
    value = arguments.positive(name, value)
    if value != int(value):
        raise arguments.ArgumentError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def _check_arguments(title: t.Any, validation_link: t.Any, expected_members: t.Any) -> _Args:
    return _Args(arguments.text("title", title),
                 arguments.optional(arguments.link, "validation_link", validation_link),
                 arguments.optional(_members_expected, "expected_members", expected_members))


def _list(value: t.Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _message(check: Mapping, domain_message: str | None) -> str:
    """The check's message, escaped; a member's imex_domain message that repeats its domain's head points to it."""
    message = check.get("message")
    if check.get("name") == "imex_domain" and domain_message and message == domain_message:
        return "as the domain above says"
    return escape(message)


def _tile(name: str, entry: Mapping, domain_message: str | None = None) -> str:
    verdict = _verdict(entry.get("status"))
    checks = [check for check in _list(entry.get("checks"))
              if isinstance(check, Mapping) and check.get("status") in ("fail", "warn")]
    checks.sort(key=lambda check: check.get("status") != "fail")  # failed first, each kind in report order
    items = "".join(f'<li class="{check["status"]}"><b>{escape(check.get("name"))}</b> {check["status"]}: '
                    f'{_message(check, domain_message)}</li>' for check in checks)
    return (f'<div class="tile {verdict}" data-host="{escape(name)}" data-status="{verdict}">'
            f'<h3>{escape(name)} <span class="{verdict}">{LABELS[verdict]}</span></h3>'
            + (f'<div class="place">{escape(entry.get("place"))}</div>' if entry.get("place") else "") +
            f'<div class="summary">{escape(entry.get("summary"))}</div>'
            + (f"<ul>{items}</ul>" if items else "") + "</div>")


def _items(css: str, texts: t.Any) -> str:
    texts = _list(texts)
    return f'<ul class="{css}">' + "".join(f"<li>{escape(text)}</li>" for text in texts) + "</ul>" if texts else ""


def _rack_groups(domain: Mapping, members: list[str]) -> list[tuple[str | None, list[str]]]:
    """``members`` by rack, in the order of the domain's ``racks`` (by rack, then slot); one group without a heading
    (``None``) when the report has no rack for any of them.  A member ``racks`` does not list comes last."""
    groups: list[tuple[str | None, list[str]]] = []
    placed: set[str] = set()
    for rack in _list(domain.get("racks")):
        if not isinstance(rack, Mapping):
            continue
        names = [_map_host(tray) for tray in _list(rack.get("trays"))]
        names = [name for name in names if name in members and name not in placed]
        placed.update(names)
        serial = rack.get("chassis_serial")
        if names:
            groups.append((f"rack {serial}" if isinstance(serial, str) else "rack unknown (no platform info)", names))
    rest = [name for name in members if name not in placed]
    if not any(label for label, _names in groups if label and not label.startswith("rack unknown")):
        return [(None, members)]
    return groups + ([("rack unknown (no platform info)", rest)] if rest else [])


def _map_host(tray: t.Any) -> t.Any:
    return tray.get("host") if isinstance(tray, Mapping) else None


def _domain_section(domain: Mapping, members: list[str], hosts: Mapping, expected: int | None) -> str:
    """The domain's head and the tiles of ``members`` (its members not drawn yet); the count is of all it lists."""
    verdict = _verdict(domain.get("status"))
    count = len({name for name in _list(domain.get("members")) if isinstance(name, str)})
    if expected is None:
        counted = f'<span class="members" data-members="{count}">{count} member(s)</span>'
    else:
        fit = "short" if count < expected else ("over" if count > expected else "full")
        counted = (f'<span class="members {fit}" data-members="{count}" data-expected="{expected}">'
                   f"{count} of {expected} expected member(s)</span>")
    nodes = domain.get("expected_nodes")
    # the message preflight_report gives each member's imex_domain check: the domain's problems, then its notes
    message = "; ".join(str(text) for text in _list(domain.get("problems")) + _list(domain.get("notes")))
    addresses = (f"; expected nodes file: {len(nodes)} address(es)" if isinstance(nodes, (list, tuple))
                 else "; expected nodes file unknown (an IMEX address is missing)")
    own = domain.get("own_status")
    own_text = (f'; its own checks: <span class="{_verdict(own)}">{LABELS[_verdict(own)]}</span>'
                if own is not None and own != domain.get("status") else "")
    tiles = "".join(
        (f'<h3 class="rack">{escape(label)}</h3>' if label else "")
        + '<div class="tiles">' + "".join(_tile(name, hosts[name], message) for name in names) + "</div>"
        for label, names in _rack_groups(domain, members))
    return "\n".join([
        f'<section class="domain" data-clique="{escape(domain.get("clique"))}" data-status="{verdict}">',
        f'<h2>IMEX domain {escape(domain.get("clique"))}: <span class="{verdict}">{LABELS[verdict]}</span></h2>',
        f"<p>{counted}{addresses}{own_text}</p>",
        _items("problems", domain.get("problems")) + _items("notes", domain.get("notes"))
        + _items("member_problems", domain.get("member_problems")),
        tiles,
        "</section>"])


def _rest_section(names: list[str], hosts: Mapping) -> str:
    return "\n".join([
        '<section class="domain" data-clique="" data-status="none">',
        f'<h2>No IMEX domain</h2><p><span class="members" data-members="{len(names)}">{len(names)} host(s)</span>'
        "; no multi-node NVLink clique, GPUs split over cliques, or no facts</p>",
        '<div class="tiles">' + "".join(_tile(name, hosts[name]) for name in names) + "</div>",
        "</section>"])


def _fix_section(hosts: Mapping) -> str:
    """The checks that failed or warned, grouped by check and message, each with the role or setting that fixes it."""
    problems = grouped_problems(hosts)
    if not problems:
        return ""
    rows = "".join(f'<tr class="{escape(item["status"])}"><td>{escape(item["check"])}</td>'
                   f'<td>{escape(LABELS.get(item["status"], item["status"]))}</td>'
                   f'<td>{len(item["hosts"])}: {escape(named_hosts(item["hosts"]))}</td>'
                   f'<td>{escape(item["message"])}</td><td>{escape(item["fixed_by"] or "-")}</td></tr>'
                   for item in problems)
    return ('<section class="fix"><h2>What to fix</h2><table><tr><th>check</th><th>status</th><th>hosts</th>'
            f"<th>detail</th><th>fixed by</th></tr>{rows}</table></section>")


def preflight_report_html(report: t.Any, title: t.Any = "GPU fabric readiness", validation_link: t.Any = None,
                          expected_members: t.Any = None) -> str:
    """One HTML document, no external asset or script, for the report of ``gpufabric.cluster.preflight_report``.

    ``validation_link``: the address of the validation page (``validation.html`` beside this page), linked from the
    head of the page when given.  ``expected_members``: the hosts every IMEX domain should have (18 for the compute
    trays of a GB200 NVL72 rack); each domain's member count is shown against it and marked when it differs.
    """
    args = _check_arguments(title, validation_link, expected_members)
    if not isinstance(report, Mapping) or not isinstance(report.get("hosts"), Mapping) \
            or not isinstance(report.get("summary"), Mapping):
        raise ReportError("expected the dict returned by gpufabric.cluster.preflight_report")
    hosts = {}
    for name, entry in report["hosts"].items():
        if not isinstance(name, str) or not isinstance(entry, Mapping):
            raise ReportError(f"hosts.{name}: expected a host name and its entry (a mapping), "
                              f"got {type(entry).__name__}")
        hosts[name] = entry
    domains = report.get("imex_domains")
    if domains is not None and not isinstance(domains, (list, tuple)):
        raise ReportError("imex_domains must be a list")
    summary = report["summary"]
    ready = summary.get("ready") is True
    verdict = "pass" if ready else "fail"
    body = [f'<h1>{escape(args.title)}: <span class="{verdict}">{"READY" if ready else "NOT READY"}</span></h1>']
    counts = [f'<span class="{status}" data-count="{status}">{escape(summary.get(status, 0))} '
              f'{LABELS[status].lower() if status != "no_hardware" else "without NVIDIA GPU or ConnectX port"}</span>'
              for status in VERDICTS]
    body.append(f'<p class="counts"><span>{escape(summary.get("hosts", len(hosts)))} host(s)</span>'
                + "".join(counts) + "</p>")
    if stamp_line(report):
        body.append(f'<p class="stamp">{escape(stamp_line(report))}</p>')
    if args.validation_link:
        body.append(f'<p><a class="validation" href="{escape(args.validation_link)}">Validation report</a></p>')
    body.append(_fix_section(hosts))
    drawn: set[str] = set()
    for domain in domains or []:
        if not isinstance(domain, Mapping):
            raise ReportError("imex_domains entries must be mappings")
        members = [name for name in _list(domain.get("members")) if isinstance(name, str) and name in hosts
                   and name not in drawn]
        drawn.update(members)
        expected = args.expected_members if args.expected_members is not None else domain.get("expected_members")
        body.append(_domain_section(domain, members, hosts, expected if _is_count(expected) else None))
    rest = sorted(name for name in hosts if name not in drawn)
    if rest:
        body.append(_rest_section(rest, hosts))
    if not hosts:
        body.append("<p>No host was judged.</p>")
    return document(args.title, STYLE, body)
