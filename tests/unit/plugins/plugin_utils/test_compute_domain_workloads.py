# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""compute_domain_workloads: the ComputeDomain pods on a wave's nodes, from Pods and ResourceClaims as k8s_info
returns them.

The objects have the shapes the real components give them on the cluster harness (tests/cluster/README.md): the
dra-driver-nvidia-gpu 0.4.1 compute-domain controller's channel ResourceClaimTemplate (request ``channel`` of class
``compute-domain-default-channel.nvidia.com``, opaque ``ComputeDomainChannelConfig`` with the domain's UID), the
claims kube-controller-manager makes from it (named in the pod's ``status.resourceClaimStatuses``), and the
allocation the kube-scheduler's DRA allocator writes (``status.allocation.devices.results`` of driver
``compute-domain.nvidia.com``, pool = node, device ``channel-0``; the daemon's ``daemon-0``).
"""

from __future__ import annotations

import copy
import re
import time

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.compute_domain_workloads import compute_domain_workloads
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import compute_domain_workloads as logic

DOMAIN_UID = "5e1f0c3a-7d2b-4f6e-9a8c-1b2d3e4f5a6b"
OTHER_UID = "0a9b8c7d-6e5f-4a3b-2c1d-0e9f8a7b6c5d"
WAVE = ["gb200-tray-01", "gb200-tray-02"]


def channel_config(uid=DOMAIN_UID):
    return {"opaque": {"driver": "compute-domain.nvidia.com",
                       "parameters": {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainChannelConfig",
                                      "domainID": uid}}}


def claim(name, node, namespace="team-a", device_class="compute-domain-default-channel.nvidia.com",
          driver="compute-domain.nvidia.com", device="channel-0", uid=DOMAIN_UID, allocated=True, request="channel"):
    """A ResourceClaim as kube-controller-manager makes it from the channel template, allocated on ``node``."""
    config = [channel_config(uid)] if uid else []
    item = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-claim-{namespace}-{name}"},
            "spec": {"devices": {"requests": [{"name": request, "exactly": {"deviceClassName": device_class,
                                                                            "allocationMode": "ExactCount",
                                                                            "count": 1}}],
                                 "config": [dict(c, requests=[request]) for c in config]}},
            "status": {}}
    if allocated:
        item["status"]["allocation"] = {
            "devices": {"results": [{"request": request, "driver": driver, "pool": node, "device": device}],
                        "config": [dict(c, source="FromClaim", requests=[request]) for c in config]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                                     "values": [node]}]}]}}
    return item


def pod(name, node, claims=(), namespace="team-a", template=True, owner="Job", phase="Running", uid=None):
    """A pod with a claim per ``claims`` entry (from a template, named in resourceClaimStatuses, or by name)."""
    spec_claims, statuses = [], []
    for index, claim_name in enumerate(claims):
        if template:
            spec_claims.append({"name": f"c{index}", "resourceClaimTemplateName": "imex-channel-0"})
            statuses.append({"name": f"c{index}", "resourceClaimName": claim_name})
        else:
            spec_claims.append({"name": f"c{index}", "resourceClaimName": claim_name})
    metadata = {"name": name, "namespace": namespace, "uid": uid or f"uid-{namespace}-{name}"}
    if owner:
        metadata["ownerReferences"] = [{"apiVersion": "v1", "kind": owner, "name": "owner", "uid": "u"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}],
                     "resourceClaims": spec_claims},
            "status": {"phase": phase, "resourceClaimStatuses": statuses}}


PODS = [pod("job-worker-0", "gb200-tray-01", ["job-worker-0-c0-abcde"]),
        pod("job-worker-1", "gb200-tray-02", ["job-worker-1-c0-fghij"]),
        pod("web", "gb200-tray-01"),
        pod("other-rack", "gb200-tray-19", ["other-rack-c0-klmno"], namespace="team-b")]
CLAIMS = [claim("job-worker-0-c0-abcde", "gb200-tray-01"), claim("job-worker-1-c0-fghij", "gb200-tray-02"),
          claim("other-rack-c0-klmno", "gb200-tray-19", namespace="team-b", uid=OTHER_UID)]
DOMAINS = [{"metadata": {"name": "nvbandwidth", "namespace": "team-a", "uid": DOMAIN_UID}}]


def names(result):
    return [f"{item['namespace']}/{item['name']}" for item in result["pods"]]


def test_the_channel_pods_of_the_wave_and_their_domain():
    result = compute_domain_workloads(PODS, CLAIMS, WAVE, DOMAINS)
    assert result["pods"] == [
        {"namespace": "team-a", "name": "job-worker-0", "uid": "uid-team-a-job-worker-0", "node": "gb200-tray-01",
         "workload": "ComputeDomain team-a/nvbandwidth", "stuck": None},
        {"namespace": "team-a", "name": "job-worker-1", "uid": "uid-team-a-job-worker-1", "node": "gb200-tray-02",
         "workload": "ComputeDomain team-a/nvbandwidth", "stuck": None}]
    assert result["workloads"] == [{"name": "ComputeDomain team-a/nvbandwidth", "nodes": WAVE, "outside": [],
                                    "pods": ["team-a/job-worker-0", "team-a/job-worker-1"]}]
    assert result["beyond"] == [] and result["stuck"] == []
    assert result["summary"] == ["ComputeDomain team-a/nvbandwidth: 2 pod(s) on gb200-tray-01, gb200-tray-02 "
                                 "(team-a/job-worker-0, team-a/job-worker-1) leave first, all at once"]


def test_without_the_compute_domains_a_workload_is_named_by_its_uid():
    assert compute_domain_workloads(PODS, CLAIMS, WAVE)["workloads"][0]["name"] == f"ComputeDomain {DOMAIN_UID}"


def test_the_registered_results_themselves_are_taken():
    assert compute_domain_workloads({"resources": PODS}, {"resources": CLAIMS, "api_found": True}, WAVE) == \
        compute_domain_workloads(PODS, CLAIMS, WAVE)


def test_a_workload_that_also_runs_outside_the_wave_is_named():
    pods = [*PODS, pod("job-worker-2", "gb200-tray-03", ["job-worker-2-c0-pqrst"])]
    claims = [*CLAIMS, claim("job-worker-2-c0-pqrst", "gb200-tray-03")]
    result = compute_domain_workloads(pods, claims, WAVE, DOMAINS)
    assert names(result) == ["team-a/job-worker-0", "team-a/job-worker-1"]
    assert result["workloads"][0]["outside"] == ["gb200-tray-03"]
    assert result["beyond"] == ["ComputeDomain team-a/nvbandwidth"]
    assert result["summary"][0].endswith("; it also runs on gb200-tray-03 outside the wave: the workload ends there "
                                         "too")


def test_a_workload_only_outside_the_wave_is_not_listed():
    result = compute_domain_workloads(PODS, CLAIMS, ["gb200-tray-05"])
    assert result == {"pods": [], "workloads": [], "beyond": [], "stuck": [], "summary": []}


@pytest.mark.parametrize("claim_item", [
    claim("c", "gb200-tray-01", driver="gpu.nvidia.com", device="gpu-0", device_class="gpu.nvidia.com", uid=None),
    claim("c", "gb200-tray-01", device="daemon-0", device_class="compute-domain-daemon.nvidia.com"),
    claim("c", "gb200-tray-01", allocated=False),
], ids=["another-driver", "daemon-claim", "not-allocated"])
def test_claims_that_hold_no_channel_are_not_workloads(claim_item):
    assert compute_domain_workloads([pod("p", "gb200-tray-01", ["c"])], [claim_item], WAVE)["pods"] == []


def test_the_allocation_decides_whatever_class_was_asked():
    # a class of the site's own whose selector gives a channel of the driver
    item = claim("c", "gb200-tray-01", device_class="site-imex-channel.example.com")
    assert names(compute_domain_workloads([pod("p", "gb200-tray-01", ["c"])], [item], WAVE)) == ["team-a/p"]


def test_a_daemon_request_of_first_available_is_not_a_channel():
    item = claim("c", "gb200-tray-01", device="daemon-0", request="daemon/any")
    item["spec"]["devices"]["requests"] = [{"name": "daemon", "firstAvailable": [
        {"name": "any", "deviceClassName": "compute-domain-daemon.nvidia.com"}]}]
    assert compute_domain_workloads([pod("p", "gb200-tray-01", ["c"])], [item], WAVE)["pods"] == []


@pytest.mark.parametrize("kind", ["DaemonSet", "mirror", "Succeeded", "Failed", "unbound"])
def test_pods_the_drain_leaves_alone_are_not_taken(kind):
    item = pod("p", "gb200-tray-01", ["c"], owner="DaemonSet" if kind == "DaemonSet" else "Job",
               phase=kind if kind in ("Succeeded", "Failed") else "Running")
    if kind == "mirror":
        item["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    if kind == "unbound":
        del item["spec"]["nodeName"]
    assert compute_domain_workloads([item], [claim("c", "gb200-tray-01")], WAVE)["pods"] == []


def test_a_pending_pod_and_those_a_drain_refuses_are_taken_and_the_refused_named():
    scratch = pod("scratch", "gb200-tray-02", ["e"])
    scratch["spec"]["volumes"] = [{"name": "tmp", "emptyDir": {}}]
    pods = [pod("pending", "gb200-tray-01", ["c"], phase="Pending"), pod("bare", "gb200-tray-02", ["d"], owner=None),
            scratch]
    claims = [claim("c", "gb200-tray-01"), claim("d", "gb200-tray-02"), claim("e", "gb200-tray-02")]
    result = compute_domain_workloads(pods, claims, WAVE)
    assert names(result) == ["team-a/pending", "team-a/bare", "team-a/scratch"]
    assert result["stuck"] == ["team-a/bare (not managed by a controller)", "team-a/scratch (emptyDir data)"]


def test_a_pod_with_several_claims_is_taken_once_under_every_domain_it_holds():
    pods = [pod("p", "gb200-tray-01", ["gpu", "c", "d"])]
    claims = [claim("gpu", "gb200-tray-01", driver="gpu.nvidia.com", device="gpu-0", device_class="gpu.nvidia.com",
                    uid=None),
              claim("c", "gb200-tray-01"), claim("d", "gb200-tray-01", uid=OTHER_UID)]
    result = compute_domain_workloads(pods, claims, WAVE, DOMAINS)
    assert names(result) == ["team-a/p"]
    assert result["workloads"][0]["name"] == f"ComputeDomain {OTHER_UID} + ComputeDomain team-a/nvbandwidth"


def test_a_claim_shared_by_pods_and_named_directly():
    item = claim("shared", "gb200-tray-01", uid=None)
    pods = [pod("a", "gb200-tray-01", ["shared"], template=False), pod("b", "gb200-tray-01", ["shared"],
                                                                       template=False)]
    result = compute_domain_workloads(pods, [item], WAVE)
    assert names(result) == ["team-a/a", "team-a/b"]
    assert result["workloads"] == [{"name": "ResourceClaim team-a/shared", "pods": ["team-a/a", "team-a/b"],
                                    "nodes": ["gb200-tray-01"], "outside": []}]


def test_claims_are_namespaced():
    # a claim of the same name in another namespace is not the pod's
    other = claim("job-worker-0-c0-abcde", "gb200-tray-01", namespace="team-b")
    assert compute_domain_workloads([PODS[0]], [other], WAVE)["pods"] == []


def test_a_pod_or_claim_listed_twice_as_the_same_object_counts_once():
    assert compute_domain_workloads(PODS + PODS, CLAIMS + CLAIMS, WAVE) == compute_domain_workloads(PODS, CLAIMS, WAVE)


@pytest.mark.parametrize(("pods", "claims", "message"), [
    ([PODS[0], pod("job-worker-0", "gb200-tray-02", uid="another")], CLAIMS,
     "pods lists Pod team-a/job-worker-0 twice, as different pods"),
    (PODS, [CLAIMS[0], claim("job-worker-0-c0-abcde", "gb200-tray-01", driver="gpu.nvidia.com")],
     "claims lists ResourceClaim team-a/job-worker-0-c0-abcde twice, differently"),
])
def test_a_duplicate_that_differs_is_refused(pods, claims, message):
    with pytest.raises(AnsibleFilterError, match="^" + re.escape(f"compute_domain_workloads: {message}") + "$"):
        compute_domain_workloads(pods, claims, WAVE)


@pytest.mark.parametrize(("args", "message"), [
    (("pods", CLAIMS, WAVE), "pods must be the resources list of k8s_info for Pods, got a string"),
    ((PODS, None, WAVE), "claims must be the resources list of k8s_info for ResourceClaims, got null"),
    ((PODS, CLAIMS, "gb200-tray-01"), "nodes must be a list, got a string"),
    ((PODS, CLAIMS, [""]), "nodes must be a list of node names, got ['']"),
    ((PODS, CLAIMS, [True]), "nodes must be a list of node names, got [True]"),
    (([{"metadata": {"name": "p"}}], CLAIMS, WAVE), "pods[0] is not a Pod with a name and a namespace"),
    ((PODS, ["claim"], WAVE), "claims[0] is not a ResourceClaim with a name and a namespace"),
    ((PODS, CLAIMS, WAVE, {"resources": "x"}),
     "compute_domains must be the resources list of k8s_info for ComputeDomains, got a string"),
])
def test_wrong_inputs_are_refused_naming_the_argument(args, message):
    with pytest.raises(AnsibleFilterError, match="^" + re.escape(f"compute_domain_workloads: {message}")):
        compute_domain_workloads(*args)


def test_missing_and_mistyped_fields_are_read_as_absent():
    pods = [{"metadata": {"name": "p", "namespace": "n"}},
            {"metadata": {"name": "q", "namespace": "n", "ownerReferences": "Job"}, "spec": "x", "status": []},
            {"metadata": {"name": "r", "namespace": "n"},
             "spec": {"nodeName": "gb200-tray-01", "resourceClaims": [None, {"name": 3}]},
             "status": {"resourceClaimStatuses": [None, {"name": 3, "resourceClaimName": None}]}}]
    claims = [{"metadata": {"name": "c", "namespace": "n"}},
              {"metadata": {"name": "d", "namespace": "n"}, "status": {"allocation": {"devices": {"results": "x"}}}}]
    assert compute_domain_workloads(pods, claims, WAVE)["pods"] == []


def test_empty_inputs():
    assert compute_domain_workloads([], [], []) == {"pods": [], "workloads": [], "beyond": [], "stuck": [],
                                                    "summary": []}


def test_a_large_cluster_is_read_quickly():
    # 18 racks of 18 trays, 30 pods per tray, one 18-pod ComputeDomain job per rack: 9,720 pods
    pods, claims = [], []
    for rack in range(18):
        for tray in range(18):
            node = f"rack{rack:02}-tray{tray:02}"
            pods += [pod(f"web-{node}-{index}", node) for index in range(29)]
            pods.append(pod(f"job-{node}", node, [f"claim-{node}"]))
            claims.append(claim(f"claim-{node}", node, uid=f"uid-rack-{rack}"))
    wave = [f"rack00-tray{tray:02}" for tray in range(18)]
    started = time.process_time()
    result = compute_domain_workloads(pods, claims, wave)
    assert time.process_time() - started < 2.0
    assert len(result["pods"]) == 18 and result["beyond"] == []


def test_the_input_is_not_changed():
    pods, claims = copy.deepcopy(PODS), copy.deepcopy(CLAIMS)
    compute_domain_workloads(pods, claims, WAVE, DOMAINS)
    assert (pods, claims) == (PODS, CLAIMS)


NODES = st.sampled_from(["gb200-tray-01", "gb200-tray-02", "gb200-tray-03"])
ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                   lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                   max_leaves=8)


@st.composite
def pods_and_claims(draw):
    claim_names = [f"c{index}" for index in range(draw(st.integers(0, 4)))]
    claims = [claim(name, draw(NODES), driver=draw(st.sampled_from(["compute-domain.nvidia.com", "gpu.nvidia.com"])),
                    device=draw(st.sampled_from(["channel-0", "daemon-0"])),
                    device_class=draw(st.sampled_from([logic.CHANNEL_CLASS, logic.DAEMON_CLASS])),
                    uid=draw(st.sampled_from([DOMAIN_UID, OTHER_UID, None])), allocated=draw(st.booleans()))
              for name in claim_names]
    pods = [pod(f"p{index}", draw(NODES), draw(st.lists(st.sampled_from(claim_names or ["none"]), max_size=3)),
                template=draw(st.booleans()), owner=draw(st.sampled_from(["Job", "DaemonSet", None])),
                phase=draw(st.sampled_from(["Running", "Pending", "Succeeded"])))
            for index in range(draw(st.integers(0, 5)))]
    return pods, claims


@given(data=pods_and_claims(), wave=st.lists(NODES, unique=True, max_size=3))
def test_property_only_channel_pods_of_the_wave_each_once(data, wave):
    pods, claims = data
    result = compute_domain_workloads(pods, claims, wave)
    chosen = names(result)
    assert len(chosen) == len(set(chosen))
    for item in result["pods"]:
        assert item["node"] in wave
        source = next(p for p in pods if p["metadata"]["name"] == item["name"])
        assert source["metadata"]["ownerReferences"][0]["kind"] != "DaemonSet" if "ownerReferences" in \
            source["metadata"] else True
        held = [c for c in claims if c["metadata"]["name"] in logic.pod_claim_names(source)]
        assert any(logic.channel_claim_domains(c) is not None for c in held)
    assert sorted(p for w in result["workloads"] for p in w["pods"]) == sorted(chosen)
    assert all(not set(w["outside"]) & set(wave) for w in result["workloads"])
    assert len(result["stuck"]) == sum(1 for item in result["pods"] if item["stuck"])


@given(pods=ANY, claims=ANY, nodes=ANY, domains=ANY)
def test_property_any_input_gives_a_result_or_a_clear_error(pods, claims, nodes, domains):
    try:
        result = compute_domain_workloads(pods, claims, nodes, domains)
    except AnsibleFilterError as error:
        assert str(error).startswith("compute_domain_workloads: ")
        assert "Traceback" not in str(error)
    else:
        assert set(result) == {"pods", "workloads", "beyond", "stuck", "summary"}
