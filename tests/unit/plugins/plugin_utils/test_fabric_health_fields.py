# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 41 item 3: the fabric health gate judges every field of the fabric health, not only the first four.

On the starting commit ``fabric_health`` read degraded_bandwidth, route_recovery, route_unhealthy and
access_timeout_recovery only: a tray of another chassis (INCORRECT_CONFIGURATION_INCORRECT_CHASSIS_SN), a tray whose
global fabric manager is disconnected, a GPU at limited capacity, a GPU in no partition, an unhealthy summary all
passed.  The masks here are written from nvml.h's bit layout (shifts 0, 2, 4, 6, 8, 12, 14; 0 is NOT_SUPPORTED),
independently of the probe's decoder, and decoded by it as the probe does.
"""

from __future__ import annotations

import copy

import pytest
from fixtures.recorded_nvml import recorded_facts
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.nvml import decode_health_mask
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fabric_health import check_fabric_health
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report

NEW_TRAYS = ("gb200_tray_misconfigured", "gb200_tray_gfm_down", "gb200_tray_limited", "gb200_tray_no_partition")


def nvml_mask(degraded_bw=2, route_recovery=2, route_unhealthy=2, access_timeout_recovery=2,
              incorrect_configuration=1, partition_assigned=1, gfm_state=1, high=0):
    """nvml.h: DEGRADED_BW bits 0-1, ROUTE_RECOVERY 2-3, ROUTE_UNHEALTHY 4-5, ACCESS_TIMEOUT_RECOVERY 6-7 (TRUE 1,
    FALSE 2), INCORRECT_CONFIGURATION 8-11 (NONE 1 .. GPU_STATE_INVALID 8), PARTITION_ASSIGNED 12-13 (TRUE 1,
    FALSE 2), GFM_STATE 14-15 (CONNECTED 1, DISCONNECTED 2); bits 16-31 undefined."""
    return (degraded_bw + route_recovery * 4 + route_unhealthy * 16 + access_timeout_recovery * 64
            + incorrect_configuration * 256 + partition_assigned * 4096 + gfm_state * 16384 + high * 65536)


@pytest.fixture(scope="module")
def tray_facts(tree_builder, tmp_path_factory, command_runner):
    """``ansible_facts['gpufabric']`` of the trays that show the new health fields, gathered by the real probe."""
    dest = str(tmp_path_factory.mktemp("health-trays"))
    facts = {}
    for name in ("gb200_tray", "hgx_h100", *NEW_TRAYS):
        gathered = recorded_facts(tree_builder.build_tree(name, dest), command_runner)
        gathered.pop("warnings")
        facts[name] = gathered
    return facts


def _with_health(tray_facts, host, index, mask, summary):
    facts = copy.deepcopy(tray_facts[host]["gpu"])
    facts["gpus"][index]["fabric"]["health"] = decode_health_mask(mask, summary)
    return facts


# (mask fields, summary) on GPU 1 of the healthy GB200 tray -> (status, what the message of GPU 1 says)
GB200_CASES = [
    ({}, 1, "pass", None),
    ({"incorrect_configuration": 2}, 1, "fail", "incorrect configuration: incorrect system GUID (INCORRECT_SYSGUID)"),
    ({"incorrect_configuration": 3}, 1, "fail",
     "incorrect configuration: incorrect chassis serial number (INCORRECT_CHASSIS_SN)"),
    ({"incorrect_configuration": 4}, 1, "fail", "incorrect configuration: no partition (NO_PARTITION)"),
    ({"incorrect_configuration": 5}, 1, "fail", "incorrect configuration: insufficient NVLinks (INSUFFICIENT_NVLINKS)"),
    ({"incorrect_configuration": 6}, 1, "fail",
     "incorrect configuration: incompatible GPU firmware (INCOMPATIBLE_GPU_FW)"),
    ({"incorrect_configuration": 7}, 1, "fail", "incorrect configuration: invalid location (INVALID_LOCATION)"),
    ({"incorrect_configuration": 8}, 1, "fail", "incorrect configuration: GPU state invalid (GPU_STATE_INVALID)"),
    ({"incorrect_configuration": 11}, 1, "fail", "incorrect configuration: unknown_11 (a value NVML did not define"),
    ({"incorrect_configuration": 0}, 1, "warn", "fabric health unknown for incorrect_configuration "
                                                "(incorrect_configuration: NVML reports it not supported)"),
    ({"partition_assigned": 2}, 1, "fail", "no partition assigned (PARTITION_ASSIGNED false"),
    ({"partition_assigned": 0}, 1, "warn", "fabric health unknown for partition_assigned"),
    ({"partition_assigned": 3}, 1, "warn", "fabric health unknown for partition_assigned (partition_assigned: "
                                           "value 3 of NVML_GPU_FABRIC_HEALTH_MASK_PARTITION_ASSIGNED is not defined)"),
    ({"gfm_state": 2}, 1, "fail", "global fabric manager disconnected (GFM_STATE DISCONNECTED)"),
    ({"gfm_state": 0}, 1, "warn", "fabric health unknown for gfm_connected"),
    ({"gfm_state": 3}, 1, "warn", "fabric health unknown for gfm_connected"),
    ({}, 2, "fail", "summary unhealthy"),
    ({}, 3, "fail", "summary limited capacity"),
    ({}, 0, "warn", "fabric health unknown for summary (summary: NVML reports it not supported)"),
    ({}, None, "warn", "fabric health unknown for summary (summary: NVML gave no health summary"),
    ({}, 9, "fail", "summary unknown_9 (a value NVML did not define"),
    ({"high": 0x8000}, 1, "warn", "fabric health mask bits 16-31 set (0x80000000)"),
    ({"route_recovery": 1}, 3, "fail", "route recovery in progress, summary limited capacity"),
]


# An HGX H100 (no NVLink domain): the fields only a multi-node fabric has are judged only when NVML reports them.
HGX_CASES = [
    ({"incorrect_configuration": 0, "partition_assigned": 0, "gfm_state": 0}, None, "pass", None),  # driver 570
    ({"incorrect_configuration": 1, "partition_assigned": 2, "gfm_state": 0}, 1, "pass", None),  # no partition: fine
    ({"incorrect_configuration": 0, "partition_assigned": 0, "gfm_state": 0}, 0, "pass", None),
    ({"incorrect_configuration": 3, "partition_assigned": 0, "gfm_state": 0}, 1, "fail",
     "incorrect configuration: incorrect chassis serial number"),
    ({"incorrect_configuration": 0, "partition_assigned": 0, "gfm_state": 2}, None, "fail",
     "global fabric manager disconnected"),
    ({"incorrect_configuration": 0, "partition_assigned": 3, "gfm_state": 0}, None, "warn",
     "fabric health unknown for partition_assigned"),
    ({"incorrect_configuration": 0, "partition_assigned": 0, "gfm_state": 0}, 2, "fail", "summary unhealthy"),
    ({"incorrect_configuration": 0, "partition_assigned": 0, "gfm_state": 0}, 5, "warn",
     "fabric health unknown for summary"),
]


@pytest.mark.parametrize(("tree", "gpu", "fields", "summary", "status", "said"),
                         [("gb200_tray", 1, *case) for case in GB200_CASES]
                         + [("hgx_h100", 4, *case) for case in HGX_CASES])
def test_each_field_of_one_gpu(tray_facts, tree, gpu, fields, summary, status, said):
    """One GPU of the tree reports ``fields`` and ``summary``: the check says ``said`` of that GPU and no other."""
    check = check_fabric_health(_with_health(tray_facts, tree, gpu, nvml_mask(**fields), summary))
    assert check["status"] == status
    if said is None:
        assert check["message"].endswith("fabric health clean")
    else:
        assert check["message"].startswith(f"GPU {gpu}: ")
        assert said in check["message"]
        assert not any(f"GPU {other}" in check["message"] for other in range(8) if other != gpu)


def test_a_gpu_with_a_clique_expects_a_partition_whatever_its_model(tray_facts):
    facts = _with_health(tray_facts, "gb200_tray", 0, nvml_mask(partition_assigned=2), 1)
    for item in facts["gpus"]:
        item["name"] = "NVIDIA Future GPU"
    check = check_fabric_health(facts)
    assert check["status"] == "fail"
    assert "GPU 0: fabric health: no partition assigned" in check["message"]
    facts["gpus"][0]["fabric"]["clique"] = None
    assert check_fabric_health(facts)["status"] == "pass"  # no clique, no multi-node model: no partition expected


@pytest.mark.parametrize(("tray", "expected"), [
    ("gb200_tray_misconfigured", "; ".join(
        f"GPU {index}: fabric health: incorrect configuration: incorrect chassis serial number (INCORRECT_CHASSIS_SN), "
        "summary unhealthy" for index in range(4))),
    ("gb200_tray_gfm_down", "; ".join(
        f"GPU {index}: fabric health: global fabric manager disconnected (GFM_STATE DISCONNECTED), summary unhealthy"
        for index in range(4))),
    ("gb200_tray_limited", "GPU 1: fabric health: route recovery in progress, summary limited capacity"),
    ("gb200_tray_no_partition", "; ".join(
        f"GPU {index}: fabric health: incorrect configuration: no partition (NO_PARTITION), no partition assigned "
        f"(PARTITION_ASSIGNED false on a GPU of an NVLink domain), summary unhealthy; GPU {index}: no clique "
        "(fabric registration is in_progress); a GB200 belongs to a multi-node NVLink domain" for index in range(4))),
])
def test_the_recorded_trays_fail_the_preflight_naming_each_gpu(tray_facts, tray, expected):
    hostvars = {"tray": {"ansible_facts": {"gpufabric": copy.deepcopy(tray_facts[tray]),
                                           "default_ipv4": {"address": "10.114.0.11"}}}}
    report = preflight_report(hostvars, ["tray"])
    checks = {check["name"]: check for check in report["hosts"]["tray"]["checks"]}
    assert checks["fabric_health"] == {"name": "fabric_health", "status": "fail", "message": expected}
    assert report["hosts"]["tray"]["status"] == "fail"
    assert report["summary"]["failed_hosts"] == ["tray"]


TWO_BITS = st.integers(0, 3)
FIELDS = st.fixed_dictionaries({
    "degraded_bw": TWO_BITS, "route_recovery": TWO_BITS, "route_unhealthy": TWO_BITS,
    "access_timeout_recovery": TWO_BITS, "incorrect_configuration": st.integers(0, 15),
    "partition_assigned": TWO_BITS, "gfm_state": TWO_BITS, "high": st.sampled_from([0, 0, 1, 0xFFFF])})


def expected_gb200_status(fields: dict, summary: int | None) -> str:
    """What nvml.h's values mean for a GPU of an NVLink domain, written from the header, not from the gate."""
    four = [fields[key] for key in ("degraded_bw", "route_recovery", "route_unhealthy", "access_timeout_recovery")]
    if (1 in four or fields["incorrect_configuration"] >= 2 or fields["partition_assigned"] == 2
            or fields["gfm_state"] == 2 or (summary is not None and summary >= 2)):
        return "fail"
    clean = (all(value == 2 for value in four) and fields["incorrect_configuration"] == 1
             and fields["partition_assigned"] == 1 and fields["gfm_state"] == 1 and summary == 1 and not fields["high"])
    return "pass" if clean else "warn"


@given(fields=FIELDS, summary=st.none() | st.integers(0, 6), index=st.integers(0, 3))
def test_any_health_of_a_gb200_gpu_gets_the_verdict_nvml_h_gives_it(tray_facts, fields, summary, index):
    check = check_fabric_health(_with_health(tray_facts, "gb200_tray", index, nvml_mask(**fields), summary))
    assert check["status"] == expected_gb200_status(fields, summary)
    if check["status"] != "pass":
        assert check["message"].startswith(f"GPU {index}: ")


SCALAR = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
JUNK = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=8), inner, max_size=4), max_leaves=8)
HEALTH = st.fixed_dictionaries({}, optional=dict.fromkeys(
    ("mask", "degraded_bandwidth", "route_recovery", "route_unhealthy", "access_timeout_recovery",
     "incorrect_configuration", "partition_assigned", "gfm_connected", "summary", "undefined_bits", "reasons"),
    JUNK | st.sampled_from(["none", "unknown_3", "healthy", "unhealthy", "limited_capacity", "incorrect_sysguid"])))


@given(health=HEALTH, host=st.sampled_from(["gb200_tray", "hgx_h100"]))
def test_any_health_facts_give_a_check_and_a_clean_one_only_when_every_field_is(tray_facts, health, host):
    facts = copy.deepcopy(tray_facts[host]["gpu"])
    facts["gpus"][0]["fabric"]["health"] = health
    check = check_fabric_health(facts)
    assert check["status"] in {"pass", "warn", "fail"}
    assert isinstance(check["message"], str) and check["message"]
    if check["status"] == "pass":
        assert all(health.get(key) is False for key in (
            "degraded_bandwidth", "route_recovery", "route_unhealthy", "access_timeout_recovery"))
        assert health.get("incorrect_configuration") in (None, "none")
        assert health.get("summary") in (None, "not_supported", "healthy")
        if host == "gb200_tray":
            assert health.get("incorrect_configuration") == "none" and health.get("summary") == "healthy"
            assert health.get("partition_assigned") is True and health.get("gfm_connected") is True
