# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Render validation results as one self-contained HTML page: nvbandwidth heatmaps and RDMA bars.

The logic of the ``gpufabric.cluster.validation_report_html`` filter; errors are :class:`.report_markdown.ReportError`.
Every text is redacted (:func:`...plugin_utils.redact.redact`) before it is escaped, so a URL with credentials shows
as ``https://***@host/...``.
"""

from __future__ import annotations

import html
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import ReportError

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
"""


def escape(value: t.Any) -> str:
    """``value`` as text for an HTML element or a quoted attribute: redacted, then ``<>&"'`` escaped."""
    return html.escape(redact("" if value is None else str(value)))


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
    numbers = [cell for row in matrix for cell in row if cell is not None]
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
    threshold = float(verdict.get("threshold_gbps") or 0)
    status = verdict.get("status", "fail")
    parts = [f'<section id="compute-domain"><h2>ComputeDomain {escape(result.get("namespace"))}/'
             f'{escape(result.get("name"))}: <span class="{escape(status)}">{escape(status).upper()}</span></h2>',
             f"<p>Nodes ({escape(placement.get('clique'))}): {escape(', '.join(placement.get('nodes') or []))}; "
             f"{escape(verdict.get('gpus'))} GPUs ({escape(placement.get('gpu_model'))}); threshold "
             f"{threshold:g} GB/s ({escape(verdict.get('threshold_source'))}).</p>"]
    cases = {case.get("name"): case for case in (result.get("nvbandwidth") or {}).get("testcases") or []}
    for case_verdict in verdict.get("testcases") or []:
        name = case_verdict.get("name")
        worst, best = case_verdict.get("worst"), case_verdict.get("best")
        summary = (f"worst pair {worst['from']}&rarr;{worst['to']} {worst['gbps']:.2f} GB/s, best "
                   f"{best['gbps']:.2f} GB/s, spread {case_verdict.get('spread_percent')} %") if worst and best else ""
        parts.append(f'<h3>{escape(name)} <span class="{escape(case_verdict.get("status"))}">'
                     f'{escape(case_verdict.get("status"))}</span></h3><p>{summary}</p>')
        if name in cases and cases[name].get("matrix"):
            parts.append(f"<p>{escape(cases[name].get('description'))}</p>")
            parts.append(_heatmap(cases[name], case_verdict, threshold))
    parts.append(_reasons(verdict.get("reasons")))
    parts.append("</section>")
    return "\n".join(parts)


def _rdma_section(results: list) -> str:
    parts = ['<section id="rdma"><h2>GPUDirect RDMA</h2><table class="rdma">',
             "<tr><th>pair</th><th>rail</th><th>memory</th><th>best average</th><th>line rate</th>"
             "<th>against line rate</th><th>status</th></tr>"]
    reasons: list[str] = []
    for result in results:
        verdict = result.get("verdict") or {}
        rate = float(verdict.get("line_rate_gbps") or 0)
        best = verdict.get("best_average_gbps")
        fraction = (best / rate) if best is not None and rate else 0.0
        required = (verdict.get("required_gbps") or 0) / rate if rate else 0.0
        status = verdict.get("status", "fail")
        colour = "#2da44e" if status == "pass" else "#cf222e"
        meter = (f'<div class="bar"><div style="width: {min(fraction, 1.0) * 100:.1f}%; background: {colour}"></div>'
                 f'<span style="left: {required * 100:.1f}%" title="required"></span></div>')
        best_text = f"{best:.2f} Gb/s" if best is not None else "-"
        parts.append(f"<tr><td>{escape(result.get('pair'))}</td><td>{escape(result.get('rail'))}</td>"
                     f"<td>{escape(result.get('memory'))}</td><td>{best_text}</td><td>{rate:g} Gb/s</td>"
                     f'<td>{meter}</td><td class="{escape(status)}">{escape(status)}</td></tr>')
        reasons.extend(verdict.get("reasons") or [])
    parts.append("</table>")
    parts.append(_reasons(reasons))
    parts.append("</section>")
    return "\n".join(parts)


def _reasons(reasons: t.Any) -> str:
    if not reasons:
        return ""
    return '<ul class="reasons">' + "".join(f"<li>{escape(reason)}</li>" for reason in reasons) + "</ul>"


def validation_report_html(results: t.Any, title: str = "gpufabric.cluster validation") -> str:
    """One HTML document, no external asset, for ``{'compute_domain': ..., 'rdma': [...]}``.

    ``compute_domain`` is the ``validate_compute_domain_result`` fact (``placement``, ``nvbandwidth``, ``verdict``);
    ``rdma`` is a list of ``{pair, rail, memory, verdict}`` with verdicts of ``judge_ib_write_bw``.
    """
    if not isinstance(results, Mapping):
        raise ReportError("expected {'compute_domain': ..., 'rdma': [...]}")
    compute_domain, rdma = results.get("compute_domain"), results.get("rdma") or []
    if not compute_domain and not rdma:
        raise ReportError("no compute_domain result and no rdma result to report")
    statuses = ([compute_domain["verdict"]["status"]] if compute_domain else []) + \
        [(entry.get("verdict") or {}).get("status", "fail") for entry in rdma]
    overall = "pass" if statuses and all(status == "pass" for status in statuses) else "fail"
    body = [f'<h1>{escape(title)}: <span class="{overall}">{overall.upper()}</span></h1>']
    if compute_domain:
        body.append(_compute_domain_section(compute_domain))
    if rdma:
        body.append(_rdma_section(rdma))
    return document(title, STYLE, body)
