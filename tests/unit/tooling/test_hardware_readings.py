# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/hardware/hardware_readings.py: the hardware tier's independent readings, on recorded trees and documents.

The readings decide whether a hardware test applies and what it compares with, so each one is checked here where no
GPU is: the PCI functions on the recorded hosts, nvidia-smi's XML, NVML through a stand-in of nvidia-ml-py, and what
the run says on a host that shows no NVIDIA GPU.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from xml.etree import ElementTree

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import normalize_pci_address

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("hardware_readings",
                                               os.path.join(ROOT, "tests", "hardware", "hardware_readings.py"))
readings = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("hardware_readings", readings)
_SPEC.loader.exec_module(readings)

# The shape of `nvidia-smi -q -x` (driver 5xx), the elements the readings use, with one H100 as NVIDIA documents it.
SMI_XML = """<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">
<nvidia_smi_log>
  <timestamp>Fri Nov 28 02:00:00 2026</timestamp>
  <driver_version>580.159.04</driver_version>
  <cuda_version>13.0</cuda_version>
  <attached_gpus>1</attached_gpus>
  <gpu id="00000000:1B:00.0">
    <product_name>NVIDIA H100 80GB HBM3</product_name>
    <persistence_mode>Enabled</persistence_mode>
    <mig_mode><current_mig>Disabled</current_mig><pending_mig>Disabled</pending_mig></mig_mode>
    <uuid>GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000000</uuid>
    <pci><pci_bus_id>00000000:1B:00.0</pci_bus_id></pci>
    <fb_memory_usage><total>81559 MiB</total><reserved>551 MiB</reserved></fb_memory_usage>
    <fabric><state>N/A</state><status>N/A</status><cliqueId>N/A</cliqueId><clusterUuid>N/A</clusterUuid></fabric>
  </gpu>
</nvidia_smi_log>
"""


def test_nvidia_smi_s_document_is_read():
    assert readings.parse_nvidia_smi_xml(SMI_XML) == {
        "driver_version": "580.159.04", "cuda_version": "13.0",
        "gpus": [{"pci_bus_id": "00000000:1B:00.0", "uuid": "GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000000",
                  "name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "persistence_mode": True,
                  "mig_current": False, "mig_pending": False, "fabric_state": "N/A", "fabric_clique_id": "N/A",
                  "fabric_cluster_uuid": "N/A"}]}


def test_a_field_nvidia_smi_leaves_out_or_gives_as_n_a_is_none():
    parsed = readings.parse_nvidia_smi_xml(
        "<nvidia_smi_log><gpu id='00000000:01:00.0'><fb_memory_usage><total>N/A</total></fb_memory_usage>"
        "<mig_mode><current_mig>N/A</current_mig></mig_mode></gpu></nvidia_smi_log>")
    assert parsed["driver_version"] is None
    gpu = parsed["gpus"][0]
    assert (gpu["memory_total_mib"], gpu["mig_current"], gpu["mig_pending"], gpu["uuid"], gpu["fabric_state"]) == (
        None, None, None, None, None)


TEXT = st.text(st.characters(codec="ascii", exclude_categories=("Cc", "Cs")), max_size=12)


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.lists(st.fixed_dictionaries({
    "uuid": TEXT, "name": TEXT, "total": st.integers(0, 10 ** 6) | st.just(None),
    "persistence": st.sampled_from(["Enabled", "Disabled", "N/A"])}), max_size=4), TEXT)
def test_every_gpu_of_a_document_is_read_as_written(gpus, driver):
    log = ElementTree.Element("nvidia_smi_log")
    ElementTree.SubElement(log, "driver_version").text = driver
    for index, gpu in enumerate(gpus):
        element = ElementTree.SubElement(log, "gpu", id=f"00000000:{index:02X}:00.0")
        ElementTree.SubElement(element, "uuid").text = gpu["uuid"]
        ElementTree.SubElement(element, "product_name").text = gpu["name"]
        ElementTree.SubElement(ElementTree.SubElement(element, "fb_memory_usage"), "total").text = (
            "N/A" if gpu["total"] is None else f"{gpu['total']} MiB")
        ElementTree.SubElement(element, "persistence_mode").text = gpu["persistence"]
    parsed = readings.parse_nvidia_smi_xml(ElementTree.tostring(log, encoding="unicode"))
    assert parsed["driver_version"] == (driver.strip() or None)
    assert [(g["uuid"], g["name"], g["memory_total_mib"], g["persistence_mode"]) for g in parsed["gpus"]] == [
        (g["uuid"].strip() or None, g["name"].strip() or None, g["total"],
         {"Enabled": True, "Disabled": False}.get(g["persistence"])) for g in gpus]


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.text(max_size=80))
def test_anything_else_is_a_clear_error(text):
    try:
        parsed = readings.parse_nvidia_smi_xml(text)
    except ValueError as exc:
        assert str(exc).startswith("nvidia-smi -q -x: ") and "\n" not in str(exc)
    else:
        assert set(parsed) == {"driver_version", "cuda_version", "gpus"}


def test_a_document_of_another_kind_is_refused_by_its_root():
    with pytest.raises(ValueError, match=r"the document is <html>, not <nvidia_smi_log>"):
        readings.parse_nvidia_smi_xml("<html/>")


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.integers(0, 0xFFFF), st.integers(0, 0xFF), st.integers(0, 0x1F), st.integers(0, 7), st.booleans())
def test_a_bus_id_is_normalised_as_the_probe_normalises_it(domain, bus, device, function, nvml_form):
    bus_id = f"{domain:08X}:{bus:02X}:{device:02X}.{function}" if nvml_form else \
        f"{domain:04x}:{bus:02x}:{device:02x}.{function}"
    assert readings.normalize_bus_id(bus_id) == normalize_pci_address(bus_id)


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.text(max_size=20))
def test_what_is_not_a_bus_id_is_refused_as_the_probe_refuses_it(text):
    try:
        expected = normalize_pci_address(text)
    except ParseError:
        with pytest.raises(ValueError, match="is not a PCI bus id"):
            readings.normalize_bus_id(text)
    else:
        assert readings.normalize_bus_id(text) == expected


# --- the host -------------------------------------------------------------------------------------


def test_the_pci_functions_of_a_recorded_host(host_trees):
    pci = readings.read_pci_functions(host_trees["hgx_h100"])
    gpus = [function for function in pci.value if function.is_nvidia_gpu]
    assert [gpu.address for gpu in gpus] == ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
                                             "0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0"]
    assert {(gpu.device, gpu.driver) for gpu in gpus} == {("0x2330", "nvidia")}
    assert [gpu.numa_node for gpu in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]


def test_a_host_without_a_pci_bus_or_a_module_list_says_so(tmp_path):
    (tmp_path / "sys").mkdir()
    host = readings.read_host(str(tmp_path), nvidia_smi=readings.Reading(None, "nvidia-smi is not installed"),
                              nvml=readings.Reading(None, "nvidia-ml-py is not installed"))
    assert host.pci.reason == "/sys/bus/pci/devices is absent (a sandboxed kernel shows no PCI bus)"
    assert host.proc_modules.reason == "/proc/modules is absent (a sandboxed kernel may show no module list)"
    assert host.infiniband.value == ()
    assert host.evidence() == []
    assert host.no_gpu_reason() == (
        "no NVIDIA GPU here (/sys/bus/pci/devices: /sys/bus/pci/devices is absent (a sandboxed kernel shows no PCI "
        "bus); NVML: nvidia-ml-py is not installed; nvidia-smi: nvidia-smi is not installed; "
        "/proc/driver/nvidia/version and /sys/module/nvidia/version: absent)")


def test_a_host_whose_sandbox_hides_pci_but_whose_nvml_answers_has_a_gpu(tmp_path):
    (tmp_path / "sys").mkdir()
    nvml = readings.Reading({"device_count": 1, "driver_version": "580.159.04", "gpus": []})
    host = readings.read_host(str(tmp_path), nvidia_smi=readings.Reading(None, "absent"), nvml=nvml)
    assert host.evidence() == ["NVML: 1 GPU(s)"]


def test_a_recorded_gpu_host_shows_its_gpus_and_its_driver(host_trees):
    host = readings.read_host(host_trees["hgx_h100"], nvidia_smi=readings.Reading(None, "absent"),
                              nvml=readings.Reading(None, "absent"))
    assert host.evidence() == ["/sys/bus/pci/devices: 8 NVIDIA GPU function(s)",
                               "/proc/driver/nvidia/version: present", "/sys/module/nvidia/version: present"]
    assert "nvidia" in host.proc_modules.value


def test_a_host_without_nvidia_shows_nothing(host_trees):
    host = readings.read_host(host_trees["no_nvidia"], nvidia_smi=readings.Reading(None, "absent"),
                              nvml=readings.Reading(None, "absent"))
    assert host.evidence() == []
    assert host.no_gpu_reason().startswith(readings.NO_GPU + " (/sys/bus/pci/devices: no NVIDIA GPU function among ")


# --- NVML and nvidia-smi, run --------------------------------------------------------------------


class _NVMLError(Exception):
    pass


def _stand_in_pynvml(init_error: str | None = None) -> types.ModuleType:
    """A stand-in of nvidia-ml-py's ``pynvml`` with one H100 (or an ``nvmlInit`` that fails)."""
    module = types.ModuleType("pynvml")
    module.NVMLError = _NVMLError

    def init():
        if init_error:
            raise _NVMLError(init_error)
    module.nvmlInit = init
    module.nvmlShutdown = lambda: None
    module.nvmlDeviceGetCount = lambda: 1
    module.nvmlDeviceGetHandleByIndex = lambda index: index
    module.nvmlDeviceGetUUID = lambda handle: b"GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000000"
    module.nvmlDeviceGetName = lambda handle: "NVIDIA H100 80GB HBM3"
    module.nvmlDeviceGetPciInfo = lambda handle: types.SimpleNamespace(busId=b"00000000:1B:00.0")
    module.nvmlSystemGetDriverVersion = lambda: "580.159.04"
    return module


def test_nvml_is_read_directly(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _stand_in_pynvml())
    assert readings.read_nvml().value == {
        "device_count": 1, "driver_version": "580.159.04",
        "gpus": [{"uuid": "GPU-8f6b2c1e-4d3a-11ee-9c1a-000000000000", "name": "NVIDIA H100 80GB HBM3",
                  "pci_bus_id": "00000000:1B:00.0"}]}


def test_an_nvml_that_does_not_start_gives_its_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _stand_in_pynvml("NVML Shared Library Not Found"))
    assert readings.read_nvml() == readings.Reading(None, "nvmlInit failed: _NVMLError: NVML Shared Library Not Found")


def test_without_nvidia_ml_py_nvml_is_not_read(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    assert readings.read_nvml() == readings.Reading(None, "nvidia-ml-py is not installed")


def _tool(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(tmp_path)


def test_nvidia_smi_is_run_and_read(tmp_path, monkeypatch):
    (tmp_path / "smi.xml").write_text(SMI_XML)
    monkeypatch.setenv("PATH", _tool(tmp_path, "nvidia-smi", f"exec /bin/cat {tmp_path / 'smi.xml'}\n"))
    smi = readings.read_nvidia_smi()
    assert smi.value["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


@pytest.mark.parametrize(("body", "reason"), [
    (None, "nvidia-smi is not installed (not on PATH)"),
    ("echo 'NVIDIA-SMI has failed' ; exit 9\n", "nvidia-smi -q -x exited 9"),
    ("echo 'No devices were found'\n", "nvidia-smi -q -x: not XML (syntax error: line 1, column 0)"),
], ids=["absent", "failing", "not-xml"])
def test_an_nvidia_smi_that_gives_no_document_gives_the_reason(tmp_path, monkeypatch, body, reason):
    monkeypatch.setenv("PATH", _tool(tmp_path, "nvidia-smi", body) if body else str(tmp_path))
    assert readings.read_nvidia_smi() == readings.Reading(None, reason)
