# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render validation results as one self-contained HTML page: nvbandwidth heatmaps, RDMA bars, NCCL busbw chart,
DCGM diagnostics.

The logic of the ``gpufabric.cluster.validation_report_html`` filter; errors are :class:`.report_markdown.ReportError`.
Every text is redacted (:func:`...plugin_utils.redact.redact`) before it is escaped, so a URL with credentials shows
as ``https://***@host/...``. Every field of the results goes through :func:`escape` or, for a figure,
:func:`figure` (a number formatted, anything else escaped): a verdict written by hand cannot put markup in the page.
"""

from __future__ import annotations

import html
import math
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import (
    ReportError,
    check_dcgm_results,
    check_nccl_result,
    dcgm_run_name,
    dcgm_summary,
    nccl_nodes_and_hosts,
    nccl_summary,
    pair_placement,
    size_text,
)

# The style every report page shares (page, verdict colours); each page adds its own rules after it.
BASE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem; color: #1b1f23; }
h1 .pass, td.pass, span.pass { color: #116329; } h1 .fail, td.fail, span.fail { color: #a40e26; }
"""

STYLE = BASE_STYLE + """table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #d0d7de; padding: 0.25rem 0.5rem; text-align: right; font-variant-numeric: tabular-nums; }
table.heatmap td { min-width: 4.5rem; }
td.na { background: #eaeef2; color: #57606a; text-align: center; }
td.below { outline: 2px solid #a40e26; outline-offset: -2px; font-weight: bold; }
.bar { background: #eaeef2; width: 24rem; height: 1rem; position: relative; }
.bar > div { height: 100%; }
.bar > span { position: absolute; top: -0.2rem; bottom: -0.2rem; border-left: 2px dashed #1b1f23; }
ul.reasons li { color: #a40e26; }
ul.placement li { color: #57606a; }
span.held { color: #116329; } span.broken { color: #a40e26; } span.skipped { color: #57606a; }
ul.isolation li { color: #57606a; }
td.warn, span.warn, ul.warnings li { color: #9a6700; } ul.notes li { color: #57606a; }
table.dcgm td { text-align: left; }
svg.busbw { border: 1px solid #d0d7de; background: #fff; }
svg.busbw text { font-size: 11px; fill: #57606a; }
"""

# The busbw chart: plot area inside the margins, in SVG user units.
CHART_WIDTH, CHART_HEIGHT = 720, 320
CHART_LEFT, CHART_RIGHT, CHART_TOP, CHART_BOTTOM = 60, 20, 20, 40


def escape(value: t.Any) -> str:
    """``value`` as text for an HTML element or a quoted attribute: redacted, then ``<>&"'`` escaped."""
    return html.escape(redact("" if value is None else str(value)))


def is_number(value: t.Any) -> bool:
    """``value`` is a finite int or float (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def figure(value: t.Any, spec: str = "g") -> str:
    """A figure for the page: ``value`` formatted with ``spec`` when it is a finite number, else escaped as text."""
    return format(value, spec) if is_number(value) else escape(value)


def document(title: str, style: str, body: t.Sequence[str]) -> str:
    """One HTML document with the title, the inline style and the body parts, no external asset."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{style}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def _colour(value: float, threshold: float, best: float) -> str:
    """Red below the threshold; from amber at the threshold to green at the best pair above it."""
    if value < threshold:
        return "hsl(0, 70%, 82%)"
    span = best - threshold
    position = 1.0 if span <= 0 else (value - threshold) / span
    return f"hsl({round(45 + 75 * position)}, 60%, 78%)"


def _heatmap(testcase: Mapping, verdict: Mapping, threshold: float) -> str:
    matrix = testcase.get("matrix") or []
    numbers = [cell for row in matrix for cell in row if is_number(cell)]
    best = max(numbers) if numbers else threshold
    below = {(pair["from"], pair["to"]) for pair in verdict.get("below_threshold") or []}
    columns = max((len(row) for row in matrix), default=0)
    parts = [f'<table class="heatmap" data-testcase="{escape(testcase.get("name"))}">',
             "<tr><th>GPU</th>" + "".join(f"<th>{column}</th>" for column in range(columns)) + "</tr>"]
    for row_index, row in enumerate(matrix):
        cells = []
        for column, cell in enumerate(row):
            if cell is None:
                cells.append('<td class="na">N/A</td>')
                continue
            if not is_number(cell):
                cells.append(f'<td class="na">{escape(cell)}</td>')
                continue
            marked = ' below' if (row_index, column) in below else ''
            colour = "#f6f8fa" if row_index == column else _colour(cell, threshold, best)
            cells.append(f'<td class="cell{marked}" style="background: {colour}" '
                         f'title="GPU {row_index} to GPU {column}">{cell:.2f}</td>')
        parts.append(f"<tr><th>{row_index}</th>{''.join(cells)}</tr>")
    parts.append("</table>")
    return "\n".join(parts)


def _compute_domain_section(result: Mapping) -> str:
    verdict = result.get("verdict") or {}
    placement = result.get("placement") or {}
    threshold = verdict.get("threshold_gbps") if is_number(verdict.get("threshold_gbps")) else 0.0
    status = verdict.get("status", "fail")
    parts = [f'<section id="compute-domain"><h2>ComputeDomain {escape(result.get("namespace"))}/'
             f'{escape(result.get("name"))}: <span class="{escape(status)}">{escape(status).upper()}</span></h2>',
             f"<p>Nodes ({escape(placement.get('clique'))}): {escape(', '.join(placement.get('nodes') or []))}; "
             f"{escape(verdict.get('gpus'))} GPUs ({escape(placement.get('gpu_model'))}); threshold "
             f"{threshold:g} GB/s ({escape(verdict.get('threshold_source'))}).</p>"]
    parts.append(_isolation(result.get("isolation")))
    cases = {case.get("name"): case for case in (result.get("nvbandwidth") or {}).get("testcases") or []}
    for case_verdict in verdict.get("testcases") or []:
        name = case_verdict.get("name")
        worst, best = case_verdict.get("worst"), case_verdict.get("best")
        summary = (f"worst pair {escape(worst.get('from'))}&rarr;{escape(worst.get('to'))} "
                   f"{figure(worst.get('gbps'), '.2f')} GB/s, best {figure(best.get('gbps'), '.2f')} GB/s, spread "
                   f"{figure(case_verdict.get('spread_percent'))} %") \
            if isinstance(worst, Mapping) and isinstance(best, Mapping) else ""
        parts.append(f'<h3>{escape(name)} <span class="{escape(case_verdict.get("status"))}">'
                     f'{escape(case_verdict.get("status"))}</span></h3><p>{summary}</p>')
        if name in cases and cases[name].get("matrix"):
            parts.append(f"<p>{escape(cases[name].get('description'))}</p>")
            parts.append(_heatmap(cases[name], case_verdict, threshold))
    parts.append(_reasons(verdict.get("reasons")))
    parts.append("</section>")
    return "\n".join(parts)


def _isolation(isolation: t.Any) -> str:
    """The isolation verdict (held, broken or skipped, with its message) and each probe pod's stage."""
    if not isinstance(isolation, Mapping):
        return ""
    status = str(isolation.get("status", "unknown"))
    style = status if status in ("held", "broken", "skipped") else "unknown"
    probes = [probe for probe in isolation.get("probes") or [] if isinstance(probe, Mapping)]
    items = "".join(f"<li>{escape(probe.get('pod'))}{' on ' + escape(probe['node']) if probe.get('node') else ''}: "
                    f"{escape(probe.get('stage'))}</li>" for probe in probes)
    return (f'<p id="isolation">Isolation: <span class="{style}">{escape(status.upper())}</span> '
            f"({escape(isolation.get('message'))})</p>" + (f'<ul class="isolation">{items}</ul>' if items else ""))


def _rdma_section(results: list) -> str:
    parts = ['<section id="rdma"><h2>GPUDirect RDMA</h2><table class="rdma">',
             "<tr><th>pair</th><th>rail</th><th>memory</th><th>best average</th><th>line rate</th>"
             "<th>against line rate</th><th>status</th></tr>"]
    reasons: list[str] = []
    for result in results:
        verdict = result.get("verdict") or {}
        rate = verdict.get("line_rate_gbps") if is_number(verdict.get("line_rate_gbps")) else 0.0
        best = verdict.get("best_average_gbps")
        fraction = (best / rate) if is_number(best) and rate else 0.0
        required = verdict.get("required_gbps") / rate if is_number(verdict.get("required_gbps")) and rate else 0.0
        status = verdict.get("status", "fail")
        colour = "#2da44e" if status == "pass" else "#cf222e"
        meter = (f'<div class="bar"><div style="width: {min(fraction, 1.0) * 100:.1f}%; background: {colour}"></div>'
                 f'<span style="left: {required * 100:.1f}%" title="required"></span></div>')
        best_text = f"{figure(best, '.2f')} Gb/s" if best is not None else "-"
        rate_text = f"{figure(verdict.get('line_rate_gbps'))} Gb/s"
        parts.append(f"<tr><td>{escape(result.get('pair'))}</td><td>{escape(result.get('rail'))}</td>"
                     f"<td>{escape(result.get('memory'))}</td><td>{best_text}</td><td>{rate_text}</td>"
                     f'<td>{meter}</td><td class="{escape(status)}">{escape(status)}</td></tr>')
        reasons.extend(verdict.get("reasons") or [])
        if status != "pass":
            reasons.extend(f"{result.get('name') or result.get('pair')}: {line}" for line in pair_placement(result))
    parts.append("</table>")
    parts.append(_reasons(reasons))
    parts.append("</section>")
    return "\n".join(parts)


def _chart_points(rows: list, key: str) -> list[tuple[int, float]]:
    points = []
    for row in rows:
        placement = row.get(key) if isinstance(row, Mapping) else None
        size = row.get("size_bytes") if isinstance(row, Mapping) else None
        busbw = placement.get("busbw_gbps") if isinstance(placement, Mapping) else None
        if isinstance(size, int) and not isinstance(size, bool) and size > 0 and is_number(busbw):
            points.append((size, float(busbw)))
    return sorted(points)


def busbw_chart(rows: list, threshold: float | None) -> str:
    """An inline SVG of busbw (GB/s) against message size (log2 axis), out-of-place and in-place, with the threshold.

    No script, no external asset; a run without a plottable row gives a text instead of an empty chart.
    """
    series = {key: _chart_points(rows, key) for key in ("out_of_place", "in_place")}
    points = [point for values in series.values() for point in values]
    if not points:
        return '<p class="nochart">no size with a bus bandwidth to plot</p>'
    low = math.log2(min(size for size, _b in points))
    high = math.log2(max(size for size, _b in points))
    top = max([busbw for _s, busbw in points] + ([threshold] if threshold else [])) * 1.1 or 1.0
    width = CHART_WIDTH - CHART_LEFT - CHART_RIGHT
    height = CHART_HEIGHT - CHART_TOP - CHART_BOTTOM

    def x(size: float) -> float:
        return CHART_LEFT + (0.5 if high == low else (math.log2(size) - low) / (high - low)) * width

    def y(busbw: float) -> float:
        return CHART_TOP + height - max(busbw, 0.0) / top * height

    parts = [f'<svg class="busbw" xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" height="{CHART_HEIGHT}" '
             f'viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" aria-label="busbw against message size">',
             f'<line x1="{CHART_LEFT}" y1="{CHART_TOP + height}" x2="{CHART_LEFT + width}" y2="{CHART_TOP + height}" '
             'stroke="#57606a"/>',
             f'<line x1="{CHART_LEFT}" y1="{CHART_TOP}" x2="{CHART_LEFT}" y2="{CHART_TOP + height}" stroke="#57606a"/>']
    for step in range(5):
        value = top / 1.1 * step / 4
        parts.append(f'<text x="{CHART_LEFT - 6}" y="{y(value) + 4:.1f}" text-anchor="end">{value:.0f}</text>')
    sizes = sorted({size for size, _b in points})
    stride = max(1, len(sizes) // 8)
    for size in sizes[::stride]:
        parts.append(f'<text x="{x(size):.1f}" y="{CHART_TOP + height + 16}" text-anchor="middle">'
                     f'{escape(size_text(size))}</text>')
    parts.append(f'<text x="{CHART_LEFT + width / 2:.1f}" y="{CHART_HEIGHT - 4}" text-anchor="middle">message size'
                 '</text><text x="14" y="{:.1f}" transform="rotate(-90 14 {:.1f})" text-anchor="middle">busbw GB/s'
                 '</text>'.format(CHART_TOP + height / 2, CHART_TOP + height / 2))
    for number, (key, colour) in enumerate((("out_of_place", "#0969da"), ("in_place", "#8250df"))):
        values = series[key]
        if not values:
            continue
        parts.append(f'<text x="{CHART_LEFT + 10}" y="{CHART_TOP + 12 + 14 * number}" style="fill: {colour}">'
                     f'&#9679; {key.replace("_", "-")}</text>')
        coordinates = " ".join(f"{x(size):.1f},{y(busbw):.1f}" for size, busbw in values)
        parts.append(f'<polyline class="series" data-series="{key}" fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{coordinates}"/>')
        parts.extend(f'<circle cx="{x(size):.1f}" cy="{y(busbw):.1f}" r="2.5" fill="{colour}">'
                     f'<title>{escape(size_text(size))}: {busbw:g} GB/s ({key.replace("_", "-")})</title></circle>'
                     for size, busbw in values)
    if threshold:
        parts.append(f'<line class="threshold" x1="{CHART_LEFT}" y1="{y(threshold):.1f}" x2="{CHART_LEFT + width}" '
                     f'y2="{y(threshold):.1f}" stroke="#a40e26" stroke-dasharray="6 4" stroke-width="1.5">'
                     f'<title>threshold {threshold:g} GB/s</title></line>'
                     f'<text x="{CHART_LEFT + width - 4}" y="{y(threshold) - 4:.1f}" text-anchor="end">threshold '
                     f'{threshold:g} GB/s</text>')
    parts.append("</svg>")
    return "".join(parts)


def _nccl_section(result: Mapping) -> str:
    result = check_nccl_result(result)
    verdict, placement = result["verdict"], result["placement"]
    status = str(verdict.get("status", "fail"))
    threshold = verdict.get("threshold_gbps")
    threshold = float(threshold) if is_number(threshold) else None
    nodes, hosts = nccl_nodes_and_hosts(result)
    where = (f"clique {escape(placement.get('clique'))} ({escape(placement.get('gpu_model'))})"
             if result.get("shape") == "nvlink" else
             f"rails {escape((placement.get('env') or {}).get('NCCL_IB_HCA'))}, GPUDirect RDMA "
             f"{escape(placement.get('gpudirect'))}")
    parts = [f'<section id="nccl"><h2>NCCL all_reduce ({escape(result.get("shape"))}) '
             f'{escape(result.get("namespace"))}/{escape(result.get("name"))}: '
             f'<span class="{escape(status)}">{escape(status).upper()}</span></h2>',
             f"<p>{escape(nccl_summary(result))}.</p>",
             f"<p>{escape(verdict.get('ranks'))} ranks on nodes {escape(nodes)} (the output's hosts: "
             f"{escape(hosts)}); {where}.</p>",
             busbw_chart(result["nccl_tests"].get("rows") or [], threshold),
             _reasons(verdict.get("failures")), "</section>"]
    return "\n".join(parts)


def _reasons(reasons: t.Any) -> str:
    if not reasons:
        return ""
    return '<ul class="reasons">' + "".join(f"<li>{escape(reason)}</li>" for reason in reasons) + "</ul>"


def _list(css: str, lines: t.Any) -> str:
    if not lines:
        return ""
    return f'<ul class="{css}">' + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>"


def _dcgm_section(verdicts: list[Mapping]) -> str:
    parts = ['<section id="dcgm"><h2>DCGM diagnostics</h2><table class="dcgm">',
             "<tr><th>run</th><th>driver</th><th>tests</th><th>status</th></tr>"]
    for verdict in verdicts:
        status = str(verdict.get("status"))
        parts.append(f"<tr><td>{escape(dcgm_run_name(verdict))}</td><td>{escape(verdict.get('driver_version'))}</td>"
                     f"<td>{escape(dcgm_summary(verdict))}</td>"
                     f'<td class="{escape(status)}">{escape(status.upper())}</td></tr>')
    parts.append("</table>")
    for css, key in (("reasons", "failures"), ("warnings", "warnings"), ("notes", "notes")):
        parts.append(_list(css, [line for verdict in verdicts for line in verdict.get(key) or []]))
    parts.append("</section>")
    return "\n".join(part for part in parts if part)


def validation_report_html(results: t.Any, title: str = "gpufabric.cluster validation") -> str:
    """One HTML document, no external asset, for ``{'compute_domain': ..., 'rdma': [...], 'nccl': ...,
    'dcgm': [...]}``.

    ``compute_domain`` is the ``validate_compute_domain_result`` fact (``placement``, ``nvbandwidth``, ``verdict``);
    ``rdma`` is a list of ``{pair, rail, memory, verdict}`` with verdicts of ``judge_ib_write_bw`` (and the sides of
    ``rdma_test_plan``, shown for a failed test); ``nccl`` is the ``validate_nccl_result`` fact; ``dcgm`` a list of
    ``judge_dcgm_diag`` verdicts (a DCGM warning does not fail the page).
    """
    if not isinstance(results, Mapping):
        raise ReportError("expected {'compute_domain': ..., 'rdma': [...], 'nccl': ..., 'dcgm': [...]}")
    compute_domain, rdma, nccl = results.get("compute_domain"), results.get("rdma") or [], results.get("nccl")
    dcgm = check_dcgm_results(results.get("dcgm"))
    if not compute_domain and not rdma and not nccl and not dcgm:
        raise ReportError("no compute_domain, rdma, nccl or dcgm result to report")
    statuses = ([compute_domain["verdict"]["status"]] if compute_domain else []) + \
        [(entry.get("verdict") or {}).get("status", "fail") for entry in rdma] + \
        ([str(check_nccl_result(nccl)["verdict"].get("status", "fail"))] if nccl else []) + \
        ["fail" if verdict["status"] == "fail" else "pass" for verdict in dcgm]
    overall = "pass" if statuses and all(status == "pass" for status in statuses) else "fail"
    body = [f'<h1>{escape(title)}: <span class="{overall}">{overall.upper()}</span></h1>']
    if compute_domain:
        body.append(_compute_domain_section(compute_domain))
    if rdma:
        body.append(_rdma_section(rdma))
    if nccl:
        body.append(_nccl_section(nccl))
    if dcgm:
        body.append(_dcgm_section(dcgm))
    return document(title, STYLE, body)
