# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""validation_report_html: the page from real tool outputs, and rendered by headless Chromium."""

from __future__ import annotations

import os
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.judge_ib_write_bw import judge_ib_write_bw
from ansible_collections.gpufabric.cluster.plugins.filter.judge_nvbandwidth import judge_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.filter.parse_ib_write_bw import parse_ib_write_bw
from ansible_collections.gpufabric.cluster.plugins.filter.parse_nvbandwidth import parse_nvbandwidth
from ansible_collections.gpufabric.cluster.plugins.filter.validation_report_html import validation_report_html
from ansible_collections.gpufabric.cluster.tests.unit.helpers import render_headless


@pytest.fixture
def results(shared_reference):
    def read(name):
        with open(os.path.join(shared_reference, "tools", name), encoding="utf-8") as handle:
            return handle.read()

    nvbandwidth = parse_nvbandwidth(read("nvbandwidth-single-node-write-ce.txt"))
    rdma = parse_ib_write_bw(read("ib_write_bw-gpu-dmabuf-roce.txt"))
    return {
        "compute_domain": {
            "namespace": "gpufabric-validation", "name": "nvbandwidth",
            "placement": {"clique": "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1", "nodes": ["node-a"],
                          "gpu_model": "NVIDIA <test> GPU"},
            "nvbandwidth": nvbandwidth,
            "verdict": judge_nvbandwidth(nvbandwidth, 1, 8, threshold_gbps=276.1),
        },
        "rdma": [
            {"pair": "node-a -> node-b", "rail": "mlx5_0", "memory": "gpu (dma-buf)",
             "verdict": judge_ib_write_bw(rdma, 100, port="mlx5_0/1")},
            {"pair": "node-a -> node-b", "rail": "mlx5_1", "memory": "gpu (dma-buf)",
             "verdict": judge_ib_write_bw(rdma, 200, port="mlx5_1/1")},
        ],
    }


def test_page_holds_the_matrix_verdicts_and_no_external_asset(results):
    page = validation_report_html(results)
    assert page.startswith("<!DOCTYPE html>")
    assert len(re.findall(r'<td class="cell', page)) == 64
    assert page.count('class="cell below"') == 4
    assert "worst pair 6&rarr;0 274.89 GB/s, best 276.76 GB/s" in page
    assert "NVIDIA &lt;test&gt; GPU" in page and "<test>" not in page
    assert ": <span class=\"fail\">FAIL</span></h1>" in page
    assert "port mlx5_1/1: best average 92.44 Gb/s is 46.2% of the 200 Gb/s line rate" in page
    assert not re.search(r"(src|href)=|url\(|@import|<script", page)


def test_all_passing_results_say_pass(results):
    results["compute_domain"]["verdict"] = judge_nvbandwidth(results["compute_domain"]["nvbandwidth"], 1, 8,
                                                             threshold_gbps=270)
    results["rdma"] = results["rdma"][:1]
    page = validation_report_html(results, title="rack 1")
    assert "<title>rack 1</title>" in page and "rack 1: <span class=\"pass\">PASS</span>" in page
    assert 'class="reasons"' not in page


def test_the_isolation_verdict_and_its_probes_are_shown(results):
    results["compute_domain"]["isolation"] = {
        "status": "broken", "admitted": [{"pod": "nvbandwidth-probe-claim", "node": "node-a", "stage": "started"}],
        "probes": [{"pod": "nvbandwidth-probe-template", "node": None, "stage": "not scheduled"},
                   {"pod": "nvbandwidth-probe-claim", "node": "node-a", "stage": "started"}],
        "message": "isolation: broken, admitted from the second namespace: nvbandwidth-probe-claim on node-a"}
    page = validation_report_html(results)
    assert ('<p id="isolation">Isolation: <span class="broken">BROKEN</span> (isolation: broken, admitted from the '
            "second namespace: nvbandwidth-probe-claim on node-a)</p>") in page
    assert ('<ul class="isolation"><li>nvbandwidth-probe-template: not scheduled</li>'
            "<li>nvbandwidth-probe-claim on node-a: started</li></ul>") in page


@pytest.mark.parametrize(("isolation", "shown"), [
    ({"status": "held", "admitted": [], "probes": [{"pod": "p", "node": None, "stage": "not scheduled"}],
      "message": "isolation: held"}, '<span class="held">HELD</span> (isolation: held)</p><ul class="isolation">'),
    ({"status": "skipped", "admitted": [], "probes": [], "message": "isolation: skipped (turned off)"},
     '<span class="skipped">SKIPPED</span> (isolation: skipped (turned off))</p>\n'),
    ({"status": "<b>", "probes": ["not a mapping", {"pod": "<i>", "stage": None}], "message": None},
     '<span class="unknown">&lt;B&gt;</span> ()</p><ul class="isolation"><li>&lt;i&gt;: </li></ul>'),
])
def test_each_isolation_verdict_reads_as_itself_escaped(results, isolation, shown):
    results["compute_domain"]["isolation"] = isolation
    assert shown in validation_report_html(results)


@pytest.mark.parametrize("isolation", [None, "held", ["held"], 3])
def test_a_result_without_an_isolation_mapping_has_no_isolation_line(results, isolation):
    results["compute_domain"]["isolation"] = isolation
    assert 'id="isolation"' not in validation_report_html(results)


@pytest.mark.parametrize(("value", "message"), [
    ([], "expected {'compute_domain': ..., 'rdma': [...], 'nccl': ..., 'dcgm': [...]}"),
    ({}, "no compute_domain, rdma, nccl or dcgm result to report"),
    ({"nccl": {"verdict": {}}}, "expected the result of validate_nccl"),
])
def test_bad_input(value, message):
    with pytest.raises(AnsibleFilterError, match=r"^validation_report_html: ") as caught:
        validation_report_html(value)
    assert message in str(caught.value)


def test_headless_chromium_renders_the_page(results, tmp_path):
    page = tmp_path / "validation.html"
    page.write_text(validation_report_html(results), encoding="utf-8")
    rendered = render_headless(page, tmp_path)
    assert rendered.screenshot_size == (1400, 1200)
    assert rendered.screenshot_bytes > 20_000  # a blank page compresses to a few kB
    assert rendered.dom.count('<td class="cell') == 64
    assert 'data-testcase="device_to_device_memcpy_write_ce"' in rendered.dom
    assert rendered.errors == []


# Issue 39 item 10: every field of the results is escaped; the worst pair's from/to and spread_percent were written
# as they came. A verdict written by hand (or a result from another tool) cannot put markup in the page.
INJECTED = '<img src=x onerror="alert(1)">'


def test_the_worst_pair_and_the_spread_are_escaped(results):
    case = results["compute_domain"]["verdict"]["testcases"][0]
    case["worst"] = {"from": INJECTED, "to": INJECTED, "gbps": INJECTED}
    case["best"] = dict(case["best"], gbps="fast")
    case["spread_percent"] = INJECTED
    page = validation_report_html(results)
    assert "<img" not in page
    escaped = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    assert f"worst pair {escaped}&rarr;{escaped} {escaped} GB/s, best fast GB/s, spread {escaped} %" in page


def _with_everywhere(value, marker):
    """``value`` with every string and number in it replaced by ``marker``, the structure kept."""
    if isinstance(value, dict):
        return {key: _with_everywhere(item, marker) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_everywhere(item, marker) for item in value]
    return marker if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value


@pytest.mark.parametrize("section", ["compute_domain", "rdma"])
def test_markup_in_any_field_of_a_section_never_reaches_the_page(results, section):
    results[section] = _with_everywhere(results[section], INJECTED)
    try:
        page = validation_report_html(results)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("validation_report_html: ")
        return
    assert "<img" not in page and "onerror=\"" not in page


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["compute_domain", "rdma"]), st.data())
def test_markup_in_some_fields_never_reaches_the_page(results, section, data):
    def mark(value):
        if isinstance(value, dict):
            return {key: mark(item) for key, item in value.items()}
        if isinstance(value, list):
            return [mark(item) for item in value]
        return INJECTED if data.draw(st.booleans()) else value

    results = dict(results, **{section: mark(results[section])})
    try:
        page = validation_report_html(results)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("validation_report_html: ")
        return
    assert "<img" not in page and "onerror=\"" not in page
