# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_prerequisites filter, including Kubernetes without DRA (the harness always has it on)."""

from __future__ import annotations

import copy
import re

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_prerequisites import (
    dra_driver_prerequisites,
)

CLIQUE = "3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"
TRAY = {"gpu": {"driver_loaded": True, "driver_version": "570.172.08", "cliques": [CLIQUE], "count": 4},
        "imex": {"service": {"exists": True, "enabled": False, "active": False, "masked": True}}}
CLUSTER = {"version": "v1.35.4", "apis": ["v1", "resource.k8s.io/v1"],
           "nodes": [{"name": "t1", "labels": {"nvidia.com/gpu.clique": CLIQUE}}], "gpu_operator": {}}


def run(facts=None, cluster=None, settings=None, hostvars_extra=None):
    hostvars = {"t1": {"ansible_facts": {"gpufabric": facts or TRAY}, **(hostvars_extra or {})}}
    return dra_driver_prerequisites(hostvars, ["t1"], cluster or CLUSTER, settings)


def failed(result):
    return {c["name"]: c["message"] for c in result["checks"] if c["status"] == "fail"}


def test_all_met():
    result = run()
    assert result["ok"] and result["problems"] == []
    assert [c["name"] for c in result["checks"]] == ["kubernetes", "driver", "imex", "cliques"]


@pytest.mark.parametrize(("cluster", "message"), [
    ({"version": "v1.35.4", "apis": ["v1"]}, "Kubernetes v1.35.4 serves no resource.k8s.io API: Dynamic Resource "
                                             "Allocation is off"),
    ({"version": "v1.31.0", "apis": ["resource.k8s.io/v1beta1"]}, "older than 1.32.0"),
])
def test_kubernetes_without_dra_fails(cluster, message):
    assert message in failed(run(cluster=CLUSTER | cluster))["kubernetes"]


def test_older_kubernetes_with_the_gates_passes():
    result = run(cluster=CLUSTER | {"version": "v1.33.5", "apis": ["resource.k8s.io/v1beta1"]})
    assert result["ok"] and "through the feature gates" in result["checks"][0]["message"]


def test_driver_imex_and_clique_problems_name_the_host():
    facts = copy.deepcopy(TRAY)
    facts["gpu"]["driver_version"] = "565.57.01"
    facts["imex"]["service"].update(masked=False, active=True)
    nodes = CLUSTER | {"nodes": [{"name": "t1", "labels": {}}]}
    problems = failed(run(facts, nodes))
    assert problems["driver"] == "host t1: driver 565.57.01 is older than 570.158.01 (dra_driver_min_driver_version)"
    assert problems["imex"].startswith("host t1: the host nvidia-imex service is active")
    assert problems["cliques"] == ("node t1 (host t1): label nvidia.com/gpu.clique is missing, "
                                   f"its GPUs are in clique {CLIQUE}; the nodes are labelled by another source: no "
                                   "GPU Feature Discovery runs and the DRA driver chart does not label (0.5 or later "
                                   "does)")


def test_node_name_variable_and_operator_driver():
    facts = copy.deepcopy(TRAY)
    facts["gpu"].update(driver_loaded=False, driver_version=None)
    cluster = CLUSTER | {"nodes": [{"name": "node-a", "labels": {"nvidia.com/gpu.clique": CLIQUE}}],
                         "gpu_operator": {"driver_enabled": True, "driver_version": "580.95.05"}}
    assert run(facts, cluster, hostvars_extra={"dra_driver_node_name": "node-a"})["ok"]
    assert "no Kubernetes node t1" in failed(run(facts, cluster))["cliques"]


@pytest.mark.parametrize(("plan", "problem"), [
    ({"action": "install", "branch": "580", "version": ""}, None),
    ({"action": "install", "branch": "570", "version": "570.195.03"}, None),
    ({"action": "install", "branch": "570", "version": "570.124.06"},
     "host t1 (the driver nvidia_driver installs in this run): driver 570.124.06 is older than 570.158.01 "
     "(dra_driver_min_driver_version)"),
    ({"action": "install", "branch": "570", "version": ""},
     "host t1 (the driver nvidia_driver installs in this run): branch 570 may install a driver older than 570.158.01 "
     "(dra_driver_min_driver_version): pin nvidia_driver_package_version, or choose a newer nvidia_driver_branch"),
    ({"action": "install", "branch": "latest", "version": ""}, "branch latest may install a driver older than"),
])
def test_check_mode_judges_the_driver_this_run_installs(plan, problem):
    """Issue 45 item 2: `--check` of a site run on hosts whose driver is installed or upgraded in that run judges the
    cluster roles against that driver, not the one the facts show from before the run (none, or an older one)."""
    facts = copy.deepcopy(TRAY)
    facts["gpu"].update(driver_loaded=False, driver_version=None)
    checked = run(facts, CLUSTER | {"check_mode": True}, hostvars_extra={"nvidia_driver_plan": plan})
    if problem is None:
        assert checked["ok"], checked["problems"]
    else:
        assert problem in failed(checked)["driver"]
    # without check mode the facts are the truth: no driver loaded
    assert failed(run(facts, CLUSTER, hostvars_extra={"nvidia_driver_plan": plan}))["driver"] == (
        "host t1 has no NVIDIA driver loaded and the GPU Operator does not install one")


@pytest.mark.parametrize("plan", [{"action": "present", "branch": "580", "version": ""}, None, "install", []])
def test_check_mode_reads_the_facts_where_no_driver_is_installed_in_this_run(plan):
    facts = copy.deepcopy(TRAY)
    facts["gpu"]["driver_version"] = "565.57.01"
    checked = run(facts, CLUSTER | {"check_mode": "true"}, hostvars_extra={"nvidia_driver_plan": plan})
    assert failed(checked)["driver"] == ("host t1: driver 565.57.01 is older than 570.158.01 "
                                         "(dra_driver_min_driver_version)")


def test_check_mode_must_be_a_boolean():
    with pytest.raises(AnsibleFilterError, match=r"cluster\.check_mode"):
        run(cluster=CLUSTER | {"check_mode": "perhaps"})


def test_without_compute_domains_imex_and_cliques_are_not_checked():
    facts = copy.deepcopy(TRAY)
    facts["imex"]["service"]["masked"] = False
    assert run(facts, settings={"compute_domains": False})["ok"]


def test_bad_arguments():
    with pytest.raises(AnsibleFilterError, match="unknown setting"):
        run(settings={"colour": 1})
    with pytest.raises(AnsibleFilterError, match=r"no ansible_facts\['gpufabric'\] for t1"):
        dra_driver_prerequisites({"t1": {}}, ["t1"], CLUSTER)


# dra_host_managed: the host service runs IMEX and must be READY on the socket the DRA driver is given.
SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"
HOST_MANAGED = {"imex_mode": "dra_host_managed", "imex_socket_path": SOCKET}


def ready_tray(**control):
    facts = copy.deepcopy(TRAY)
    facts["imex"] = {"service": {"exists": True, "enabled": True, "active": True, "masked": False},
                     "control": {"enabled": True, "socket_path": SOCKET, "ready": True, "status": "READY",
                                 "reason": None, **control}}
    return facts


def run_hosts(hosts, settings=None, cluster=None):
    hostvars = {name: {"ansible_facts": {"gpufabric": facts}} for name, facts in hosts.items()}
    nodes = [{"name": name, "labels": {"nvidia.com/gpu.clique": CLIQUE}} for name in hosts]
    return dra_driver_prerequisites(hostvars, list(hosts), cluster or CLUSTER | {"nodes": nodes}, settings)


def test_host_managed_all_ready():
    result = run(ready_tray(), settings=HOST_MANAGED)
    assert result["ok"], result
    assert result["checks"][2] == {"name": "imex", "status": "pass",
                                   "message": f"host nvidia-imex active and READY on {SOCKET} on every GPU host (1)"}


def test_host_managed_refuses_the_masked_service_of_dra_mode():
    assert failed(run(settings=HOST_MANAGED))["imex"] == (
        "host t1: the host nvidia-imex service is masked; dra_host_managed needs it running "
        "(gpufabric.cluster.nvidia_imex with nvidia_imex_mode=dra_host_managed)")


def test_dra_mode_refuses_the_running_service_of_host_managed_mode():
    message = failed(run(ready_tray()))["imex"]
    assert message.startswith("host t1: the host nvidia-imex service is active; the DRA driver runs IMEX, mask it")


def test_mixed_hosts_name_only_the_tray_that_is_not_ready():
    hosts = {"t1": ready_tray(), "t2": ready_tray(ready=False, status="UNAVAILABLE", reason="peers not connected"),
             "t3": ready_tray(ready="true"), "t4": ready_tray(ready=None, status=None)}
    message = failed(run_hosts(hosts, HOST_MANAGED))["imex"]
    assert message == (f"host t2: host IMEX is not READY on {SOCKET} (nvidia-imex-ctl -q: UNAVAILABLE; peers not "
                       f"connected); host t4: host IMEX is not READY on {SOCKET} (nvidia-imex-ctl -q: no answer)")


@pytest.mark.parametrize(("change", "message"), [
    ({"socket_path": "/run/imex.sock"}, "host t1: the host nvidia-imex control socket is /run/imex.sock, but the DRA "
                                        f"driver is given {SOCKET} (dra_driver_imex_socket_path"),
    ({"socket_path": None}, "control socket is not set, but the DRA driver is given"),
    ({"enabled": False}, "host t1: the host nvidia-imex control socket is off (IMEX_CMD_ENABLED)"),
    ({"enabled": "false"}, "host t1: the host nvidia-imex control socket is off (IMEX_CMD_ENABLED)"),
    ({"enabled": None}, "control socket is off"),
    ({"ready": "false", "status": "NOT READY"}, "host IMEX is not READY on /etc/nvidia-imex/imex_ctrl.sock "
                                                "(nvidia-imex-ctl -q: NOT READY)"),
    ({"ready": 0}, "host IMEX is not READY"),
])
def test_host_managed_control_problems(change, message):
    assert message in failed(run(ready_tray(**change), settings=HOST_MANAGED))["imex"]


@pytest.mark.parametrize(("socket", "message"), [
    ("/tmp/imex.sock", "dra_driver_imex_socket_path '/tmp/imex.sock' lies under /tmp, which every local user may "
                       "write"),
    ("/var/tmp/nvidia-imex/ctl.sock", "dra_driver_imex_socket_path '/var/tmp/nvidia-imex/ctl.sock' lies under "
                                      "/var/tmp, which every local user may write"),
    ("/etc/nvidia-imex/../imex.sock", "dra_driver_imex_socket_path must be the absolute path of the IMEX control "
                                      "socket in its normal form, got '/etc/nvidia-imex/../imex.sock'"),
])
def test_host_managed_socket_setting_another_user_could_take_fails_even_when_the_hosts_use_it(socket, message):
    """Issue 39 item 9: hosts READY on a socket under /tmp passed."""
    result = run(ready_tray(socket_path=socket), settings={**HOST_MANAGED, "imex_socket_path": socket})
    assert result["ok"] is False
    assert failed(result)["imex"].startswith(message)


def test_host_managed_socket_setting_must_match_the_hosts():
    assert run(ready_tray(socket_path="/run/imex.sock"),
               settings={**HOST_MANAGED, "imex_socket_path": "/run/imex.sock"})["ok"]


@pytest.mark.parametrize(("service", "message"), [
    ({"exists": False}, "host t1: no host nvidia-imex service; dra_host_managed needs it installed and running"),
    ({"active": False}, "host t1: the host nvidia-imex service is not active"),
    ({"active": "false"}, "host t1: the host nvidia-imex service is not active"),
    ({"masked": "yes", "active": False}, "host t1: the host nvidia-imex service is masked"),
])
def test_host_managed_service_problems(service, message):
    facts = ready_tray()
    facts["imex"]["service"].update(service)
    assert failed(run(facts, settings=HOST_MANAGED))["imex"].startswith(message)


def test_host_managed_without_control_facts():
    facts = ready_tray()
    del facts["imex"]["control"]
    assert "its facts report no IMEX control socket (imex.control)" in failed(run(facts, settings=HOST_MANAGED))["imex"]
    del facts["imex"]
    assert "no host nvidia-imex service" in failed(run(facts, settings=HOST_MANAGED))["imex"]


@pytest.mark.parametrize(("imex", "message"), [
    (["READY"], "host t1: its imex facts must be a mapping, got list"),
    ({"service": "active"}, "host t1: its imex.service facts must be a mapping, got str"),
    ({"service": {"exists": True, "active": True}, "control": [True]},
     "host t1: its imex.control facts must be a mapping, got list"),
    ({"service": {"exists": True, "active": True}, "control": {"enabled": True, "socket_path": 5}},
     "host t1: imex.control.socket_path must be a string or null, got int"),
    ({"service": {"exists": True, "active": True}, "control": {"enabled": True, "socket_path": SOCKET,
                                                               "ready": "maybe"}},
     "host t1: imex.control.ready must be a boolean"),
    ({"service": {"exists": "perhaps"}}, "host t1: imex.service.exists must be a boolean"),
])
def test_host_managed_wrong_fact_types(imex, message):
    facts = copy.deepcopy(TRAY)
    facts["imex"] = imex
    with pytest.raises(AnsibleFilterError, match=f"^dra_driver_prerequisites: {re.escape(message)}"):
        run(facts, settings=HOST_MANAGED)


def test_dra_mode_reads_string_booleans():
    facts = copy.deepcopy(TRAY)
    facts["imex"]["service"].update(masked="false", active="true")
    assert failed(run(facts))["imex"].startswith("host t1: the host nvidia-imex service is active")
    facts["imex"]["service"].update(masked="true", active="false")
    assert run(facts)["ok"]


@pytest.mark.parametrize(("settings", "message"), [
    ({"imex_mode": "hostmanaged"}, "dra_driver_imex_mode must be one of host, dra, dra_host_managed"),
    ({"imex_mode": ["dra"]}, "dra_driver_imex_mode must be a string"),
    ({"chart_version": "latest"}, "dra_driver_chart_version 'latest' is not a chart version"),
])
def test_bad_settings(settings, message):
    with pytest.raises(AnsibleFilterError, match=re.escape(message)):
        run(settings=settings)


def test_without_compute_domains_host_managed_is_not_checked():
    assert run(settings={**HOST_MANAGED, "compute_domains": "false"})["ok"]


# Which source labels the nodes with nvidia.com/gpu.clique.
UNLABELLED = CLUSTER | {"nodes": [{"name": "t1", "labels": {}}]}
DRIVER_LABELS = "labelled by the DRA driver (gpuCliqueLabelEnabled), no GPU Feature Discovery runs"
OTHER_LABELS = ("labelled by another source: no GPU Feature Discovery runs and the DRA driver chart does not label "
                "(0.5 or later does)")


@pytest.mark.parametrize(("operator", "version", "source"), [
    ({"driver_enabled": False}, "0.5.0-dev", "labelled by GPU Feature Discovery"),
    ({"driver_enabled": False, "gfd": "true"}, "0.4.1", "labelled by GPU Feature Discovery"),
    ({}, "0.5.0-dev", DRIVER_LABELS),
    ({"driver_enabled": False, "gfd": False}, "0.5.0", DRIVER_LABELS),
    ({}, "0.4.1", OTHER_LABELS),
    ({}, "", OTHER_LABELS),
])
def test_clique_source_is_named(operator, version, source):
    result = run(cluster=CLUSTER | {"gpu_operator": operator}, settings={"chart_version": version})
    assert result["ok"]
    assert result["checks"][3]["message"] == (f"nvidia.com/gpu.clique present and right on the nodes of 1 GPU hosts "
                                              f"({source})")


def test_the_dra_driver_labels_the_missing_label():
    result = run(cluster=UNLABELLED, settings={"chart_version": "0.5.0-dev"})
    assert result["ok"]
    assert result["checks"][3]["message"].startswith("nvidia.com/gpu.clique present and right on the nodes of 0 GPU "
                                                     "hosts, set by the DRA driver on the nodes of 1 more")
    # a label another source set wrongly is still refused
    wrong = CLUSTER | {"nodes": [{"name": "t1", "labels": {"nvidia.com/gpu.clique": "x.1"}}]}
    assert "label nvidia.com/gpu.clique is x.1" in failed(run(cluster=wrong, settings={"chart_version": "0.5.0-dev"}))[
        "cliques"]


@pytest.mark.parametrize(("operator", "version", "source"), [
    ({"driver_enabled": False}, "0.5.0-dev", "labelled by GPU Feature Discovery"),
    ({}, "0.4.1", OTHER_LABELS),
])
def test_missing_label_names_the_source(operator, version, source):
    message = failed(run(cluster=UNLABELLED | {"gpu_operator": operator}, settings={"chart_version": version}))
    assert message["cliques"] == (f"node t1 (host t1): label nvidia.com/gpu.clique is missing, its GPUs are in clique "
                                  f"{CLIQUE}; the nodes are {source}")


STATES = ["masked", "inactive", "ready", "not_ready", "other_socket", "control_off", "no_control", "string_ready"]


@settings(max_examples=200, deadline=None)
@given(hosts=st.lists(st.sampled_from(STATES), min_size=1, max_size=6))
def test_property_host_managed_names_exactly_the_hosts_not_ready(hosts):
    """In dra_host_managed the imex check passes exactly when every host is active and READY on the socket."""
    states = {f"t{i}": state for i, state in enumerate(hosts)}
    facts = {}
    for name, state in states.items():
        tray = ready_tray(ready="true" if state == "string_ready" else True)
        service, control = tray["imex"]["service"], tray["imex"]["control"]
        if state == "masked":
            service.update(masked=True, active=False)
        elif state == "inactive":
            service.update(active="false")
        elif state == "not_ready":
            control.update(ready="false", status="NOT_READY")
        elif state == "other_socket":
            control.update(socket_path="/other.sock")
        elif state == "control_off":
            control.update(enabled=False)
        elif state == "no_control":
            del tray["imex"]["control"]
        facts[name] = tray
    result = run_hosts(facts, HOST_MANAGED)
    bad = sorted(name for name, state in states.items() if state not in ("ready", "string_ready"))
    imex = next(c for c in result["checks"] if c["name"] == "imex")
    assert (imex["status"] == "pass") == (not bad)
    if bad:
        named = sorted(part.split(":")[0].removeprefix("host ") for part in imex["message"].split("; host ")
                       if part)
        assert named == bad, imex["message"]
