# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compute_domain_spec, compute_domain_readiness and compute_domain_isolation on the real ComputeDomain CRDs of
../shared (25.12.0, 0.4.1, 0.5.0-dev, HEAD) and on pods laid out as the API server returns them."""

from __future__ import annotations

import copy
import functools
import os

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_isolation import compute_domain_isolation
from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_readiness import compute_domain_readiness
from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_spec import compute_domain_spec

SHARED = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "..", "shared"))
CRD_FILES = {
    "25.12.0": "charts/nvidia-dra-driver-gpu/crds/resource.nvidia.com_computedomains.yaml",
    "0.4.1": "charts/dra-driver-nvidia-gpu-0.4.1/crds/resource.nvidia.com_computedomains.yaml",
    "0.5.0-dev": "charts/dra-driver-nvidia-gpu-0.5.0-dev/crds/resource.nvidia.com_computedomains.yaml",
    "HEAD": "reference/crds/dra-driver-HEAD-resource.nvidia.com_computedomains.yaml",
    "v25.12.0": "reference/crds/dra-driver-v25.12.0-resource.nvidia.com_computedomains.yaml",
}
SPEC_KEYS = {"api_version", "version", "served_versions", "line", "num_nodes", "readiness", "daemon_label",
             "decided_by", "reason"}


@functools.cache
def _read_crd(name: str) -> dict:
    with open(os.path.join(SHARED, CRD_FILES[name]), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _crd(name: str) -> dict:
    """A fresh copy of the CRD (parsed once: the property tests build many)."""
    return copy.deepcopy(_read_crd(name))


def _pod(name: str, node: str | None, ready: bool = True, phase: str = "Running", **extra) -> dict:
    pod = {"metadata": {"name": name, "namespace": "ns"}, "spec": {}, "status": {"phase": phase, "conditions": [
        {"type": "PodScheduled", "status": "True" if node else "False"},
        {"type": "Ready", "status": "True" if ready else "False"}]}}
    if node:
        pod["spec"]["nodeName"] = node
    pod["metadata"].update(extra)
    return pod


@pytest.mark.parametrize("name", ["25.12.0", "v25.12.0"])
def test_real_25_12_crd_keeps_numnodes_and_status(name):
    spec = compute_domain_spec([_crd(name)], 2)
    assert set(spec) == SPEC_KEYS
    assert spec["api_version"] == "resource.nvidia.com/v1beta1"
    assert spec["line"] == "legacy" and spec["num_nodes"] == 2 and spec["readiness"] == "status"
    assert spec["decided_by"] == "crd" and "requires numNodes" in spec["reason"]


@pytest.mark.parametrize("name", ["0.4.1", "0.5.0-dev", "HEAD"])
def test_real_0_4_crds_write_numnodes_zero_and_judge_pods(name):
    spec = compute_domain_spec(_crd(name), 4)
    assert spec["api_version"] == "resource.nvidia.com/v1beta1" and spec["served_versions"] == ["v1beta1"]
    assert spec["line"] == "sigs" and spec["num_nodes"] == 0 and spec["readiness"] == "pods"
    assert spec["daemon_label"] == "resource.nvidia.com/computeDomain"


def test_driver_version_decides_and_must_agree_with_the_crd():
    assert compute_domain_spec(_crd("0.4.1"), 2, "0.4.1")["decided_by"] == "driver_version"
    # A 25.x driver with the newer CRD (numNodes optional) still gets numNodes and the status check.
    assert compute_domain_spec(_crd("0.4.1"), 2, "25.12.0")["num_nodes"] == 2
    with pytest.raises(AnsibleFilterError, match="Helm does not update CRDs"):
        compute_domain_spec(_crd("25.12.0"), 2, "0.4.1")
    with pytest.raises(AnsibleFilterError, match="no DRA driver chart the role knows"):
        compute_domain_spec(_crd("0.4.1"), 2, "0.3.0")
    with pytest.raises(AnsibleFilterError, match="is not a chart version"):
        compute_domain_spec(_crd("0.4.1"), 2, "true")
    with pytest.raises(AnsibleFilterError, match="must be a chart version"):
        compute_domain_spec(_crd("0.4.1"), 2, True)
    assert compute_domain_spec(_crd("0.4.1"), 2, "")["decided_by"] == "crd"


def _several_versions(storage: str | None, served: tuple[str, ...]) -> dict:
    crd = _crd("0.4.1")
    base = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = []
    for name in ("v1alpha1", "v1beta1", "v1", "v2beta1"):
        version = copy.deepcopy(base)
        version.update(name=name, served=name in served, storage=name == storage)
        crd["spec"]["versions"].append(version)
    return crd


def test_crd_serving_several_versions():
    assert compute_domain_spec(_several_versions("v1beta1", ("v1beta1", "v1")), 1)["version"] == "v1beta1"
    # Storage not served (being retired): the served version of highest priority, GA before beta before alpha.
    assert compute_domain_spec(_several_versions("v1alpha1", ("v1beta1", "v1", "v2beta1")), 1)["version"] == "v1"
    assert compute_domain_spec(_several_versions(None, ("v1alpha1", "v2beta1")), 1)["version"] == "v2beta1"
    every = ("v1alpha1", "v1beta1", "v1", "v2beta1")
    assert compute_domain_spec(_several_versions(None, every), 1)["served_versions"] == list(every)
    with pytest.raises(AnsibleFilterError, match="serves no version: v1alpha1, v1beta1, v1, v2beta1"):
        compute_domain_spec(_several_versions("v1", ()), 1)


def test_the_chosen_versions_schema_decides():
    crd = _several_versions("v1", ("v1beta1", "v1"))
    crd["spec"]["versions"][2]["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"] = ["channel", "numNodes"]
    assert compute_domain_spec(crd, 3)["line"] == "legacy"


@pytest.mark.parametrize("crd, message", [
    ([], "the cluster has no ComputeDomain CRD"),
    (None, "the cluster has no ComputeDomain CRD"),
    ("computedomains.resource.nvidia.com", "_input must be a mapping, got a string"),
    ([{}, {}], "expected one computedomains.resource.nvidia.com CRD, got 2"),
    ({"spec": {"group": "resource.nvidia.com", "names": {"kind": "ComputeDomainClique"}}}, "is not the"),
    ({"spec": {"group": "resource.nvidia.com", "names": {"kind": "ComputeDomain"}}}, "has no list of versions"),
    ({"spec": {"group": "resource.nvidia.com", "names": {"kind": "ComputeDomain"},
               "versions": [{"name": "v1beta1", "served": True, "storage": True}]}}, "has no schema of spec"),
    ({"spec": {"group": "resource.nvidia.com", "names": {"kind": "ComputeDomain"},
               "versions": [{"name": "v1beta1", "served": "true", "storage": True}]}}, "serves no version"),
])
def test_bad_crds_are_refused(crd, message):
    with pytest.raises(AnsibleFilterError, match=message):
        compute_domain_spec(crd, 2)


def test_a_version_listed_twice_is_refused():
    crd = _crd("0.4.1")
    crd["spec"]["versions"].append(copy.deepcopy(crd["spec"]["versions"][0]))
    with pytest.raises(AnsibleFilterError, match="lists a version twice"):
        compute_domain_spec(crd, 2)


@pytest.mark.parametrize("nodes", [0, -1, "2", True, 2.0, None])
def test_bad_node_counts_are_refused(nodes):
    with pytest.raises(AnsibleFilterError, match="nodes must be a whole number"):
        compute_domain_spec(_crd("0.4.1"), nodes)


def _containers(inner):
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)


JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8), _containers, max_leaves=12)


@given(crd=JSONISH, nodes=JSONISH, driver_version=JSONISH)
def test_spec_property_any_input_is_a_result_or_a_clear_error(crd, nodes, driver_version):
    try:
        spec = compute_domain_spec(crd, nodes, driver_version)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("compute_domain_spec: ")
    else:  # pragma: no cover - random input is never a ComputeDomain CRD
        assert set(spec) == SPEC_KEYS


@given(nodes=st.integers(min_value=1, max_value=288), storage=st.sampled_from(["v1alpha1", "v1beta1", "v1", None]),
       served=st.sets(st.sampled_from(["v1alpha1", "v1beta1", "v1", "v2beta1"]), min_size=1))
def test_spec_property_writes_a_served_version(nodes, storage, served):
    spec = compute_domain_spec(_several_versions(storage, tuple(served)), nodes)
    assert spec["version"] in served
    assert spec["api_version"] == "resource.nvidia.com/" + spec["version"]
    if storage in served:
        assert spec["version"] == storage
    assert spec["num_nodes"] == 0


# --- readiness -------------------------------------------------------------------------------------------------


def test_ready_when_daemon_and_workload_are_ready_on_every_node():
    daemons = [_pod("nvbandwidth-abc-1", "tray-1"), _pod("nvbandwidth-abc-2", "tray-2")]
    workers = [_pod("nvbandwidth-worker-0", "tray-1"), _pod("nvbandwidth-worker-1", "tray-2")]
    result = compute_domain_readiness(daemons, workers, ["tray-1", "tray-2"])
    assert result == {"ready": True, "daemons_ready": True, "inferred": False, "stray": [],
                      "message": "Ready on tray-1, tray-2",
                      "nodes": [{"name": "tray-1", "daemon": "Ready", "workload": "Ready"},
                                {"name": "tray-2", "daemon": "Ready", "workload": "Ready"}]}


def test_not_ready_names_what_is_missing_by_node():
    daemons = [_pod("d1", "tray-1"), _pod("d2", "tray-2", ready=False),
               _pod("d3", "tray-3", deletionTimestamp="2026-11-24T10:00:00Z")]
    workers = [_pod("w1", "tray-1", ready=False, phase="Pending"), _pod("w9", "tray-9"), _pod("w0", None)]
    result = compute_domain_readiness(daemons, workers, ["tray-1", "tray-2", "tray-3"])
    assert result["ready"] is False and result["daemons_ready"] is False
    assert result["stray"] == ["w9"]
    assert result["message"] == ("IMEX daemon not Ready on tray-2, tray-3; workload pod missing on tray-2, tray-3; "
                                 "workload pod not Ready on tray-1; workload pods on nodes outside the placement: w9")


def test_nothing_at_all_on_the_harness():
    result = compute_domain_readiness([], [], ["gb200-tray-19", "gb200-tray-20"])
    assert result["message"] == ("IMEX daemon missing on gb200-tray-19, gb200-tray-20; "
                                 "workload pod missing on gb200-tray-19, gb200-tray-20")


def test_daemons_ready_but_workload_not():
    result = compute_domain_readiness([_pod("d1", "tray-1")], [_pod("w1", "tray-1", ready=False)], ["tray-1"])
    assert result["daemons_ready"] is True and result["ready"] is False


def test_a_short_job_gone_before_the_poll_is_ready_from_its_launcher():
    """The workers, then the daemons, went when the job ended; the launcher started, so every worker was Ready."""
    result = compute_domain_readiness([], [], ["gb200-tray-01", "gb200-tray-02"], launcher_started=True)
    assert result["ready"] is True and result["inferred"] is True and result["daemons_ready"] is True
    assert result["message"] == (
        "Ready on gb200-tray-01, gb200-tray-02: the MPIJob's launcher started, which the MPI operator does only once"
        " every worker is Ready, and a worker starts only once the domain's IMEX daemon on its node is ready (the"
        " pods as read: IMEX daemon missing on gb200-tray-01, gb200-tray-02; workload pod missing on gb200-tray-01,"
        " gb200-tray-02)")
    assert [row["daemon"] for row in result["nodes"]] == ["missing", "missing"]


def test_pods_ready_are_not_inferred_and_a_stray_pod_is_not_forgiven():
    ready = compute_domain_readiness([_pod("d1", "a")], [_pod("w1", "a")], ["a"], launcher_started=True)
    assert ready["ready"] is True and ready["inferred"] is False and ready["message"] == "Ready on a"
    stray = compute_domain_readiness([], [_pod("w9", "z")], ["a"], launcher_started=True)
    assert stray["ready"] is False and stray["inferred"] is False and stray["stray"] == ["w9"]


@pytest.mark.parametrize("value, expected", [("false", False), ("no", False), (0, False), ("true", True), (1, True)])
def test_launcher_started_converts_as_ansible_does(value, expected):
    assert compute_domain_readiness([], [], ["a"], launcher_started=value)["ready"] is expected


@pytest.mark.parametrize("value", ["maybe", None, [], {"started": True}, 2])
def test_launcher_started_that_is_not_a_boolean_is_refused(value):
    with pytest.raises(AnsibleFilterError, match="compute_domain_readiness: launcher_started must be a boolean"):
        compute_domain_readiness([], [], ["a"], launcher_started=value)


@pytest.mark.parametrize("daemons, workers, nodes, message", [
    ("pods", [], ["a"], "daemon_pods must be a list, got a string"),
    ([], {"items": []}, ["a"], "workload_pods must be a list, got a mapping"),
    ([{"name": "x"}], [], ["a"], r"daemon_pods\[0\] is not a pod"),
    ([], [], [], "nodes must name at least one node"),
    ([], [], "tray-1", "nodes must be a list, got a string"),
    ([], [], ["a", "a"], "nodes names a node twice"),
    ([], [], ["a", ""], r"nodes\[\] must not be empty"),
    ([], [], [True], r"nodes\[\] must be a string, got a boolean"),
])
def test_readiness_bad_input(daemons, workers, nodes, message):
    with pytest.raises(AnsibleFilterError, match=f"compute_domain_readiness: {message}"):
        compute_domain_readiness(daemons, workers, nodes)


POD = st.builds(_pod, name=st.text(alphabet="ab-", min_size=1, max_size=4),
                node=st.none() | st.sampled_from(["a", "b", "c"]),
                ready=st.booleans(), phase=st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "running"]))


@given(daemons=st.lists(POD, max_size=5), workers=st.lists(POD, max_size=5),
       nodes=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3, unique=True),
       started=st.booleans())
def test_readiness_property(daemons, workers, nodes, started):
    result = compute_domain_readiness(daemons, workers, nodes, launcher_started=started)
    seen = compute_domain_readiness(daemons, workers, nodes)
    assert result["ready"] == (seen["ready"] or (started and not seen["stray"]))
    assert result["inferred"] == (result["ready"] and not seen["ready"])
    result = seen
    assert [row["name"] for row in result["nodes"]] == nodes
    for row in result["nodes"]:
        on_node = [pod for pod in daemons if pod["spec"].get("nodeName") == row["name"]]
        assert (row["daemon"] == "missing") == (not on_node)
    assert result["ready"] == (result["daemons_ready"] and not result["stray"]
                               and all(row["workload"] == "Ready" for row in result["nodes"]))
    assert result["ready"] == result["message"].startswith("Ready on ")


@given(daemons=JSONISH, workers=JSONISH, nodes=JSONISH, started=JSONISH)
def test_readiness_property_any_input_is_a_result_or_a_clear_error(daemons, workers, nodes, started):
    try:
        result = compute_domain_readiness(daemons, workers, nodes, started)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("compute_domain_readiness: ")
    else:
        assert isinstance(result["ready"], bool)


# --- isolation -------------------------------------------------------------------------------------------------

PROBES = ["probe-template", "probe-claim"]


def _waiting(name: str, node: str | None) -> dict:
    pod = _pod(name, node, ready=False, phase="Pending")
    if node:
        pod["status"]["containerStatuses"] = [{"name": "probe", "started": False,
                                               "state": {"waiting": {"reason": "ContainerCreating"}}}]
    return pod


def test_isolation_held_when_no_probe_started():
    result = compute_domain_isolation([_waiting("probe-template", None), _waiting("probe-claim", "tray-1")], PROBES)
    assert result == {"status": "held", "admitted": [], "message": "isolation: held", "probes": [
        {"pod": "probe-template", "node": None, "stage": "not scheduled"},
        {"pod": "probe-claim", "node": "tray-1", "stage": "scheduled, not started"}]}


@pytest.mark.parametrize("admitted", [
    _pod("probe-claim", "tray-1"),
    _pod("probe-claim", "tray-1", ready=False, phase="Succeeded"),
    {**_waiting("probe-claim", "tray-1"), "status": {"phase": "Failed", "containerStatuses": [
        {"name": "probe", "state": {"terminated": {"exitCode": 1}}}]}},
    {**_waiting("probe-claim", "tray-1"), "status": {"phase": "Pending", "containerStatuses": [
        {"name": "probe", "started": True, "state": {}}]}},
])
def test_isolation_broken_names_what_got_in(admitted):
    result = compute_domain_isolation([_waiting("probe-template", None), admitted, _pod("other", "tray-2")], PROBES)
    assert result["status"] == "broken"
    assert result["admitted"] == [{"pod": "probe-claim", "node": "tray-1", "stage": "started"}]
    assert result["message"] == "isolation: broken, admitted from the second namespace: probe-claim on tray-1"


def test_isolation_skipped_with_its_reason():
    result = compute_domain_isolation(None, None, "the ComputeDomain never became ready")
    assert result == {"status": "skipped", "admitted": [], "probes": [],
                      "message": "isolation: skipped (the ComputeDomain never became ready)"}
    assert compute_domain_isolation([_waiting("p", None)], ["p"], "")["status"] == "held"


@pytest.mark.parametrize("pods, expected, skipped, message", [
    ([], PROBES, None, "the probe pods probe-template, probe-claim are missing"),
    ([_waiting("probe-claim", None)], PROBES, None, "the probe pods probe-template are missing"),
    ([], [], None, "expected must name the probe pods"),
    ([], "probe-claim", None, "expected must be a list, got a string"),
    ("pods", PROBES, None, "_input must be a list, got a string"),
    ([], PROBES, True, "skipped must be a string, got a boolean"),
    ([], [None], None, r"expected\[\] must be a string, got null"),
    # Found by the exploring profile: a name of blanks only.
    ([], [" "], None, r"expected\[\] must not be empty"),
])
def test_isolation_bad_input(pods, expected, skipped, message):
    with pytest.raises(AnsibleFilterError, match=f"compute_domain_isolation: {message}"):
        compute_domain_isolation(pods, expected, skipped)


@given(pods=st.lists(POD, max_size=5),
       expected=st.lists(st.text(alphabet="ab-", min_size=1, max_size=4), min_size=1, max_size=3))
def test_isolation_property(pods, expected):
    try:
        result = compute_domain_isolation(pods, expected)
    except AnsibleFilterError as exc:
        assert "are missing" in str(exc)
        assert not set(expected) <= {pod["metadata"]["name"] for pod in pods}
    else:
        assert result["status"] in ("held", "broken")
        assert (result["status"] == "broken") == bool(result["admitted"])
        assert {probe["pod"] for probe in result["admitted"]} <= set(expected)


@given(pods=JSONISH, expected=JSONISH, skipped=JSONISH)
def test_isolation_property_any_input_is_a_result_or_a_clear_error(pods, expected, skipped):
    try:
        result = compute_domain_isolation(pods, expected, skipped)
    except AnsibleFilterError as exc:
        assert str(exc).startswith("compute_domain_isolation: ")
    else:
        assert result["status"] in ("held", "broken", "skipped")
