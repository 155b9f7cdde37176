# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.network_operator installs the real network-operator chart (../shared/charts) on the harness.

The GPU hosts are the recorded GB200 tray (four ConnectX-7 InfiniBand ports, a BlueField-3 Ethernet port, OFED
on the host) with the rail plan that ``rdma_network`` publishes (the cacheable fact ``rdma_network_rail_plan``,
made here by the real ``rail_plan`` filter: the four InfiniBand ports, 172.31.<rail>.0/24, host N at .N+1).

Under kwok no operator runs: the operator neither deploys its node agents nor nv-ipam, and nv-ipam's IPPool CRD
(not in the chart) never appears by itself. The tests assert what the API server holds from the chart and from
the role: the release, our NicClusterPolicy and networks as the real CRDs of the chart accepted them, and that
without nv-ipam's IPPool CRD the role reports the pools in check mode and fails naming its timeout.
"""

from __future__ import annotations

import json
import time

import pytest
import role_runner
import yaml
from kubernetes import client

RELEASE = "network-operator"
# nv-ipam installs this CRD at run time; it is not in the chart, and the Go module that ships it is not served by
# the module proxy here, so the IPPools themselves are checked by the filter's unit tests, not by the real CRD.
IPPOOL_CRD = "ippools.nv-ipam.nvidia.com"
NAMESPACE = "nvidia-network-operator"
SECRET_PASSWORD = "s3cr3t-never-logged-4b2e"
RAILS = [{"ipv4": f"172.31.{index}.0/24"} for index in range(4)]
# The four ConnectX-7 InfiniBand ports of the recorded GB200 tray, in PCI order (rdma_network's rails 0..3).
TRAY_RAILS = ["ibp3s0", "ibP2p3s0", "ibP16p3s0", "ibP18p3s0"]
NIC_LABEL = "feature.node.kubernetes.io/pci-15b3.present"
WITHOUT_IPPOOLS = ("--skip-tags", "network_operator_ippools")


@pytest.fixture(scope="module")
def gpu_facts(tmp_path_factory):
    return role_runner.recorded_facts("gb200_tray", tmp_path_factory.mktemp("trees"))


@pytest.fixture(scope="module")
def rail_plan(cluster, gpu_facts):
    """``rdma_network_rail_plan`` of every tray, as gpufabric.cluster.rdma_network publishes it."""
    from ansible_collections.gpufabric.cluster.plugins.filter.rail_plan import rail_plan as plan_filter

    hostvars = {host: {"ansible_facts": {"gpufabric": gpu_facts},
                       "__rdma_network_input": {"rails": RAILS, "link_layers": ["InfiniBand"], "address_offset": 1}}
                for host in cluster.gpu_nodes}
    return plan_filter(hostvars, list(cluster.gpu_nodes))


@pytest.fixture(scope="module")
def runner(cluster, gpu_facts, rail_plan, tmp_path_factory):
    # The trays after nvidia_imex in dra mode (the cluster playbook's dra_driver needs it; network_operator ignores it).
    facts = role_runner.masked_imex(gpu_facts)
    runner = role_runner.Runner(cluster, tmp_path_factory.mktemp("network-operator"),
                                dict.fromkeys(cluster.gpu_nodes, facts))
    from ansible.plugins.loader import cache_loader

    # The fact cache as after rdma_network (set_fact cacheable: true) on every tray.
    cache = cache_loader.get("jsonfile", _uri=str(runner.cache), _timeout=0)
    for host in cluster.gpu_nodes:
        cache.set(host, {"gpufabric": facts, "rdma_network_rail_plan": rail_plan[host]})
    return runner


def role_vars(**extra):
    return {
        "network_operator_hosts": "{{ groups['gpu_nodes'] }}",
        "network_operator_chart_path": str(role_runner.CHARTS / "network-operator"),
        # No repository is reachable from the test machines: the local chart must be enough.
        "network_operator_chart_repo_url": "http://127.0.0.1:9/unreachable",
        "network_operator_registry_credentials": {"server": "registry.example.com", "username": "fabric",
                                                  "password": SECRET_PASSWORD},
        "network_operator_wait_timeout": "5m",
        "network_operator_ippool_crd_timeout": 5,
        **extra,
    }


def playbook_of(runner, name: str, role_variables: dict):
    """A play applying the role with ``role_variables``, kept as ``<name>.yml`` (role_playbook reuses one path)."""
    path = runner.role_playbook("network_operator", role_variables)
    return path.rename(path.with_name(f"{name}.yml"))


def expected_resources(gpu_facts, rail_plan, cluster):
    """What the filter makes of the same facts and plan (the role passes it to the API server as it is)."""
    from ansible_collections.gpufabric.cluster.plugins.filter.network_operator_resources import (
        network_operator_resources,
    )

    hostvars = {host: {"ansible_facts": {"gpufabric": gpu_facts}, "rdma_network_rail_plan": rail_plan[host]}
                for host in cluster.gpu_nodes}
    return network_operator_resources(hostvars, list(cluster.gpu_nodes), {
        "image_pull_secrets": ["network-operator-registry"]})


def held_as_sent(held: dict, sent: dict, path: str = "") -> list[str]:
    """The fields of ``sent`` that the API server does not hold as sent (pruned by the CRD schema, or changed)."""
    if isinstance(sent, dict):
        if not isinstance(held, dict):
            return [path or "."]
        return [miss for key, value in sent.items() for miss in held_as_sent(held.get(key), value, f"{path}.{key}")]
    return [] if held == sent else [f"{path}: {held!r} != {sent!r}"]


def custom(api_client):
    return client.CustomObjectsApi(api_client)


@pytest.fixture(scope="module")
def installed(cluster, runner):
    playbook = playbook_of(runner, "installed", role_vars())
    start = time.monotonic()
    first = runner.run(playbook, *WITHOUT_IPPOOLS)
    elapsed = time.monotonic() - start
    assert first.rc == 0, first.output
    print(f"\nnetwork_operator: first install (release, NicClusterPolicy, networks) {elapsed:.1f}s")
    yield {"first": first, "playbook": playbook, "seconds": elapsed}
    for kind in ("nicclusterpolicies", "ipoibnetworks", "macvlannetworks", "hostdevicenetworks"):
        cluster.run("kubectl", "delete", f"{kind}.mellanox.com", "--all", "--wait=false", check=False)
    cluster.run("kubectl", "delete", "ippools.nv-ipam.nvidia.com", "--all", "-n", NAMESPACE, check=False)
    with role_runner.HookCompleter(cluster):
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m", check=False)


def test_release_deployed_from_the_local_chart_with_its_own_nfd(cluster, installed):
    assert installed["first"].changed > 0
    status = json.loads(cluster.run("helm", "status", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)
    assert status["info"]["status"] == "deployed"
    releases = json.loads(cluster.run("helm", "list", "-n", NAMESPACE, "-o", "json").stdout)
    assert [(r["name"], r["chart"]) for r in releases] == [(RELEASE, "network-operator-26.4.1")]
    values = json.loads(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)
    # No other Node Feature Discovery runs on the harness, so the chart's own is on.
    assert values["nfd"] == {"enabled": True}
    assert values["imagePullSecrets"] == ["network-operator-registry"]


def test_nic_cluster_policy_accepted_with_the_selectors_of_the_connectx_facts(api_client, cluster, gpu_facts,
                                                                              rail_plan, installed):
    policy = custom(api_client).get_cluster_custom_object("mellanox.com", "v1alpha1", "nicclusterpolicies",
                                                          "nic-cluster-policy")
    spec = policy["spec"]
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"]
    assert [item["resourceName"] for item in config] == ["rdma_rail0", "rdma_rail1", "rdma_rail2", "rdma_rail3"]
    assert [item["selectors"] for item in config] == [
        {"vendors": ["15b3"], "deviceIDs": ["1021"], "ifNames": [netdev], "linkTypes": ["infiniband"]}
        for netdev in TRAY_RAILS]
    assert all(item["rdmaHcaMax"] == 63 for item in config)
    # OFED is installed on the recorded trays: no DOCA driver container.
    assert "ofedDriver" not in spec
    assert set(spec["secondaryNetwork"]) == {"multus", "cniPlugins", "ipoib"}
    assert spec["nvIpam"]["image"] == "nvidia-k8s-ipam" and spec["nvIpam"]["enableWebhook"] is False
    assert spec["rdmaSharedDevicePlugin"]["imagePullSecrets"] == ["network-operator-registry"]
    # Nothing pruned by the chart's CRD: the server holds every field the role sent.
    sent = expected_resources(gpu_facts, rail_plan, cluster)["policy"]
    assert held_as_sent(policy, sent) == []


def test_networks_accepted_one_ipoib_network_per_rail(api_client, cluster, gpu_facts, rail_plan, installed):
    networks = custom(api_client).list_cluster_custom_object("mellanox.com", "v1alpha1", "ipoibnetworks")["items"]
    assert sorted(n["metadata"]["name"] for n in networks) == ["rail0", "rail1", "rail2", "rail3"]
    by_name = {n["metadata"]["name"]: n for n in networks}
    for index, netdev in enumerate(TRAY_RAILS):
        spec = by_name[f"rail{index}"]["spec"]
        assert spec["master"] == netdev
        assert spec["networkNamespace"] == "default"
        assert json.loads(spec["ipam"]) == {"type": "nv-ipam", "poolName": f"rail{index}"}
    for kind in ("macvlannetworks", "hostdevicenetworks"):
        assert custom(api_client).list_cluster_custom_object("mellanox.com", "v1alpha1", kind)["items"] == []
    sent = expected_resources(gpu_facts, rail_plan, cluster)["networks"]
    assert [held_as_sent(by_name[n["metadata"]["name"]], n) for n in sent] == [[]] * 4


def test_operator_on_the_control_plane_and_agents_on_the_nic_nodes(api_client, cluster, installed):
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    deployments = {d.metadata.name: d for d in apps.list_namespaced_deployment(NAMESPACE).items}
    assert sorted(deployments) == [RELEASE, f"{RELEASE}-node-feature-discovery-gc",
                                   f"{RELEASE}-node-feature-discovery-master"]
    operator = deployments[RELEASE]
    assert operator.status.ready_replicas == 1
    selector = ",".join(f"{k}={v}" for k, v in operator.spec.selector.match_labels.items())
    assert [p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE, label_selector=selector).items] == \
        cluster.control_plane_nodes
    # The operator's node agents follow the policy's node affinity: the NIC nodes, which are the GPU trays.
    policy = custom(api_client).get_cluster_custom_object("mellanox.com", "v1alpha1", "nicclusterpolicies",
                                                          "nic-cluster-policy")
    terms = policy["spec"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": NIC_LABEL, "operator": "In", "values": ["true"]}]}]
    nic_nodes = sorted(n.metadata.name for n in core.list_node(label_selector=f"{NIC_LABEL}=true").items)
    assert nic_nodes == sorted(cluster.gpu_nodes)
    # The only DaemonSet the chart renders is NFD's worker: every schedulable node (it finds the NIC nodes),
    # which on the harness are the GPU trays; the control plane's NoSchedule taint it tolerates as NFD does.
    daemonsets = apps.list_namespaced_daemon_set(NAMESPACE).items
    assert [ds.metadata.name for ds in daemonsets] == [f"{RELEASE}-node-feature-discovery-worker"]
    worker = daemonsets[0]
    assert worker.status.number_ready == worker.status.desired_number_scheduled > 0
    selector = ",".join(f"{k}={v}" for k, v in worker.spec.selector.match_labels.items())
    placed = sorted(p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE, label_selector=selector).items)
    assert placed == sorted(cluster.gpu_nodes + cluster.control_plane_nodes)


def test_pull_secret_created_and_never_logged(api_client, installed):
    secret = client.CoreV1Api(api_client).read_namespaced_secret("network-operator-registry", NAMESPACE)
    assert secret.type == "kubernetes.io/dockerconfigjson"
    assert SECRET_PASSWORD not in installed["first"].output


def test_second_run_changes_nothing(runner, installed):
    again = runner.run(installed["playbook"], *WITHOUT_IPPOOLS)
    assert again.rc == 0, again.output
    assert again.changed == 0, again.output


def test_check_diff_changes_nothing(api_client, cluster, runner, installed):
    before = cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout
    checked = runner.run(installed["playbook"], "--check", "--diff", *WITHOUT_IPPOOLS)
    assert checked.rc == 0, checked.output
    assert checked.changed == 0, checked.output
    # A changed intent (host-device networks) is shown as a change in check mode, and not made.
    playbook = playbook_of(runner, "hostdevice", role_vars(network_operator_network_type="hostdevice"))
    hostdev = runner.run(playbook, "--check", "--diff", *WITHOUT_IPPOOLS)
    assert hostdev.rc == 0, hostdev.output
    assert hostdev.changed >= 1, hostdev.output
    assert "hostdev_rail0" in hostdev.output
    assert cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout == before
    objects = custom(api_client)
    assert objects.list_cluster_custom_object("mellanox.com", "v1alpha1", "hostdevicenetworks")["items"] == []
    policy = objects.get_cluster_custom_object("mellanox.com", "v1alpha1", "nicclusterpolicies", "nic-cluster-policy")
    assert "sriovDevicePlugin" not in policy["spec"]


def test_without_nv_ipam_the_role_waits_and_fails_naming_the_timeout(api_client, cluster, runner, installed):
    # No operator runs, so nothing installs nv-ipam's IPPool CRD.
    crds = client.ApiextensionsV1Api(api_client).list_custom_resource_definition().items
    assert IPPOOL_CRD not in [crd.metadata.name for crd in crds]
    checked = runner.run(installed["playbook"], "--check")
    assert checked.rc == 0, checked.output
    assert checked.changed == 1, checked.output  # the IPPools a real run would create
    assert "would create IPPool rail0, rail1, rail2, rail3" in " ".join(checked.output.split())
    failed = runner.run(installed["playbook"])
    assert failed.rc != 0
    assert "network_operator_ippool_crd_timeout 5 seconds" in " ".join(failed.output.split()), failed.output
    assert failed.changed == 0, failed.output


def test_cidr_pools_created_on_the_rail_plan_and_read_back(api_client, cluster, gpu_facts, rail_plan, runner,
                                                           installed, shared_dir, waiter):
    """network_operator_ipam_pool_kind: cidrpool against nv-ipam's real CIDRPool CRD (../shared/reference/crds)."""
    crd = shared_dir / "reference" / "crds" / "nv-ipam-HEAD-nv-ipam.nvidia.com_cidrpools.yaml"
    objects = custom(api_client)
    cluster.run("kubectl", "apply", "--server-side", "-f", str(crd))
    try:
        waiter("the CIDRPool CRD served", lambda: cluster.run(
            "kubectl", "get", "cidrpools.nv-ipam.nvidia.com", "-A", check=False).returncode == 0, timeout=60)
        # 18 trays at .1 .. .18 of each /24: a /28 per node leaves 15 prefixes with a free address, refused by name.
        small = runner.run(playbook_of(runner, "cidrpools-small", role_vars(
            network_operator_ipam_pool_kind="cidrpool", network_operator_ipam_per_node_prefix_length=28)), "--check")
        assert small.rc != 0 and small.changed == 0, small.output
        assert ("network_operator_ipam_per_node_prefix_length 28 leaves 15 /28 prefixes with a free address beside "
                "the hosts' own addresses, 18 hosts need one each") in " ".join(small.output.split()), small.output
        playbook = playbook_of(runner, "cidrpools", role_vars(network_operator_ipam_pool_kind="cidrpool"))
        checked = runner.run(playbook, "--check")
        assert checked.rc == 0 and checked.changed > 0, checked.output
        assert objects.list_namespaced_custom_object("nv-ipam.nvidia.com", "v1alpha1", NAMESPACE,
                                                     "cidrpools")["items"] == []
        done = runner.run(playbook)
        assert done.rc == 0, done.output
        from ansible_collections.gpufabric.cluster.plugins.filter.network_operator_resources import (
            network_operator_resources,
        )

        hostvars = {host: {"ansible_facts": {"gpufabric": gpu_facts}, "rdma_network_rail_plan": rail_plan[host]}
                    for host in cluster.gpu_nodes}
        sent = network_operator_resources(hostvars, list(cluster.gpu_nodes), {
            "image_pull_secrets": ["network-operator-registry"], "ipam_pool_kind": "cidrpool"})["cidrpools"]
        held = {item["metadata"]["name"]: item for item in objects.list_namespaced_custom_object(
            "nv-ipam.nvidia.com", "v1alpha1", NAMESPACE, "cidrpools")["items"]}
        assert sorted(held) == [f"rail{index}" for index in range(4)]
        for pool in sent:
            assert held_as_sent(held[pool["metadata"]["name"]], pool) == []
        assert [held[f"rail{i}"]["spec"]["cidr"] for i in range(4)] == [rail["ipv4"] for rail in RAILS]
        assert {held[name]["spec"]["perNodeNetworkPrefix"] for name in held} == {29}
        assert held["rail0"]["spec"]["exclusions"] == [{"startIP": "172.31.0.1", "endIP": "172.31.0.18"}]
        networks = objects.list_cluster_custom_object("mellanox.com", "v1alpha1", "ipoibnetworks")["items"]
        assert {json.loads(n["spec"]["ipam"])["poolType"] for n in networks} == {"cidrpool"}
        again = runner.run(playbook)
        assert again.rc == 0 and again.changed == 0, again.output
    finally:
        cluster.run("kubectl", "delete", "cidrpools.nv-ipam.nvidia.com", "--all", "-n", NAMESPACE, check=False)
        cluster.run("kubectl", "delete", "-f", str(crd), "--wait=true", check=False)
        # The networks back on IPPools, as the other tests expect them.
        restored = runner.run(installed["playbook"], *WITHOUT_IPPOOLS)
        assert restored.rc == 0, restored.output


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"network_operator_kubeconfig": "/nonexistent/kubeconfig"},
         "network_operator_kubeconfig /nonexistent/kubeconfig"),
        ({"network_operator_ofed": "container"}, "network_operator_ofed_driver_version is empty"),
        ({"network_operator_network_type": "macvlan"},
         "network_operator_network_type is macvlan but rail0 (ibp3s0) is InfiniBand"),
        ({"network_operator_rails": [RAILS[0], {"ipv4": "10.9.0.0/24"}, *RAILS[2:]]},
         "network_operator_rails[1] 10.9.0.0/24 disagrees with rdma_network_rail_plan"),
        ({"network_operator_chart_version": "v99.0.0"}, "network_operator_chart_version v99.0.0 does not exist"),
        ({"network_operator_chart_path": "", "network_operator_chart_repo_url": ""}, "no chart source"),
    ],
    ids=["wrong-kubeconfig", "ofed-container-without-version", "macvlan-on-infiniband", "rails-disagree-with-plan",
         "version-not-local", "no-source"],
)
def test_bad_input_fails_before_any_change(api_client, runner, extra, message):
    namespace = "network-operator-bad-input"
    playbook = playbook_of(runner, "bad-input", role_vars(network_operator_namespace=namespace,
                                                          network_operator_release_name="bad-input", **extra))
    before = _policy_version(api_client)
    result = runner.run(playbook)
    assert result.rc != 0
    assert message in " ".join(result.output.split()), result.output
    assert result.changed == 0, result.output
    names = [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]
    assert namespace not in names
    assert _policy_version(api_client) == before


def _policy_version(api_client) -> str | None:
    """resourceVersion of the NicClusterPolicy, None when there is none (or its CRD is not installed)."""
    try:
        items = custom(api_client).list_cluster_custom_object("mellanox.com", "v1alpha1", "nicclusterpolicies")
    except client.exceptions.ApiException:
        return None
    return next((item["metadata"]["resourceVersion"] for item in items["items"]
                 if item["metadata"]["name"] == "nic-cluster-policy"), None)


def test_cluster_playbook_applies_the_three_roles_in_order(api_client, cluster, runner, installed):
    gpu_chart = role_runner.CHARTS / "gpu-operator"
    extra = {
        "gpufabric_kubeconfig": str(cluster.kubeconfig),
        "gpu_operator_chart_path": str(gpu_chart),
        "gpu_operator_chart_version": yaml.safe_load((gpu_chart / "Chart.yaml").read_text())["version"],
        "gpu_operator_chart_repo_url": "http://127.0.0.1:9/unreachable",
        "gpu_operator_wait_timeout": "5m",
        "dra_driver_chart_path": str(role_runner.CHARTS / "dra-driver-nvidia-gpu-0.4.1"),
        "dra_driver_chart_repo_url": "http://127.0.0.1:9/unreachable",
        "dra_driver_wait_timeout": "5m",
        **{key: value for key, value in role_vars().items() if key != "network_operator_hosts"},
    }
    releases = {"gpu-operator": "gpu-operator", "nvidia-dra-driver-gpu": "nvidia-dra-driver-gpu"}
    try:
        start = time.monotonic()
        # By its collection name, as a user runs it; nv-ipam's IPPool CRD is not there (no operator runs).
        done = runner.run("gpufabric.cluster.cluster", *WITHOUT_IPPOOLS, extra_vars=extra)
        print(f"\ncluster playbook (gpu_operator, network_operator, dra_driver): {time.monotonic() - start:.1f}s")
        assert done.rc == 0, done.output
        order = [done.output.index(f"TASK [Install the {name}]") for name in
                 ("GPU Operator", "Network Operator", "NVIDIA DRA driver")]
        assert order == sorted(order), done.output
        listed = json.loads(cluster.run("helm", "list", "-A", "-o", "json").stdout)
        assert sorted((r["name"], r["status"]) for r in listed) == [
            ("gpu-operator", "deployed"), (RELEASE, "deployed"), ("nvidia-dra-driver-gpu", "deployed")]
        # The GPU Operator runs Node Feature Discovery now, so the Network Operator's own is turned off.
        values = json.loads(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)
        assert values["nfd"] == {"enabled": False}
        again = runner.run("gpufabric.cluster.cluster", *WITHOUT_IPPOOLS, extra_vars=extra)
        assert again.rc == 0 and again.changed == 0, again.output
    finally:
        with role_runner.HookCompleter(cluster):
            for release, namespace in releases.items():
                cluster.run("helm", "uninstall", release, "--namespace", namespace, "--wait", "--timeout", "2m",
                            check=False)
