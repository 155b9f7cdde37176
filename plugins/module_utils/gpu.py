# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The NVIDIA GPUs of a host: NVML when the driver is loaded, PCI sysfs otherwise.

:func:`collect_gpu` is the probe's entry point; it returns exactly the result of
the ``gpu_info`` module (and the ``gpu`` key of ``fabric_facts``).  With the
nvidia driver loaded the GPUs come from NVML (through :mod:`.nvml`'s adapter),
each matched to its PCI function in sysfs for the NUMA node, device id and bound
driver.  Without the driver, without nvidia-ml-py, or when NVML cannot be
initialised, the GPUs are listed from ``/sys/bus/pci/devices`` (vendor 0x10de,
class 0x0300xx VGA or 0x0302xx 3D controller; NVSwitches, class 0x0680xx, are
not GPUs) and the NVML-only fields are ``None``.

The NVSwitches of an HGX baseboard are PCI functions of their own (vendor 0x10de,
class 0x0680xx, bridge/other) from power-on, before any driver loads:
:func:`list_pci_nvswitches` reports them (``nvswitches``: count and addresses)
without NVML, so a host's first run can tell that it needs nvidia-fabricmanager.
The NVLink switches of a GB200/GB300 NVL72 rack sit in switch trays, not on the
compute trays' PCI bus, and are not listed.

The NVLink fabric is interpreted as NVIDIA's DRA driver and GPU Feature
Discovery do: a GPU whose fabric registration is ``completed`` with status
success and a non-zero cluster UUID belongs to the clique
``<cluster uuid>.<clique id>`` (the ``nvidia.com/gpu.clique`` node label); an
all-zero cluster UUID is an NVLink (NVSwitch) system that is not multi-node.
From the v4 fabric info the clique id is the id of its first unicast-pointer
clique, which NVML documents as the v1 to v3 ``cliqueId``.  NVML's platform
info names the GPU's rack (chassis serial), slot and tray.

Each GPU NVML sees also reports its memory errors, recovery action and NVLink error counters
(:mod:`.gpu_health`); every GPU its XID events since boot from the kernel log (:mod:`.xid_events`).

A host with an NVIDIA GPU or NVSwitch also reports the state of ``nvidia-fabricmanager.service`` (``fabricmanager``,
:func:`.systemd_units.read_unit`: one ``systemctl show`` call), whichever system it is: the preflight decides where
it must run (an NVSwitch system).
"""

from __future__ import annotations

import os
import typing as t
import uuid
from dataclasses import dataclass

from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import (
    CommandError,
    NvmlError,
    ParseError,
    ProbeRootError,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu_health import gpu_health
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import (
    check_root,
    exists,
    link_target,
    list_dir,
    outside,
    problem,
    read_text,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.nvidia_driver import read_nvidia_driver
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import pci_key
from ansible_collections.gpufabric.cluster.plugins.module_utils.systemd_units import read_unit
from ansible_collections.gpufabric.cluster.plugins.module_utils.xid_events import collect_xids

NVIDIA_VENDOR = 0x10DE
GPU_CLASSES = (0x0300, 0x0302)  # PCI base class/subclass: VGA compatible, 3D controller
NVSWITCH_CLASSES = (0x0680,)  # PCI base class/subclass: bridge, other (an HGX baseboard's NVSwitch)
PCI_DEVICES = "/sys/bus/pci/devices"
MIB = 1024 * 1024

# The unit of NVIDIA's fabric manager, which an NVSwitch system (HGX) needs for its NVLink fabric.
FABRICMANAGER_UNIT = "nvidia-fabricmanager.service"

FABRIC_STATES = {0: "not_supported", 1: "not_started", 2: "in_progress", 3: "completed"}
FABRIC_NOT_SUPPORTED = 0
FABRIC_COMPLETED = 3

SourceFactory = t.Callable[[str], nvml.NvmlSource]


@dataclass(frozen=True)
class PciGpu:
    """An NVIDIA GPU PCI function as sysfs shows it."""

    address: str  # 0000:1b:00.0
    device_id: str | None  # 0x2330
    numa_node: int | None  # None: no NUMA affinity (-1) or unknown
    driver: str | None  # the bound driver (nvidia, vfio-pci) or None


def normalize_pci_address(bus_id: str) -> str:
    """Return a PCI address in the kernel's form.

    >>> normalize_pci_address("00000000:1B:00.0")
    '0000:1b:00.0'

    Raises :class:`ParseError` when ``bus_id`` is not ``domain:bus:device.function``.
    """
    try:
        domain, bus, devfn = bus_id.strip().split(":")
        device, function = devfn.split(".")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{int(function, 16):x}"
    except ValueError:
        raise ParseError(f"{bus_id!r} is not a PCI bus id") from None


def _read_hex(root: str, path: str, errors: list[str]) -> int | None:
    text = read_text(root, path)
    if text is None:
        errors.append(f"{path}: {problem(root, path)}")
        return None
    try:
        return int(text, 16)
    except ValueError:
        errors.append(f"{path}: not a hexadecimal number")
        return None


def _read_numa_node(root: str, path: str, errors: list[str]) -> int | None:
    text = read_text(root, path)
    if text is None:  # kernels built without NUMA have no numa_node
        return None
    try:
        node = int(text)
    except ValueError:
        errors.append(f"{path}: not a NUMA node number")
        return None
    return node if node >= 0 else None


def _nvidia_functions(root: str, classes: tuple[int, ...], errors: list[str]) -> list[tuple[str, str]]:
    """``(address, sysfs path)`` of the NVIDIA PCI functions below ``root`` whose class/subclass is in ``classes``."""
    found = []
    for name in list_dir(root, PCI_DEVICES):
        base = f"{PCI_DEVICES}/{name}"
        vendor = _read_hex(root, f"{base}/vendor", errors)
        if vendor != NVIDIA_VENDOR:
            continue
        pci_class = _read_hex(root, f"{base}/class", errors)
        if pci_class is None or (pci_class >> 8) not in classes:
            continue
        try:
            found.append((normalize_pci_address(name), base))
        except ParseError as exc:
            errors.append(f"{base}: {exc}")
    return found


def _no_pci_devices(root: str) -> list[str]:
    return [f"{PCI_DEVICES}: {problem(root, PCI_DEVICES)}" if outside(root, PCI_DEVICES)
            else f"{PCI_DEVICES}: not found"]


def list_pci_nvswitches(root: str) -> tuple[list[str], list[str]]:
    """Return the addresses of the NVSwitch functions below ``root`` in PCI address order, and what could not be read.

    Read from PCI sysfs alone (vendor 0x10de, class 0x0680xx): they are there before any NVIDIA driver loads.
    """
    if not exists(root, PCI_DEVICES):
        return [], _no_pci_devices(root)
    errors: list[str] = []
    addresses = [address for address, _base in _nvidia_functions(root, NVSWITCH_CLASSES, errors)]
    return sorted(addresses, key=pci_key), errors


def list_pci_gpus(root: str) -> tuple[list[PciGpu], list[str]]:
    """Return the NVIDIA GPU functions below ``root`` in PCI address order, and what could not be read."""
    errors: list[str] = []
    if not exists(root, PCI_DEVICES):
        return [], _no_pci_devices(root)
    gpus = []
    for address, base in _nvidia_functions(root, GPU_CLASSES, errors):
        device = _read_hex(root, f"{base}/device", errors)
        driver = link_target(root, f"{base}/driver")
        gpus.append(PciGpu(
            address=address,
            device_id=None if device is None else f"0x{device:04x}",
            numa_node=_read_numa_node(root, f"{base}/numa_node", errors),
            driver=os.path.basename(driver) if driver else None,
        ))
    gpus.sort(key=lambda gpu: pci_key(gpu.address))
    return gpus, errors


def cuda_version_text(encoded: int) -> str:
    """Return NVML's encoded CUDA driver version as text (``12080`` -> ``'12.8'``)."""
    return f"{encoded // 1000}.{(encoded % 1000) // 10}"


def _clique_id(info: nvml.FabricInfo) -> int | None:
    """The clique id GPU Feature Discovery and the DRA driver read: v1 to v3's ``cliqueId``, or from v4 the id of
    the first NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER entry (None when it lists none)."""
    if info.cliques is None:
        return info.clique_id
    return next((clique_id for kind, clique_id in info.cliques
                 if kind == nvml.NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER), None)


def _cliques(info: nvml.FabricInfo) -> list[dict]:
    """The ``cliques`` of a GPU: v4's entries with their type's name, or the one clique id of an older struct."""
    if info.cliques is None:
        return [{"type": None, "id": info.clique_id}]
    return [{"type": nvml.FABRIC_CLIQUE_TYPES.get(kind, f"unknown_{kind}"), "id": clique_id}
            for kind, clique_id in info.cliques]


def interpret_fabric(info: nvml.FabricInfo | None) -> dict:
    """Return the ``fabric`` of a GPU from NVML's fabric info (``None``: NVML said NOT_SUPPORTED).

    A GPU without an NVLink fabric either makes NVML raise NOT_SUPPORTED or (a PCIe H100, driver 580)
    answers success with state NOT_SUPPORTED and zeros; both read as ``state: not_supported`` with the
    other fields ``None``, as ``nvidia-smi -q`` shows N/A.  ``clique`` is set only for a completed,
    successful registration with a non-zero cluster UUID and a clique id; ``clique_unset`` then says why it is not.
    ``health`` is the decoded health mask and summary (:func:`nvml.decode_health_mask`); ``info_version`` the struct
    NVML answered; ``cliques`` its clique entries.
    """
    version = None if info is None else info.info_version
    if info is None or info.state == FABRIC_NOT_SUPPORTED:
        return {"state": "not_supported", "status": None, "cluster_uuid": None, "clique_id": None, "clique": None,
                "clique_unset": "the GPU has no NVLink fabric", "health": None, "info_version": version,
                "cliques": []}
    cluster = uuid.UUID(info.cluster_uuid)
    clique_id = _clique_id(info)
    clique = None
    unset = None
    if info.state != FABRIC_COMPLETED:
        unset = f"fabric registration is {FABRIC_STATES.get(info.state, f'unknown_{info.state}')}"
    elif info.status != nvml.NVML_SUCCESS:
        unset = f"fabric registration failed: {nvml.nvml_return_string(info.status)}"
    elif cluster.int == 0:
        unset = "the cluster UUID is all zero (an NVLink system that is not multi-node)"
    elif clique_id is None:
        unset = ("the v4 fabric info lists no unicast-pointer clique, the clique GPU Feature Discovery and the DRA "
                 "driver read")
    else:
        clique = f"{cluster}.{clique_id}"
    return {
        "state": FABRIC_STATES.get(info.state, f"unknown_{info.state}"),
        "status": "success" if info.status == nvml.NVML_SUCCESS else nvml.nvml_return_string(info.status),
        "cluster_uuid": str(cluster),
        "clique_id": clique_id,
        "clique": clique,
        "clique_unset": unset,
        "health": nvml.decode_health_mask(info.health_mask, info.health_summary),
        "info_version": version,
        "cliques": _cliques(info),
    }


def nvlink_summary(states: list[int | None] | None, speed: int | None, reasons: list[str]) -> dict:
    """The ``nvlink`` of a GPU: links present (state known), active, the inactive ones, the common speed.

    ``states`` ``None`` (NVML has no state query) leaves the counts ``None``; ``reasons`` say why a value is
    ``None``.
    """
    if states is None:
        return {"present": None, "active": None, "inactive_links": None, "speed_mbps": speed, "reasons": reasons}
    present = [link for link, state in enumerate(states) if state is not None]
    return {
        "present": len(present),
        "active": sum(1 for link in present if states[link] == 1),
        "inactive_links": [link for link in present if states[link] != 1],
        "speed_mbps": speed,
        "reasons": reasons,
    }


# The host's platform summary: its GPUs' distinct values of each platform field (key -> the GPU's key).
PLATFORM_SUMMARY = {"chassis_serials": "chassis_serial", "slot_numbers": "slot_number",
                    "tray_indices": "tray_index", "host_ids": "host_id"}


def platform_summary(gpus: list[dict], warnings: list[str]) -> dict:
    """The ``platform`` of a host: the distinct chassis serials, slot numbers, tray indices and host ids its GPUs
    report, sorted (empty lists when no GPU has platform info).

    The GPUs of one host sit in one tray of one chassis; GPUs that disagree on the chassis, slot or tray add a
    warning to ``warnings``.
    """
    summary: dict[str, list] = {}
    for key, field in PLATFORM_SUMMARY.items():
        summary[key] = sorted({gpu["platform"][field] for gpu in gpus
                               if gpu.get("platform") and gpu["platform"][field] is not None})
    for key, what in (("chassis_serials", "chassis serials"), ("slot_numbers", "slot numbers"),
                      ("tray_indices", "tray indices")):
        if len(summary[key]) > 1:
            warnings.append(f"GPUs of this host report different {what}: {', '.join(map(str, summary[key]))}")
    return summary


def _empty_gpu(index: int) -> dict:
    return {"index": index, "uuid": None, "name": None, "pci_address": None, "device_id": None, "numa_node": None,
            "memory_total_mib": None, "mig_mode": None, "persistence_mode": None, "fabric": None, "platform": None,
            "nvlink": None, "driver": None, "memory_errors": None, "recovery_action": None, "nvlink_errors": None,
            "xid_counts": None}


_UNSET = object()
_NOT_SUPPORTED = object()


class _DeviceQueries:
    """Asks one GPU's queries; a failing query becomes an error naming the GPU and the query."""

    def __init__(self, source: nvml.NvmlSource, index: int, errors: list[str]):
        self.source, self.index, self.errors = source, index, errors
        self.last_not_supported = ""

    def ask(self, query: str, not_supported: t.Any = _UNSET) -> t.Any:
        try:
            return getattr(self.source, query)(self.index)
        except nvml.NvmlNotSupported as exc:
            self.last_not_supported = str(exc)
            if not_supported is _UNSET:
                self.errors.append(f"GPU {self.index}: NVML {query} failed: {exc}")
                return None
            return not_supported
        except NvmlError as exc:
            self.errors.append(f"GPU {self.index}: NVML {query} failed: {exc}")
            return None


def _nvlink(queries: _DeviceQueries) -> tuple[dict, list[int]]:
    """The GPU's NVLink links and speed, and its active links; a query NVML lacks (NOT_SUPPORTED) gives ``None``
    with the reason."""
    reasons: list[str] = []
    answers = {}
    for query in ("nvlink_states", "nvlink_speed_mbps"):
        answer = queries.ask(query, not_supported=_NOT_SUPPORTED)
        if answer is _NOT_SUPPORTED:
            reasons.append(f"{query}: {queries.last_not_supported}")
            answer = None
        elif answer is None:
            reasons.append(f"{query}: NVML failed (see errors)")
        answers[query] = answer
    states = answers["nvlink_states"]
    active = [link for link, state in enumerate(states or []) if state == 1]
    if states is not None and not any(state is not None for state in states):
        # no link present: no NVLink, so there is no speed to ask for
        return nvlink_summary(list(states), None, []), active
    return nvlink_summary(None if states is None else list(states), answers["nvlink_speed_mbps"], reasons), active


def _nvml_gpu(source: nvml.NvmlSource, index: int, pci: dict[str, PciGpu], errors: list[str],
              warnings: list[str]) -> dict:
    gpu = _empty_gpu(index)
    queries = _DeviceQueries(source, index, errors)
    gpu["uuid"] = queries.ask("uuid")
    gpu["name"] = queries.ask("name")
    bus_id = queries.ask("pci_bus_id")
    if bus_id is not None:
        try:
            gpu["pci_address"] = normalize_pci_address(bus_id)
        except ParseError as exc:
            errors.append(f"GPU {index}: NVML pci_bus_id: {exc}")
    memory = queries.ask("memory_total")
    gpu["memory_total_mib"] = None if memory is None else memory // MIB
    mig = queries.ask("mig_mode", not_supported=None)
    gpu["mig_mode"] = None if mig is None else {"current": bool(mig[0]), "pending": bool(mig[1])}
    persistence = queries.ask("persistence_mode", not_supported=None)
    gpu["persistence_mode"] = None if persistence is None else bool(persistence)
    fabric_info = queries.ask("fabric_info", not_supported=_NOT_SUPPORTED)
    if fabric_info is not None:
        fabric = interpret_fabric(None if fabric_info is _NOT_SUPPORTED else fabric_info)
        gpu["fabric"] = fabric
        if fabric["state"] in ("not_started", "in_progress"):
            warnings.append(f"GPU {index}: NVLink fabric registration is {fabric['state']}; no clique yet")
        elif fabric["state"] == "completed" and fabric["status"] != "success":
            warnings.append(f"GPU {index}: NVLink fabric registration failed: {fabric['status']}")
    platform_info = queries.ask("platform_info", not_supported=_NOT_SUPPORTED)
    if platform_info is _NOT_SUPPORTED:
        # expected outside a Grace-Blackwell rack; a GPU of a multi-node NVLink clique should have it
        if gpu["fabric"] and gpu["fabric"]["clique"]:
            warnings.append(f"GPU {index}: NVML gives no platform info ({queries.last_not_supported}) for a GPU "
                            "of a multi-node NVLink clique; its rack, slot and tray are unknown")
    elif platform_info is not None:
        gpu["platform"] = nvml.decode_platform_info(platform_info)
    gpu["nvlink"], active_links = _nvlink(queries)
    gpu.update(gpu_health(source, index, active_links, errors))
    if gpu["pci_address"] is not None:
        function = pci.get(gpu["pci_address"])
        if function is None:
            warnings.append(f"GPU {index}: {gpu['pci_address']} is not in {PCI_DEVICES}")
        else:
            gpu["device_id"], gpu["numa_node"], gpu["driver"] = function.device_id, function.numa_node, function.driver
    return gpu


def _collect_nvml(source: nvml.NvmlSource, pci_gpus: list[PciGpu], result: dict) -> list[dict]:
    """Fill the versions in ``result`` and return the GPUs NVML sees; raise NvmlError when NVML is unusable."""
    errors, warnings = result["errors"], result["warnings"]
    source.init()
    try:
        for query in ("driver_version", "cuda_driver_version", "nvml_version"):
            try:
                value = getattr(source, query)()
            except NvmlError as exc:
                errors.append(f"NVML {query} failed: {exc}")
                continue
            result[query] = cuda_version_text(value) if query == "cuda_driver_version" else value
        count = source.device_count()
        pci = {gpu.address: gpu for gpu in pci_gpus}
        gpus = [_nvml_gpu(source, index, pci, errors, warnings) for index in range(count)]
    finally:
        try:
            source.shutdown()
        except NvmlError as exc:
            warnings.append(f"NVML shutdown failed: {exc}")
    seen = {gpu["pci_address"] for gpu in gpus}
    for function in pci_gpus:
        if function.address not in seen:
            warnings.append(f"PCI GPU {function.address} is not reported by NVML")
    return gpus


def _pci_gpu(index: int, function: PciGpu) -> dict:
    gpu = _empty_gpu(index)
    gpu.update(pci_address=function.address, device_id=function.device_id, numa_node=function.numa_node,
               driver=function.driver)
    return gpu


def read_fabricmanager(root: str, runner: t.Any, errors: list[str]) -> dict | None:
    """The state of ``nvidia-fabricmanager.service`` (:func:`.systemd_units.unit_state`); ``None`` without a
    ``runner`` or without ``systemctl`` below ``root``, or when systemctl failed (then named in ``errors``)."""
    if runner is None:
        return None
    try:
        return read_unit(root, runner, FABRICMANAGER_UNIT)
    except (CommandError, ParseError) as exc:
        errors.append(str(exc))
        return None


def collect_gpu(root: str, runner: t.Any = None, source_factory: SourceFactory | None = None) -> dict:
    """Return the ``gpu_info`` result for the host below ``root``.

    ``runner`` (``AnsibleModule.run_command``'s signature) asks ``systemctl`` for the state of
    ``nvidia-fabricmanager.service`` on a host with an NVIDIA GPU or NVSwitch (:func:`read_fabricmanager`); without
    one ``fabricmanager`` is ``None``. ``source_factory(root)`` returns the NVML source; :func:`nvml.nvml_source` by
    default.
    """
    result: dict[str, t.Any] = {
        "driver_loaded": False, "driver_version": None, "kernel_module": None, "cuda_driver_version": None,
        "nvml_version": None, "source": "pci", "nvml_bindings": None, "count": 0, "gpus": [], "cliques": [],
        "platform": platform_summary([], []), "nvswitches": {"count": 0, "pci_addresses": []}, "xid_events": None,
        "fabricmanager": None, "errors": [],
        "warnings": [],
    }
    try:
        root = check_root(root)
    except ProbeRootError as exc:
        result["errors"].append(str(exc))
        return result
    driver = read_nvidia_driver(root, result["errors"])
    result.update(driver_loaded=driver.loaded, driver_version=driver.version, kernel_module=driver.kernel_module)
    pci_gpus, pci_errors = list_pci_gpus(root)
    result["errors"].extend(pci_errors)
    nvswitches, nvswitch_errors = list_pci_nvswitches(root)
    result["errors"].extend(error for error in nvswitch_errors if error not in result["errors"])
    result["nvswitches"] = {"count": len(nvswitches), "pci_addresses": nvswitches}

    gpus = None
    if driver.loaded:
        factory = source_factory or nvml.nvml_source
        nvml_result = dict(result, errors=[], warnings=[])
        try:
            gpus = _collect_nvml(factory(root), pci_gpus, nvml_result)
        except nvml.PynvmlMissing as exc:
            result["nvml_bindings"] = False
            result["warnings"].append(f"{exc}. Listing GPUs from PCI sysfs instead")
        except NvmlError as exc:
            result["nvml_bindings"] = True
            result["warnings"].append(f"NVML is not usable ({exc}); listing GPUs from PCI sysfs instead")
        else:
            nvml_result["errors"] = result["errors"] + nvml_result["errors"]
            nvml_result["warnings"] = result["warnings"] + nvml_result["warnings"]
            result = nvml_result
            result["source"] = "nvml"
            result["nvml_bindings"] = True
            if result["driver_version"] is None:
                result["driver_version"] = driver.version
    if gpus is None:
        gpus = [_pci_gpu(index, function) for index, function in enumerate(pci_gpus)]

    result["gpus"] = gpus
    result["count"] = len(gpus)
    result["cliques"] = sorted({gpu["fabric"]["clique"] for gpu in gpus if gpu["fabric"] and gpu["fabric"]["clique"]})
    if len(result["cliques"]) > 1:
        result["warnings"].append(f"GPUs of this host report different cliques: {', '.join(result['cliques'])}")
    result["platform"] = platform_summary(gpus, result["warnings"])
    result["xid_events"] = collect_xids(root, gpus, result["warnings"])
    if gpus or nvswitches:
        result["fabricmanager"] = read_fabricmanager(root, runner, result["errors"])
    result["errors"].extend(root.refusal_errors(result["errors"]))
    return result
