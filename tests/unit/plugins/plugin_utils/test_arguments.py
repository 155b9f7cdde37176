# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter-argument checkers: booleans as Ansible converts them, types and ranges refused by name."""

from __future__ import annotations

import math

import pytest
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
