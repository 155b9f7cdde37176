# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NCCL section of the reports (nccl_markdown, validation_markdown, validation_report_html) and the placement of
a failed RDMA test's GPU and NIC, on validate_nccl results judged from runs laid out as nccl-tests prints them
(SYNTHETIC, nccl_results.py) and on the recorded facts."""

from __future__ import annotations

import copy
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.nccl_markdown import nccl_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_markdown import rdma_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.rdma_test_plan import rdma_test_plan
from ansible_collections.gpufabric.cluster.plugins.filter.validation_markdown import validation_markdown
from ansible_collections.gpufabric.cluster.plugins.filter.validation_report_html import validation_report_html
from ansible_collections.gpufabric.cluster.tests.unit.helpers import render_headless
from ansible_collections.gpufabric.cluster.tests.unit.plugins.plugin_utils.nccl_results import nccl_result


def test_markdown_of_a_passing_nvlink_run():
    text = nccl_markdown(nccl_result("nvlink"))
    assert text.startswith("<!-- Ansible managed -->\n# NCCL all_reduce validation (nvlink): PASS")
    assert "peak busbw 840 GB/s at 8 GiB, worst large size 1 GiB (763.64 GB/s), threshold 600.0 GB/s" in text
    assert "transport mnnvl, nvls" in text
    assert "- Ranks: 8 on nodes tray-0, tray-1; the output's hosts: tray-0, tray-1" in text
    assert "- Clique 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1" in text
    assert "| 8 GiB | float | 840.0 | 839.0 | 0 |" in text and "| 8 B | float |" in text
    assert "## Failures" not in text


def test_markdown_of_a_failing_rdma_run_names_the_failures():
    text = nccl_markdown(nccl_result("rdma", peak=60.0, wrong=3))
    assert "# NCCL all_reduce validation (rdma): FAIL" in text
    assert "- Rails =mlx5_0:1,mlx5_1:1, GPUDirect RDMA dma_buf" in text
    assert "threshold 92.0 GB/s (2 x 400G NIC at 46 GB/s busbw each), transport network" in text
    assert "- 3 wrong value(s) (#wrong) at size(s) 2147483648 B" in text
    assert "| 2 GiB | float | 56.36 | 55.36 | 3 |" in text


def test_the_nodes_and_the_hosts_the_output_printed_are_told_apart():
    # In an MPIJob the output's hosts are the worker pods' names; the nodes come from the placement.
    result = nccl_result("nvlink")
    result["placement"]["nodes"] = ["gb200-tray-05", "gb200-tray-06"]
    result["verdict"]["hosts"] = {"nccl-tests-worker-0": [0, 1, 2, 3], "nccl-tests-worker-1": [4, 5, 6, 7]}
    assert ("- Ranks: 8 on nodes gb200-tray-05, gb200-tray-06; the output's hosts: nccl-tests-worker-0, "
            "nccl-tests-worker-1") in nccl_markdown(result)
    assert ("8 ranks on nodes gb200-tray-05, gb200-tray-06 (the output's hosts: nccl-tests-worker-0, "
            "nccl-tests-worker-1)") in validation_report_html({"nccl": result})
    result["verdict"]["hosts"] = {}
    assert "the output's hosts: none printed" in nccl_markdown(result)
    assert "(the output's hosts: none printed)" in validation_report_html({"nccl": result})


def test_validation_summary_has_the_nccl_line():
    text = validation_markdown({"nccl": nccl_result("rdma", peak=60.0), "failures": ["NCCL all_reduce failed"]})
    assert "- NCCL all_reduce (rdma): FAIL: peak busbw 60 GB/s at 8 GiB" in text
    assert text.startswith("# gpufabric.cluster validation: FAIL")


def test_html_section_plots_busbw_against_size_with_the_threshold():
    page = validation_report_html({"nccl": nccl_result("nvlink")})
    assert '<section id="nccl">' in page and 'class="pass">PASS</span></h1>' in page
    [svg] = re.findall(r'<svg class="busbw".*?</svg>', page)
    assert svg.count("<circle") == 2 * 31  # 8 B to 8 GiB, out-of-place and in-place
    assert 'data-series="out_of_place"' in svg and 'data-series="in_place"' in svg
    assert '<line class="threshold"' in svg and "threshold 600 GB/s" in svg
    assert ">8 GiB</text>" in svg and "<title>8 GiB: 840 GB/s (out-of-place)</title>" in svg
    assert not re.search(r"(src|href)=|url\(|@import|<script", page)


def test_html_threshold_line_sits_at_the_threshold():
    page = validation_report_html({"nccl": nccl_result("rdma", peak=60.0)})
    threshold_y = float(re.search(r'<line class="threshold" x1="\d+" y1="([\d.]+)"', page).group(1))
    pattern = r'cy="([\d.]+)" r="2.5" fill="#0969da"><title>([^<]*)'
    circles = [(float(cy), title) for cy, title in re.findall(pattern, page)]
    above = [title for y, title in circles if y < threshold_y]
    assert above == []  # no size reached 92 GB/s
    assert "FAIL" in page and "below the threshold 92 GB/s" in page


def test_a_run_without_a_busbw_shows_a_text_not_an_empty_chart():
    result = nccl_result("nvlink")
    result["nccl_tests"] = {**result["nccl_tests"], "rows": []}
    page = validation_report_html({"nccl": result})
    assert "no size with a bus bandwidth to plot" in page and "<svg" not in page


def test_headless_chromium_renders_the_nccl_section(tmp_path):
    page = tmp_path / "validation.html"
    page.write_text(validation_report_html({"nccl": nccl_result("nvlink")}), encoding="utf-8")
    rendered = render_headless(page, tmp_path)
    assert rendered.screenshot_size == (1400, 1200)
    assert rendered.screenshot_bytes > 20_000
    assert rendered.dom.count("<circle") == 62 and 'class="threshold"' in rendered.dom
    assert rendered.errors == []


@pytest.fixture
def failed_rdma(fleet_facts):
    hostvars = {name: {"ansible_facts": {"gpufabric": copy.deepcopy(fleet_facts["gb200_tray"])}}
                for name in ("tray-1", "tray-2")}
    [test] = rdma_test_plan(hostvars, [{"server": "tray-1", "client": "tray-2"}], ["mlx5_2"], ["cuda_dmabuf"])
    return {**test, "verdict": {"status": "fail", "best_average_gbps": 90.0, "line_rate_gbps": 400,
                                "required_gbps": 360.0, "reasons": ["best average 90 Gb/s below 360 Gb/s"]}}


def test_failed_rdma_pair_shows_gpu_and_nic_placement(failed_rdma):
    server = failed_rdma["server"]
    assert server["same_pcie_switch"] is False and server["gpu_numa_node"] is not None
    expected = (f"server tray-1: GPU 2 ({server['gpu_pci_address']}, NUMA {server['gpu_numa_node']}) with NIC mlx5_2 "
                f"({server['nic_pci_address']}, NUMA {server['nic_numa_node']}): not behind the NIC's PCIe switch, "
                "same NUMA node")
    assert expected in rdma_markdown([failed_rdma])
    assert expected in validation_markdown({"rdma": [failed_rdma], "failures": []})
    assert expected.replace("'", "&#x27;") in validation_report_html({"rdma": [failed_rdma]})


def test_passing_rdma_pair_shows_no_placement(failed_rdma):
    failed_rdma["verdict"] = {**failed_rdma["verdict"], "status": "pass", "reasons": []}
    assert "not behind the NIC's PCIe switch" not in validation_markdown({"rdma": [failed_rdma], "failures": []})
    assert "PCIe switch" not in validation_report_html({"rdma": [failed_rdma]})


def test_host_memory_side_and_missing_keys():
    result = {"name": "t", "pair": "a -> b", "rail": "mlx5_0", "memory": "host",
              "server": {"node": "a", "rdma_device": "mlx5_0", "gpu_index": None, "nic_pci_address": None},
              "client": {"node": "b", "gpu_index": 1, "nic_pci_address": None}, "extra": {"node": "c"},
              "verdict": {"status": "fail", "best_average_gbps": 1, "line_rate_gbps": 400, "reasons": ["low"]}}
    text = rdma_markdown([result])
    assert "server a: host memory, NIC mlx5_0 (?, NUMA ?)" in text
    assert ("client b: GPU 1 (?, NUMA ?) with NIC ? (?, NUMA ?): PCIe switch unknown, NUMA nodes differ or unknown"
            in text)
    del result["client"]["nic_pci_address"]  # a plan from before the placement keys: no line for that side
    assert "client b" not in rdma_markdown([result])


@pytest.mark.parametrize("value", [None, [], "x", {}, {"verdict": {}, "nccl_tests": {}}, {"placement": {}}])
def test_bad_input(value):
    with pytest.raises(AnsibleFilterError, match=r"^nccl_markdown: expected the result of validate_nccl"):
        nccl_markdown(value)


@pytest.mark.parametrize(("change", "message"), [
    (lambda result: result["nccl_tests"].update(rows=[None]), "nccl_tests.rows[0] is not a parse_nccl_tests row"),
    (lambda result: result["nccl_tests"].update(rows="8 B"), "nccl_tests.rows is not a list"),
    (lambda result: result["nccl_tests"]["rows"][2].update(in_place={"busbw_gbps": "12"}),
     "nccl_tests.rows[2].in_place is not a parse_nccl_tests placement"),
    (lambda result: result["verdict"].update(threshold_gbps="600"), "verdict.threshold_gbps is not a number"),
    (lambda result: result["verdict"].update(peak_busbw_gbps=True), "verdict.peak_busbw_gbps is not a number"),
    (lambda result: result["verdict"].update(worst_size_bytes=1.5), "verdict.worst_size_bytes is not a size in bytes"),
    (lambda result: result["verdict"].update(hosts=["tray-0"]), "verdict.hosts is not a mapping"),
    (lambda result: result["verdict"].update(transport="mnnvl"), "verdict.transport is not a list"),
    (lambda result: result["placement"].update(nodes="tray-0"), "placement.nodes is not a list"),
])
def test_malformed_results_are_refused_with_what_is_wrong(change, message):
    """Regression: hypothesis found rows=[None] failing with an AttributeError instead of a clear error."""
    result = nccl_result("nvlink")
    change(result)
    for render, name in ((nccl_markdown, "nccl_markdown"),
                         (lambda value: validation_report_html({"nccl": value}), "validation_report_html"),
                         (lambda value: validation_markdown({"nccl": value, "failures": []}), "validation_markdown")):
        with pytest.raises(AnsibleFilterError, match=f"^{name}: expected the result of validate_nccl") as error:
            render(result)
        assert message in str(error.value)


_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=4),
                    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
                    max_leaves=4)
_ROW = st.fixed_dictionaries({"size_bytes": _ANY | st.integers(), "type": _ANY,
                              "out_of_place": _ANY | st.fixed_dictionaries({"busbw_gbps": _ANY, "wrong": _ANY}),
                              "in_place": _ANY | st.fixed_dictionaries({"busbw_gbps": _ANY, "wrong": _ANY})})


_VERDICT_KEYS = st.sampled_from(["status", "threshold_gbps", "peak_busbw_gbps", "worst_busbw_gbps", "peak_size_bytes",
                                 "worst_size_bytes", "hosts", "transport", "failures", "ranks"])
_PLACEMENT_KEYS = st.sampled_from(["nodes", "env", "clique", "gpu_model", "gpudirect"])


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(_ROW | _ANY, max_size=5), verdict=st.dictionaries(_VERDICT_KEYS, _ANY, max_size=10),
       placement=st.dictionaries(_PLACEMENT_KEYS, _ANY), shape=_ANY)
def test_any_result_gives_a_report_or_a_clear_error(rows, verdict, placement, shape):
    result = {"shape": shape, "placement": placement, "nccl_tests": {"rows": rows}, "verdict": verdict}
    for render, name in ((nccl_markdown, "nccl_markdown"),
                         (lambda value: validation_report_html({"nccl": value}), "validation_report_html"),
                         (lambda value: validation_markdown({"nccl": value, "failures": []}), "validation_markdown")):
        try:
            text = render(result)
        except AnsibleFilterError as error:
            assert str(error).startswith(f"{name}: ")
            continue
        assert isinstance(text, str) and text.endswith("\n")
