# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.gpu_operator installs the real gpu-operator chart (../shared/charts) on the harness.

The GPU Operator's node agents are DaemonSets its operator creates at run time from the ClusterPolicy; under
kwok no operator code runs, so the test asserts what the chart renders from our values: the ClusterPolicy
(the agents' specification), the operator Deployment and NFD.
"""

from __future__ import annotations

import time

import pytest
import role_runner
import yaml
from kubernetes import client

RELEASE = "gpu-operator"
NAMESPACE = "gpu-operator"
SECRET_PASSWORD = "s3cr3t-never-logged-7f1c"


@pytest.fixture(scope="module")
def gpu_facts(tmp_path_factory):
    directory = tmp_path_factory.mktemp("trees")
    return role_runner.recorded_facts("gb200_tray", directory)


@pytest.fixture(scope="module")
def runner(cluster, gpu_facts, tmp_path_factory):
    return role_runner.Runner(cluster, tmp_path_factory.mktemp("gpu-operator"),
                              dict.fromkeys(cluster.gpu_nodes, gpu_facts))


def chart_vars(cluster, **extra):
    chart = role_runner.CHARTS / "gpu-operator"
    version = yaml.safe_load((chart / "Chart.yaml").read_text())["version"]
    return {
        "gpu_operator_hosts": "{{ groups['gpu_nodes'] }}",
        "gpu_operator_chart_path": str(chart),
        # The chart in ../shared is tag v26.7.0 whose Chart.yaml says v1.0.0-devel (as in the repository).
        "gpu_operator_chart_version": version,
        # No repository is reachable from the test machines: the local chart must be enough.
        "gpu_operator_chart_repo_url": "http://127.0.0.1:9/unreachable",
        "gpu_operator_registry_credentials": {"server": "registry.example.com", "username": "fabric",
                                              "password": SECRET_PASSWORD},
        "gpu_operator_wait_timeout": "5m",
        **extra,
    }


@pytest.fixture(scope="module")
def installed(cluster, runner):
    playbook = runner.role_playbook("gpu_operator", chart_vars(cluster))
    start = time.monotonic()
    first = runner.run(playbook)
    elapsed = time.monotonic() - start
    assert first.rc == 0, first.output
    print(f"\ngpu_operator: first install {elapsed:.1f}s")
    yield {"first": first, "playbook": playbook, "seconds": elapsed}
    with role_runner.HookCompleter(cluster):  # the charts' post-delete hook Jobs
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m", check=False)


def test_release_deployed_with_the_local_chart(cluster, installed):
    assert installed["first"].changed > 0
    status = cluster.run("helm", "status", RELEASE, "-n", NAMESPACE, "-o", "json").stdout
    assert '"status":"deployed"' in status.replace(" ", "")


def test_cluster_policy_carries_the_values_derived_from_the_facts(api_client, installed):
    policy = client.CustomObjectsApi(api_client).get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    spec = policy["spec"]
    # GB200 trays of the recorded tree: driver 570.172.08 loaded (open modules), OFED installed, kernel 6.8.
    assert spec["driver"]["enabled"] is False
    assert spec["driver"]["rdma"] == {"enabled": False, "useHostMofed": True}
    assert spec["cdi"]["enabled"] is True
    assert spec["devicePlugin"]["enabled"] is True
    assert spec["validator"]["imagePullSecrets"] == ["gpu-operator-registry"]


def test_operator_runs_on_the_control_plane_and_nfd_workers_on_the_nodes(api_client, cluster, installed):
    apps = client.AppsV1Api(api_client)
    operator = apps.read_namespaced_deployment("gpu-operator", NAMESPACE)
    assert operator.status.ready_replicas == 1
    pods = client.CoreV1Api(api_client).list_namespaced_pod(NAMESPACE, label_selector="app=gpu-operator").items
    assert [pod.spec.node_name for pod in pods] == cluster.control_plane_nodes
    assert [secret.name for secret in operator.spec.template.spec.image_pull_secrets] == ["gpu-operator-registry"]
    workers = [ds for ds in apps.list_namespaced_daemon_set(NAMESPACE).items if ds.metadata.name.endswith("worker")]
    assert workers and workers[0].status.number_ready == workers[0].status.desired_number_scheduled > 0


def test_pull_secret_created_and_never_logged(api_client, installed):
    secret = client.CoreV1Api(api_client).read_namespaced_secret("gpu-operator-registry", NAMESPACE)
    assert secret.type == "kubernetes.io/dockerconfigjson"
    assert SECRET_PASSWORD not in installed["first"].output


def test_second_run_changes_nothing(runner, installed):
    again = runner.run(installed["playbook"])
    assert again.rc == 0, again.output
    assert again.changed == 0, again.output


def test_cluster_playbook_without_a_kubeconfig_setting_reads_the_environment(runner, installed, cluster):
    """The collection's cluster playbook includes the role with include_role and sets no kubeconfig: the role's
    default, the site-wide gpufabric_kubeconfig of its dependency, must resolve inside the shared _helm_release
    steps (it failed with "'gpufabric_kubeconfig' is undefined"), and the empty value means KUBECONFIG."""
    again = runner.run("gpufabric.cluster.cluster",
                       extra_vars={**chart_vars(cluster), "gpufabric_cluster_roles": ["gpu_operator"]})
    assert "is undefined" not in again.output, again.output
    assert again.rc == 0, again.output
    assert again.changed == 0, again.output


def test_check_diff_changes_nothing(api_client, runner, installed, cluster):
    before = cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout
    checked = runner.run(installed["playbook"], "--check", "--diff")
    assert checked.rc == 0, checked.output
    assert checked.changed == 0, checked.output
    # A changed intent is shown as a change in check mode, and not made.
    legacy = runner.run(runner.role_playbook("gpu_operator", chart_vars(cluster, gpu_operator_legacy_peermem=True)),
                        "--check", "--diff")
    assert legacy.rc == 0, legacy.output
    assert legacy.changed >= 1, legacy.output
    assert cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout == before
    policy = client.CustomObjectsApi(api_client).get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy")
    assert policy["spec"]["driver"]["rdma"]["enabled"] is False


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"gpu_operator_kubeconfig": "/nonexistent/kubeconfig"}, "gpu_operator_kubeconfig /nonexistent/kubeconfig"),
        ({"gpu_operator_gpudirect_rdma": "dma_buf", "gpu_operator_legacy_peermem": True},
         "gpu_operator_legacy_peermem is true but gpu_operator_gpudirect_rdma is dma_buf"),
        ({"gpu_operator_chart_path": ""}, "gpu_operator_chart_repo_url http://127.0.0.1:9/unreachable"),
        ({"gpu_operator_chart_version": "v99.0.0"}, "gpu_operator_chart_version v99.0.0 does not exist"),
        ({"gpu_operator_chart_path": "", "gpu_operator_chart_repo_url": ""}, "no chart source"),
    ],
    ids=["wrong-kubeconfig", "legacy-with-dma-buf", "repository-unreachable", "version-not-local", "no-source"],
)
def test_bad_input_fails_before_any_change(api_client, cluster, runner, tmp_path, extra, message):
    namespace = "gpu-operator-bad-input"
    playbook = runner.role_playbook("gpu_operator", chart_vars(cluster, gpu_operator_namespace=namespace,
                                                               gpu_operator_release_name="bad-input", **extra))
    result = runner.run(playbook)
    assert result.rc != 0
    assert message in " ".join(result.output.split()), result.output
    assert result.changed == 0, result.output
    names = [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]
    assert namespace not in names


# The GPUCluster path (experimental upstream): the operator deploys the DRA driver from a GPUCluster. The harness
# serves Kubernetes 1.35, so the refusal by version is the gpu_cluster_refusals filter's unit tests.
ONLY_THE_OPERATOR = {"gpufabric_cluster_roles": ["gpu_operator"]}


def gpu_cluster_playbook(runner, cluster):
    path = runner.role_playbook("gpu_operator", chart_vars(cluster, gpu_operator_dra_driver_via_gpu_cluster=True))
    return path.rename(path.with_name("gpu-cluster.yml"))


def test_gpu_cluster_path_refused_before_any_change_naming_the_reason(api_client, cluster, runner, installed):
    playbook = gpu_cluster_playbook(runner, cluster)
    before = cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout
    # The ClusterPolicy of the installed release is there.
    policy_only = runner.run(playbook, extra_vars=ONLY_THE_OPERATOR)
    assert policy_only.rc != 0 and policy_only.changed == 0, policy_only.output
    output = " ".join(policy_only.output.split())
    assert "gpu_operator_dra_driver_via_gpu_cluster is true but the GPUCluster path is refused, nothing changed: " \
           "ClusterPolicy cluster-policy exists" in output, policy_only.output
    assert "gpufabric.cluster.dra_driver" not in output
    # With the site's default cluster roles the dra_driver role is applied too: both are named.
    both = runner.run(playbook)
    assert both.rc != 0 and both.changed == 0, both.output
    assert "gpu_operator_dra_driver_via_gpu_cluster and the role gpufabric.cluster.dra_driver exclude each other, " \
           "and the site applies both (gpufabric_cluster_roles: gpu_operator, network_operator, dra_driver)" in \
           " ".join(both.output.split()), both.output
    checked = runner.run(playbook, "--check", extra_vars=ONLY_THE_OPERATOR)
    assert checked.rc != 0 and checked.changed == 0, checked.output
    assert cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout == before


def test_gpu_cluster_path_on_a_cluster_without_cluster_policy(api_client, cluster, runner, installed, waiter):
    custom = client.CustomObjectsApi(api_client)
    # A new installation (upstream supports no in-place move): the ClusterPolicy release goes first.
    with role_runner.HookCompleter(cluster):
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m")
    cluster.run("kubectl", "delete", "clusterpolicies.nvidia.com", "--all", "--wait=true", check=False)
    waiter("no ClusterPolicy", lambda: not custom.list_cluster_custom_object("nvidia.com", "v1",
                                                                             "clusterpolicies")["items"])
    playbook = gpu_cluster_playbook(runner, cluster)
    try:
        checked = runner.run(playbook, "--check", extra_vars=ONLY_THE_OPERATOR)
        assert checked.rc == 0 and checked.changed > 0, checked.output
        assert custom.list_cluster_custom_object("nvidia.com", "v1alpha1", "gpuclusters")["items"] == []
        first = runner.run(playbook, extra_vars=ONLY_THE_OPERATOR)
        assert first.rc == 0, first.output
        assert "DRA driver: gpu_cluster" in " ".join(first.output.split())
        values = yaml.safe_load(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "yaml").stdout)
        assert values["gpuCluster"] == {"deployCR": True} and values["clusterPolicy"] == {"deployCR": False}
        gpu_cluster = custom.get_cluster_custom_object("nvidia.com", "v1alpha1", "gpuclusters", "gpu-cluster")
        assert gpu_cluster["spec"]["draDriver"]["computeDomains"]["enabled"] is True
        assert custom.list_cluster_custom_object("nvidia.com", "v1", "clusterpolicies")["items"] == []
        again = runner.run(playbook, extra_vars=ONLY_THE_OPERATOR)
        assert again.rc == 0 and again.changed == 0, again.output
    finally:
        with role_runner.HookCompleter(cluster):
            cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m",
                        check=False)
        cluster.run("kubectl", "delete", "gpuclusters.nvidia.com", "--all", "--wait=false", check=False)
