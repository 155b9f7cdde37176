# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bad inputs on the rail record and the host index of ``rdma_network`` (issue 41), as an operator or a host gives them.

The record file (/etc/gpufabric/rdma_network.json) is host text: whatever it holds, the plan keeps the index the record
gives or refuses with one line naming the host and the path, never the file's text, never a traceback.  On the starting
commit a record of brackets nested deeper than Python follows (a few kilobytes, far below the size limit) escaped as a
``RecursionError``; a record whose ``version`` was ``true`` or ``1.0`` was taken as the role's; and an index written in
another script's digits (``"\\u0663"``) was read as 3.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import rail_indices
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_indices import RECORD_FILE, RECORD_LIMIT
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.rail_plan import RailPlanError, derive_rail_plan

RAILS = [{"ipv4": "172.31.0.0/24"}, {"ipv4": "172.31.1.0/24"}]
LABELS = {"host_index": "rdma_network_host_index"}
REMEDY = ("; remove it, and set rdma_network_host_index to the index the host's rail addresses were made with if it "
          "has some")
WHERE = f"host h: {RECORD_FILE} (the record of its rail addresses)"
GOOD = {"version": 1, "host_index": 4, "address_offset": 1, "rails": {"0": {"ipv4": "172.31.0.5/24"}}}


@pytest.fixture(scope="module")
def connectx(host_trees):
    """``ansible_facts['gpufabric']['connectx']`` of the recorded HGX H100, from the real collector."""
    return collect_connectx(host_trees["hgx_h100"])


def hostvars(connectx, content=None, host_index=-1):
    record = ({"path": RECORD_FILE, "exists": False} if content is None else
              {"path": RECORD_FILE, "exists": True, "regular": True, "size": len(content.encode()), "content": content})
    return {"h": {"ansible_facts": {"gpufabric": {"connectx": connectx}},
                  "__rdma_network_input": {"rails": RAILS, "link_layers": ["Ethernet"], "record": record,
                                           "host_index": host_index}}}


def refused(connectx, content=None, host_index=-1):
    with pytest.raises(RailPlanError) as caught:
        derive_rail_plan(hostvars(connectx, content, host_index), ["h"])
    return caught.value.errors


@pytest.mark.parametrize("content", ["[" * 5000, '{"a": ' * 5000, "[" * 30000 + "]" * 30000])
def test_a_record_nested_deeper_than_python_follows_is_one_line_naming_host_and_path(connectx, content):
    assert len(content) <= RECORD_LIMIT
    assert refused(connectx, content) == [f"{WHERE} is nested deeper than a record the role wrote{REMEDY}"]


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_record_version_is_the_number_the_role_writes(connectx, version):
    content = json.dumps(dict(GOOD, version=version))
    assert refused(connectx, content) == [f"{WHERE} is not a record the role wrote: version is not 1{REMEDY}"]


def test_the_role_s_own_record_keeps_its_index(connectx):
    plan = derive_rail_plan(hostvars(connectx, json.dumps(GOOD)), ["h"])
    assert (plan["h"]["host_index"], plan["h"]["host_index_source"], plan["h"]["rails"][0]["ipv4"]) == \
        (4, "record", "172.31.0.5")


@pytest.mark.parametrize(("value", "index"), [("3", 3), (" 3 ", 3), (3.0, 3), ("-1", None), (-1, None), ("", None)])
def test_an_index_as_extra_vars_give_it_is_read_as_documented(connectx, value, index):
    """``-e rdma_network_host_index=3`` is the string "3"; -1, "-1" and empty leave the index to the role."""
    plan = derive_rail_plan(hostvars(connectx, host_index=value), ["h"])
    assert plan["h"]["host_index"] == (0 if index is None else index)
    assert plan["h"]["host_index_source"] == ("allocated" if index is None else "explicit")


@pytest.mark.parametrize(("value", "problem"), [
    ("\u0663", "'\u0663' is not an integer"), ("3.5", "'3.5' is not an integer"), (True, "True is not an integer"),
    ("x", "'x' is not an integer"), (-2, "-2 is below 0 (-1 leaves the index to the role)"),
    ([3], "[3] is not an integer"), (float("nan"), "nan is not an integer"), (float("inf"), "inf is not an integer")])
def test_an_index_that_is_not_0_or_more_is_one_line_naming_host_and_variable(connectx, value, problem):
    assert refused(connectx, host_index=value) == [f"host h: rdma_network_host_index: {problem}"]


def test_a_huge_index_is_refused_naming_host_and_variable(connectx):
    errors = refused(connectx, host_index=10 ** 30)
    assert len(errors) == len(RAILS)  # one line per rail whose subnet cannot hold it
    for number, error in enumerate(errors):
        assert error.startswith(f"host h: rdma_network_rails[{number}].ipv4 ")
        assert "rdma_network_host_index 1000000000000000000000000000000" in error and "\n" not in error


MARKER = "PLANTED-7f3a"
# JSON of any shape, with the marker in keys and values, and text that is not JSON
JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 2 ** 70) | st.floats(allow_nan=False)
                    | st.text(max_size=8).map(lambda text: MARKER + text),
                    lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(st.sampled_from(["version", "host_index", "address_offset", "rails", "0", "1",
                                                       "netdev", "ipv4", "ipv6", MARKER]), children, max_size=5),
                    max_leaves=20)
RECORDS = st.one_of(
    JSON.map(json.dumps),
    st.builds(lambda rails, version, index, offset: json.dumps(
        {"version": version, "host_index": index, "address_offset": offset, "rails": rails}),
        st.dictionaries(st.sampled_from(["0", "1", "x", MARKER]),
                        st.dictionaries(st.sampled_from(["netdev", "ipv4", "ipv6", MARKER]),
                                        st.sampled_from([MARKER, "172.31.0.5/24", "fd00::5/64", "", 3, None]),
                                        max_size=3), max_size=3),
        st.sampled_from([1, 1, True, 1.0, 2, MARKER]), st.sampled_from([0, 4, -1, MARKER, 2.5, None]),
        st.sampled_from([0, 1, -1, MARKER])),
    st.text(max_size=40).map(lambda text: MARKER + text),
    st.integers(1, 20000).map(lambda depth: "[" * depth),
)


@settings(max_examples=300, deadline=None)
@given(content=RECORDS)
def test_property_any_record_is_read_or_refused_in_one_line_without_its_text(content):
    """The reader alone: a record of the role's shape, or one error naming the host and the path, never its text."""
    errors: list[str] = []
    record = {"path": RECORD_FILE, "exists": True, "regular": True, "size": len(content.encode()), "content": content}
    held = rail_indices.parse_record(record, "h", LABELS, errors)
    if held is None:
        assert len(errors) == 1
        assert errors[0].startswith(WHERE + " ") and errors[0].endswith(REMEDY)
        assert MARKER not in errors[0] and "\n" not in errors[0]
    else:
        assert errors == []
        data = json.loads(content)
        assert data["version"] == 1 and not isinstance(data["version"], bool) and isinstance(data["version"], int)
        assert (held.host_index, held.address_offset) == (data["host_index"], data["address_offset"])
        assert held.host_index >= 0
        assert set(held.rails) == {int(key) for key in data["rails"]}
