# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dra_driver_values filter: GPU resources consistent with the GPU Operator, the driver root."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.dra_driver_values import dra_driver_values

LEGACY = {"chart_version": "25.12.0"}
SIGS = {"chart_version": "0.4.1"}


def test_beside_the_device_plugin_and_an_operator_driver():
    result = dra_driver_values({"device_plugin": True, "driver_enabled": True,
                                "driver_install_dir": "/run/nvidia/driver"}, LEGACY)
    assert result["values"] == {"nvidiaDriverRoot": "/run/nvidia/driver", "webhook": {"enabled": False},
                                "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}}
    assert result["decisions"]["chart"] == {"line": "legacy", "name": "nvidia-dra-driver-gpu", "version": "25.12.0"}


def test_alone_publishes_the_gpus():
    values = dra_driver_values({}, {"image_pull_secrets": ["ngc"], "image_registry": "m.example.com",
                                    **LEGACY})["values"]
    assert values["resources"]["gpus"] == {"enabled": True} and values["gpuResourcesEnabledOverride"] is True
    assert values["nvidiaDriverRoot"] == "/"
    assert values["imagePullSecrets"] == [{"name": "ngc"}]
    assert values["image"] == {"repository": "m.example.com/k8s-dra-driver-gpu"}
    assert "nameOverride" not in values


@pytest.mark.parametrize("version", ["0.4.1", "0.4.0", "0.5.0-dev", "v0.5.0", "1.0.0"])
def test_sigs_chart_keeps_the_object_names_and_takes_its_image_from_its_registry(version):
    result = dra_driver_values({"device_plugin": True}, {"chart_version": version, "image_registry": "m.example.com/"})
    values = result["values"]
    assert values["nameOverride"] == "nvidia-dra-driver-gpu"
    assert values["image"] == {"repository": "m.example.com/dra-driver-nvidia-gpu"}
    assert result["decisions"]["chart"]["name"] == "dra-driver-nvidia-gpu"
    # the keys both lines share are the same
    legacy = dra_driver_values({"device_plugin": True}, {"chart_version": "25.12.0"})["values"]
    assert {k: v for k, v in values.items() if k not in ("nameOverride", "image")} == legacy


def test_sigs_chart_without_registry_keeps_the_chart_image():
    assert "image" not in dra_driver_values({}, SIGS)["values"]


@pytest.mark.parametrize(("version", "message"), [
    ("", "dra_driver_chart_version is empty"),
    ("0.3.2", "neither a calendar version"),
    ("0.1.0", "neither a calendar version"),
    ("latest", "is not a chart version"),
    (True, "must be a string"),
    ([], "must be a string"),
])
def test_chart_version_required_and_known(version, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values({}, {"chart_version": version})


@pytest.mark.parametrize(("operator", "settings", "message"), [
    ({"device_plugin": True}, {"gpus": "enabled"}, "the GPUs would be published twice"),
    ({"device_plugin": True}, {"compute_domains": False}, "the DRA driver would do nothing"),
    ({}, {"gpus": "yes"}, "dra_driver_gpus must be auto, enabled or disabled"),
])
def test_conflicts(operator, settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values(operator, {**SIGS, **settings})


@settings(max_examples=300, deadline=None)
@given(version=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                         st.from_regex(r"\Av?[0-9]{1,2}\.[0-9]{1,2}\.[0-9]{1,2}(-[a-z]{1,3})?\Z")),
       registry=st.sampled_from(["", "m.example.com", "m.example.com/"]))
def test_property_values_for_the_line_or_a_clear_error(version, registry):
    """Any chart version gives the values of its line, or an error naming dra_driver_chart_version."""
    try:
        result = dra_driver_values({}, {"chart_version": version, "image_registry": registry})
    except AnsibleFilterError as exc:
        assert str(exc).startswith("dra_driver_values: dra_driver_chart_version"), str(exc)
        return
    values, chart = result["values"], result["decisions"]["chart"]
    assert chart["line"] in ("legacy", "sigs")
    assert ("nameOverride" in values) == (chart["line"] == "sigs")
    if registry:
        leaf = "dra-driver-nvidia-gpu" if chart["line"] == "sigs" else "k8s-dra-driver-gpu"
        assert values["image"] == {"repository": f"m.example.com/{leaf}"}


# Host-managed IMEX (dra_host_managed) and the clique label (0.5 and later).
DEV = {"chart_version": "0.5.0-dev"}
SOCKET = "/etc/nvidia-imex/imex_ctrl.sock"


@pytest.mark.parametrize("version", ["0.5.0-dev", "0.5.0", "v0.5.1", "0.6.0", "1.0.0"])
def test_host_managed_sets_the_gate_the_mode_and_the_socket(version):
    result = dra_driver_values({"device_plugin": True}, {"chart_version": version, "imex_mode": "dra_host_managed",
                                                         "imex_socket_path": "/run/imex/ctl.sock"})
    values = result["values"]
    assert values["featureGates"] == {"HostManagedIMEXDaemon": True}
    assert values["resources"]["computeDomains"] == {"enabled": True, "imex": {"mode": "hostManaged",
                                                                               "hostSocketPath": "/run/imex/ctl.sock"}}
    assert result["decisions"]["imex"]["mode"] == "hostManaged"
    assert result["decisions"]["imex"]["socket_path"] == "/run/imex/ctl.sock"


@pytest.mark.parametrize("mode", ["host", "dra"])
@pytest.mark.parametrize("version", ["25.12.0", "0.4.1", "0.5.0-dev"])
def test_host_and_dra_modes_leave_the_values_as_they_were(mode, version):
    settings = {"chart_version": version, "imex_socket_path": "/elsewhere.sock"}
    result = dra_driver_values({"device_plugin": True}, {**settings, "imex_mode": mode})
    assert result["values"] == dra_driver_values({"device_plugin": True}, {"chart_version": version})["values"]
    assert "featureGates" not in result["values"] and "imex" not in result["values"]["resources"]["computeDomains"]
    assert result["decisions"]["imex"] == {
        "mode": "driverManaged", "socket_path": None,
        "reason": f"dra_driver_imex_mode is {mode}: the DRA driver runs IMEX per ComputeDomain"}


@pytest.mark.parametrize(("version", "chart"), [("0.4.1", "dra-driver-nvidia-gpu 0.4.1"),
                                                ("0.4.9-rc.1", "dra-driver-nvidia-gpu 0.4.9-rc.1"),
                                                ("25.12.0", "nvidia-dra-driver-gpu 25.12.0")])
def test_host_managed_refuses_a_chart_older_than_0_5_naming_it(version, chart):
    with pytest.raises(AnsibleFilterError, match=f"dra_driver_imex_mode is dra_host_managed but the chart is {chart}: "
                                                 "host-managed IMEX"):
        dra_driver_values({}, {"chart_version": version, "imex_mode": "dra_host_managed"})


def test_host_managed_without_compute_domains_sets_nothing():
    result = dra_driver_values({}, {**DEV, "imex_mode": "dra_host_managed", "compute_domains": "false"})
    assert "featureGates" not in result["values"] and "kubeletPlugin" not in result["values"]
    assert result["values"]["resources"]["computeDomains"] == {"enabled": False}
    assert result["decisions"]["imex"]["mode"] is None and result["decisions"]["clique_label"]["source"] is None


@pytest.mark.parametrize(("settings", "message"), [
    ({"imex_mode": "bogus"}, "dra_driver_imex_mode must be one of host, dra, dra_host_managed, got 'bogus'"),
    ({"imex_mode": True}, "dra_driver_imex_mode must be a string, got bool"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": ""}, "dra_driver_imex_socket_path must be the absolute"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "imex.sock"}, "dra_driver_imex_socket_path must be"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "/etc/nvidia-imex/"}, "dra_driver_imex_socket_path must"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "/a b.sock"}, "dra_driver_imex_socket_path must be"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": ["/x"]}, "dra_driver_imex_socket_path must be a string"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": False}, "dra_driver_imex_socket_path must be a string"),
    # issue 39 item 9: a socket another local user can take, or a path that climbs out of its directory
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "/tmp/imex.sock"},
     "^dra_driver_values: dra_driver_imex_socket_path '/tmp/imex.sock' lies under /tmp, which every local user may "
     "write"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "/dev/shm/imex.sock"}, "lies under /dev/shm, which every"),
    ({"imex_mode": "dra_host_managed", "imex_socket_path": "/etc/nvidia-imex/../../var/tmp/ctl.sock"},
     r"^dra_driver_values: dra_driver_imex_socket_path must be the absolute path of the IMEX control socket in its "
     r"normal form, got '/etc/nvidia-imex/\.\./\.\./var/tmp/ctl\.sock', which has a '\.', '\.\.' or empty component"),
])
def test_bad_imex_settings(settings, message):
    with pytest.raises(AnsibleFilterError, match=message):
        dra_driver_values({}, {**DEV, **settings})


@pytest.mark.parametrize(("operator", "source"), [
    ({}, "dra_driver"),
    (None, "dra_driver"),
    ({"device_plugin": True, "gfd": False}, "dra_driver"),
    ({"device_plugin": True, "gfd": "false"}, "dra_driver"),
    ({"device_plugin": True, "gfd": "no"}, "dra_driver"),
    ({"device_plugin": True}, "gfd"),
    ({"device_plugin": False, "gfd": True}, "gfd"),
    ({"driver_enabled": "true", "gfd": "true"}, "gfd"),
])
def test_clique_label_where_no_gpu_feature_discovery_runs(operator, source):
    result = dra_driver_values(operator, DEV)
    assert result["decisions"]["clique_label"]["source"] == source
    label = result["values"].get("kubeletPlugin")
    assert label == ({"containers": {"computeDomains": {"gpuCliqueLabelEnabled": True}}} if source == "dra_driver"
                     else None)


@pytest.mark.parametrize("version", ["0.4.1", "25.12.0"])
def test_older_charts_have_no_clique_label_value(version):
    result = dra_driver_values({}, {"chart_version": version})
    assert "kubeletPlugin" not in result["values"]
    assert result["decisions"]["clique_label"]["source"] is None
    assert "cannot label the nodes (0.5 or later can)" in result["decisions"]["clique_label"]["reason"]


@pytest.mark.parametrize("gfd", ["maybe", [], {}, 2])
def test_bad_gfd_flag(gfd):
    with pytest.raises(AnsibleFilterError, match=r"gpu_operator\.gfd must be a boolean"):
        dra_driver_values({"device_plugin": True, "gfd": gfd}, DEV)


FLAGS = st.one_of(st.none(), st.booleans(), st.sampled_from(["true", "false", "yes", "no", "maybe", "", 0, 1, 2]),
                  st.lists(st.booleans(), max_size=1))


@settings(max_examples=300, deadline=None)
@given(version=st.sampled_from(["25.12.0", "0.4.1", "0.5.0-dev", "0.5.0", "1.2.3", "", "0.3.0", "x"]),
       mode=st.one_of(st.sampled_from(["host", "dra", "dra_host_managed", "bogus"]), st.booleans(), st.none()),
       socket=st.one_of(st.sampled_from([SOCKET, "/run/x.sock", "", "rel.sock", "/d/", "/a b"]), st.integers(),
                        st.booleans(), st.none()),
       gfd=FLAGS, operator_present=st.booleans(), compute_domains=st.sampled_from([True, False, "false", "true"]))
def test_property_imex_and_clique_values_or_a_clear_error(version, mode, socket, gfd, operator_present,
                                                          compute_domains):
    """Every combination gives the documented values or an error naming the setting at fault."""
    operator = {"device_plugin": True, "gfd": gfd} if operator_present else {}
    settings_ = {"chart_version": version, "imex_mode": mode, "imex_socket_path": socket,
                 "compute_domains": compute_domains}
    try:
        result = dra_driver_values(operator, settings_)
    except AnsibleFilterError as exc:
        message = str(exc)
        assert message.startswith("dra_driver_values: ") and any(name in message for name in (
            "dra_driver_chart_version", "dra_driver_imex_mode", "dra_driver_imex_socket_path", "gpu_operator.gfd",
            "the DRA driver would do nothing")), message
        return
    values, decisions = result["values"], result["decisions"]
    domains = compute_domains in (True, "true")
    host_managed = domains and mode == "dra_host_managed"
    assert ("featureGates" in values) == host_managed
    if host_managed:
        path = SOCKET if socket is None else str(socket)  # null keeps the default
        assert values["resources"]["computeDomains"]["imex"] == {"mode": "hostManaged", "hostSocketPath": path}
        assert path.startswith("/") and version not in ("25.12.0", "0.4.1")
    else:
        assert "imex" not in values["resources"]["computeDomains"]
    assert decisions["imex"]["mode"] == (None if not domains else "hostManaged" if host_managed else "driverManaged")
    gfd_runs = operator_present and (gfd is None or gfd in (True, "true", "yes", 1))
    labels = domains and not gfd_runs and version in ("0.5.0-dev", "0.5.0", "1.2.3")
    assert ("kubeletPlugin" in values) == labels
    assert decisions["clique_label"]["source"] == (None if not domains else "gfd" if gfd_runs
                                                   else "dra_driver" if labels else None)
