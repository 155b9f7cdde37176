# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""preflight_report_html: the fleet page from real preflight reports, and rendered by headless Chromium."""

from __future__ import annotations

import copy
import html
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report import preflight_report
from ansible_collections.gpufabric.cluster.plugins.filter.preflight_report_html import preflight_report_html
from ansible_collections.gpufabric.cluster.tests.unit.helpers import assert_balanced, render_headless

GB200_UUID = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21"
RACKS = 4
TRAYS = 18
TILE = re.compile(r'<div class="tile (\w+)" id="[^"]*" data-host="([^"]*)" data-status="(\w+)">')
CELL = re.compile(r'<(?:a|span) class="cell (\w+)" data-host="([^"]*)"')
SECTION = re.compile(r'<section class="domain" data-clique="([^"]*)" data-status="(\w+)">')


def _host(fleet_facts, tree, address, clique=None, rack_addresses=None):
    facts = copy.deepcopy(fleet_facts[tree])
    if clique is not None:
        facts["gpu"]["cliques"] = [clique]
        for gpu in facts["gpu"]["gpus"]:
            gpu["fabric"]["clique_id"] = int(clique.rsplit(".", 1)[1])
            gpu["fabric"]["clique"] = clique
        facts["imex"]["nodes"]["addresses"] = list(rack_addresses)
    return {"ansible_facts": {"gpufabric": facts, "default_ipv4": {"address": address}}}


def rack_fleet(fleet_facts):
    """72 hosts in four NVL72 racks (cliques .1 to .4), each tray with the nodes file its rack's nvidia_imex wrote.

    rack2-tray03 lists an address of no member (a stale nodes file: rack 2 fails), rack3-tray05 is a broken node
    (no facts of a clique: it leaves rack 3 with 17 members whose nodes files list its address), rack4-tray17 is an
    HGX H100 (no multi-node clique) and rack 4's nodes files list its 17 trays: a consistent domain one tray short.
    """
    hostvars = {}
    for rack in range(1, RACKS + 1):
        addresses = [f"10.114.{rack}.{11 + tray}" for tray in range(TRAYS - (rack == RACKS))]
        for tray in range(TRAYS):
            name = f"rack{rack}-tray{tray:02d}"
            hostvars[name] = _host(fleet_facts, "gb200_tray", f"10.114.{rack}.{11 + tray}", f"{GB200_UUID}.{rack}",
                                   addresses)
    hostvars["rack2-tray03"]["ansible_facts"]["gpufabric"]["imex"]["nodes"]["addresses"][-1] = "10.114.2.99"
    hostvars["rack3-tray05"] = _host(fleet_facts, "broken_node", "10.114.3.16")
    hostvars["rack4-tray17"] = _host(fleet_facts, "hgx_h100", "10.114.4.28")
    return hostvars


@pytest.fixture(scope="module")
def report(fleet_facts):
    hostvars = rack_fleet(fleet_facts)
    return preflight_report(hostvars, sorted(hostvars))


def test_the_72_host_report_as_tiles_grouped_by_rack(report):
    page = preflight_report_html(report, validation_link="validation.html", expected_members=18)
    assert page.startswith("<!DOCTYPE html>")
    tiles = TILE.findall(page)
    assert len(tiles) == 72 and len({host for _css, host, _status in tiles}) == 72
    assert all(css == status for css, _host, status in tiles)
    verdicts = {host: status for _css, host, status in tiles}
    assert verdicts == {name: entry["status"] for name, entry in report["hosts"].items()}
    sections = SECTION.findall(page)
    # the healthy racks warn: their recorded trays run R570, past its end of life (issue 42)
    assert sections == [(f"{GB200_UUID}.1", "warn"), (f"{GB200_UUID}.2", "fail"), (f"{GB200_UUID}.3", "fail"),
                        (f"{GB200_UUID}.4", "warn"), ("", "none")]
    assert page.count('data-members="18" data-expected="18">18 of 18 expected member(s)') == 2
    assert page.count('<span class="members short" data-members="17" data-expected="18">17 of 18 expected') == 2
    assert '<span class="members" data-members="2">2 host(s)</span>' in page
    # the tiles of a section are its members, in order; the last section holds the hosts of no domain
    chunks = page.split('<section class="domain"')[1:]
    assert [len(TILE.findall(chunk)) for chunk in chunks] == [18, 18, 17, 17, 2]
    assert [host for _css, host, _status in TILE.findall(chunks[-1])] == ["rack3-tray05", "rack4-tray17"]
    # the domain's problem is written once among the domains, in its head; its members' tiles point to it (the
    # "What to fix" table above the domains names it once more, with the 18 members that share it)
    assert page.split('<section class="domain"', 1)[1].count(
        "nodes file of rack2-tray03 differs from the expected one") == 1
    assert page.split('<section class="fix">')[1].split("</section>")[0].count(
        "nodes file of rack2-tray03 differs from the expected one") == 1
    rack2 = chunks[1].split('<div class="tiles">')[1]
    assert rack2.count('<li class="fail"><b>imex_domain</b> fail: as the domain above says</li>') == 18
    assert '<a class="validation" href="validation.html">Validation report</a>' in page
    assert ': <span class="fail">NOT READY</span></h1>' in page
    # the grid: the recorded trays all report one chassis serial, so each domain's part of it is a column (18, 18, 17
    # and 17 trays), not one column of 70; the broken node and the HGX, of no rack, form the compact group
    columns = re.findall(r'<div class="rack" data-rack="1823124190518" title="[^"]*">(.*?)</div>', page)
    assert [len(CELL.findall(column)) for column in columns] == [18, 18, 17, 17]
    norack = page.split('<div class="norack"', 1)[1].split("</section>", 1)[0]
    assert CELL.findall(norack) == [("fail", "rack3-tray05"), ("warn", "rack4-tray17")]
    assert_balanced(page)
    assert not re.search(r"src=|url\(|@import|<script|https?://", page)


def test_the_expected_count_comes_from_the_preflight_setting_when_not_given(fleet_facts):
    """One fact in one place: the preflight's settings.imex_domain_members, carried by the report's domains."""
    hostvars = rack_fleet(fleet_facts)
    judged = preflight_report(hostvars, sorted(hostvars), {"imex_domain_members": 18})
    page = preflight_report_html(judged)
    assert page.count('data-members="18" data-expected="18">18 of 18 expected member(s)') == 2
    assert page.count('<span class="members short" data-members="17" data-expected="18">17 of 18 expected') == 2
    # the argument, when given, wins over the report's
    assert page.count("of 20 expected") == 0
    assert preflight_report_html(judged, expected_members=20).count("of 20 expected member(s)") == 4


def test_a_tile_lists_failed_then_warned_checks_only(report):
    page = preflight_report_html(report)
    broken = page.split('id="host-rack3-tray05"')[1].split('<div class="tile')[0]
    names = re.findall(r'<li class="(\w+)"><b>(\w+)</b>', broken)
    assert names == [("fail", "driver"), ("fail", "imex"), ("fail", "rdma_ports"), ("fail", "gpudirect_rdma")]
    assert "failed: driver, imex, rdma_ports, gpudirect_rdma" in broken
    warned = page.split('id="host-rack1-tray00"')[1].split('<div class="tile')[0]
    assert re.findall(r'<li class="(\w+)"><b>(\w+)</b>', warned) == [("warn", "driver_lifecycle")]
    assert "driver branch R570 (production branch) is past its end of life 2026-02-28" in warned
    # without expected_members or a validation page: plain counts and no link
    assert "expected member" not in page and "class=\"validation\"" not in page
    assert page.count('<span class="members" data-members="18">18 member(s)</span>') == 2


def test_failed_checks_come_before_warned_ones():
    checks = [{"name": "numa", "status": "warn", "message": "w"}, {"name": "driver", "status": "fail", "message": "f"},
              {"name": "probe", "status": "pass", "message": "p"}, {"name": "imex", "status": "skip", "message": "s"},
              {"name": "fabric", "status": "fail", "message": "g"}]
    page = preflight_report_html({"summary": {}, "hosts": {"h": {"status": "fail", "checks": checks}}})
    assert re.findall(r'<li class="(\w+)"><b>(\w+)</b>', page) == [
        ("fail", "driver"), ("fail", "fabric"), ("warn", "numa")]


def test_summary_counts(report):
    page = preflight_report_html(report, title="rack row A")
    summary = report["summary"]
    assert "<title>rack row A</title>" in page
    assert f'<p class="counts"><span>72 host(s)</span><span class="pass" data-count="pass">{summary["pass"]} pass' \
        in page
    assert f'<span class="fail" data-count="fail">{summary["fail"]} fail</span>' in page


def test_names_and_messages_are_escaped():
    name = 'x"><script>alert(1)</script>&'
    report = {"summary": {"hosts": 1, "fail": 1, "ready": False},
              "hosts": {name: {"status": "fail", "summary": "failed: <b>",
                               "checks": [{"name": "a<b", "status": "fail", "message": 'm "q" & <i>'}]}},
              "imex_domains": [{"clique": "<c>", "members": [name], "status": "fail", "problems": ["p<"],
                                "notes": ['n"'], "expected_nodes": None}]}
    page = preflight_report_html(report, title="<T>", validation_link='v.html"><script>')
    assert "<script" not in page and "<b>" not in page.replace("<b>a&lt;b</b>", "")
    assert f'data-host="{html.escape(name)}"' in page
    assert "m &quot;q&quot; &amp; &lt;i&gt;" in page
    assert 'href="v.html&quot;&gt;&lt;script&gt;"' in page
    assert "<title>&lt;T&gt;</title>" in page and "IMEX domain &lt;c&gt;" in page
    assert "expected nodes file unknown" in page


def test_credentials_in_messages_are_redacted():
    report = {"summary": {"hosts": 1, "fail": 1, "ready": False},
              "hosts": {"h": {"status": "fail", "summary": "failed: probe", "checks": [
                  {"name": "probe", "status": "fail", "message": "cannot fetch https://user:secret@repo.example/x"}]}}}
    page = preflight_report_html(report)
    assert "secret" not in page and "https://***@repo.example/x" in page


def test_empty_report():
    page = preflight_report_html({"summary": {"hosts": 0, "ready": True}, "hosts": {}, "imex_domains": []})
    assert ': <span class="pass">READY</span></h1>' in page
    assert "<p>No host was judged.</p>" in page and not TILE.search(page) and not SECTION.search(page)


def test_host_with_no_domain_and_unknown_status():
    report = {"summary": {"hosts": 2, "ready": False},
              "hosts": {"plain": {"status": "no_hardware", "summary": "nothing"}, "odd": {"status": "weird"}}}
    page = preflight_report_html(report)
    assert TILE.findall(page) == [("unknown", "odd", "unknown"), ("no_hardware", "plain", "no_hardware")]
    assert "No IMEX domain" in page and "NO HW" in page and "UNKNOWN" in page


@pytest.mark.parametrize(("status", "tiles"), [("pass", 0), ("fail", 1)])
def test_a_host_listed_in_two_domains_is_drawn_once(status, tiles):
    """One cell in the grid, and one tile when it does not pass (a passing host has no detail to link to)."""
    entry = {"status": status, "summary": "ready", "checks": []}
    report = {"summary": {"hosts": 1, "ready": True}, "hosts": {"a": entry},
              "imex_domains": [{"clique": "u.1", "members": ["a", "gone"], "status": status},
                               {"clique": "u.2", "members": ["a"], "status": status}]}
    page = preflight_report_html(report, expected_members=2)
    assert CELL.findall(page) == [(status, "a")]
    assert len(TILE.findall(page)) == tiles
    assert page.count('data-members="2" data-expected="2">2 of 2 expected member(s)') == 1
    assert 'class="members short" data-members="1" data-expected="2"' in page


@pytest.mark.parametrize(("report", "kwargs", "message"), [
    ([], {}, "expected the dict returned by gpufabric.cluster.preflight_report"),
    ({"hosts": {}}, {}, "expected the dict returned by gpufabric.cluster.preflight_report"),
    ({"hosts": [], "summary": {}}, {}, "expected the dict returned by gpufabric.cluster.preflight_report"),
    ({"hosts": {"a": "pass"}, "summary": {}}, {}, "hosts.a: expected a host name and its entry (a mapping), got str"),
    ({"hosts": {}, "summary": {}, "imex_domains": "x"}, {}, "imex_domains must be a list"),
    ({"hosts": {}, "summary": {}, "imex_domains": ["x"]}, {}, "imex_domains entries must be mappings"),
    ({"hosts": {}, "summary": {}}, {"title": 3}, "title must be a string, got a number"),
    ({"hosts": {}, "summary": {}}, {"title": " "}, "title must not be empty"),
    ({"hosts": {}, "summary": {}}, {"validation_link": True}, "validation_link must be a string, got a boolean"),
    ({"hosts": {}, "summary": {}}, {"validation_link": ""}, "validation_link must not be empty"),
    ({"hosts": {}, "summary": {}}, {"expected_members": "18"}, "expected_members must be a number, got '18'"),
    ({"hosts": {}, "summary": {}}, {"expected_members": True}, "expected_members must be a number, got True"),
    ({"hosts": {}, "summary": {}}, {"expected_members": 0}, "expected_members must be greater than 0, got 0"),
    ({"hosts": {}, "summary": {}}, {"expected_members": 2.5}, "expected_members must be a whole number, got 2.5"),
])
def test_bad_input_is_refused_naming_it(report, kwargs, message):
    with pytest.raises(AnsibleFilterError, match=r"^preflight_report_html: ") as caught:
        preflight_report_html(report, **kwargs)
    assert message in str(caught.value)


def test_a_whole_float_counts_as_a_number_of_members():
    page = preflight_report_html({"hosts": {}, "summary": {}, "imex_domains": [
        {"clique": "u.1", "members": [], "status": "pass"}]}, expected_members=18.0)
    assert "0 of 18 expected member(s)" in page


_texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_statuses = st.sampled_from(["pass", "warn", "fail", "skip", "no_hardware", "bogus"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hosts=st.dictionaries(_texts, st.fixed_dictionaries({
    "status": _statuses, "summary": _texts,
    "checks": st.lists(st.fixed_dictionaries({"name": _texts, "status": _statuses, "message": _texts}), max_size=4)}),
    max_size=6), clique=_texts, data=st.data())
def test_any_host_names_and_check_texts_give_one_escaped_cell_per_host_and_a_tile_unless_it_passes(
        hosts, clique, data):
    members = data.draw(st.lists(st.sampled_from(sorted(hosts)), unique=True) if hosts else st.just([]))
    report = {"summary": {"hosts": len(hosts), "ready": False}, "hosts": hosts,
              "imex_domains": [{"clique": clique, "members": members, "status": "fail", "problems": ["<p>"]}]}
    page = preflight_report_html(report)
    cells = CELL.findall(page)
    assert sorted(html.unescape(host) for _status, host in cells) == sorted(hosts)
    tiles = TILE.findall(page)
    assert sorted(html.unescape(host) for _css, host, _status in tiles) == sorted(
        name for name, entry in hosts.items() if entry["status"] != "pass")
    for css, _host, status in tiles:
        assert css == status and status in ("warn", "fail", "no_hardware", "unknown")
    # every link goes to an id on the page, and no two elements share an id
    ids = re.findall(r' id="([^"]*)"', page)
    assert len(ids) == len(set(ids)) and set(re.findall(r'href="#([^"]*)"', page)) <= set(ids)
    # nothing from the input opens an element: every tag on the page is one the renderer writes
    assert set(re.findall(r"<(/?\w+)", page)) <= {
        "html", "/html", "head", "/head", "meta", "title", "/title", "style", "/style", "body", "/body", "h1", "/h1",
        "h2", "/h2", "h3", "/h3", "span", "/span", "p", "/p", "section", "/section", "div", "/div", "ul", "/ul",
        "li", "/li", "b", "/b", "table", "/table", "tr", "/tr", "th", "/th", "td", "/td", "a", "/a", "details",
        "/details", "summary", "/summary"}
    assert_balanced(page)


@settings(max_examples=100, deadline=None)
@given(report=st.one_of(st.none(), st.integers(), _texts, st.lists(_texts), st.dictionaries(
    st.sampled_from(["hosts", "summary", "imex_domains"]),
    st.one_of(st.none(), _texts, st.lists(_texts), st.dictionaries(_texts, st.one_of(_texts, st.none()))))))
def test_any_input_gives_a_page_or_the_documented_error(report):
    try:
        page = preflight_report_html(report)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("preflight_report_html: ")
    else:
        assert page.startswith("<!DOCTYPE html>") and page.endswith("</body></html>\n")


def test_headless_chromium_renders_the_72_host_page(report, tmp_path):
    page = tmp_path / "preflight.html"
    page.write_text(preflight_report_html(report, validation_link="validation.html", expected_members=18),
                    encoding="utf-8")
    rendered = render_headless(page, tmp_path)
    assert rendered.screenshot_bytes > 20_000  # a blank page compresses to a few kB
    tiles = TILE.findall(rendered.dom)
    assert len(tiles) == 72
    statuses = [status for _css, _host, status in tiles]
    assert statuses.count("fail") == report["summary"]["fail"] and statuses.count("pass") == report["summary"]["pass"]
    assert SECTION.findall(rendered.dom) == [(f"{GB200_UUID}.1", "warn"), (f"{GB200_UUID}.2", "fail"),
                                             (f"{GB200_UUID}.3", "fail"), (f"{GB200_UUID}.4", "warn"), ("", "none")]
    assert rendered.dom.count("17 of 18 expected member(s)") == 2 and rendered.dom.count("18 of 18 expected") == 2
    assert 'href="validation.html"' in rendered.dom
    assert rendered.errors == []


# Issue 39 item 10: the validation link is an http(s) link or a path relative to the page; a javascript: link (or a
# data: one, or one a browser reads as such once it drops whitespace) was written into the page.
@pytest.mark.parametrize(("link", "message"), [
    ("javascript:alert(document.cookie)", "validation_link must be an http(s) link or a relative path, not a "
                                          "javascript: link"),
    ("JavaScript:alert(1)", "validation_link must be an http(s) link or a relative path, not a javascript: link"),
    ("data:text/html,<script>alert(1)</script>", "validation_link must be an http(s) link or a relative path, not a "
                                                 "data: link"),
    ("vbscript:msgbox(1)", "validation_link must be an http(s) link or a relative path, not a vbscript: link"),
    ("file:///etc/passwd", "validation_link must be an http(s) link or a relative path, not a file: link"),
    ("java\tscript:alert(1)", "validation_link must be an http(s) link or a relative path without whitespace or "
                              "control characters"),
    ("\x01javascript:alert(1)", "validation_link must be an http(s) link or a relative path without whitespace or "
                                "control characters"),
    (" javascript:alert(1)", "validation_link must be an http(s) link or a relative path without whitespace or "
                             "control characters"),
])
def test_a_link_that_is_not_http_or_relative_is_refused(link, message):
    with pytest.raises(AnsibleFilterError) as caught:
        preflight_report_html({"hosts": {}, "summary": {}}, validation_link=link)
    assert str(caught.value) == f"preflight_report_html: {message}"


@pytest.mark.parametrize("link", ["validation.html", "../run-2/validation.html?tab=nccl#rdma",
                                  "https://reports.example.com/rack-1/validation.html", "http://10.0.0.5/v.html",
                                  "/srv/reports/validation.html"])
def test_an_http_link_or_a_relative_path_is_linked(link):
    page = preflight_report_html({"hosts": {}, "summary": {}}, validation_link=link)
    assert f'<a class="validation" href="{html.escape(link)}">Validation report</a>' in page


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=30)
       | st.builds("".join, st.lists(st.sampled_from(["java", "script", ":", "JAVA", "data", "/", "\t", " ", "\n",
                                                      "http", "s", "//", "a.html", "\x00", "&#58;", "%3A"]),
                                     min_size=1, max_size=6)))
def test_a_linked_address_never_opens_a_scheme_other_than_http(link):
    try:
        page = preflight_report_html({"hosts": {}, "summary": {}}, validation_link=link)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("preflight_report_html: validation_link ")
        return
    href = html.unescape(re.search(r'href="([^"]*)"', page).group(1))
    # what a browser reads: whitespace and control characters dropped, then the scheme before the first ":"
    cleaned = re.sub(r"[\x00-\x20\x7f-\x9f]", "", href)
    scheme = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*):", cleaned)
    assert scheme is None or scheme.group(1).lower() in ("http", "https")
