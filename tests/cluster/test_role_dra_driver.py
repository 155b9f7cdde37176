# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.dra_driver checks its prerequisites and installs the real nvidia-dra-driver-gpu chart.

The hosts' facts are the recorded GB200 tray after ``nvidia_imex`` in ``dra`` mode (host service masked).
The harness always serves DRA (resource.k8s.io/v1); Kubernetes without DRA is covered by the
dra_driver_prerequisites filter's unit tests.
"""

from __future__ import annotations

import copy
import time

import pytest
import role_runner
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

RELEASE = "nvidia-dra-driver-gpu"
NAMESPACE = "nvidia-dra-driver-gpu"


@pytest.fixture(scope="module")
def gpu_facts(tmp_path_factory):
    return role_runner.recorded_facts("gb200_tray", tmp_path_factory.mktemp("trees"))


def make_runner(cluster, directory, facts):
    return role_runner.Runner(cluster, directory, dict.fromkeys(cluster.gpu_nodes, facts))


def role_vars(**extra):
    return {
        "dra_driver_hosts": "{{ groups['gpu_nodes'] }}",
        "dra_driver_chart_path": str(role_runner.CHARTS / "nvidia-dra-driver-gpu"),
        "dra_driver_chart_repo_url": "http://127.0.0.1:9/unreachable",
        # No GPU Operator in this module: GPU resources off by intent, ComputeDomains only.
        "dra_driver_gpus": "disabled",
        "dra_driver_wait_timeout": "5m",
        **extra,
    }


@pytest.fixture(scope="module")
def runner(cluster, gpu_facts, tmp_path_factory):
    return make_runner(cluster, tmp_path_factory.mktemp("dra"), role_runner.masked_imex(gpu_facts))


@pytest.fixture(scope="module")
def installed(cluster, runner):
    playbook = runner.role_playbook("dra_driver", role_vars())
    start = time.monotonic()
    first = runner.run(playbook)
    elapsed = time.monotonic() - start
    assert first.rc == 0, first.output
    print(f"\ndra_driver: first install {elapsed:.1f}s")
    yield {"first": first, "playbook": playbook}
    with role_runner.HookCompleter(cluster):  # the charts' post-delete hook Jobs
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m", check=False)


def test_prerequisites_reported_and_release_deployed(cluster, installed):
    output = " ".join(installed["first"].output.split())
    assert "kubernetes | pass | Kubernetes v1.35" in output
    assert "cliques | pass | nvidia.com/gpu.clique present and right on the nodes of 18 GPU hosts" in output
    assert installed["first"].changed > 0
    values = yaml.safe_load(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "yaml").stdout)
    assert values["nvidiaDriverRoot"] == "/"
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}


def test_kubelet_plugin_only_on_gpu_nodes_and_controller_on_control_plane(api_client, cluster, installed):
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    plugin = next(ds for ds in apps.list_namespaced_daemon_set(NAMESPACE).items if "kubelet-plugin" in ds.metadata.name)
    assert plugin.status.number_ready == plugin.status.desired_number_scheduled == len(cluster.gpu_nodes)
    selector = ",".join(f"{k}={v}" for k, v in plugin.spec.selector.match_labels.items())
    assert sorted(p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE, label_selector=selector).items) == \
        sorted(cluster.gpu_nodes)
    controller = next(d for d in apps.list_namespaced_deployment(NAMESPACE).items if "controller" in d.metadata.name)
    assert controller.status.ready_replicas == 1


def test_second_run_and_check_diff_change_nothing(cluster, runner, installed):
    before = cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout
    again = runner.run(installed["playbook"])
    assert again.rc == 0 and again.changed == 0, again.output
    checked = runner.run(installed["playbook"], "--check", "--diff")
    assert checked.rc == 0 and checked.changed == 0, checked.output
    assert cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout == before


def compute_domain(shared_dir, name):
    path = shared_dir / "reference" / "examples" / "dra-driver-nvbandwidth-test-job-1.yaml"
    body = copy.deepcopy(next(d for d in yaml.safe_load_all(path.read_text()) if d and d["kind"] == "ComputeDomain"))
    body["metadata"] = {"name": name}
    body["spec"]["channel"]["resourceClaimTemplate"]["name"] = f"{name}-channel"
    return body


def test_compute_domain_accepted_and_its_claim_template_stays_in_its_namespace(
        api_client, cluster, installed, shared_dir, namespace):
    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    body = compute_domain(shared_dir, "fabric")
    created = custom.create_namespaced_custom_object("resource.nvidia.com", "v1beta1", namespace, "computedomains",
                                                     body)
    assert created["spec"]["channel"]["resourceClaimTemplate"]["name"] == "fabric-channel"
    # The DRA controller (a kwok pod here, no code runs) creates the channel template in the ComputeDomain's
    # namespace; the test puts it there as the controller would.
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "fabric-channel", "namespace": namespace},
                "spec": {"spec": {"devices": {"requests": [{"name": "channel", "exactly": {
                    "deviceClassName": "compute-domain-default-channel.nvidia.com"}}]}}}}
    custom.create_namespaced_custom_object("resource.k8s.io", "v1", namespace, "resourceclaimtemplates", template)
    other = f"{namespace[:50]}-other"
    core.create_namespace({"metadata": {"name": other, "labels": {"gpufabric.cluster/test": "true"}}})
    try:
        for ns in (namespace, other):
            core.create_namespaced_pod(ns, {"metadata": {"name": "worker"}, "spec": {
                "containers": [{"name": "c", "image": "busybox", "resources": {"claims": [{"name": "channel"}]}}],
                "resourceClaims": [{"name": "channel", "resourceClaimTemplateName": "fabric-channel"}]}})

        def claims(ns):
            return custom.list_namespaced_custom_object("resource.k8s.io", "v1", ns, "resourceclaims")["items"]

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not claims(namespace):
            time.sleep(1)
        assert [c["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] for c in claims(namespace)] == \
            ["compute-domain-default-channel.nvidia.com"]
        time.sleep(3)
        assert claims(other) == []
        pod = core.read_namespaced_pod("worker", other)
        assert pod.spec.node_name is None and pod.status.phase == "Pending"
    finally:
        core.delete_namespace(other)


def test_compute_domain_with_wrong_channel_is_rejected(api_client, installed, shared_dir, namespace):
    body = compute_domain(shared_dir, "bad")
    body["spec"]["channel"]["allocationMode"] = "Many"
    with pytest.raises(ApiException) as raised:
        client.CustomObjectsApi(api_client).create_namespaced_custom_object(
            "resource.nvidia.com", "v1beta1", namespace, "computedomains", body)
    assert raised.value.status == 422


@pytest.mark.parametrize(
    ("facts_change", "extra", "message"),
    [
        ("unmasked", {}, "host gb200-tray-01: the host nvidia-imex service is active"),
        ("other-clique", {}, "label nvidia.com/gpu.clique is 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1, its GPUs are in "
                             "clique 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.9"),
        ("old-driver", {}, "driver 560.35.03 is older than 570.158.01 (dra_driver_min_driver_version)"),
        ("masked", {"dra_driver_kubeconfig": "/nonexistent/kubeconfig"},
         "dra_driver_kubeconfig /nonexistent/kubeconfig"),
        ("masked", {"dra_driver_chart_version": "25.99.0"}, "dra_driver_chart_version 25.99.0 does not exist"),
        ("masked", {"dra_driver_gpus": "bogus"}, "dra_driver_gpus"),
        # The site-wide settings reach the role through its defaults (gpufabric.cluster.gpufabric).
        ("masked", {"gpufabric_kubeconfig": "/nonexistent/site-kubeconfig"},
         "dra_driver_kubeconfig /nonexistent/site-kubeconfig"),
        ("masked", {"gpufabric_min_driver_version": "999.0.0"},
         "older than 999.0.0 (dra_driver_min_driver_version)"),
        ("unmasked", {"gpufabric_imex_mode": "host"},
         "gpufabric_imex_mode is host (the host nvidia-imex service runs IMEX) but dra_driver_compute_domains is true"),
    ],
    ids=["imex-not-masked", "clique-label-wrong", "driver-too-old", "wrong-kubeconfig", "version-not-local",
         "bad-gpus-choice", "site-kubeconfig", "site-min-driver-version", "site-imex-mode-host"],
)
def test_bad_input_fails_before_any_change(api_client, cluster, gpu_facts, tmp_path, facts_change, extra, message):
    facts = role_runner.masked_imex(gpu_facts) if facts_change != "unmasked" else gpu_facts
    if facts_change == "other-clique":
        facts = copy.deepcopy(facts)
        facts["gpu"]["cliques"] = ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.9"]
    if facts_change == "old-driver":
        facts = copy.deepcopy(facts)
        facts["gpu"]["driver_version"] = "560.35.03"
    bad = make_runner(cluster, tmp_path, facts)
    result = bad.run(bad.role_playbook("dra_driver", role_vars(dra_driver_namespace="dra-bad-input",
                                                               dra_driver_release_name="dra-bad-input", **extra)))
    assert result.rc != 0
    assert message in " ".join(result.output.split()), result.output
    assert result.changed == 0, result.output
    assert "dra-bad-input" not in [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]
