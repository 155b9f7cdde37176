# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware tier's independent readings of the host: what the probe modules are compared against.

Each reading goes its own way, never through the collection's code: the PCI functions straight from
``/sys/bus/pci/devices``, ``nvidia-smi -q -x`` parsed here, NVML asked directly through nvidia-ml-py, the kernel from
``os.uname()``.  A sandboxed kernel (gVisor, Firecracker) may lack ``/sys/bus/pci`` or ``/proc/modules`` or hide the
driver's files: each reading then carries ``None`` and the reason, which the tests that need it give when they do not
apply (``pytest.skip``), and which ``tools/hardware-run.sh`` prints in its summary.

Standard library only (plus nvidia-ml-py where installed), Python 3.9+: ``tools/hardware_run.py`` loads this file on
the lent GPU machine to record the same readings beside the NVML answers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import typing as t
from dataclasses import dataclass, field
from xml.etree import ElementTree

# The verdict when nothing shows an NVIDIA GPU; tools/hardware-run.sh prints it and exits 0.
NO_GPU = "no NVIDIA GPU here"

NVIDIA_VENDOR = "0x10de"
MELLANOX_VENDOR = "0x15b3"
GPU_CLASSES = ("0x0300", "0x0302")  # PCI base class and subclass: VGA compatible, 3D controller
PCI_DEVICES = "/sys/bus/pci/devices"
INFINIBAND = "/sys/class/infiniband"
PROC_MODULES = "/proc/modules"
# Where the nvidia kernel module shows itself; either one is enough for the probe to call the driver loaded.
DRIVER_FILES = ("/proc/driver/nvidia/version", "/sys/module/nvidia/version")
NVIDIA_SMI_TIMEOUT = 60
MIB = 1024 * 1024


@dataclass(frozen=True)
class PciFunction:
    """A PCI function as sysfs shows it (the attributes read here only)."""

    address: str  # 0000:1b:00.0
    vendor: str  # 0x10de
    pci_class: str  # 0x030200
    device: str | None  # 0x2330
    numa_node: int | None  # None: no NUMA affinity (-1) or not shown
    driver: str | None  # the bound driver's name, None when none

    @property
    def is_nvidia_gpu(self) -> bool:
        """An NVIDIA display or 3D controller function (not an NVSwitch, class 0x0680)."""
        return self.vendor == NVIDIA_VENDOR and self.pci_class[:6] in GPU_CLASSES


@dataclass(frozen=True)
class Reading:
    """One independent reading: its value, or ``None`` and why there is none."""

    value: t.Any
    reason: str | None = None

    @property
    def present(self) -> bool:
        """Whether the reading could be taken."""
        return self.value is not None


@dataclass
class HostReadings:
    """Every independent reading of one host, taken once per test session."""

    pci: Reading  # tuple[PciFunction, ...]
    nvidia_smi: Reading  # the parsed nvidia-smi -q -x (parse_nvidia_smi_xml)
    nvml: Reading  # direct NVML: {"device_count", "driver_version", "gpus": [{"uuid", "name", "pci_bus_id"}]}
    infiniband: Reading  # tuple of (rdma device, PCI address) of /sys/class/infiniband
    proc_modules: Reading  # tuple of the loaded modules' names
    driver_files: dict = field(default_factory=dict)  # path -> whether it exists
    kernel_release: str = ""

    def evidence(self) -> list[str]:
        """What shows an NVIDIA GPU here, one line per reading that does; empty when none does."""
        found = []
        if self.pci.present and any(function.is_nvidia_gpu for function in self.pci.value):
            found.append(f"{PCI_DEVICES}: {sum(f.is_nvidia_gpu for f in self.pci.value)} NVIDIA GPU function(s)")
        if self.nvml.present and self.nvml.value["device_count"] > 0:
            found.append(f"NVML: {self.nvml.value['device_count']} GPU(s)")
        if self.nvidia_smi.present and self.nvidia_smi.value["gpus"]:
            found.append(f"nvidia-smi: {len(self.nvidia_smi.value['gpus'])} GPU(s)")
        found.extend(f"{path}: present" for path, there in sorted(self.driver_files.items()) if there)
        return found

    def no_gpu_reason(self) -> str:
        """``NO_GPU`` and what was looked at, for a host where :meth:`evidence` is empty."""
        pci = (f"no NVIDIA GPU function among {len(self.pci.value)}" if self.pci.present else self.pci.reason)
        nvml = "0 GPUs" if self.nvml.present else self.nvml.reason
        smi = "0 GPUs" if self.nvidia_smi.present else self.nvidia_smi.reason
        return (f"{NO_GPU} ({PCI_DEVICES}: {pci}; NVML: {nvml}; nvidia-smi: {smi}; "
                f"{' and '.join(DRIVER_FILES)}: absent)")


# --- sysfs ---------------------------------------------------------------------------------------


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def read_pci_functions(root: str = "/") -> Reading:
    """Every PCI function below ``root`` (``Reading(None, reason)`` when the kernel shows no PCI bus there)."""
    devices = os.path.join(root, PCI_DEVICES.lstrip("/"))
    try:
        names = sorted(os.listdir(devices))
    except FileNotFoundError:
        return Reading(None, f"{PCI_DEVICES} is absent (a sandboxed kernel shows no PCI bus)")
    except OSError as exc:
        return Reading(None, f"{PCI_DEVICES} cannot be listed ({exc.strerror})")
    functions = []
    for name in names:
        base = os.path.join(devices, name)
        numa = _read(os.path.join(base, "numa_node"))
        try:
            numa_node = int(numa) if numa is not None and int(numa) >= 0 else None
        except ValueError:
            numa_node = None
        try:
            driver: str | None = os.path.basename(os.readlink(os.path.join(base, "driver")))
        except OSError:  # no driver bound
            driver = None
        functions.append(PciFunction(
            address=name.lower(),
            vendor=(_read(os.path.join(base, "vendor")) or "").lower(),
            pci_class=(_read(os.path.join(base, "class")) or "").lower(),
            device=(_read(os.path.join(base, "device")) or None),
            numa_node=numa_node,
            driver=driver,
        ))
    return Reading(tuple(functions))


def read_infiniband(root: str = "/") -> Reading:
    """The RDMA devices of ``/sys/class/infiniband`` with the PCI address each sits on (empty when none)."""
    if not os.path.isdir(os.path.join(root, "sys")):
        return Reading(None, "/sys is absent")
    directory = os.path.join(root, INFINIBAND.lstrip("/"))
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return Reading(())
    except OSError as exc:
        return Reading(None, f"{INFINIBAND} cannot be listed ({exc.strerror})")
    devices = []
    for name in names:
        target = os.path.realpath(os.path.join(directory, name, "device"))
        devices.append((name, os.path.basename(target).lower()))
    return Reading(tuple(devices))


def read_proc_modules(root: str = "/") -> Reading:
    """The names of the loaded kernel modules from ``/proc/modules``."""
    text = _read(os.path.join(root, PROC_MODULES.lstrip("/")))
    if text is None:
        return Reading(None, f"{PROC_MODULES} is absent (a sandboxed kernel may show no module list)")
    return Reading(tuple(line.split()[0] for line in text.splitlines() if line.strip()))


# --- nvidia-smi ----------------------------------------------------------------------------------


def _text(element: ElementTree.Element | None, path: str) -> str | None:
    found = None if element is None else element.find(path)
    if found is None or found.text is None:
        return None
    text = found.text.strip()
    return text or None


def _mib(text: str | None) -> int | None:
    """``'81559 MiB'`` -> 81559; ``None`` for anything else (``'N/A'``)."""
    if text is None:
        return None
    number, _space, unit = text.partition(" ")
    if unit.strip() != "MiB" or not number.isdigit():
        return None
    return int(number)


def _enabled(text: str | None) -> bool | None:
    """nvidia-smi's ``Enabled``/``Disabled``; ``None`` for anything else (``'N/A'``)."""
    return {"enabled": True, "disabled": False}.get((text or "").lower())


def parse_nvidia_smi_xml(text: str) -> dict:
    """The fields the tests compare, from ``nvidia-smi -q -x``.

    Returns ``{"driver_version", "cuda_version", "gpus": [{"pci_bus_id", "uuid", "name", "memory_total_mib",
    "persistence_mode", "mig_current", "mig_pending", "fabric_state", "fabric_clique_id", "fabric_cluster_uuid"}]}``;
    a field nvidia-smi leaves out or gives as ``N/A`` is ``None``.  Raises ``ValueError`` (one line) when ``text`` is
    not an ``nvidia_smi_log`` document.
    """
    try:
        log = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"nvidia-smi -q -x: not XML ({exc})") from None
    if log.tag != "nvidia_smi_log":
        raise ValueError(f"nvidia-smi -q -x: the document is <{log.tag}>, not <nvidia_smi_log>")
    gpus = []
    for gpu in log.findall("gpu"):
        fabric = gpu.find("fabric")
        gpus.append({
            "pci_bus_id": gpu.get("id") or _text(gpu, "pci/pci_bus_id"),
            "uuid": _text(gpu, "uuid"),
            "name": _text(gpu, "product_name"),
            "memory_total_mib": _mib(_text(gpu, "fb_memory_usage/total")),
            "persistence_mode": _enabled(_text(gpu, "persistence_mode")),
            "mig_current": _enabled(_text(gpu, "mig_mode/current_mig")),
            "mig_pending": _enabled(_text(gpu, "mig_mode/pending_mig")),
            "fabric_state": _text(fabric, "state"),
            "fabric_clique_id": _text(fabric, "cliqueId"),
            "fabric_cluster_uuid": _text(fabric, "clusterUuid"),
        })
    return {"driver_version": _text(log, "driver_version"), "cuda_version": _text(log, "cuda_version"),
            "gpus": gpus}


def run_nvidia_smi() -> tuple[str | None, str | None]:
    """``(xml text, None)`` from ``nvidia-smi -q -x``, or ``(None, why not)``."""
    binary = shutil.which("nvidia-smi")
    if binary is None:
        return None, "nvidia-smi is not installed (not on PATH)"
    try:
        done = subprocess.run([binary, "-q", "-x"], capture_output=True, text=True, check=False,
                              timeout=NVIDIA_SMI_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"nvidia-smi -q -x did not answer in {NVIDIA_SMI_TIMEOUT} s"
    except OSError as exc:
        return None, f"nvidia-smi could not be started ({exc.strerror})"
    if done.returncode != 0:
        return None, f"nvidia-smi -q -x exited {done.returncode}"
    return done.stdout, None


def read_nvidia_smi(xml_text: str | None = None, reason: str | None = None) -> Reading:
    """The parsed ``nvidia-smi -q -x`` (run here unless its text, or why there is none, is given)."""
    if xml_text is None and reason is None:
        xml_text, reason = run_nvidia_smi()
    if xml_text is None:
        return Reading(None, reason)
    try:
        return Reading(parse_nvidia_smi_xml(xml_text))
    except ValueError as exc:
        return Reading(None, str(exc))


# --- NVML, directly -------------------------------------------------------------------------------


def read_nvml() -> Reading:
    """What NVML says directly through nvidia-ml-py: the GPU count, the driver, each GPU's uuid, name and bus id."""
    try:
        import pynvml
    except ImportError:
        return Reading(None, "nvidia-ml-py is not installed")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return Reading(None, f"nvmlInit failed: {type(exc).__name__}: {exc}")
    try:
        count = int(pynvml.nvmlDeviceGetCount())
        gpus = []
        for index in range(count):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            gpus.append({"uuid": _decoded(pynvml.nvmlDeviceGetUUID(handle)),
                         "name": _decoded(pynvml.nvmlDeviceGetName(handle)),
                         "pci_bus_id": _decoded(pynvml.nvmlDeviceGetPciInfo(handle).busId)})
        driver = _decoded(pynvml.nvmlSystemGetDriverVersion())
    except pynvml.NVMLError as exc:
        return Reading(None, f"NVML failed after nvmlInit: {type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(pynvml.NVMLError):
            pynvml.nvmlShutdown()
    return Reading({"device_count": count, "driver_version": driver, "gpus": gpus})


def _decoded(value: t.Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# --- the host ------------------------------------------------------------------------------------


def normalize_bus_id(bus_id: str) -> str:
    """``'00000000:1B:00.0'`` (NVML, nvidia-smi) -> ``'0000:1b:00.0'`` (the kernel's form).

    Raises ``ValueError`` when ``bus_id`` is not ``domain:bus:device.function`` in hexadecimal.
    """
    try:
        domain, bus, devfn = bus_id.strip().split(":")
        device, function = devfn.split(".")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{int(function, 16):x}"
    except ValueError:
        raise ValueError(f"{bus_id!r} is not a PCI bus id") from None


def read_host(root: str = "/", nvidia_smi: Reading | None = None, nvml: Reading | None = None) -> HostReadings:
    """Take every reading of the host below ``root`` (``nvidia_smi`` and ``nvml`` describe the running host)."""
    return HostReadings(
        pci=read_pci_functions(root),
        nvidia_smi=nvidia_smi if nvidia_smi is not None else read_nvidia_smi(),
        nvml=nvml if nvml is not None else read_nvml(),
        infiniband=read_infiniband(root),
        proc_modules=read_proc_modules(root),
        driver_files={path: os.path.exists(os.path.join(root, path.lstrip("/"))) for path in DRIVER_FILES},
        kernel_release=os.uname().release,
    )
