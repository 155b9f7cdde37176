# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 43 item 3: the validation reports (Markdown and HTML) show the DCGM diagnostics, and nothing when absent."""

from __future__ import annotations

import pathlib

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.validation_markdown import validation_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.validation_report_html import validation_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.judge_dcgm_diag import judge_dcgm_diag
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.parse_dcgm_diag import parse_dcgm_diag

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "fixtures" / "dcgm"
RDMA = [{"name": "0-mlx5-0-cuda", "pair": "node-a -> node-b", "rail": "mlx5_0", "memory": "gpu (dma-buf)",
         "verdict": {"status": "pass", "best_average_gbps": 392.1, "line_rate_gbps": 400, "required_gbps": 360}}]


def verdict(name: str, **kwargs) -> dict:
    return judge_dcgm_diag(parse_dcgm_diag((FIXTURES / name).read_text(encoding="utf-8")), **kwargs)


@pytest.fixture
def dcgm() -> list[dict]:
    return [verdict("diag-r2-pass-h100x8.json", host="node-a", run_level=2),
            verdict("diag-r2-fail-gpu3-h100x8.json", host="node-b", run_level=2),
            verdict("mndiag-fail-gb200-two-trays.json", domain="rack1.0")]


def test_the_markdown_summary_shows_each_dcgm_run_and_its_problems(dcgm):
    text = validation_markdown({"rdma": [], "dcgm": dcgm, "failures": ["DCGM: node-b failed"]})
    assert text.splitlines() == [
        "# gpufabric.cluster validation: FAIL",
        "",
        "- DCGM dcgmi diag on host node-a: PASS (run level 2, DCGM 4.6.0, 3 test(s): 3 Pass)",
        "- DCGM dcgmi diag on host node-b: FAIL (run level 2, DCGM 4.6.0, 3 test(s): 2 Pass, 1 Fail)",
        "  - failed: host node-b: GPU 3: memory (Hardware) failed: Found 4 faulty memory elements on GPU 3",
        "  - note: host node-b: GPU 7: pcie (Integration) skipped: Test pcie was skipped.",
        "- DCGM dcgmi mndiag over domain rack1.0: FAIL (DCGM 4.6.0, 1 test(s): 1 Fail)",
        "  - failed: domain rack1.0: host gb200-rack1-tray2: GPU 2: MNUBERGEMM (Multi-Node Tests) failed: GPU 2's "
        "NvLink link 7 is currently down",
        "- failed: DCGM: node-b failed",
    ]


@pytest.mark.parametrize("absent", [{}, {"dcgm": None}, {"dcgm": []}], ids=["no-key", "null", "empty"])
def test_without_dcgm_results_both_reports_are_as_before(absent):
    validation = {"rdma": RDMA, "failures": []}
    assert validation_markdown(dict(validation, **absent)) == validation_markdown(validation)
    assert validation_report_html(dict(validation, **absent)) == validation_report_html(validation)
    assert "DCGM" not in validation_markdown(dict(validation, **absent))
    assert 'id="dcgm"' not in validation_report_html(dict(validation, **absent))


def test_the_html_page_shows_a_dcgm_section(dcgm):
    page = validation_report_html({"dcgm": dcgm})
    assert ': <span class="fail">FAIL</span></h1>' in page
    assert '<section id="dcgm"><h2>DCGM diagnostics</h2>' in page
    assert ("<tr><td>dcgmi diag on host node-b</td><td>580.95.05</td><td>run level 2, DCGM 4.6.0, 3 test(s): 2 Pass, "
            '1 Fail</td><td class="fail">FAIL</td></tr>') in page
    assert ('<ul class="reasons"><li>host node-b: GPU 3: memory (Hardware) failed: Found 4 faulty memory elements on '
            "GPU 3</li>") in page
    assert "GPU 2&#x27;s NvLink link 7 is currently down" in page
    assert '<ul class="notes"><li>host node-b: GPU 7: pcie (Integration) skipped' in page


def test_a_dcgm_warning_alone_does_not_fail_the_page(dcgm):
    warned = dict(dcgm[0], status="warn", warnings=["host node-a: GPU 5: pcie (Integration) warned: replays"])
    page = validation_report_html({"dcgm": [warned]})
    assert ': <span class="pass">PASS</span></h1>' in page
    assert '<td class="warn">WARN</td>' in page
    assert '<ul class="warnings"><li>host node-a: GPU 5: pcie (Integration) warned: replays</li></ul>' in page


def test_markup_from_dcgm_never_reaches_the_page(dcgm):
    injected = '<img src=x onerror="alert(1)">'
    bad = dict(dcgm[1], host=injected, driver_version=injected, version=injected, failures=[injected],
               notes=[injected], tests=[{"name": injected, "status": injected}])
    page = validation_report_html({"dcgm": [bad]})
    assert "<img" not in page and 'onerror="' not in page


@pytest.mark.parametrize(("value", "message"), [
    ({"dcgm": "fail"}, "dcgm must be a list of gpufabric.cluster.judge_dcgm_diag verdicts"),
    ({"dcgm": [{"status": "bad"}]}, "dcgm[0] is not a gpufabric.cluster.judge_dcgm_diag verdict"),
    ({"dcgm": [{"status": "pass", "failures": "none"}]}, "dcgm[0] is not a gpufabric.cluster.judge_dcgm_diag"),
])
def test_a_dcgm_value_that_is_no_verdict_is_refused_by_both(value, message):
    for render, name in ((validation_report_html, "validation_report_html"),
                         (lambda results: validation_markdown(dict(results, failures=[])), "validation_markdown")):
        with pytest.raises(AnsibleFilterError) as caught:
            render(value)
        assert str(caught.value).startswith(f"{name}: ") and message in str(caught.value)
