# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render the preflight report as one self-contained HTML page: the fleet as racks of slots, then what fails.

The logic of the ``gpufabric.cluster.preflight_report_html`` filter, over the dict of
:func:`.preflight.preflight_report`; errors are :class:`.report_markdown.ReportError` and
:class:`.arguments.ArgumentError`.  Every text is redacted and escaped by :func:`.report_html.escape`; the page frame
and base style are those of ``validation.html`` (:func:`.report_html.document`).  No script: anchors and ``<details>``
do what a page of 2,304 trays needs.

From the top: the verdict and counts; the fleet grid, one column per rack (chassis serial, from the report's
``racks``; a rack's part of one IMEX domain) of one small cell per tray ordered by slot, coloured by the tray's
verdict, named in its tooltip and linked to the tray's detail when it has one, then the hosts of no known rack (HGX,
no platform info, no facts) as one compact group of cells; "What to fix", the failed and warned checks grouped by
check and message with the number of hosts first, each host linked to its detail. Then one section per IMEX domain
that does not pass (a fabric clique: an NVL72 rack or part of one), headed by its verdict (the worst of its own checks
and its members'), its member count against the expected count, its problems and the members that do not pass, then a
tile per member that does not pass, grouped by rack and ordered by slot; the domains that pass follow as one folded
table, and the hosts of no domain last. A passing host has a cell but no tile: its detail would only say it passes.
Every tile has an ``id`` the grid and the table link to. A host is drawn once: a report that lists it in two domains
shows it in the first. A member's ``imex_domain`` check whose message is its domain's problems says so rather than
repeating them on every tile.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_fixes import NAMED_HOSTS, grouped_problems
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
.tile:target { outline: 3px solid #0969da; }
.tile h3 { font-size: 0.9rem; margin: 0 0 0.2rem; overflow-wrap: anywhere; }
.tile ul { margin: 0.2rem 0 0; padding-left: 1rem; } .tile li { overflow-wrap: anywhere; }
.tile.pass, .cell.pass { background: #dafbe1; border-color: #2da44e; }
.tile.warn, .cell.warn { background: #fff8c5; border-color: #bf8700; }
.tile.fail, .cell.fail { background: #ffebe9; border-color: #cf222e; }
.cell.fail { background: #cf222e; } .cell.warn { background: #d4a72c; }
.tile.no_hardware, .tile.unknown, .cell.no_hardware, .cell.unknown { background: #eaeef2; border-color: #8c959f; }
li.fail { color: #a40e26; } li.warn { color: #7d4e00; }
section.fleet h2, section.fix h2 { font-size: 1.1rem; margin-bottom: 0.25rem; }
p.legend { color: #57606a; font-size: 0.8rem; margin: 0 0 0.5rem; }
.racks { display: flex; flex-wrap: wrap; gap: 0.6rem 3px; align-items: flex-end; }
.rack { display: flex; flex-direction: column; align-items: center; gap: 2px; }
.rack .serial { writing-mode: vertical-rl; transform: rotate(180deg); font-size: 0.6rem; color: #57606a;
  font-variant-numeric: tabular-nums; margin-bottom: 2px; }
.cell { display: block; width: 11px; height: 11px; border: 1px solid; border-radius: 2px; box-sizing: border-box; }
a.cell:hover { outline: 2px solid #0969da; }
.norack h3 { font-size: 0.9rem; margin: 0.6rem 0 0.25rem; }
.norack .cells { display: flex; flex-wrap: wrap; gap: 3px; }
table.fix { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.85rem; }
table.fix th, table.fix td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: left;
  vertical-align: top; }
table.fix td.hosts { min-width: 14rem; } table.fix .count { font-weight: bold; white-space: nowrap; }
table.fix .named { font-size: 0.75rem; }
tr.fail td.status { color: #a40e26; } tr.warn td.status { color: #7d4e00; }
details.passing summary { cursor: pointer; font-weight: bold; margin: 1rem 0 0.5rem; }
details.passing td, details.passing th { border: 1px solid #d0d7de; padding: 0.15rem 0.4rem; font-size: 0.8rem; }
"""
# A host name an id can carry as it is (the anchor reads as the host's name); any other name gets its index.
PLAIN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


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


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def anchors(names: t.Iterable[str]) -> dict[str, str]:
    """The ``id`` of each host's detail: ``host-<name>`` for a plain name (letters, digits, ``._-``), else
    ``host:<index>`` (a colon no plain name holds, so the two kinds never meet)."""
    return {name: f"host-{name}" if PLAIN_NAME.match(name) else f"host:{index}"
            for index, name in enumerate(names)}


def _message(check: Mapping, domain_message: str | None) -> str:
    """The check's message, escaped; a member's imex_domain message that repeats its domain's head points to it."""
    message = check.get("message")
    if check.get("name") == "imex_domain" and domain_message and message == domain_message:
        return "as the domain above says"
    return escape(message)


def _tile(name: str, entry: Mapping, anchor: str, domain_message: str | None = None) -> str:
    verdict = _verdict(entry.get("status"))
    checks = [check for check in _list(entry.get("checks"))
              if isinstance(check, Mapping) and check.get("status") in ("fail", "warn")]
    checks.sort(key=lambda check: check.get("status") != "fail")  # failed first, each kind in report order
    items = "".join(f'<li class="{check["status"]}"><b>{escape(check.get("name"))}</b> {check["status"]}: '
                    f'{_message(check, domain_message)}</li>' for check in checks)
    return (f'<div class="tile {verdict}" id="{escape(anchor)}" data-host="{escape(name)}" data-status="{verdict}">'
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


def _natural(text: str) -> tuple:
    """Sort key reading the digits of ``text`` as numbers (rack 9 before rack 10)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


def fleet_racks(domains: t.Sequence[Mapping], names: t.Collection[str]) -> tuple[list[tuple[str, str, list]],
                                                                                 list[str]]:
    """``([(chassis serial, clique, [(host, slot)])], [hosts of no rack])``: the hosts of ``names`` by rack and IMEX
    domain (the domains' ``racks``), in serial order, then clique order, and each column's trays by slot; every host
    once, those no domain places in a rack in name order.

    A column is a rack's part of one domain: on an NVL72 fleet that is the rack; a rack split into two NVLink
    partitions gives two columns under one serial, and trays that report one serial in two domains (a copied platform
    info) do not pile up in one column."""
    racks: dict[tuple[str, str], list[tuple[str, t.Any]]] = {}
    placed: set[str] = set()
    for domain in domains:
        clique = str(domain.get("clique"))
        for rack in _list(domain.get("racks")):
            serial = rack.get("chassis_serial") if isinstance(rack, Mapping) else None
            if not isinstance(serial, str):
                continue
            for tray in _list(rack.get("trays")):
                name = _map_host(tray)
                if isinstance(name, str) and name in names and name not in placed:
                    placed.add(name)
                    racks.setdefault((serial, clique), []).append((name, tray.get("slot_number")))
    ordered = [(serial, clique, sorted(trays, key=lambda tray: (not _is_slot(tray[1]),
                                                                tray[1] if _is_slot(tray[1]) else 0, tray[0])))
               for (serial, clique), trays in sorted(racks.items(),
                                                     key=lambda item: (_natural(item[0][0]), _natural(item[0][1])))]
    return ordered, sorted(name for name in names if name not in placed)


def _is_slot(value: t.Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cell(name: str, slot: t.Any, entry: Mapping, anchor: str | None) -> str:
    verdict = _verdict(entry.get("status"))
    where = f" (slot {slot})" if _is_slot(slot) else ""
    title = escape(f"{name}{where}: {LABELS[verdict]}")
    if anchor is None:
        return f'<span class="cell {verdict}" data-host="{escape(name)}" title="{title}"></span>'
    return (f'<a class="cell {verdict}" data-host="{escape(name)}" href="#{escape(anchor)}" title="{title}">'
            "</a>")


def _fleet_section(domains: list[Mapping], hosts: Mapping, detail: Mapping[str, str]) -> str:
    """The grid: one column per rack of one cell per tray by slot, then the hosts of no rack as one group."""
    racks, rest = fleet_racks(domains, hosts)
    columns = "".join(
        f'<div class="rack" data-rack="{escape(serial)}" title="rack {escape(serial)}, IMEX domain {escape(clique)}">'
        f'<span class="serial">{escape(serial)}</span>'
        + "".join(_cell(name, slot, hosts[name], detail.get(name)) for name, slot in trays) + "</div>"
        for serial, clique, trays in racks)
    parts = ['<section class="fleet"><h2>Fleet</h2>',
             '<p class="legend">One column per rack (its chassis serial at the top), one cell per tray from the '
             "lowest slot down, coloured by the tray's verdict (red fail, amber warn, green pass, grey no GPU or "
             "unknown); a tray's name is its tooltip, a tray that does not pass links to its detail.</p>"]
    if columns:
        parts.append(f'<div class="racks" data-racks="{len(racks)}">{columns}</div>')
    if rest:
        parts.append(f'<div class="norack" data-hosts="{len(rest)}"><h3>{_plural(len(rest), "host")} in no known '
                     "rack (no platform info: HGX, no facts)</h3><div class=\"cells\">"
                     + "".join(_cell(name, None, hosts[name], detail.get(name)) for name in rest) + "</div></div>")
    parts.append("</section>")
    return "\n".join(parts)


def _counted(domain: Mapping, expected: int | None) -> str:
    count = len({name for name in _list(domain.get("members")) if isinstance(name, str)})
    if expected is None:
        return f'<span class="members" data-members="{count}">{count} member(s)</span>'
    fit = "short" if count < expected else ("over" if count > expected else "full")
    return (f'<span class="members {fit}" data-members="{count}" data-expected="{expected}">'
            f"{count} of {expected} expected member(s)</span>")


def _passing_line(count: int) -> str:
    return f'<p class="passing" data-passing="{count}">{_plural(count, "other member")} pass.</p>' if count else ""


def _domain_section(domain: Mapping, members: list[str], hosts: Mapping, expected: int | None,
                    detail: Mapping[str, str]) -> str:
    """The domain's head and the tiles of ``members`` (its members not drawn yet) that do not pass; the count is of
    all it lists."""
    verdict = _verdict(domain.get("status"))
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
        + '<div class="tiles">' + "".join(_tile(name, hosts[name], detail[name], message) for name in shown) + "</div>"
        for label, names in _rack_groups(domain, members)
        for shown in [[name for name in names if name in detail]] if shown)
    return "\n".join([
        f'<section class="domain" data-clique="{escape(domain.get("clique"))}" data-status="{verdict}">',
        f'<h2>IMEX domain {escape(domain.get("clique"))}: <span class="{verdict}">{LABELS[verdict]}</span></h2>',
        f"<p>{_counted(domain, expected)}{addresses}{own_text}</p>",
        _items("problems", domain.get("problems")) + _items("notes", domain.get("notes"))
        + _items("member_problems", domain.get("member_problems")),
        tiles, _passing_line(sum(1 for name in members if name not in detail)),
        "</section>"])


def _passing_domains(rows: list[tuple[Mapping, list[str], int | None]]) -> str:
    """The domains that pass, folded: one row each (clique, member count, racks)."""
    if not rows:
        return ""
    lines = "".join(
        f'<tr data-clique="{escape(domain.get("clique"))}"><td>{escape(domain.get("clique"))}</td>'
        f"<td>{_counted(domain, expected)}</td><td>"
        + escape(", ".join(str(rack.get("chassis_serial")) for rack in _list(domain.get("racks"))
                           if isinstance(rack, Mapping) and isinstance(rack.get("chassis_serial"), str)) or "-")
        + "</td></tr>" for domain, _members, expected in rows)
    return (f'<details class="passing" data-domains="{len(rows)}"><summary>{_plural(len(rows), "IMEX domain")} '
            f'pass</summary><table><tr><th>clique</th><th>members</th><th>rack</th></tr>{lines}</table></details>')


def _rest_section(names: list[str], hosts: Mapping, detail: Mapping[str, str]) -> str:
    shown = [name for name in names if name in detail]
    return "\n".join([
        '<section class="domain" data-clique="" data-status="none">',
        f'<h2>No IMEX domain</h2><p><span class="members" data-members="{len(names)}">{len(names)} host(s)</span>'
        "; no multi-node NVLink clique, GPUs split over cliques, or no facts</p>",
        ('<div class="tiles">' + "".join(_tile(name, hosts[name], detail[name]) for name in shown) + "</div>"
         if shown else ""),
        _passing_line(len(names) - len(shown)),
        "</section>"])


def _host_links(names: list[str], detail: Mapping[str, str]) -> str:
    """The first hosts of a grouped line, each linked to its detail, then how many more."""
    shown = [f'<a href="#{escape(detail[name])}">{escape(name)}</a>' if name in detail else escape(name)
             for name in names[:NAMED_HOSTS]]
    more = f" and {len(names) - NAMED_HOSTS} more" if len(names) > NAMED_HOSTS else ""
    return ", ".join(shown) + more


def _fix_section(hosts: Mapping, detail: Mapping[str, str]) -> str:
    """The checks that failed or warned, grouped by check and message with the number of hosts first, each with the
    role or setting that fixes it."""
    problems = grouped_problems(hosts)
    if not problems:
        return ""
    rows = "".join(f'<tr class="{escape(item["status"])}" data-hosts="{len(item["hosts"])}">'
                   f'<td class="hosts"><span class="count">{_plural(len(item["hosts"]), "host")}</span>: '
                   f'<span class="named">{_host_links(item["hosts"], detail)}</span></td>'
                   f'<td>{escape(item["check"])}</td>'
                   f'<td class="status">{escape(LABELS.get(item["status"], item["status"]))}</td>'
                   f'<td>{escape(item["message"])}</td><td>{escape(item["fixed_by"] or "-")}</td></tr>'
                   for item in problems)
    return ('<section class="fix"><h2>What to fix</h2><table class="fix"><tr><th>hosts</th><th>check</th>'
            f"<th>status</th><th>detail</th><th>fixed by</th></tr>{rows}</table></section>")


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
    domains = list(domains or [])
    if not all(isinstance(domain, Mapping) for domain in domains):
        raise ReportError("imex_domains entries must be mappings")
    # the hosts with a detail (a tile): those that do not pass
    detail = {name: anchor for name, anchor in anchors(hosts).items() if _verdict(hosts[name].get("status")) != "pass"}
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
    if hosts:
        body.append(_fleet_section(domains, hosts, detail))
    body.append(_fix_section(hosts, detail))
    drawn: set[str] = set()
    passing = []
    for domain in domains:
        members = [name for name in _list(domain.get("members")) if isinstance(name, str) and name in hosts
                   and name not in drawn]
        drawn.update(members)
        expected = args.expected_members if args.expected_members is not None else domain.get("expected_members")
        expected = expected if _is_count(expected) else None
        if _verdict(domain.get("status")) == "pass" and not any(name in detail for name in members):
            passing.append((domain, members, expected))
        else:
            body.append(_domain_section(domain, members, hosts, expected, detail))
    body.append(_passing_domains(passing))
    rest = sorted(name for name in hosts if name not in drawn)
    if rest:
        body.append(_rest_section(rest, hosts, detail))
    if not hosts:
        body.append("<p>No host was judged.</p>")
    return document(args.title, STYLE, body)
