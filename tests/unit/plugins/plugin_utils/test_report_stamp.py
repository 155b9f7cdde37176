# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A report's stamp: when, by which release, over which hosts; and the one pattern that hides its time."""

from __future__ import annotations

import datetime
import json
import pathlib
import re

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import report_stamp as stamp
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import preflight_report_html
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_markdown import (
    preflight_markdown,
    site_summary_markdown,
)

ROOT = pathlib.Path(stamp.COLLECTION_ROOT)
AT = datetime.datetime(2026, 11, 28, 18, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
REPORT = {"hosts": {}, "summary": {"ready": True, "hosts": 0}, "imex_domains": []}
SUMMARY = {"result": "pass", "preflight": {"status": {}}, "converged_hosts": [], "excluded_hosts": {},
           "failed_hosts": {}, "reports": {"preflight": "/r/preflight.md"}}


def volatile():
    """The pattern the report tasks pass to write_files (roles/gpufabric/vars/main.yml)."""
    return re.compile(yaml.safe_load((ROOT / "roles/gpufabric/vars/main.yml").read_text())
                      ["__gpufabric_report_volatile"])


def test_the_stamp_names_the_time_in_utc_the_release_and_the_hosts():
    assert stamp.report_stamp("gpu_nodes", "rack-a,localhost", ["/site/inventory"], at=AT, version="1.2.3") == {
        "generated_at": "2026-11-28T17:04:05Z", "generated_by": "gpufabric.cluster 1.2.3",
        "hosts_pattern": "gpu_nodes", "limit": "rack-a,localhost", "inventory": ["/site/inventory"]}


@pytest.mark.parametrize("limit", [None, ""])
def test_no_limit_is_null(limit):
    assert stamp.report_stamp("all", limit, at=AT)["limit"] is None


@pytest.mark.parametrize(("args", "message"), [
    ((None,), "hosts must be a string"),
    (("",), "hosts must not be empty"),
    (("all", 5), "limit must be a string"),
    (("all", None, "/inv"), "inventory must be a list"),
    (("all", None, [None]), "inventory[0] must be a string"),
])
def test_bad_arguments_are_refused_by_name(args, message):
    with pytest.raises(arguments.ArgumentError) as error:
        stamp.report_stamp(*args, at=AT)
    assert str(error.value).startswith(message), str(error.value)


def test_a_time_without_zone_is_refused():
    with pytest.raises(arguments.ArgumentError, match="time zone"):
        stamp.report_stamp("all", at=datetime.datetime(2026, 11, 28))


def test_the_version_of_the_source_tree_and_of_an_installed_collection(tmp_path):
    assert stamp.collection_version() == yaml.safe_load((ROOT / "galaxy.yml").read_text())["version"]
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"collection_info": {"version": "2.0.0"}}))
    assert stamp.collection_version(str(tmp_path)) == "2.0.0"


@pytest.mark.parametrize("manifest", ["", "{", "[]", '{"collection_info": null}',
                                      '{"collection_info": {"version": ""}}'])
def test_an_unreadable_version_reads_unknown_never_an_error(tmp_path, manifest):
    (tmp_path / "MANIFEST.json").write_text(manifest)
    assert stamp.collection_version(str(tmp_path)) == "unknown"


@pytest.mark.parametrize("render", [
    lambda report: json.dumps(report, indent=4, sort_keys=True),
    preflight_markdown,
    preflight_report_html,
], ids=["json", "markdown", "html"])
def test_the_volatile_pattern_hides_exactly_the_time_of_every_preflight_format(render):
    """Two runs an hour apart with the same judgement agree once the pattern has removed the time; a changed
    judgement does not."""
    first = render({**REPORT, **stamp.report_stamp("all", at=AT, version="1")})
    later = render({**REPORT, **stamp.report_stamp("all", at=AT + datetime.timedelta(hours=1), version="1")})
    changed = render({**REPORT, **stamp.report_stamp("gpu_nodes", at=AT, version="1")})
    assert first != later
    assert volatile().sub("", first) == volatile().sub("", later)
    assert volatile().sub("", first) != volatile().sub("", changed)


def test_the_site_summary_says_when_and_over_what():
    text = site_summary_markdown({**SUMMARY, **stamp.report_stamp("all", "hgx,localhost", ["/i"], at=AT, version="1")})
    assert ("Report generated at 2026-11-28T17:04:05Z by gpufabric.cluster 1 for hosts all with --limit "
            "hgx,localhost, inventory /i.") in text


def test_a_report_without_stamp_renders_as_before():
    assert "generated at" not in preflight_markdown(REPORT)
    assert stamp.stamp_line({"generated_at": 5}) == ""


@given(hosts=st.text(min_size=1, max_size=20).filter(str.strip), limit=st.none() | st.text(max_size=20),
       inventory=st.lists(st.text(min_size=1, max_size=20).filter(str.strip), max_size=3))
def test_property_any_stamp_renders_one_line_whose_time_the_pattern_finds(hosts, limit, inventory):
    try:
        made = stamp.report_stamp(hosts, limit, inventory, at=AT, version="1")
    except arguments.ArgumentError:
        return
    line = stamp.stamp_line(made)
    assert volatile().search(line)
    assert volatile().search(json.dumps(made, indent=4))
