# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The gpu_operator_values filter on the facts of the recorded hosts (fleet_facts: tests/fixtures recorded_facts)."""

from __future__ import annotations

import copy

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.filter.gpu_operator_values import gpu_operator_values


def hostvars(**hosts):
    return {name: {"ansible_facts": {"gpufabric": copy.deepcopy(item)}} for name, item in hosts.items()}


def test_gb200_trays_host_driver_dma_buf_host_ofed(fleet_facts):
    result = gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"], b=fleet_facts["gb200_tray"]), ["a", "b"])
    assert result["values"] == {"driver": {"enabled": False, "rdma": {"enabled": False, "useHostMofed": True}},
                                "cdi": {"enabled": True}, "devicePlugin": {"enabled": True}, "nfd": {"enabled": True}}
    assert result["decisions"]["gpudirect_rdma"]["mode"] == "dma_buf"


def test_legacy_peermem_only_when_asked(fleet_facts):
    result = gpu_operator_values(hostvars(a=fleet_facts["hgx_h100"]), ["a"], {"legacy_peermem": True})
    assert result["values"]["driver"]["rdma"]["enabled"] is True
    assert result["decisions"]["gpudirect_rdma"] == {"mode": "legacy", "reason": "gpu_operator_legacy_peermem is true",
                                                     "dma_buf_impossible": {}}


def test_dma_buf_impossible_somewhere_falls_back_to_legacy_naming_the_host(fleet_facts):
    old = copy.deepcopy(fleet_facts["gb200_tray"])
    old["peermem"]["dma_buf"] = {"supported": False, "reasons": [
        {"code": "kernel_too_old", "message": "kernel 5.4.0-216-generic is older than 5.12"}]}
    result = gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"], old=old), ["a", "old"])
    assert result["values"]["driver"]["rdma"]["enabled"] is True
    assert "old: kernel 5.4.0-216-generic is older than 5.12" in result["decisions"]["gpudirect_rdma"]["reason"]
    impossible = "gpu_operator_gpudirect_rdma is dma_buf but DMA-BUF is impossible on old"
    with pytest.raises(AnsibleFilterError, match=impossible):
        gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"], old=old), ["a", "old"], {"gpudirect_rdma": "dma_buf"})


def test_operator_driver_when_no_host_has_one(fleet_facts):
    bare = copy.deepcopy(fleet_facts["broken_node"])
    bare["peermem"]["dma_buf"]["reasons"] = [{"code": "no_driver", "message": "NVIDIA driver not loaded"}]
    result = gpu_operator_values(hostvars(a=bare), ["a"], {"driver_version": "580.95.05"})
    assert result["values"]["driver"]["enabled"] is True and result["values"]["driver"]["version"] == "580.95.05"
    # "driver not loaded" concerns the host driver only: the operator's driver does DMA-BUF.
    assert result["decisions"]["gpudirect_rdma"]["mode"] == "dma_buf"
    assert result["values"]["driver"]["rdma"]["useHostMofed"] is False


def _operator_host(fleet_facts):
    """A GPU host with no driver loaded: the operator installs it."""
    bare = copy.deepcopy(fleet_facts["broken_node"])
    bare["peermem"]["dma_buf"]["reasons"] = [{"code": "no_driver", "message": "NVIDIA driver not loaded"}]
    return bare


@pytest.mark.parametrize(("settings", "module_type", "rdma"), [
    pytest.param({}, "open", "dma_buf", id="dma-buf-needs-open"),
    pytest.param({"gpudirect_rdma": "off"}, "auto", "off", id="no-rdma-operator-chooses"),
    pytest.param({"legacy_peermem": True}, "auto", "legacy", id="legacy-operator-chooses"),
    pytest.param({"kernel_module_type": "open", "gpudirect_rdma": "off"}, "open", "off", id="open-asked"),
    pytest.param({"kernel_module_type": "proprietary"}, "proprietary", "legacy", id="proprietary-means-legacy"),
    pytest.param({"kernel_module_type": "proprietary", "legacy_peermem": True}, "proprietary", "legacy",
                 id="proprietary-with-legacy"),
])
def test_kernel_module_type_of_the_operator_driver(fleet_facts, settings, module_type, rdma):
    result = gpu_operator_values(hostvars(a=_operator_host(fleet_facts)), ["a"], settings)
    assert result["values"]["driver"]["kernelModuleType"] == module_type
    assert result["decisions"]["kernel_module_type"]["mode"] == module_type
    assert result["decisions"]["gpudirect_rdma"]["mode"] == rdma
    assert result["values"]["driver"]["rdma"]["enabled"] is (rdma == "legacy")


def test_the_hosts_own_driver_gets_no_kernel_module_type(fleet_facts):
    result = gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"]), ["a"])
    assert "kernelModuleType" not in result["values"]["driver"]
    assert result["decisions"]["kernel_module_type"] == {"mode": None,
                                                         "reason": "the hosts' own driver: its modules are the hosts'"}


@pytest.mark.parametrize(("tree", "settings", "message"), [
    pytest.param("operator", {"kernel_module_type": "proprietary", "gpudirect_rdma": "dma_buf"},
                 "gpu_operator_values: gpu_operator_gpudirect_rdma is dma_buf but gpu_operator_kernel_module_type is "
                 "proprietary: DMA-BUF needs the NVIDIA open kernel modules; set one of them",
                 id="proprietary-dma-buf"),
    pytest.param("gb200_tray", {"kernel_module_type": "open"},
                 "gpu_operator_values: gpu_operator_kernel_module_type is open but the NVIDIA driver is the hosts' own "
                 "(gpu_operator_driver decided host): the setting applies only to a driver the operator installs; "
                 "leave it auto", id="host-driver"),
    pytest.param("operator", {"kernel_module_type": "closed"},
                 "gpu_operator_kernel_module_type must be one of auto, open, proprietary", id="unknown"),
    pytest.param("operator", {"kernel_module_type": True},
                 "gpu_operator_kernel_module_type", id="boolean"),
])
def test_kernel_module_type_conflicts_are_refused_naming_both(fleet_facts, tree, settings, message):
    host = _operator_host(fleet_facts) if tree == "operator" else fleet_facts[tree]
    with pytest.raises(AnsibleFilterError) as caught:
        gpu_operator_values(hostvars(a=host), ["a"], settings)
    assert message in str(caught.value)


@pytest.mark.parametrize(("settings", "message"), [
    ({"gpudirect_rdma": "dma_buf", "legacy_peermem": True},
     "gpu_operator_legacy_peermem is true but gpu_operator_gpudirect_rdma is dma_buf"),
    ({"gpudirect_rdma": "off", "legacy_peermem": True}, "gpu_operator_gpudirect_rdma is off"),
    ({"driver": "vendor"}, "gpu_operator_driver must be one of auto, host, operator"),
    ({"colour": "green"}, "unknown setting"),
    ({"image_pull_secrets": "one"}, "gpu_operator_image_pull_secrets must be a list"),
])
def test_bad_intent(fleet_facts, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"]), ["a"], settings)


def test_mixed_driver_missing_facts_and_gpu_less_host(fleet_facts):
    with pytest.raises(AnsibleFilterError, match="loaded on a and not on b"):
        gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"], b=fleet_facts["broken_node"]), ["a", "b"])
    with pytest.raises(AnsibleFilterError, match=r"no ansible_facts\['gpufabric'\] for ghost"):
        gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"]), ["a", "ghost"])
    with pytest.raises(AnsibleFilterError, match="plain in gpu_operator_hosts report no NVIDIA GPU"):
        gpu_operator_values(hostvars(plain=fleet_facts["no_nvidia"]), ["plain"])


def test_registry_and_pull_secrets(fleet_facts):
    values = gpu_operator_values(hostvars(a=fleet_facts["gb200_tray"]), ["a"], {
        "image_registry": "mirror.example.com/nv/", "image_pull_secrets": ["ngc", {"name": "ngc"}]})["values"]
    assert values["toolkit"]["repository"] == "mirror.example.com/nv/k8s"
    assert values["operator"] == {"repository": "mirror.example.com/nv", "imagePullSecrets": ["ngc"]}


@pytest.mark.parametrize(("reasons", "operator_driver", "expected"), [
    pytest.param([{"code": "no_driver", "message": "whatever the wording"}], True, [], id="code-not-text"),
    pytest.param([{"code": "kernel_too_old", "message": "NVIDIA driver not loaded (misleading text)"}], True,
                 ["NVIDIA driver not loaded (misleading text)"], id="text-does-not-decide"),
    pytest.param([{"code": "proprietary_modules", "message": "proprietary"}], False, ["proprietary"], id="host-driver"),
    pytest.param([], False, ["DMA-BUF support unknown"], id="no-reason"),
    pytest.param(["a cached message"], True, ["a cached message"], id="bare-message"),
])
def test_dma_buf_decides_on_codes(reasons, operator_driver, expected):
    from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dma_buf import blocking_messages

    assert blocking_messages({"supported": False, "reasons": reasons}, operator_driver) == expected
    assert blocking_messages({"supported": True, "reasons": []}, operator_driver) == []


def test_gpu_cluster_path_deploys_the_gpu_cluster_instead_of_the_cluster_policy(fleet_facts):
    trays = hostvars(a=fleet_facts["gb200_tray"])
    plain = gpu_operator_values(trays, ["a"])
    assert "clusterPolicy" not in plain["values"] and "gpuCluster" not in plain["values"]
    assert plain["decisions"]["dra_driver"]["mode"] == "none"
    result = gpu_operator_values(trays, ["a"], {"dra_driver_via_gpu_cluster": "true"})
    assert result["values"]["clusterPolicy"] == {"deployCR": False}
    assert result["values"]["gpuCluster"] == {"deployCR": True}
    # The hosts' own driver: no NVIDIADriver needed.
    assert "nvidiaDriverCRD" not in result["values"]["driver"]
    assert result["decisions"]["dra_driver"]["mode"] == "gpu_cluster"
    operator = gpu_operator_values(trays, ["a"], {"dra_driver_via_gpu_cluster": True, "driver": "operator"})
    assert operator["values"]["driver"]["nvidiaDriverCRD"] == {"enabled": True}
    with pytest.raises(AnsibleFilterError, match="gpu_operator_dra_driver_via_gpu_cluster"):
        gpu_operator_values(trays, ["a"], {"dra_driver_via_gpu_cluster": "maybe"})
