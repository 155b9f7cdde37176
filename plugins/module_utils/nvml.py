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
import traceback
import typing as t
import uuid
from dataclasses import dataclass

from ansible.module_utils.basic import missing_required_lib

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
                  "nvlink_states", "nvlink_speed_mbps")

# NVLink (nvml.h, NVIDIA/go-nvml pkg/nvml/const.go, nvidia-ml-py 13.x pynvml.py):
# NVML_NVLINK_MAX_LINKS = 18 (links 0..17 are asked; older headers said 12 or 6, a newer binding's own value wins);
# nvmlDeviceGetNvLinkState answers NVML_FEATURE_ENABLED (1) for an active link, NVML_FEATURE_DISABLED (0) for an
# inactive one, NVML_ERROR_NOT_SUPPORTED (or NVML_ERROR_INVALID_ARGUMENT, "link is invalid") for a link the GPU
# does not have.  NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90: "Common NVLink Speed in MBps for active links", read
# with nvmlDeviceGetFieldValues.
NVML_NVLINK_MAX_LINKS = 18
NVML_FEATURE_ENABLED = 1
NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON = 90

# The fabric health mask (nvmlGpuFabricInfo_v2_t.healthMask and later; nvml.h of driver 570 / CUDA 12.8, the same
# values in NVIDIA/go-nvml pkg/nvml/const.go and nvidia-ml-py 13.x): each condition is a field read as
# ``(mask >> SHIFT) & WIDTH`` (NVML_GPU_FABRIC_HEALTH_GET; WIDTH is the field's mask, 0x3) whose value is
# NOT_SUPPORTED = 0, TRUE = 1 or FALSE = 2.  Name -> (NVML name, shift, width).
NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED = 0
NVML_GPU_FABRIC_HEALTH_TRUE = 1
NVML_GPU_FABRIC_HEALTH_FALSE = 2
FABRIC_HEALTH_FIELDS = {
    # NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW 0, NVML_GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW 0x3
    "degraded_bandwidth": ("DEGRADED_BW", 0, 0x3),
    # NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY 2, _WIDTH_ROUTE_RECOVERY 0x3 (added in NVML 12.8 / r570)
    "route_recovery": ("ROUTE_RECOVERY", 2, 0x3),
    # NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY 4, _WIDTH_ROUTE_UNHEALTHY 0x3
    "route_unhealthy": ("ROUTE_UNHEALTHY", 4, 0x3),
    # NVML_GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY 6, _WIDTH_ACCESS_TIMEOUT_RECOVERY 0x3
    "access_timeout_recovery": ("ACCESS_TIMEOUT_RECOVERY", 6, 0x3),
}


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
    clique_id: int
    # healthMask of nvmlGpuFabricInfo_v2 and later; None: only the v1 struct could be read (no health mask)
    health_mask: int | None = None


def decode_health_mask(mask: int | None) -> dict:
    """Decode a fabric ``healthMask`` into its named conditions (:data:`FABRIC_HEALTH_FIELDS`).

    Each condition is ``True`` (NVML: TRUE, the condition holds), ``False`` (FALSE) or ``None`` with its
    reason in ``reasons`` (NOT_SUPPORTED, a value NVML does not define, or no mask at all).

    >>> decode_health_mask(1 | 2 << 2 | 2 << 4 | 2 << 6)["degraded_bandwidth"]
    True
    """
    health: dict[str, t.Any] = {"mask": mask}
    reasons = []
    for name, (nvml_name, shift, width) in FABRIC_HEALTH_FIELDS.items():
        if mask is None:
            health[name] = None
            continue
        value = (int(mask) >> shift) & width
        if value == NVML_GPU_FABRIC_HEALTH_TRUE:
            health[name] = True
        elif value == NVML_GPU_FABRIC_HEALTH_FALSE:
            health[name] = False
        else:
            health[name] = None
            reasons.append(f"{name}: NVML reports it not supported" if value == NVML_GPU_FABRIC_HEALTH_NOT_SUPPORTED
                           else f"{name}: value {value} of NVML_GPU_FABRIC_HEALTH_MASK_{nvml_name} is not defined")
    if mask is None:
        reasons.append("NVML gave no health mask (fabric info v1 only: driver or nvidia-ml-py older than "
                       "nvmlGpuFabricInfo_v2)")
    health["reasons"] = reasons
    return health


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
        """The GPU's fabric registration; :class:`NvmlNotSupported` on GPUs without an NVLink fabric."""

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
        info = None
        versioned = getattr(self._nvml, "nvmlDeviceGetGpuFabricInfoV", None)
        if versioned is not None:
            # Newest struct first; a driver older than the struct answers ARGUMENT_VERSION_MISMATCH.
            for struct_name in ("c_nvmlGpuFabricInfo_v3_t", "c_nvmlGpuFabricInfo_v2_t"):
                struct = getattr(self._nvml, struct_name, None)
                if struct is None:
                    continue
                candidate = struct()
                try:
                    versioned(handle, ctypes.byref(candidate))
                except self._nvml.NVMLError as exc:
                    if getattr(exc, "value", None) in (NVML_ERROR_ARGUMENT_VERSION_MISMATCH,
                                                       NVML_ERROR_FUNCTION_NOT_FOUND):
                        continue
                    raise self._error(exc) from exc
                info = candidate
                break
        if info is None:
            info = self._nvml.c_nvmlGpuFabricInfo_t()
            self._call(self._nvml.nvmlDeviceGetGpuFabricInfo, handle, ctypes.byref(info))
        mask = getattr(info, "healthMask", None)
        return FabricInfo(state=int(info.state), status=int(info.status),
                          cluster_uuid=str(uuid.UUID(bytes=bytes(info.clusterUuid))), clique_id=int(info.cliqueId),
                          health_mask=None if mask is None else int(mask))

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


# --- the factory ---------------------------------------------------------------------------------


def pynvml_missing_message() -> str:
    """Ansible's text for the missing nvidia-ml-py library."""
    return missing_required_lib(PYNVML_LIBRARY, reason="to query GPUs through NVML", url=PYNVML_URL)


def nvml_source(root: str) -> NvmlSource:
    """Return the NVML source for a probe of ``root``.

    NVML always describes the running host, so it is only used when ``root`` is ``/``; for any other
    root this raises :class:`NvmlError` and the probe lists the tree's GPUs from PCI sysfs.  Raises
    :class:`PynvmlMissing` when nvidia-ml-py is not installed.
    """
    if pynvml is None:
        raise PynvmlMissing(pynvml_missing_message(), PYNVML_IMPORT_ERROR)
    if os.path.realpath(root) != "/":
        raise NvmlError(f"NVML describes the running host, not the tree at root {root!r}")
    return PynvmlSource()
