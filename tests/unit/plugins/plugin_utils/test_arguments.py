# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter-argument checkers: booleans as Ansible converts them, types and ranges refused by name."""

from __future__ import annotations

import math

import pytest
from ansible.errors import AnsibleFilterError, AnsibleUndefinedVariable
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError

ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@pytest.mark.parametrize("value", ["false", "False", " no ", "n", "off", "0", 0, False])
def test_false_in_every_form_ansible_knows(value):
    assert arguments.boolean("prune", value) is False


@pytest.mark.parametrize("value", ["true", "Yes", "on", "1", 1, True])
def test_true_in_every_form_ansible_knows(value):
    assert arguments.boolean("prune", value) is True


@pytest.mark.parametrize("value", ["maybe", "", 2, 0.5, None, [], {}])
def test_a_value_that_is_no_boolean_is_refused_by_name(value):
    with pytest.raises(ArgumentError, match=r"^prune must be a boolean .*, got "):
        arguments.boolean("prune", value)


def test_a_string_is_not_a_list():
    with pytest.raises(ArgumentError, match=r"^rails must be a list, got a string$"):
        arguments.sequence("rails", "rail0")
    assert arguments.sequence("rails", ("a", "b")) == ["a", "b"]


def test_a_list_is_not_a_mapping():
    with pytest.raises(ArgumentError, match=r"^domains must be a mapping, got a list$"):
        arguments.mapping("domains", ["a"])


@pytest.mark.parametrize("value", ["40", True, None, math.nan, math.inf])
def test_a_number_must_be_a_finite_number(value):
    with pytest.raises(ArgumentError, match=r"^threshold_gbps must be a number, got "):
        arguments.number("threshold_gbps", value)


@pytest.mark.parametrize("value", [0, -1, -0.5])
def test_thresholds_must_be_greater_than_zero(value):
    with pytest.raises(ArgumentError, match=r"^threshold_gbps must be greater than 0, got "):
        arguments.positive("threshold_gbps", value)


@pytest.mark.parametrize("value", [0, 1.01, -0.1])
def test_fractions_are_in_zero_one(value):
    with pytest.raises(ArgumentError, match=r"^min_fraction must be greater than 0 and at most 1, got "):
        arguments.fraction("min_fraction", value)
    assert arguments.fraction("min_fraction", 1) == 1


def test_empty_text_is_refused_unless_allowed():
    with pytest.raises(ArgumentError, match=r"^gpu_model must not be empty$"):
        arguments.text("gpu_model", "  ")
    assert arguments.text("gpu_model", "", allow_empty=True) == ""


def test_optional_passes_none_through():
    assert arguments.optional(arguments.positive, "threshold_gbps", None) is None
    with pytest.raises(ArgumentError):
        arguments.optional(arguments.positive, "threshold_gbps", 0)


@given(ANY_VALUE)
def test_every_checker_returns_its_type_or_names_the_argument(value):
    checks = {
        arguments.boolean: bool, arguments.mapping: dict, arguments.sequence: list, arguments.text: str,
        arguments.number: (int, float), arguments.positive: (int, float), arguments.fraction: (int, float),
    }
    for checker, expected in checks.items():
        try:
            result = checker("arg", value)
        except ArgumentError as exc:
            assert str(exc).startswith("arg must ")
        else:
            assert isinstance(result, expected)


# Issue 39 item 10: every filter's failure is its AnsibleFilterError naming the argument, never a Python error.

class _LogicError(ValueError):
    """Stands for a logic module's own error class."""


def _nested(levels: int) -> list:
    """A list nested ``levels`` deep, built without recursion."""
    outer: list = []
    inner = outer
    for _level in range(levels - 1):
        inner.append([])
        inner = inner[0]
    return outer


@arguments.filter_errors("demo", _LogicError)
def _demo(data, hosts=None, settings=None):
    """A filter whose logic reads ``data['rows'][0]['size'] + 1`` and repr()s ``settings`` into a message."""
    if settings is not None:
        raise _LogicError(f"settings {settings!r} are not known")
    if hosts is not None:
        arguments.sequence("hosts", hosts)
    return data["rows"][0]["size"] + 1


def _message(call) -> str:
    with pytest.raises(AnsibleFilterError) as caught:
        call()
    return str(caught.value)


def test_the_guard_returns_the_result_and_keeps_the_documentation():
    assert _demo({"rows": [{"size": 1}]}) == 2
    assert _demo.__name__ == "_demo" and "data['rows'][0]" in _demo.__doc__


def test_argument_errors_and_the_logic_s_own_errors_keep_their_message():
    assert _message(lambda: _demo({}, hosts="h1")) == "demo: hosts must be a list, got a string"
    assert _message(lambda: _demo({}, settings={"a": 1})) == "demo: settings {'a': 1} are not known"


@pytest.mark.parametrize(("data", "what"), [
    ({"rows": []}, "a list shorter than the filter needs"),
    ({}, "a mapping without a key the filter needs"),
    ({"rows": [{"size": "1"}]}, "a value of another type than documented"),
    ("rows", "a value of another type than documented"),
])
def test_a_value_of_another_shape_names_the_arguments_given(data, what):
    assert _message(lambda: _demo(data)) == \
        f"demo: _input does not have the shape the filter documents ({what}); see ansible-doc -t filter " \
        "gpufabric.cluster.demo"
    assert _message(lambda: _demo(data, hosts=["h1"])).startswith(
        "demo: one of _input and hosts does not have the shape the filter documents")


def test_nesting_beyond_the_recursion_limit_names_the_argument_nested_too_deeply():
    deep = _nested(50_000)
    assert _message(lambda: _demo({}, ["h1"], deep)) == \
        "demo: settings nests lists and mappings more than 10,000 levels deep, deeper than the filter can read"
    assert _message(lambda: _demo({"rows": [{"size": 1}]}, settings={"x": _nested(3_000)})) == \
        "demo: settings nests lists and mappings 3,001 levels deep, deeper than the filter can read"


def test_an_ansible_error_goes_through_as_it_is():
    @arguments.filter_errors("demo")
    def undefined(_data):
        raise AnsibleUndefinedVariable("'x' is undefined")

    with pytest.raises(AnsibleUndefinedVariable, match=r"^'x' is undefined$"):
        undefined({})


@given(ANY_VALUE, ANY_VALUE)
def test_the_guarded_filter_returns_or_raises_its_filter_error(data, hosts):
    try:
        assert _demo(data, hosts) == data["rows"][0]["size"] + 1
    except AnsibleFilterError as exc:
        assert str(exc).startswith("demo: ") and "Traceback" not in str(exc)


@given(ANY_VALUE)
def test_nesting_depth_counts_the_levels_of_lists_and_mappings(value):
    def depth(item):
        children = list(item.values()) if isinstance(item, dict) else item if isinstance(item, list) else None
        return 0 if children is None else 1 + max(map(depth, children), default=0)

    assert arguments.nesting_depth(value) == depth(value)


def test_nesting_depth_stops_at_its_limit_and_budget():
    assert arguments.nesting_depth(_nested(200), limit=50) == 50
    assert arguments.nesting_depth(_nested(200), budget=10) == 10


@pytest.mark.parametrize("output", [
    "x" * (arguments.MAX_OUTPUT_CHARACTERS + 1),
    b"x" * (arguments.MAX_OUTPUT_CHARACTERS + 1),
    ["x" * (arguments.MAX_OUTPUT_CHARACTERS // 2)] * 2,
])
def test_a_tool_output_over_64_mib_is_refused_naming_the_argument(output):
    with pytest.raises(ArgumentError, match=r"^_input holds more than 67,108,864 characters \(64 MiB\), more than "
                                            r"one run of the tool prints; give the log of the one run to read$"):
        arguments.bounded_output("_input", output)


@pytest.mark.parametrize("output", ["x" * arguments.MAX_OUTPUT_CHARACTERS, ["a", "b"], {"results": []}, None])
def test_a_tool_output_within_the_limit_is_given_back(output):
    assert arguments.bounded_output("_input", output) is output


@pytest.mark.parametrize("value", ["validation.html", "https://r.example/v.html", "HTTP://r.example/", "//r.example/v",
                                   "/srv/reports/v.html", "v.html?a=b:c#d"])
def test_a_link_may_be_http_or_relative(value):
    assert arguments.link("validation_link", value) == value


@pytest.mark.parametrize(("value", "message"), [
    ("javascript:alert(1)", "validation_link must be an http(s) link or a relative path, not a javascript: link"),
    ("mailto:ops@example.com", "validation_link must be an http(s) link or a relative path, not a mailto: link"),
    ("v.html\n", "validation_link must be an http(s) link or a relative path without whitespace or control "
                 "characters"),
    ("http://[::1", "validation_link must be an http(s) link or a relative path, got an address that cannot be read"),
    (3, "validation_link must be a string, got a number"),
])
def test_any_other_link_is_refused_naming_the_argument(value, message):
    with pytest.raises(ArgumentError) as caught:
        arguments.link("validation_link", value)
    assert str(caught.value) == message
