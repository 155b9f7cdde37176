# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 44 item 4: the preflight page of 2,304 trays (128 NVL72 racks) reads as racks of slots, then what fails.

On the starting commit the page drew one tile per host: 2,304 tiles, 617 kB, the few failing trays somewhere among
them, the passing ones taking the page.  Now the fleet is a grid (one column per rack, one cell per tray by slot, the
tray's verdict its colour, linked to its detail), the failures are grouped with their counts, and only the trays that
do not pass have a detail, each with the anchor the grid links to.  The fleet is tests/fixtures/rack_fleet.py's (the
one bench/report_html_scale.py measures): most trays pass, rack 7 is degraded, a few trays fail for a handful of
reasons, and rack055-tray13 is a broken node in no domain.
"""

from __future__ import annotations

import re
import time

import pytest
from fixtures.rack_fleet import TRAYS_PER_RACK, chassis_serial, gathered_facts, rack_fleet, tray_name

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.tests.unit.helpers import assert_balanced, render_headless

RACKS = 128
TRAYS = RACKS * TRAYS_PER_RACK  # 2,304
# A cell is about 110 bytes and a failing tray's detail about 1 kB: 200 bytes a tray holds the grid and the details
# of this fleet's 75 failing trays with room; the old page of a tile per tray took 268 (617 kB).
BYTES_PER_TRAY = 200
RENDER_CPU_SECONDS = 2.0  # the filter takes about 0.13 s of CPU here; a browser-sized page must not take a minute
COLUMN = re.compile(r'<div class="rack" data-rack="(\d+)"[^>]*>(.*?)</div>')
CELL = re.compile(r'<(a|span) class="cell (\w+)" data-host="([^"]*)"(?: href="#([^"]*)")?')
TILE = re.compile(r'<div class="tile (\w+)" id="([^"]*)" data-host="([^"]*)"')


@pytest.fixture(scope="module")
def report():
    hostvars = rack_fleet(gathered_facts(), RACKS)
    assert len(hostvars) == TRAYS
    return preflight_report(hostvars, list(hostvars), {"imex_domain_members": TRAYS_PER_RACK})


@pytest.fixture(scope="module")
def page(report):
    return preflight_report_html(report)


def test_the_grid_has_one_column_per_rack_and_one_cell_per_tray_by_slot(report, page):
    columns = COLUMN.findall(page)
    assert [serial for serial, _cells in columns] == [chassis_serial(rack) for rack in range(1, RACKS + 1)]
    for rack, (_serial, cells) in enumerate(columns, start=1):
        found = [(host, status) for _tag, status, host, _href in CELL.findall(cells)]
        # rack 55's tray 13 is a broken node (no facts of its place): it is in the group of no rack instead
        expected = [tray_name(rack, tray) for tray in range(1, TRAYS_PER_RACK + 1)
                    if (rack, tray) != (55, 13)]
        assert [host for host, _status in found] == expected
        assert all(status == report["hosts"][host]["status"] for host, status in found)
    rest = page.split('<div class="norack"', 1)[1].split("</section>")[0]
    assert [(host, status) for _tag, status, host, _href in CELL.findall(rest)] == [("rack055-tray13", "fail")]
    assert len(CELL.findall(page)) == TRAYS
    assert {status for _serial, cells in columns for _tag, status, _host, _href in CELL.findall(cells)} == {
        "pass", "fail"}


def test_every_tray_that_does_not_pass_has_one_detail_the_grid_and_the_table_link_to(report, page):
    failing = sorted(name for name, entry in report["hosts"].items() if entry["status"] != "pass")
    assert len(failing) == 75  # rack 7, the domains of racks 12, 20 and 55, three misconfigured trays
    tiles = TILE.findall(page)
    assert sorted(host for _css, _anchor, host in tiles) == failing  # a passing tray has no tile
    anchors = {host: anchor for _css, anchor, host in tiles}
    assert all(page.count(f'id="{anchor}"') == 1 for anchor in anchors.values())
    cells = {host: (tag, href) for tag, _status, host, href in CELL.findall(page)}
    for host in failing:
        assert cells[host] == ("a", anchors[host]) == ("a", f"host-{host}")
    assert all(cells[host] == ("span", "") for host in report["hosts"] if host not in anchors)
    fix = page.split('<section class="fix">', 1)[1].split("</section>", 1)[0]
    assert set(re.findall(r'href="#([^"]*)"', fix)) <= set(anchors.values())


def test_failures_are_grouped_by_reason_with_the_count_first(page):
    fix = page.split('<section class="fix">', 1)[1].split("</section>", 1)[0]
    rows = re.findall(r'<tr class="(\w+)" data-hosts="(\d+)"><td class="hosts"><span class="count">([^<]*)</span>'
                      r".*?</td><td>(\w+)</td>", fix)
    assert ("fail", "18", "18 hosts", "fabric_health") in rows  # rack 7's degraded NVLinks, one line
    assert ("fail", "3", "3 hosts", "fabric_health") in rows  # the three misconfigured trays
    # rack 7's GPU health and port counters name each tray in their message: one line each all the same
    assert ("fail", "18", "18 hosts", "gpu_health") in rows and ("warn", "18", "18 hosts", "port_counters") in rows
    assert len(rows) < 20
    assert [int(count) for _status, count, _text, _check in rows if _status == "fail"] == sorted(
        (int(count) for _status, count, _text, _check in rows if _status == "fail"), reverse=True)


def test_the_domains_that_pass_are_folded_into_one_table(report, page):
    passing = [domain for domain in report["imex_domains"] if domain["status"] == "pass"]
    assert len(passing) == RACKS - 7  # racks 7, 12, 20, 55 and the misconfigured trays' 3, 41 and 90 fail
    assert f'<details class="passing" data-domains="{len(passing)}"><summary>{len(passing)} IMEX domains pass' in page
    assert len(re.findall(r'<section class="domain" data-clique="[^"]+" data-status="fail">', page)) == 7


def test_the_page_stays_small_renders_fast_and_is_well_formed(report, page):
    size = len(page.encode("utf-8"))
    assert size < BYTES_PER_TRAY * TRAYS, size
    started = time.process_time()
    preflight_report_html(report)
    assert time.process_time() - started < RENDER_CPU_SECONDS
    assert_balanced(page)
    assert not re.search(r"src=|url\(|@import|<script|https?://", page)


def test_headless_chromium_lays_out_the_2304_tray_page(page, tmp_path):
    path = tmp_path / "preflight.html"
    path.write_text(page, encoding="utf-8")
    rendered = render_headless(path, tmp_path, width=1600, height=1200)
    assert rendered.errors == []
    assert rendered.screenshot_bytes > 20_000  # a blank page compresses to a few kB
    assert len(CELL.findall(rendered.dom)) == TRAYS and len(COLUMN.findall(rendered.dom)) == RACKS
