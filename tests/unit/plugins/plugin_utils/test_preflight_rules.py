# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's rules read once, by the preflight and by the settings check (plugin_utils/preflight_rules.py).

On the starting commit settings.py imported the preflight inside two functions (the preflight imports settings.py)
and took the preflight's error text apart (``rpartition(", got ")``, a prefix cut by its length) to name the variable
and hide long values. Now both call one reader that takes the defaults and the prefix from its caller.
"""

from __future__ import annotations

import ast
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import preflight_rules, settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import PreflightError, preflight_report

PLUGIN_UTILS = os.path.join(os.path.dirname(settings.__file__))
VARIABLE = "gpufabric_preflight_settings"
DEFAULTS = settings.suboption_defaults(settings.SITE_ROLE, VARIABLE)
MINIMUM = settings.option(settings.SITE_ROLE, preflight_rules.MINIMUM_DRIVER_SETTING)["default"]


def _imports(name: str) -> list[tuple[str, bool]]:
    """(module imported, whether at the top level) of every import in plugin_utils/``name``.py."""
    with open(os.path.join(PLUGIN_UTILS, f"{name}.py"), encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    top = {id(node) for node in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [(f"{node.module}.{alias.name}", id(node) in top) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
    return found


def test_the_settings_check_imports_the_rule_reader_at_its_top_and_never_the_preflight():
    imports = _imports("settings")
    assert all(top for _name, top in imports), imports
    assert not any(name.endswith(".preflight") for name, _top in imports)
    assert any(name.endswith(".preflight_rules") for name, _top in imports)


def test_the_rule_reader_imports_neither_of_its_callers():
    assert not any(name.rsplit(".", 1)[-1] in ("settings", "preflight") for name, _top in _imports("preflight_rules"))


@pytest.mark.parametrize("rules", [
    {"imex_domain_members": "18"}, {"imex_domain_members": 0}, {"rdma_mtu": {"Ethernet": -1}},
    {"rdma_min_rate_gbps": "400"}, {"min_driver_version": "latest"},
    {"imex_domain_members": " " * 200 + "18"},
])
def test_the_preflight_and_the_settings_check_refuse_with_one_line(rules):
    with pytest.raises(PreflightError) as caught:
        preflight_report({}, [], rules)
    (line,) = settings.settings_problems({"h": {VARIABLE: rules}}, ["h"], ["gpufabric"])
    assert line == f"host h: {str(caught.value).replace('settings.', f'{VARIABLE}.', 1)}"


def test_a_long_minimum_driver_is_not_quoted_by_the_preflight_either():
    value = "x" * 500
    with pytest.raises(PreflightError) as caught:
        preflight_report({}, [], {}, value)
    assert value not in str(caught.value)
    assert str(caught.value).endswith("got a value too long to show")


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(10 ** 40), 10 ** 40), st.floats(allow_nan=True),
                    st.text(max_size=300))
RULES = st.dictionaries(st.sampled_from([*sorted(DEFAULTS), "imex_domain_member", "rdma_mtus"]),
                        st.one_of(SCALARS, st.dictionaries(st.text(max_size=20), SCALARS, max_size=3),
                                  st.lists(SCALARS, max_size=3)), max_size=4)


@given(rules=st.one_of(RULES, SCALARS))
def test_any_rules_are_read_or_refused_in_one_line_naming_the_rule(rules):
    try:
        merged = preflight_rules.read_rules(rules, DEFAULTS, MINIMUM, prefix=f"{VARIABLE}.")
    except preflight_rules.RuleError as exc:
        message = str(exc)
        assert "\n" not in message
        assert message.startswith((VARIABLE, "unknown setting(s)", preflight_rules.MINIMUM_DRIVER_SETTING)), message
        for value in (rules.values() if isinstance(rules, dict) else [rules]):
            if len(repr(value)) > preflight_rules.SHOWN_TEXT:
                assert repr(value) not in message
        return
    assert set(merged) == set(DEFAULTS)
    assert isinstance(merged["min_driver_version"], str) and merged["min_driver_version"]
    assert merged["imex_domain_members"] is None or merged["imex_domain_members"] >= 1
    assert isinstance(merged["rdma_require_active"], bool)
