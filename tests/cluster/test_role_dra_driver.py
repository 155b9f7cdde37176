# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""gpufabric.cluster.dra_driver checks its prerequisites and installs the real DRA driver charts.

The default chart is dra-driver-nvidia-gpu 0.4.1; the upgrade path goes from nvidia-dra-driver-gpu 25.12.0 through
0.4.1 to 0.5.0-dev and refuses to go back to 25.12.0.
The hosts' facts are the recorded GB200 tray after ``nvidia_imex`` in ``dra`` mode (host service masked).
The harness always serves DRA (resource.k8s.io/v1); Kubernetes without DRA is covered by the
dra_driver_prerequisites filter's unit tests.
"""

from __future__ import annotations

import copy
import json
import time

import pytest
import role_runner
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

RELEASE = "nvidia-dra-driver-gpu"
NAMESPACE = "nvidia-dra-driver-gpu"


def chart_vars(directory, name, version):
    return role_vars(dra_driver_chart_path=str(role_runner.CHARTS / directory), dra_driver_chart_name=name,
                     dra_driver_chart_version=version)


SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"


def host_managed_imex(facts: dict, socket: str, ready: bool = True) -> dict:
    """The facts after ``gpufabric.cluster.nvidia_imex`` in ``dra_host_managed`` mode: the host service running with
    its control socket on; ``ready`` is the answer of ``nvidia-imex-ctl -q`` on it."""
    changed = copy.deepcopy(facts)
    changed["imex"]["service"].update(exists=True, enabled=True, active=True, masked=False, unit_file_state="enabled",
                                      active_state="active")
    changed["imex"]["control"] = {"enabled": True, "socket_path": socket, "ready": ready,
                                  "status": "READY" if ready else "UNAVAILABLE",
                                  "reason": None if ready else "connecting to the peers of the nodes file"}
    return changed


@pytest.fixture(scope="module")
def gpu_facts(tmp_path_factory):
    return role_runner.recorded_facts("gb200_tray", tmp_path_factory.mktemp("trees"))


def make_runner(cluster, directory, facts):
    return role_runner.Runner(cluster, directory, dict.fromkeys(cluster.gpu_nodes, facts))


def role_vars(**extra):
    return role_runner.dra_driver_vars(**extra)


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
    assert "cliques | pass | nvidia.com/gpu.clique present and right on the nodes of 18 GPU hosts (labelled by " \
           "another source: no GPU Feature Discovery runs and the DRA driver chart does not label" in output
    assert installed["first"].changed > 0
    assert "dra_driver: install dra-driver-nvidia-gpu 0.4.1" in output
    values = yaml.safe_load(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "yaml").stdout)
    assert values["nvidiaDriverRoot"] == "/"
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert values["nameOverride"] == "nvidia-dra-driver-gpu"


def test_kubelet_plugin_only_on_gpu_nodes_and_controller_on_control_plane(api_client, cluster, installed):
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    plugin = next(ds for ds in apps.list_namespaced_daemon_set(NAMESPACE).items if "kubelet-plugin" in ds.metadata.name)
    assert plugin.status.number_ready == plugin.status.desired_number_scheduled == len(cluster.gpu_nodes)
    selector = ",".join(f"{k}={v}" for k, v in plugin.spec.selector.match_labels.items())
    assert sorted(p.spec.node_name for p in core.list_namespaced_pod(NAMESPACE, label_selector=selector).items) == \
        sorted(cluster.gpu_nodes)
    controller = next(d for d in apps.list_namespaced_deployment(NAMESPACE).items if "controller" in d.metadata.name)
    assert controller.status.ready_replicas == 1
    # nameOverride: the objects carry the names the 25.x chart gave them
    assert (plugin.metadata.name, controller.metadata.name) == (f"{RELEASE}-kubelet-plugin", f"{RELEASE}-controller")


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
         "dra_driver_imex_mode is host (the host nvidia-imex service runs IMEX; it defaults to gpufabric_imex_mode)"),
        # dra_host_managed needs 0.5 or later: the prerequisites hold (every host READY), the chart is refused
        ("host-managed", {"gpufabric_imex_mode": "dra_host_managed"},
         "dra_driver_imex_mode is dra_host_managed but the chart is dra-driver-nvidia-gpu 0.4.1: host-managed IMEX"),
        ("masked", {"gpufabric_imex_mode": "dra_host_managed", **chart_vars("dra-driver-nvidia-gpu-0.5.0-dev",
                                                                            "dra-driver-nvidia-gpu", "0.5.0-dev")},
         "host gb200-tray-01: the host nvidia-imex service is masked; dra_host_managed needs it running"),
    ],
    ids=["imex-not-masked", "clique-label-wrong", "driver-too-old", "wrong-kubeconfig", "version-not-local",
         "bad-gpus-choice", "site-kubeconfig", "site-min-driver-version", "site-imex-mode-host",
         "host-managed-0.4.1-refused", "host-managed-service-masked"],
)
def test_bad_input_fails_before_any_change(api_client, cluster, gpu_facts, tmp_path, facts_change, extra, message):
    facts = role_runner.masked_imex(gpu_facts) if facts_change != "unmasked" else gpu_facts
    if facts_change == "host-managed":
        facts = host_managed_imex(gpu_facts, SOCKET)
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


# The upgrade path. Both chart lines install cluster-wide objects (CRDs, DeviceClasses): the module's release is
# removed first and the path starts from a cluster without a DRA driver release.
PATH_STEPS = [("nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu", "25.12.0"),
              ("dra-driver-nvidia-gpu-0.4.1", "dra-driver-nvidia-gpu", "0.4.1"),
              ("dra-driver-nvidia-gpu-0.5.0-dev", "dra-driver-nvidia-gpu", "0.5.0-dev")]


def snapshot(api_client, cluster):
    """What the upgrade path must keep or change: CRD schema, object names, the release's chart and revisions."""
    apps, core = client.AppsV1Api(api_client), client.CoreV1Api(api_client)
    crd = client.CustomObjectsApi(api_client).get_cluster_custom_object(
        "apiextensions.k8s.io", "v1", "customresourcedefinitions", "computedomains.resource.nvidia.com")
    schema = next(v for v in crd["spec"]["versions"] if v["storage"])["schema"]["openAPIV3Schema"]
    history = json.loads(cluster.run("helm", "history", RELEASE, "-n", NAMESPACE, "-o", "json").stdout)
    return {
        "spec_required": sorted(schema["properties"]["spec"].get("required", [])),
        "daemonsets": sorted(d.metadata.name for d in apps.list_namespaced_daemon_set(NAMESPACE).items),
        "deployments": sorted(d.metadata.name for d in apps.list_namespaced_deployment(NAMESPACE).items),
        "service_accounts": sorted(a.metadata.name for a in core.list_namespaced_service_account(NAMESPACE).items
                                   if a.metadata.name != "default"),
        "chart": history[-1]["chart"],
        "revisions": len(history),
        "crd_version": crd["metadata"]["resourceVersion"],
    }


@pytest.fixture(scope="module")
def upgrade_path(api_client, cluster, runner):
    with role_runner.HookCompleter(cluster):
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m", check=False)
    extensions = client.ApiextensionsV1Api(api_client)
    for crd in ("computedomains.resource.nvidia.com", "computedomaincliques.resource.nvidia.com"):
        try:
            extensions.delete_custom_resource_definition(crd)
        except ApiException as exc:
            assert exc.status == 404
    wait_gone = time.monotonic() + 60
    while time.monotonic() < wait_gone and any(c.metadata.name.endswith("resource.nvidia.com")
                                               for c in extensions.list_custom_resource_definition().items):
        time.sleep(0.5)
    steps = {}
    for directory, name, version in PATH_STEPS:
        playbook = runner.role_playbook("dra_driver", chart_vars(directory, name, version))
        # check mode first: it reports what it would change and changes nothing
        before = snapshot(api_client, cluster) if steps else None
        checked = runner.run(playbook, "--check") if steps else None
        after_check = snapshot(api_client, cluster) if steps else None
        start = time.monotonic()
        done = runner.run(playbook)
        elapsed = time.monotonic() - start
        assert done.rc == 0, done.output
        print(f"\ndra_driver: {version} {elapsed:.1f}s")
        state = snapshot(api_client, cluster)
        again = runner.run(playbook)
        steps[version] = {"check": checked, "before": before, "after_check": after_check, "run": done,
                          "state": state, "again": again, "state_again": snapshot(api_client, cluster)}
    before = snapshot(api_client, cluster)
    refused = runner.run(runner.role_playbook("dra_driver", chart_vars(*PATH_STEPS[0])))
    yield {"steps": steps, "refused": refused, "before_refused": before, "after_refused": snapshot(api_client, cluster)}
    with role_runner.HookCompleter(cluster):
        cluster.run("helm", "uninstall", RELEASE, "--namespace", NAMESPACE, "--wait", "--timeout", "2m", check=False)


NAMES = {"daemonsets": [f"{RELEASE}-kubelet-plugin"], "deployments": [f"{RELEASE}-controller"]}


@pytest.mark.parametrize("version", [step[2] for step in PATH_STEPS])
def test_upgrade_path_keeps_the_names_and_brings_the_new_schema(upgrade_path, version):
    step = upgrade_path["steps"][version]
    state = step["state"]
    chart = "nvidia-dra-driver-gpu-25.12.0" if version == "25.12.0" else f"dra-driver-nvidia-gpu-{version}"
    assert state["chart"] == chart
    # ComputeDomain numNodes is optional from 0.4 on: the CRDs were applied before the release
    assert state["spec_required"] == (["channel", "numNodes"] if version == "25.12.0" else ["channel"])
    # same objects under the same names as 25.12.0 made them, none beside them under the new chart name
    assert {key: state[key] for key in NAMES} == NAMES
    assert state["service_accounts"] == upgrade_path["steps"]["25.12.0"]["state"]["service_accounts"]
    assert all("dra-driver-nvidia-gpu" not in n for n in state["service_accounts"]), state
    output = " ".join(step["run"].output.split())
    expected = {"25.12.0": "dra_driver: install nvidia-dra-driver-gpu 25.12.0",
                "0.4.1": "dra_driver: migrate nvidia-dra-driver-gpu 25.12.0 to dra-driver-nvidia-gpu 0.4.1: CRDs "
                         "first, then the release with nameOverride=nvidia-dra-driver-gpu",
                "0.5.0-dev": "dra_driver: upgrade dra-driver-nvidia-gpu 0.4.1 to dra-driver-nvidia-gpu 0.5.0-dev"}
    assert expected[version] in output, output


@pytest.mark.parametrize("version", [step[2] for step in PATH_STEPS])
def test_upgrade_path_rerun_changes_nothing(upgrade_path, version):
    step = upgrade_path["steps"][version]
    assert step["again"].rc == 0 and step["again"].changed == 0, step["again"].output
    assert step["state_again"] == step["state"]


@pytest.mark.parametrize("version", [step[2] for step in PATH_STEPS[1:]])
def test_upgrade_path_check_mode_reports_and_changes_nothing(upgrade_path, version):
    step = upgrade_path["steps"][version]
    assert step["check"].rc == 0 and step["check"].changed > 0, step["check"].output
    output = " ".join(step["check"].output.split())
    if version == "0.4.1":
        assert "(computedomaincliques.resource.nvidia.com, computedomains.resource.nvidia.com): would change" in \
            output, output
    assert step["after_check"] == step["before"]


def test_downgrade_to_25_is_refused_with_nothing_changed(upgrade_path):
    refused = upgrade_path["refused"]
    assert refused.rc != 0 and refused.changed == 0, refused.output
    assert ("refusing to downgrade the DRA driver from dra-driver-nvidia-gpu 0.5.0-dev to nvidia-dra-driver-gpu "
            "25.12.0") in " ".join(refused.output.split()), refused.output
    assert upgrade_path["after_refused"] == upgrade_path["before_refused"]


# dra_host_managed on 0.5.0-dev, on the release the upgrade path left at 0.5.0-dev (driver-managed), with a socket
# path other than the chart's default so that the setting is seen to travel.
HOST_SOCKET = "/run/nvidia-imex/ctl.sock"


@pytest.fixture(scope="module")
def host_managed(api_client, cluster, gpu_facts, upgrade_path, tmp_path_factory):
    runner = make_runner(cluster, tmp_path_factory.mktemp("host-managed"), host_managed_imex(gpu_facts, HOST_SOCKET))
    playbook = runner.role_playbook("dra_driver", {
        **chart_vars("dra-driver-nvidia-gpu-0.5.0-dev", "dra-driver-nvidia-gpu", "0.5.0-dev"),
        "gpufabric_imex_mode": "dra_host_managed", "gpufabric_imex_socket_path": HOST_SOCKET})
    done = runner.run(playbook)
    assert done.rc == 0, done.output
    again = runner.run(playbook)
    checked = runner.run(playbook, "--check")
    plugin = client.AppsV1Api(api_client).read_namespaced_daemon_set(f"{RELEASE}-kubelet-plugin", NAMESPACE)
    return {"run": done, "again": again, "checked": checked, "plugin": plugin}


def test_host_managed_kubelet_plugin_carries_the_settings(api_client, cluster, host_managed):
    output = " ".join(host_managed["run"].output.split())
    assert f"imex | pass | host nvidia-imex active and READY on {HOST_SOCKET} on every GPU host (18)" in output, output
    assert "labelled by the DRA driver (gpuCliqueLabelEnabled), no GPU Feature Discovery runs" in output
    assert f"IMEX: hostManaged {HOST_SOCKET}" in output
    containers = {c.name: c for c in host_managed["plugin"].spec.template.spec.containers}
    env = {e.name: e.value for e in containers["compute-domains"].env}
    assert env["IMEX_MODE"] == "hostManaged"
    assert env["IMEX_HOST_SOCKET_PATH"] == HOST_SOCKET
    assert "HostManagedIMEXDaemon=true" in env["FEATURE_GATES"].split(",")
    assert env["GPU_CLIQUE_LABEL_ENABLED"] == "true"
    values = yaml.safe_load(cluster.run("helm", "get", "values", RELEASE, "-n", NAMESPACE, "-o", "yaml").stdout)
    assert values["featureGates"] == {"HostManagedIMEXDaemon": True}
    assert values["resources"]["computeDomains"] == {"enabled": True, "imex": {"mode": "hostManaged",
                                                                               "hostSocketPath": HOST_SOCKET}}
    # hostManaged: no per-ComputeDomain IMEX daemons, so the chart leaves out their DeviceClass
    classes = [c["metadata"]["name"] for c in client.CustomObjectsApi(api_client).list_cluster_custom_object(
        "resource.k8s.io", "v1", "deviceclasses")["items"]]
    assert "compute-domain-daemon.nvidia.com" not in classes and "compute-domain-default-channel.nvidia.com" in classes


def test_host_managed_rerun_and_check_change_nothing(host_managed):
    for key in ("again", "checked"):
        assert host_managed[key].rc == 0 and host_managed[key].changed == 0, host_managed[key].output


def test_host_managed_tray_not_ready_is_refused_by_name(api_client, cluster, gpu_facts, tmp_path):
    ready = host_managed_imex(gpu_facts, SOCKET)
    facts = dict.fromkeys(cluster.gpu_nodes, ready)
    lame = sorted(cluster.gpu_nodes)[2]
    facts[lame] = host_managed_imex(gpu_facts, SOCKET, ready=False)
    bad = role_runner.Runner(cluster, tmp_path, facts)
    result = bad.run(bad.role_playbook("dra_driver", {
        **chart_vars("dra-driver-nvidia-gpu-0.5.0-dev", "dra-driver-nvidia-gpu", "0.5.0-dev"),
        "dra_driver_namespace": "dra-bad-input", "dra_driver_release_name": "dra-bad-input",
        "gpufabric_imex_mode": "dra_host_managed"}))
    output = " ".join(result.output.split())
    assert result.rc != 0 and result.changed == 0, result.output
    assert (f"prerequisites not met, nothing installed: host {lame}: host IMEX is not READY on {SOCKET} "
            "(nvidia-imex-ctl -q: UNAVAILABLE; connecting to the peers of the nodes file)") in output, output
    others = [node for node in cluster.gpu_nodes if node != lame]
    assert not any(f"host {node}: host IMEX" in output for node in others), output
    assert "dra-bad-input" not in [ns.metadata.name for ns in client.CoreV1Api(api_client).list_namespace().items]
