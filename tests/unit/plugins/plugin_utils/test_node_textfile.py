# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""node_textfile (issue 43 item 5): a host's verdict and fabric counters as a node-exporter textfile.

The text is read back by a parser of the Prometheus text exposition format's rules (metric and label name regexes,
label values quoted with backslash, double quote and line feed escaped, one ``# HELP`` and ``# TYPE`` per family
before its samples, every family once, a final line feed), on a recorded degraded tray's facts and on any facts.
"""

from __future__ import annotations

import copy
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_textfile as tf
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import ArgumentError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report

METRIC = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r"[a-zA-Z_][a-zA-Z0-9_]*"
# A label value: any characters but an unescaped backslash, double quote or line feed.
VALUE = r'(?:[^"\\\n]|\\\\|\\"|\\n)*'
SAMPLE = re.compile(rf'({METRIC})(?:\{{((?:{LABEL}="{VALUE}",?)*)\}})? (-?[0-9]+(?:\.[0-9]+)?)')
PAIR = re.compile(rf'({LABEL})="({VALUE})"')


def unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda match: {"n": "\n"}.get(match.group(1), match.group(1)), value)


def parse(text: str) -> dict[str, dict]:
    """The families of an exposition: ``{name: {help, type, samples: [(labels, value)]}}``; AssertionError on a line
    that breaks the format's rules."""
    assert text == "" or text.endswith("\n")
    families: dict[str, dict] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _space, help_text = line[7:].partition(" ")
            assert re.fullmatch(METRIC, name) and name not in families, line
            assert "\\" not in help_text
            families[name] = current = {"help": help_text, "type": None, "samples": []}
            current["name"] = name
        elif line.startswith("# TYPE "):
            name, _space, kind = line[7:].partition(" ")
            assert current and name == current["name"] and kind == "gauge" and not current["samples"], line
            current["type"] = kind
        else:
            match = SAMPLE.fullmatch(line)
            assert match and current and match.group(1) == current["name"] and current["type"], line
            labels = {key: unescape(value) for key, value in PAIR.findall(match.group(2) or "")}
            assert len(labels) == len(PAIR.findall(match.group(2) or "")), f"a label twice: {line}"
            current["samples"].append((labels, int(match.group(3))))
    return families


def _degraded(fleet_facts):
    facts = copy.deepcopy(fleet_facts["gb200_tray_degraded"])
    report = preflight_report({"tray-7": {"ansible_facts": {"gpufabric": facts,
                                                            "default_ipv4": {"address": "10.114.0.11"}}}}, ["tray-7"])
    return report["hosts"]["tray-7"], facts


def test_a_degraded_tray_gives_its_verdict_checks_and_counters(fleet_facts):
    entry, facts = _degraded(fleet_facts)
    families = parse(tf.textfile(entry, facts))
    assert families["gpufabric_fabric_verdict"]["samples"] == [({}, tf.VERDICT_VALUES[entry["status"]])]
    failing = sum(1 for check in entry["checks"] if check["status"] == "fail")
    warning = sum(1 for check in entry["checks"] if check["status"] == "warn")
    assert families["gpufabric_fabric_checks"]["samples"] == [({"status": "fail"}, failing),
                                                              ({"status": "warn"}, warning)]
    ports = {(port["rdma_device"], str(port["port"]), counter): value
             for port in facts["connectx"]["ports"] for counter, value in port["counters"].items()}
    assert ports and any(ports.values())
    assert {(labels["device"], labels["port"], labels["counter"]): value
            for labels, value in families["gpufabric_port_errors"]["samples"]} == ports
    gpus = facts["gpu"]["gpus"]
    volatile = {str(gpu["index"]): gpu["memory_errors"]["ecc_uncorrected"]["volatile"] for gpu in gpus
                if isinstance(gpu.get("memory_errors", {}).get("ecc_uncorrected", {}).get("volatile"), int)}
    assert volatile
    assert {labels["gpu"]: value for labels, value in families["gpufabric_gpu_ecc_uncorrected"]["samples"]
            if labels["kind"] == "volatile"} == volatile
    for family in families.values():
        assert family["help"] and family["type"] == "gauge"


def test_the_same_facts_give_the_same_file_and_no_timestamp(fleet_facts):
    entry, facts = _degraded(fleet_facts)
    assert tf.textfile(entry, facts) == tf.textfile(copy.deepcopy(entry), copy.deepcopy(facts))
    assert all(len(line.split(" ")) == 2 for line in tf.textfile(entry, facts).splitlines()
               if not line.startswith("#") and "{" not in line)


def test_label_values_are_escaped_and_cut():
    facts = {"connectx": {"ports": [{"rdma_device": 'mlx5_"0\\\nx', "port": 1, "netdev": "n" * 500,
                                     "counters": {"symbol_error": 3}}]}}
    families = parse(tf.textfile({"status": "pass", "checks": []}, facts))
    (labels, value), = families["gpufabric_port_errors"]["samples"]
    assert labels["device"] == 'mlx5_"0\\\nx' and labels["netdev"] == "n" * tf.LABEL_VALUE_MAX and value == 3


def test_check_messages_and_unknown_statuses_are_not_written():
    text = tf.textfile({"status": "no_hardware", "checks": [{"name": "x", "status": "fail",
                                                             "message": "/etc/nvidia-imex/config.cfg line"}]})
    assert text == ""


@pytest.mark.parametrize("entry", [None, [], "pass"])
def test_an_entry_that_is_no_mapping_is_refused_naming_it(entry):
    with pytest.raises(ArgumentError, match=r"^entry must be a mapping"):
        tf.textfile(entry)


ANY = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(-3, 2 ** 65), st.floats(), st.text(max_size=6)),
                   lambda inner: st.one_of(st.lists(inner, max_size=3),
                                           st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8)
PORT = st.fixed_dictionaries({"rdma_device": ANY, "port": ANY, "netdev": ANY, "counters": st.one_of(
    ANY, st.dictionaries(st.sampled_from(["symbol_error", "link_downed", "other"]), ANY, max_size=3))})
GPU = st.fixed_dictionaries({"index": ANY, "pci_address": ANY, "recovery_action": ANY, "memory_errors": st.one_of(
    ANY, st.fixed_dictionaries({"ecc_uncorrected": st.one_of(ANY, st.fixed_dictionaries({"volatile": ANY})),
                                "remapped_rows": st.one_of(ANY, st.fixed_dictionaries({"pending": ANY}))}))})


ENTRY = st.fixed_dictionaries({"status": st.one_of(st.sampled_from(["pass", "warn", "fail"]), ANY), "checks": ANY})
FACTS = st.fixed_dictionaries({"connectx": st.fixed_dictionaries({"ports": st.lists(PORT, max_size=3)}),
                               "gpu": st.fixed_dictionaries({"gpus": st.lists(GPU, max_size=3)})})


@given(entry=st.one_of(ANY, ENTRY), facts=st.one_of(ANY, FACTS))
def test_any_facts_give_a_valid_exposition_or_a_clear_error(entry, facts):
    try:
        text = tf.textfile(entry, facts)
    except (ArgumentError, tf.TextfileError) as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    families = parse(text)
    assert all(value >= 0 for family in families.values() for _labels, value in family["samples"])
