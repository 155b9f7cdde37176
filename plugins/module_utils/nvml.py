# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one adapter between the GPU probe and NVML.

:class:`NvmlSource` is the handful of NVML queries the GPU probe needs.
:class:`PynvmlSource` asks the real NVML through nvidia-ml-py (``import pynvml``,
optional, imported behind a guard).  The probe gets its source from
:func:`nvml_source`, the single place a caller swaps it (the tests hand the probe
a recorded-answers double from ``tests/fixtures/recorded_nvml.py`` there).

Every query answers plain Python values or raises :class:`NvmlError`;
:class:`NvmlNotSupported` (a subclass) means NVML answered
``NVML_ERROR_NOT_SUPPORTED`` for that query on that device.
"""

from __future__ import annotations

import abc
import ctypes
import os
import re
import traceback
import typing as t
import uuid
from dataclasses import dataclass

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.gpufabric.cluster.plugins.module_utils import host_files
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import NvmlError

PYNVML_IMPORT_ERROR: str | None = None
try:
    import pynvml
except ImportError:  # nvidia-ml-py is optional: without it the probe lists GPUs from PCI sysfs
    pynvml = None
    PYNVML_IMPORT_ERROR = traceback.format_exc()

HAS_PYNVML = pynvml is not None

PYNVML_LIBRARY = "nvidia-ml-py"
PYNVML_URL = "https://pypi.org/project/nvidia-ml-py/"

NVML_SUCCESS = 0
NVML_ERROR_INVALID_ARGUMENT = 2
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_FUNCTION_NOT_FOUND = 13
NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25

# nvmlReturn_t codes and the text NVML gives for them (nvidia-ml-py's NVMLError table; the others named
# after their NVML_ERROR_* constant).  Used to name the status of a GPU's fabric registration.
NVML_RETURN_STRINGS = {
    0: "Success",
    1: "Uninitialized",
    2: "Invalid Argument",
    3: "Not Supported",
    4: "Insufficient Permissions",
    5: "Already Initialized",
    6: "Not Found",
    7: "Insufficient Size",
    8: "Insufficient External Power",
    9: "Driver Not Loaded",
    10: "Timeout",
    11: "Interrupt Request Issue",
    12: "NVML Shared Library Not Found",
    13: "Function Not Found",
    14: "Corrupted infoROM",
    15: "GPU is lost",
    16: "GPU requires restart",
    17: "The operating system has blocked the request.",
    18: "RM has detected an NVML/RM version mismatch.",
    19: "In Use",
    20: "Insufficient Memory",
    21: "No Data",
    22: "vGPU ECC Not Supported",
    23: "Insufficient Resources",
    24: "Frequency Not Supported",
    25: "Argument Version Mismatch",
    26: "Deprecated",
    27: "Not Ready",
    28: "GPU Not Found",
    29: "Invalid State",
    30: "Reset Type Not Supported",
    999: "Unknown Error",
}

# Query names, as the probe names them in its errors.
SYSTEM_QUERIES = ("driver_version", "cuda_driver_version", "nvml_version", "device_count")
DEVICE_QUERIES = ("uuid", "name", "pci_bus_id", "memory_total", "mig_mode", "persistence_mode", "fabric_info",
                  "platform_info", "nvlink_states", "nvlink_speed_mbps", "remapped_rows", "ecc_uncorrected",
                  "recovery_action", "nvlink_errors")

# NVLink (nvml.h, NVIDIA/go-nvml pkg/nvml/const.go, nvidia-ml-py 13.x pynvml.py):
# NVML_NVLINK_MAX_LINKS = 18 (links 0..17 are asked; older headers said 12 or 6, a newer binding's own value wins);
# nvmlDeviceGetNvLinkState answers NVML_FEATURE_ENABLED (1) for an active link, NVML_FEATURE_DISABLED (0) for an
# inactive one, NVML_ERROR_NOT_SUPPORTED (or NVML_ERROR_INVALID_ARGUMENT, "link is invalid") for a link the GPU
# does not have.  NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90: "Common NVLink Speed in MBps for active links", read
# with nvmlDeviceGetFieldValues.
NVML_NVLINK_MAX_LINKS = 18
NVML_FEATURE_ENABLED = 1
NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90

# Memory health (nvml.h; nvidia-ml-py 12.575 / 13.x pynvml.py, e.g. as vendored in ray-project/ray
# python/ray/_private/thirdparty/pynvml/pynvml.py): nvmlDeviceGetTotalEccErrors(handle, errorType, counterType) with
# NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 and NVML_VOLATILE_ECC = 0 (since the driver loaded) / NVML_AGGREGATE_ECC = 1
# (the GPU's lifetime, kept in its infoROM); NOT_SUPPORTED when ECC is off or the GPU has none.
# nvmlDeviceGetRemappedRows(handle) answers (corrRows, uncRows, isPending, failureOccurred): Ampere and later;
# NOT_SUPPORTED on older GPUs (which retire pages instead: not read, see gpu_health).
NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1
NVML_VOLATILE_ECC = 0
NVML_AGGREGATE_ECC = 1
# The GPU recovery action: field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230 read with nvmlDeviceGetFieldValues
# (NVML's change log, r570: it replaces the deprecated NVML_FI_DEV_RESET_STATUS 226 and
# NVML_FI_DEV_DRAIN_AND_RESET_STATUS 227), an nvmlDeviceGpuRecoveryAction_t.  Values as nvidia-ml-py 13.615.71
# pynvml.py defines them: NONE 0, GPU_RESET 1, NODE_REBOOT 2, DRAIN_P2P 3, DRAIN_AND_RESET 4, RECOVER_IMEX_DOMAIN 5,
# BUS_RESET 6, SYSTEM_REBOOT 7 (cuda-python's nvml bindings list RECOVER_IMEX_DOMAIN after DRAIN_AND_RESET too; an
# intermediate nvidia-ml-py named 5 GPU_RESET_BUS).  A value not listed is reported as ``unknown_<n>``.
NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230
GPU_RECOVERY_ACTIONS = {0: "none", 1: "gpu_reset", 2: "node_reboot", 3: "drain_p2p", 4: "drain_and_reset",
                        5: "recover_imex_domain", 6: "bus_reset", 7: "system_reboot"}
# NVLink error counters (same sources): nvmlDeviceGetNvLinkErrorCounter(handle, link, counter) with
# NVML_NVLINK_ERROR_DL_REPLAY 0, DL_RECOVERY 1, DL_CRC_FLIT 2; where it answers NOT_SUPPORTED (newer GPUs), the
# per-link fields NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY 161, DL_RECOVERY 162, DL_CRC 163 read with
# nvmlDeviceGetFieldValues and the link as scopeId (nvidia-ml-py takes ``(fieldId, scopeId)`` pairs).  Counter name in
# the facts -> (error counter, field id).
NVLINK_ERROR_COUNTERS = {"replay": (0, 161), "recovery": (1, 162), "crc": (2, 163)}
# nvmlValueType_t of a field value -> the member of its value union (nvml.h)
_FIELD_VALUE_MEMBERS = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}

# The fabric health mask, ``healthMask`` of nvmlGpuFabricInfo_v2_t and later.  Sources: nvml.h (NVIDIA/go-nvml
# pkg/nvml/nvml.h, NVML 13.3.29), nvidia-ml-py 13.615.71 pynvml.py (which adds GFM_STATE) and NVML's change log
# (docs.nvidia.com/deploy/nvml-api/change-log.html).  Each condition is a field read as ``(mask >> SHIFT) & WIDTH``
# (the NVML_GPU_FABRIC_HEALTH_GET macro; WIDTH is the field's mask after the shift), and a field's value 0 is always
# its NOT_SUPPORTED: a driver older than the field leaves it 0.  The bit layout:
#
#   bits   NVML field (NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_* / _WIDTH_*)   values                      since
#   0-1    DEGRADED_BW             shift 0,  width 0x3   NOT_SUPPORTED 0, TRUE 1, FALSE 2             r550
#   2-3    ROUTE_RECOVERY          shift 2,  width 0x3   NOT_SUPPORTED 0, TRUE 1 (in progress), FALSE 2  r570
#   4-5    ROUTE_UNHEALTHY         shift 4,  width 0x3   NOT_SUPPORTED 0, TRUE 1, FALSE 2             r570
#   6-7    ACCESS_TIMEOUT_RECOVERY shift 6,  width 0x3   NOT_SUPPORTED 0, TRUE 1 (in progress), FALSE 2  r570
#   8-11   INCORRECT_CONFIGURATION shift 8,  width 0xf   NOT_SUPPORTED 0, NONE 1, INCORRECT_SYSGUID 2,
#                                                        INCORRECT_CHASSIS_SN 3, NO_PARTITION 4,
#                                                        INSUFFICIENT_NVLINKS 5, INCOMPATIBLE_GPU_FW 6,
#                                                        INVALID_LOCATION 7, GPU_STATE_INVALID 8      r580 (8: r595)
#   12-13  PARTITION_ASSIGNED      shift 12, width 0x3   NOT_SUPPORTED 0, TRUE 1, FALSE 2 (not assigned)  r595
#   14-15  GFM_STATE               shift 14, width 0x3   NOT_SUPPORTED 0, CONNECTED 1, DISCONNECTED 2  r615
#   16-31  not defined by NVML (reported as ``undefined_bits``, never read as clean)
#
# (nvidia-ml-py also spells INVALID_LOCATION as INCORRECT_CONFIURATION_INVALID_LOCATION, NVML's typo kept.)
NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED = 0
NVML_GPU_FABRIC_HEALTH_TRUE = 1
NVML_GPU_FABRIC_HEALTH_FALSE = 2
FABRIC_HEALTH_DEFINED_BITS = 0xFFFF


@dataclass(frozen=True)
class HealthField:
    """One field of the fabric health mask: where it sits and what its values mean."""

    nvml_name: str  # the * of NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_*
    shift: int
    width: int  # the field's mask, applied after the shift
    values: t.Mapping[int, t.Any]  # NVML value -> the reported value; 0 (NOT_SUPPORTED) is never listed
    enumeration: bool = False  # a value NVML does not define is reported as ``unknown_<n>`` (else as None)


_BOOLEAN = {NVML_GPU_FABRIC_HEALTH_TRUE: True, NVML_GPU_FABRIC_HEALTH_FALSE: False}
# Name in the facts -> field.  The four conditions of driver 570 first, as before.
FABRIC_HEALTH_FIELDS: dict[str, HealthField] = {
    "degraded_bandwidth": HealthField("DEGRADED_BW", 0, 0x3, _BOOLEAN),
    "route_recovery": HealthField("ROUTE_RECOVERY", 2, 0x3, _BOOLEAN),
    "route_unhealthy": HealthField("ROUTE_UNHEALTHY", 4, 0x3, _BOOLEAN),
    "access_timeout_recovery": HealthField("ACCESS_TIMEOUT_RECOVERY", 6, 0x3, _BOOLEAN),
    "incorrect_configuration": HealthField("INCORRECT_CONFIGURATION", 8, 0xF, {
        1: "none",  # NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE: the configuration is correct
        2: "incorrect_sysguid",
        3: "incorrect_chassis_sn",
        4: "no_partition",
        5: "insufficient_nvlinks",
        6: "incompatible_gpu_fw",
        7: "invalid_location",
        8: "gpu_state_invalid",
    }, enumeration=True),
    "partition_assigned": HealthField("PARTITION_ASSIGNED", 12, 0x3, _BOOLEAN),
    # GFM_STATE: is the GPU's global fabric manager connected (CONNECTED 1 -> True, DISCONNECTED 2 -> False)
    "gfm_connected": HealthField("GFM_STATE", 14, 0x3, _BOOLEAN),
}

# healthSummary of nvmlGpuFabricInfo_v3_t and _v4_t (nvml.h, nvidia-ml-py): NVML_GPU_FABRIC_HEALTH_SUMMARY_*.
NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED = 0
FABRIC_HEALTH_SUMMARIES = {0: "not_supported", 1: "healthy", 2: "unhealthy", 3: "limited_capacity"}

# nvmlGpuFabricInfo_v4_t (NVML r615: docs.nvidia.com/deploy/nvml-api structnvmlGpuFabricInfo__v4__t, nvidia-ml-py
# 13.615 c_nvmlGpuFabricInfo_v4_t, read with nvmlDeviceGetGpuFabricInfo_v4; the struct has no version field):
# clusterUuid[16], status, cliques[NVML_GPU_FABRIC_CLIQUE_MAX = 64] of {unsigned char type, unsigned int id}
# "sorted by ascending type then ascending id", numCliques, state (unsigned char), healthMask, healthSummary.
# "The legacy v3 cliqueId maps to the id of the first NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER entry."  GPU
# Feature Discovery (NVIDIA/k8s-device-plugin internal/resource/nvml-device.go GetFabricIDs, 2026-08) and the DRA
# driver (kubernetes-sigs/dra-driver-nvidia-gpu cmd/compute-domain-kubelet-plugin/nvlib.go getCliqueID*, 2026-08)
# still read the v1 struct's cliqueId, so the clique string ``<clusterUuid>.<cliqueId>`` is built from that entry.
# Hopper reports the two pointer types, Blackwell and Rubin the two logical-endpoint types as well.
NVML_GPU_FABRIC_CLIQUE_MAX = 64
NVML_GPU_FABRIC_CLIQUE_TYPE_UNICAST_POINTER = 0
FABRIC_CLIQUE_TYPES = {0: "unicast_pointer", 1: "multicast_pointer", 2: "unicast_logical_endpoint",
                       3: "multicast_logical_endpoint"}

# The fabric info structs, newest first: (version, nvidia-ml-py function, nvidia-ml-py struct).  v4 has its own
# function (r615); v3 (r580) and v2 go through nvmlDeviceGetGpuFabricInfoV, whose caller sets the version; the v1
# nvmlDeviceGetGpuFabricInfo is deprecated ("will be removed in CUDA 14.0").
FABRIC_INFO_CALLS = (
    (4, "nvmlDeviceGetGpuFabricInfo_v4", "c_nvmlGpuFabricInfo_v4_t"),
    (3, "nvmlDeviceGetGpuFabricInfoV", "c_nvmlGpuFabricInfo_v3_t"),
    (2, "nvmlDeviceGetGpuFabricInfoV", "c_nvmlGpuFabricInfo_v2_t"),
    (1, "nvmlDeviceGetGpuFabricInfo", "c_nvmlGpuFabricInfo_t"),
)

# nvmlDeviceGetPlatformInfo (nvml.h, NVML r570 change log; "for Blackwell or newer fully supported devices", else
# NVML_ERROR_NOT_SUPPORTED, as NVIDIA's nvml-mock answers for every board outside a Grace-Blackwell rack).  Both
# versions are 44 bytes with the same layout; v2 (r570) renamed the v1 fields.  Version -> (nvidia-ml-py struct,
# its field names for: ibGuid, chassis serial, slot, tray, host, peerType, moduleId):
#   ibGuid[16]               InfiniBand GUID of the GPU (Blackwell: 8 bytes, bytes 8-15 zero)
#   chassisSerialNumber[16]  v1 rackGuid: the chassis serial number (Blackwell: 13 bytes, 13-15 zero); text
#   slotNumber               v1 chassisPhysicalSlotNumber: the slot in the chassis, switch trays counted
#   trayIndex                v1 computeSlotIndex: the tray among the compute trays, switch trays not counted
#   hostId                   v1 nodeIndex: the node within the slot
#   peerType                 NVLink peer type; nvidia-smi shows 1 as "Switch Connected" (not published in nvml.h)
#   moduleId                 the GPU within the node (a GB300 tray: 2, 1, 4, 3 in PCI order)
# nvidia-ml-py declares them c_char and decodes them as UTF-8 when read as attributes, which fails on a byte above
# 0x7f and stops at a NUL; the adapter reads the raw bytes instead.  DCGM (NVIDIA/DCGM DcgmCacheManager.cpp
# ReadPlatformInfoFields) reads the serial as a NUL-terminated string, takes an empty one as not supported and all
# bytes 0xff as invalid, a slot or tray of 0xff as invalid, and prints ibGuid as "0x%016llx" of its first 8 bytes
# read as a native (little-endian) 64-bit integer.
PLATFORM_INFO_STRUCTS = (
    (2, "c_nvmlPlatformInfo_v2_t",
     ("ibGuid", "chassisSerialNumber", "slotNumber", "trayIndex", "hostId", "peerType", "moduleId")),
    (1, "c_nvmlPlatformInfo_v1_t",
     ("ibGuid", "rackGuid", "chassisPhysicalSlotNumber", "computeSlotIndex", "nodeIndex", "peerType", "moduleId")),
)
PLATFORM_INVALID_BYTE = 0xFF
# The running kernel's boot id (proc(5): "a new UUID each time the system boots"): a probe root other than / is the
# running host when it holds the same (nvml_source).
BOOT_ID = "/proc/sys/kernel/random/boot_id"
BOOT_ID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
# A chassis serial reported in the facts: 1 to 16 letters, digits and ``_.-``, starting with a letter or digit.
CHASSIS_SERIAL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,15}\Z")


def nvml_return_string(code: int) -> str:
    """Return NVML's text for an ``nvmlReturn_t`` code (``3`` -> ``'Not Supported'``)."""
    return NVML_RETURN_STRINGS.get(code, f"NVML error {code}")


class NvmlNotSupported(NvmlError):
    """NVML answered NVML_ERROR_NOT_SUPPORTED: the device does not have this feature."""


class PynvmlMissing(NvmlError):
    """nvidia-ml-py cannot be imported; ``str()`` is Ansible's missing_required_lib text."""

    def __init__(self, message: str, import_traceback: str | None):
        super().__init__(message)
        self.traceback = import_traceback


@dataclass(frozen=True)
class FabricInfo:
    """A GPU's NVLink fabric registration as NVML reports it (``nvmlGpuFabricInfo``).

    ``cluster_uuid`` is the canonical text of the 16 ``clusterUuid`` bytes; ``state`` and ``status``
    are the raw ``nvmlGpuFabricState_t`` and ``nvmlReturn_t`` numbers.
    """

    state: int
    status: int
    cluster_uuid: str
    # cliqueId of the v1 to v3 structs; None from v4, which lists its cliques instead
    clique_id: int | None
    # healthMask of nvmlGpuFabricInfo_v2 and later; None: only the v1 struct could be read (no health mask)
    health_mask: int | None = None
    # healthSummary of nvmlGpuFabricInfo_v3 and later; None: the struct read has none
    health_summary: int | None = None
    # v4: the (type, id) clique entries in NVML's order; None: the struct read has no list
    cliques: tuple[tuple[int, int], ...] | None = None
    # the struct NVML answered: 4, 3, 2 or 1
    info_version: int | None = None


@dataclass(frozen=True)
class PlatformInfo:
    """A GPU's platform info as NVML reports it (``nvmlPlatformInfo_v2_t``, or ``_v1_t`` under its old names).

    ``ib_guid`` and ``chassis_serial`` are the raw bytes of the 16-byte fields; the rest are the byte fields' values.
    """

    info_version: int
    ib_guid: bytes
    chassis_serial: bytes
    slot_number: int
    tray_index: int
    host_id: int
    peer_type: int
    module_id: int


def _decode_field(name: str, field: HealthField, mask: int, reasons: list[str]) -> t.Any:
    value = (mask >> field.shift) & field.width
    if value in field.values:
        return field.values[value]
    if value == NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED:
        reasons.append(f"{name}: NVML reports it not supported")
        return None
    reasons.append(f"{name}: value {value} of NVML_GPU_FABRIC_HEALTH_MASK_{field.nvml_name} is not defined")
    return f"unknown_{value}" if field.enumeration else None


def decode_health_mask(mask: int | None, summary: int | None = None) -> dict:
    """Decode a fabric ``healthMask`` and ``healthSummary`` into the conditions NVML defines.

    Every field of :data:`FABRIC_HEALTH_FIELDS` is decoded: the two-valued ones to ``True`` / ``False``, the
    enumeration ``incorrect_configuration`` to its name (``none`` when the configuration is correct).  A field is
    ``None`` with its reason in ``reasons`` when NVML reports it not supported (0) or there is no mask; a value NVML
    does not define is ``None`` (``unknown_<n>`` for the enumeration), also with a reason.  ``summary`` is
    ``healthy``, ``unhealthy``, ``limited_capacity``, ``not_supported`` or ``unknown_<n>``, ``None`` when the struct
    has no summary (``summary`` None).  ``undefined_bits`` holds the mask's bits NVML does not define (16-31).

    >>> decode_health_mask(1 | 2 << 2 | 2 << 4 | 2 << 6)["degraded_bandwidth"]
    True
    """
    health: dict[str, t.Any] = {"mask": mask}
    reasons: list[str] = []
    for name, field in FABRIC_HEALTH_FIELDS.items():
        health[name] = None if mask is None else _decode_field(name, field, int(mask), reasons)
    if mask is None:
        reasons.append("NVML gave no health mask (fabric info v1 only: driver or nvidia-ml-py older than "
                       "nvmlGpuFabricInfo_v2)")
        health["undefined_bits"] = None
    else:
        undefined = int(mask) & ~FABRIC_HEALTH_DEFINED_BITS
        health["undefined_bits"] = undefined
        if undefined:
            reasons.append(f"health mask bits 16-31 are set (0x{undefined:08x}): conditions NVML did not define "
                           "when this probe was written")
    if summary is None:
        health["summary"] = None
        reasons.append("summary: NVML gave no health summary (fabric info older than nvmlGpuFabricInfo_v3)")
    else:
        health["summary"] = FABRIC_HEALTH_SUMMARIES.get(int(summary), f"unknown_{int(summary)}")
        if int(summary) == NVML_GPU_FABRIC_HEALTH_SUMMARY_NOT_SUPPORTED:
            reasons.append("summary: NVML reports it not supported")
        elif int(summary) not in FABRIC_HEALTH_SUMMARIES:
            reasons.append(f"summary: value {int(summary)} of NVML_GPU_FABRIC_HEALTH_SUMMARY is not defined")
    health["reasons"] = reasons
    return health


def _all_bytes(raw: bytes, value: int) -> bool:
    return bool(raw) and all(byte == value for byte in raw)


def decode_chassis_serial(raw: bytes) -> tuple[str | None, str | None]:
    """The chassis serial of a platform info's 16 raw bytes, or ``None`` and why.

    The serial is the text up to the first NUL, without surrounding spaces, of :data:`CHASSIS_SERIAL_RE`'s shape;
    all bytes 0xff is NVML's invalid serial and an empty one is no serial (DCGM reads them so).  The bytes are never
    quoted.

    >>> decode_chassis_serial(b"1823825185529" + bytes(3))
    ('1823825185529', None)
    """
    if _all_bytes(raw, PLATFORM_INVALID_BYTE):
        return None, "chassis_serial: NVML reports it invalid (all bytes 0xff)"
    text = raw.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return None, "chassis_serial: empty (the platform reports no chassis serial)"
    serial = text.decode("ascii", "replace")
    if not CHASSIS_SERIAL_RE.match(serial):
        return None, "chassis_serial: not a chassis serial (1 to 16 letters, digits and _.-)"
    return serial, None


def decode_ib_guid(raw: bytes) -> tuple[str | None, str | None]:
    """The InfiniBand GUID of a platform info's 16 raw bytes as DCGM prints it (``0x`` and 16 hex digits), or
    ``None`` and why.

    NVML fills the first 8 bytes (Blackwell); they are read as a little-endian 64-bit number, as DCGM reads them on
    the little-endian hosts NVML runs on.  All zero is no GUID; bytes 8-15 set is a layout NVML documents for no GPU.

    >>> decode_ib_guid(bytes.fromhex("f57c8f526a5bac21") + bytes(8))
    ('0x21ac5b6a528f7cf5', None)
    """
    if not any(raw):
        return None, "ib_guid: all zero (the platform reports no GUID)"
    if _all_bytes(raw, PLATFORM_INVALID_BYTE):
        return None, "ib_guid: NVML reports it invalid (all bytes 0xff)"
    if any(raw[8:]):
        return None, "ib_guid: more than the 8 bytes NVML documents are set"
    return f"0x{int.from_bytes(raw[:8], 'little'):016x}", None


def decode_platform_info(info: PlatformInfo) -> dict:
    """The ``platform`` of a GPU from NVML's platform info: every value parsed or ``None`` with its reason.

    A slot or tray of 0xff is NVML's invalid value (DCGM reads it so); host, peer type and module are numbers.
    """
    reasons: list[str] = []
    serial, why = decode_chassis_serial(info.chassis_serial)
    if why:
        reasons.append(why)
    guid, why = decode_ib_guid(info.ib_guid)
    if why:
        reasons.append(why)
    numbers: dict[str, int | None] = {}
    for name in ("slot_number", "tray_index"):
        value = int(getattr(info, name))
        numbers[name] = None if value == PLATFORM_INVALID_BYTE else value
        if numbers[name] is None:
            reasons.append(f"{name}: NVML reports it invalid (0xff)")
    return {
        "info_version": info.info_version,
        "chassis_serial": serial,
        "slot_number": numbers["slot_number"],
        "tray_index": numbers["tray_index"],
        "host_id": int(info.host_id),
        "peer_type": int(info.peer_type),
        "module_id": int(info.module_id),
        "ib_guid": guid,
        "reasons": reasons,
    }


class NvmlSource(abc.ABC):
    """The NVML queries the GPU probe makes.  Devices are addressed by NVML index."""

    @abc.abstractmethod
    def init(self) -> None:
        """Initialise NVML; raise :class:`NvmlError` when it cannot be."""

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Release NVML."""

    @abc.abstractmethod
    def driver_version(self) -> str:
        """The driver version NVML reports (``'570.172.08'``)."""

    @abc.abstractmethod
    def cuda_driver_version(self) -> int:
        """The CUDA version the driver supports, encoded as NVML does (``12080`` is 12.8)."""

    @abc.abstractmethod
    def nvml_version(self) -> str:
        """The NVML library version (``'12.570.172.08'``)."""

    @abc.abstractmethod
    def device_count(self) -> int:
        """How many GPUs NVML sees."""

    @abc.abstractmethod
    def uuid(self, index: int) -> str:
        """The GPU's UUID (``'GPU-...'``)."""

    @abc.abstractmethod
    def name(self, index: int) -> str:
        """The product name (``'NVIDIA H100 80GB HBM3'``)."""

    @abc.abstractmethod
    def pci_bus_id(self, index: int) -> str:
        """The PCI bus id in NVML's form (``'00000000:1B:00.0'``)."""

    @abc.abstractmethod
    def memory_total(self, index: int) -> int:
        """Total framebuffer memory in bytes."""

    @abc.abstractmethod
    def mig_mode(self, index: int) -> tuple[int, int]:
        """``(current, pending)`` MIG mode, 1 enabled; :class:`NvmlNotSupported` on GPUs without MIG."""

    @abc.abstractmethod
    def persistence_mode(self, index: int) -> int:
        """Persistence mode, 1 enabled."""

    @abc.abstractmethod
    def fabric_info(self, index: int) -> FabricInfo:
        """The GPU's fabric registration, from the newest struct NVML answers (v4, v3, v2, then v1).

        :class:`NvmlNotSupported` on GPUs without an NVLink fabric.
        """

    @abc.abstractmethod
    def platform_info(self, index: int) -> PlatformInfo:
        """The GPU's platform info (rack, slot, tray), v2 or else v1.

        :class:`NvmlNotSupported` when the GPU has none (every GPU outside a Grace-Blackwell rack) or NVML or its
        binding has no platform info query.
        """

    @abc.abstractmethod
    def nvlink_states(self, index: int) -> list[int | None]:
        """The state of links 0..NVML_NVLINK_MAX_LINKS-1: 1 active, 0 inactive, ``None`` not present.

        :class:`NvmlNotSupported` when NVML (or its binding) has no NVLink state query.
        """

    @abc.abstractmethod
    def nvlink_speed_mbps(self, index: int) -> int:
        """The common speed of the active links in MB/s (NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON).

        :class:`NvmlNotSupported` when NVML answers NOT_SUPPORTED or the binding has no field-value query.
        """

    @abc.abstractmethod
    def remapped_rows(self, index: int) -> tuple[int, int, bool, bool]:
        """``(correctable, uncorrectable, pending, failure_occurred)`` of the row remapper.

        :class:`NvmlNotSupported` on GPUs without row remapping (before Ampere).
        """

    @abc.abstractmethod
    def ecc_uncorrected(self, index: int) -> tuple[int, int]:
        """``(volatile, aggregate)`` uncorrected ECC error counts; :class:`NvmlNotSupported` when ECC is off."""

    @abc.abstractmethod
    def recovery_action(self, index: int) -> int:
        """The GPU recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, an nvmlDeviceGpuRecoveryAction_t).

        :class:`NvmlNotSupported` when the driver or the binding has no such field.
        """

    @abc.abstractmethod
    def nvlink_errors(self, index: int, links: t.Sequence[int]) -> dict[int, dict[str, int]]:
        """The error counters (:data:`NVLINK_ERROR_COUNTERS`) of each of ``links``: link -> counter -> value.

        :class:`NvmlNotSupported` when neither the error counter query nor the per-link fields answer.
        """


# --- nvidia-ml-py --------------------------------------------------------------------------------


class PynvmlSource(NvmlSource):
    """Asks the running host's NVML through nvidia-ml-py.

    ``module`` is the ``pynvml`` module object (the imported one by default), so its conversions can be
    exercised against a stand-in.
    """

    def __init__(self, module: t.Any = None):
        self._nvml = module if module is not None else pynvml
        if self._nvml is None:
            raise PynvmlMissing(pynvml_missing_message(), PYNVML_IMPORT_ERROR)
        self._handles: dict[int, t.Any] = {}

    @staticmethod
    def _error(exc: Exception) -> NvmlError:
        """Translate a ``pynvml.NVMLError`` (``NVMLError_GpuIsLost: GPU is lost``)."""
        message = f"{type(exc).__name__}: {exc}"
        if getattr(exc, "value", None) == NVML_ERROR_NOT_SUPPORTED:
            return NvmlNotSupported(message)
        return NvmlError(message)

    def _call(self, func: t.Callable[..., t.Any], *args: t.Any) -> t.Any:
        try:
            return func(*args)
        except self._nvml.NVMLError as exc:
            raise self._error(exc) from exc

    def _handle(self, index: int) -> t.Any:
        if index not in self._handles:
            self._handles[index] = self._call(self._nvml.nvmlDeviceGetHandleByIndex, index)
        return self._handles[index]

    @staticmethod
    def _text(value: t.Any) -> str:
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)

    def init(self) -> None:
        self._call(self._nvml.nvmlInit)

    def shutdown(self) -> None:
        self._handles.clear()
        self._call(self._nvml.nvmlShutdown)

    def driver_version(self) -> str:
        return self._text(self._call(self._nvml.nvmlSystemGetDriverVersion))

    def cuda_driver_version(self) -> int:
        return int(self._call(self._nvml.nvmlSystemGetCudaDriverVersion))

    def nvml_version(self) -> str:
        return self._text(self._call(self._nvml.nvmlSystemGetNVMLVersion))

    def device_count(self) -> int:
        return int(self._call(self._nvml.nvmlDeviceGetCount))

    def uuid(self, index: int) -> str:
        return self._text(self._call(self._nvml.nvmlDeviceGetUUID, self._handle(index)))

    def name(self, index: int) -> str:
        return self._text(self._call(self._nvml.nvmlDeviceGetName, self._handle(index)))

    def pci_bus_id(self, index: int) -> str:
        info = self._call(self._nvml.nvmlDeviceGetPciInfo, self._handle(index))
        return self._text(info.busId)

    def memory_total(self, index: int) -> int:
        info = self._call(self._nvml.nvmlDeviceGetMemoryInfo, self._handle(index))
        return int(info.total)

    def mig_mode(self, index: int) -> tuple[int, int]:
        current, pending = self._call(self._nvml.nvmlDeviceGetMigMode, self._handle(index))
        return int(current), int(pending)

    def persistence_mode(self, index: int) -> int:
        return int(self._call(self._nvml.nvmlDeviceGetPersistenceMode, self._handle(index)))

    def fabric_info(self, index: int) -> FabricInfo:
        handle = self._handle(index)
        not_supported: NvmlError | None = None
        for version, function_name, struct_name in FABRIC_INFO_CALLS:
            function, struct = getattr(self._nvml, function_name, None), getattr(self._nvml, struct_name, None)
            if function is None or struct is None:  # an older nvidia-ml-py: try the next older struct
                continue
            info = struct()
            try:
                function(handle, ctypes.byref(info))
            except self._nvml.NVMLError as exc:
                code = getattr(exc, "value", None)
                # A driver older than the struct answers ARGUMENT_VERSION_MISMATCH (the versioned call) or has no
                # such function (FUNCTION_NOT_FOUND); v4's own function may also answer NOT_SUPPORTED where the
                # older call still answers.  NOT_SUPPORTED from the older calls is the answer: no fabric (as the
                # DRA driver and DCGM read it).
                if version > 1 and (code in (NVML_ERROR_ARGUMENT_VERSION_MISMATCH, NVML_ERROR_FUNCTION_NOT_FOUND)
                                    or (version == 4 and code == NVML_ERROR_NOT_SUPPORTED)):
                    if code == NVML_ERROR_NOT_SUPPORTED:
                        not_supported = self._error(exc)
                    continue
                raise self._error(exc) from exc
            return self._fabric(info, version)
        if not_supported is not None:
            raise not_supported
        raise NvmlNotSupported("nvidia-ml-py has no GPU fabric info query (nvmlDeviceGetGpuFabricInfo*)")

    @staticmethod
    def _fabric(info: t.Any, version: int) -> FabricInfo:
        """The :class:`FabricInfo` of a filled ``nvmlGpuFabricInfo`` struct of ``version``."""
        cliques = None
        clique_id = None
        if version >= 4:
            count = int(info.numCliques)
            if count > len(info.cliques):
                raise NvmlError(f"nvmlGpuFabricInfo_v4: numCliques {count} exceeds the {len(info.cliques)} entries "
                                "of cliques")
            cliques = tuple((int(entry.type), int(entry.id)) for entry in info.cliques[:count])
        else:
            clique_id = int(info.cliqueId)
        return FabricInfo(
            # nvmlGpuFabricState_t is an unsigned char (nvml.h); nvidia-ml-py reads v1 to v3's as c_uint, whose
            # upper bytes are padding
            state=int(info.state) & 0xFF,
            status=int(info.status),
            cluster_uuid=str(uuid.UUID(bytes=bytes(info.clusterUuid))),
            clique_id=clique_id,
            health_mask=int(info.healthMask) if version >= 2 else None,
            health_summary=int(info.healthSummary) if version >= 3 else None,
            cliques=cliques,
            info_version=version,
        )

    @staticmethod
    def _raw(struct: t.Any, name: str) -> bytes:
        """The bytes of field ``name`` of a ctypes struct, read without nvidia-ml-py's text conversion."""
        field = getattr(type(struct), name)
        return ctypes.string_at(ctypes.addressof(struct) + field.offset, field.size)

    def platform_info(self, index: int) -> PlatformInfo:
        handle = self._handle(index)
        get_info = self._function("nvmlDeviceGetPlatformInfo")
        for version, struct_name, fields in PLATFORM_INFO_STRUCTS:
            struct = getattr(self._nvml, struct_name, None)
            if struct is None:
                continue
            info = struct()
            try:
                get_info(handle, ctypes.byref(info))
            except self._nvml.NVMLError as exc:
                code = getattr(exc, "value", None)
                if code == NVML_ERROR_ARGUMENT_VERSION_MISMATCH:  # a driver older than v2 (r570)
                    continue
                if code == NVML_ERROR_FUNCTION_NOT_FOUND:  # a driver older than the query
                    raise NvmlNotSupported(f"{type(exc).__name__}: {exc}") from exc
                raise self._error(exc) from exc
            ib_guid, serial, *numbers = (self._raw(info, name) for name in fields)
            slot, tray, host, peer, module = (int.from_bytes(raw, "little") for raw in numbers)
            return PlatformInfo(info_version=version, ib_guid=ib_guid, chassis_serial=serial, slot_number=slot,
                                tray_index=tray, host_id=host, peer_type=peer, module_id=module)
        raise NvmlNotSupported("nvidia-ml-py has no nvmlPlatformInfo struct NVML takes")

    def _function(self, name: str) -> t.Callable[..., t.Any]:
        func = getattr(self._nvml, name, None)
        if func is None:
            raise NvmlNotSupported(f"nvidia-ml-py has no {name}")
        return func

    def nvlink_states(self, index: int) -> list[int | None]:
        handle = self._handle(index)
        get_state = self._function("nvmlDeviceGetNvLinkState")
        states: list[int | None] = []
        for link in range(int(getattr(self._nvml, "NVML_NVLINK_MAX_LINKS", NVML_NVLINK_MAX_LINKS))):
            try:
                states.append(1 if int(get_state(handle, link)) == NVML_FEATURE_ENABLED else 0)
            except self._nvml.NVMLError as exc:
                code = getattr(exc, "value", None)
                if code in (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_INVALID_ARGUMENT):
                    states.append(None)
                elif code == NVML_ERROR_FUNCTION_NOT_FOUND:
                    raise NvmlNotSupported(f"{type(exc).__name__}: {exc}") from exc
                else:
                    raise self._error(exc) from exc
        return states

    def nvlink_speed_mbps(self, index: int) -> int:
        handle = self._handle(index)
        get_values = self._function("nvmlDeviceGetFieldValues")
        values = self._call(get_values, handle, [NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON])
        value = values[0]
        code = int(getattr(value, "nvmlReturn", NVML_SUCCESS))
        if code == NVML_ERROR_NOT_SUPPORTED:
            raise NvmlNotSupported(f"NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: {nvml_return_string(code)}")
        if code != NVML_SUCCESS:
            raise NvmlError(f"NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON: {nvml_return_string(code)}")
        return int(value.value.uiVal)

    def remapped_rows(self, index: int) -> tuple[int, int, bool, bool]:
        get_rows = self._function("nvmlDeviceGetRemappedRows")
        correctable, uncorrectable, pending, failure = self._call(get_rows, self._handle(index))
        return int(correctable), int(uncorrectable), bool(pending), bool(failure)

    def ecc_uncorrected(self, index: int) -> tuple[int, int]:
        handle = self._handle(index)
        get_errors = self._function("nvmlDeviceGetTotalEccErrors")
        volatile, aggregate = (int(self._call(get_errors, handle, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, counter))
                               for counter in (NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC))
        return volatile, aggregate

    @staticmethod
    def _field_int(name: str, value: t.Any) -> int:
        """The whole number of a filled ``nvmlFieldValue_t``; NOT_SUPPORTED or another failure raised naming
        ``name``."""
        code = int(getattr(value, "nvmlReturn", NVML_SUCCESS))
        if code == NVML_ERROR_NOT_SUPPORTED:
            raise NvmlNotSupported(f"{name}: {nvml_return_string(code)}")
        if code != NVML_SUCCESS:
            raise NvmlError(f"{name}: {nvml_return_string(code)}")
        member = _FIELD_VALUE_MEMBERS.get(int(getattr(value, "valueType", 1)), "uiVal")
        return int(getattr(value.value, member))

    def recovery_action(self, index: int) -> int:
        get_values = self._function("nvmlDeviceGetFieldValues")
        values = self._call(get_values, self._handle(index), [NVML_FI_DEV_GET_GPU_RECOVERY_ACTION])
        return self._field_int("NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", values[0])

    def nvlink_errors(self, index: int, links: t.Sequence[int]) -> dict[int, dict[str, int]]:
        handle = self._handle(index)
        links = list(links)
        if not links:
            return {}
        get_counter = getattr(self._nvml, "nvmlDeviceGetNvLinkErrorCounter", None)
        if get_counter is not None:
            try:
                return {link: {name: int(get_counter(handle, link, counter))
                               for name, (counter, _field) in NVLINK_ERROR_COUNTERS.items()} for link in links}
            except self._nvml.NVMLError as exc:
                if getattr(exc, "value", None) not in (NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND):
                    raise self._error(exc) from exc
        get_values = self._function("nvmlDeviceGetFieldValues")
        asked = [(link, name, field) for link in links for name, (_counter, field) in NVLINK_ERROR_COUNTERS.items()]
        values = self._call(get_values, handle, [(field, link) for link, _name, field in asked])
        if len(values) != len(asked):
            raise NvmlError(f"nvmlDeviceGetFieldValues answered {len(values)} of the {len(asked)} NVLink fields asked")
        errors: dict[int, dict[str, int]] = {}
        for position, (link, name, field) in enumerate(asked):
            errors.setdefault(link, {})[name] = self._field_int(f"NVLink field {field} of link {link}",
                                                                values[position])
        return errors


# --- the factory ---------------------------------------------------------------------------------


def pynvml_missing_message() -> str:
    """Ansible's text for the missing nvidia-ml-py library."""
    return missing_required_lib(PYNVML_LIBRARY, reason="to query GPUs through NVML", url=PYNVML_URL)


def is_running_host(root: str) -> bool:
    """Whether ``root`` is the running host's root: ``/``, or that root mounted elsewhere (a probe in a container
    that mounts the host's ``/`` at ``/host``), known by its :data:`BOOT_ID` reading the running kernel's boot id.

    The boot id is a random UUID the kernel draws at boot and shows in every mount namespace of that boot; a tree
    recorded on another host, or on this one at another boot, does not hold it.  Neither id is ever reported.
    """
    if os.path.realpath(root) == "/":
        return True
    running = host_files.read_text("/", BOOT_ID)
    if not running or not BOOT_ID_RE.match(running):
        return False
    # the root as a plain path: a boot id it does not hold is no refusal of the probe's
    return host_files.read_text(str(root), BOOT_ID) == running


def nvml_source(root: str) -> NvmlSource:
    """Return the NVML source for a probe of ``root``.

    NVML always describes the running host, so it is only used when ``root`` is the running host's root
    (:func:`is_running_host`); for any other root this raises :class:`NvmlError` and the probe lists the tree's GPUs
    from PCI sysfs.  Raises :class:`PynvmlMissing` when nvidia-ml-py is not installed.
    """
    if pynvml is None:
        raise PynvmlMissing(pynvml_missing_message(), PYNVML_IMPORT_ERROR)
    if not is_running_host(root):
        raise NvmlError(f"NVML describes the running host, not the tree at root {root!r}")
    return PynvmlSource()
