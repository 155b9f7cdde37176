# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""ConnectX/BlueField ports read from sysfs: PCI function -> RDMA device -> port -> netdev.

The walk follows the kernel's layout (Documentation/ABI/stable/sysfs-class-infiniband)
and the matching rules of ``ibdev2netdev`` (mlnx-tools):

* PCI functions with ``vendor`` 0x15b3 under ``/sys/bus/pci/devices`` (relative
  symlinks into ``/sys/devices/pci*``);
* their RDMA devices, ``<pci>/infiniband/<dev>``, and each device's ports
  ``/sys/class/infiniband/<dev>/ports/<n>/``;
* the netdev of a port: ``ports/<n>/gid_attrs/ndevs/0`` when the kernel provides it
  (RoCE), otherwise the netdevs of the PCI function (``<pci>/net/``) whose port index
  ``max(dev_id, dev_port) + 1`` is the port; only netdevs whose ``device/vendor`` is
  0x15b3 count;
* the NVIDIA GPUs (vendor 0x10de, class 0x0300xx/0x0302xx) behind the same PCIe
  switch and on the same NUMA node, the pairing GPUDirect RDMA cares about.
* each port's error counters (``counters/`` and ``hw_counters/``), read by
  :mod:`.port_counters`.

A file that cannot be read or parsed turns into ``None`` for that value and an
entry in ``errors`` naming the path; the other ports are still reported.  No
attribute's text is reported as read: each value is parsed into a number or
checked against its documented shape first (:data:`PORT_STATES`,
:data:`PHYS_STATES`, :data:`LINK_LAYERS`, the rate the kernel writes, and
:mod:`.host_values` for the device id, firmware version, board id and netdev
name); an attribute of another shape is ``None`` and an error that never quotes
it.  Every attribute is read up to one page (:data:`.host_files.ATTRIBUTE_LIMIT`).
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import asdict, dataclass, field

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import ParseError, ProbeRootError
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import (
    check_root,
    exists,
    list_dir,
    outside,
    problem,
    read_text,
    resolve,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import (
    is_board_id,
    is_firmware_version,
    is_interface_name,
    is_pci_id,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import read_port_counters
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key

MELLANOX_VENDOR = "0x15b3"
NVIDIA_VENDOR = "0x10de"
GPU_CLASS_PREFIXES = ("0x0300", "0x0302")
NETWORK_CLASS_PREFIX = "0x02"
PCI_DEVICES = "/sys/bus/pci/devices"
CLASS_INFINIBAND = "/sys/class/infiniband"
CLASS_NET = "/sys/class/net"
LINK_LAYERS = ("InfiniBand", "Ethernet")
# The names the kernel writes after the code in a port's state and phys_state (drivers/infiniband/core/sysfs.c,
# state_show and phys_state_to_str; "Unknown" and "PhyTest" as some kernels spelled them): a name outside these
# is not reported.
PORT_STATES = ("NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER", "UNKNOWN")
PHYS_STATES = ("<unknown>", "Unknown", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
               "LinkErrorRecovery", "Phy Test", "PhyTest")

MODELS = {
    "0x1017": "ConnectX-5",
    "0x1019": "ConnectX-5 Ex",
    "0x101b": "ConnectX-6",
    "0x101d": "ConnectX-6 Dx",
    "0x101f": "ConnectX-6 Lx",
    "0x1021": "ConnectX-7",
    "0x1023": "ConnectX-8",
    "0xa2d6": "BlueField-2",
    "0xa2dc": "BlueField-3",
}

_BDF_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
_HOST_BRIDGE_RE = re.compile(r"^pci[0-9a-f]{4}:[0-9a-f]{2}$")
_CODED_RE = re.compile(r"^\s*(?P<code>\d+)\s*:\s*(?P<name>\S.*?)\s*$", re.ASCII)
# What the kernel writes (drivers/infiniband/core/sysfs.c, rate_show): "%d%s Gb/sec (%dX%s)", e.g.
# "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)".
_RATE_RE = re.compile(r"^(?P<value>\d+(?:\.\d+)?) Gb/sec \(\d+X(?: [A-Z][A-Z0-9]*)?\)\Z", re.ASCII)


@dataclass(frozen=True)
class ConnectXPort:
    """One port of a ConnectX/BlueField RDMA device."""

    pci_address: str
    device_id: str | None
    model: str | None
    rdma_device: str
    port: int
    netdev: str | None
    link_layer: str | None
    state: str | None
    state_code: int | None
    phys_state: str | None
    rate_gbps: int | float | None
    rate: str | None
    mtu: int | None
    fw_ver: str | None
    board_id: str | None
    numa_node: int | None
    gpus_same_switch: tuple[str, ...]
    gpus_same_numa: tuple[str, ...]
    errors: tuple[str, ...] = ()  # what is wrong with this port's attributes (also in the payload's errors)
    # error counters (:mod:`.port_counters`): a counter whose file is missing is absent; one that cannot be read or
    # parsed is absent and its file named in counter_errors (kept out of errors: the port itself reads fine)
    counters: dict[str, int] = field(default_factory=dict)
    counter_errors: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        """Return the port as plain, JSON-able data."""
        data = asdict(self)
        data["gpus_same_switch"] = list(self.gpus_same_switch)
        data["gpus_same_numa"] = list(self.gpus_same_numa)
        data["errors"] = list(self.errors)
        data["counter_errors"] = list(self.counter_errors)
        return data


@dataclass(frozen=True)
class PciFunction:
    """A PCI function as sysfs shows it: its address, resolved device path and the attributes used here."""

    address: str
    path: str  # host-absolute, resolved: /sys/devices/pci0000:18/.../0000:18:00.0
    vendor: str | None
    pci_class: str | None
    numa_node: int | None


def parse_coded(text: str, names: tuple[str, ...] = PORT_STATES + PHYS_STATES) -> tuple[int, str]:
    """Parse a sysfs ``state``/``phys_state`` value such as ``4: ACTIVE`` into ``(4, 'ACTIVE')``.

    The name must be one of ``names`` (by default any name the kernel writes in either attribute); raises
    :class:`ParseError`, without quoting the text, otherwise.
    """
    match = _CODED_RE.match(text)
    if not match or match.group("name") not in names:
        raise ParseError("not a port state (expected '<code>: <name>')")
    return int(match.group("code")), match.group("name")


def parse_port_state(text: str) -> tuple[int, str]:
    """Parse a port's ``state`` (``4: ACTIVE``); the name must be one of :data:`PORT_STATES`."""
    return parse_coded(text, PORT_STATES)


def parse_phys_state(text: str) -> tuple[int, str]:
    """Parse a port's ``phys_state`` (``5: LinkUp``); the name must be one of :data:`PHYS_STATES`."""
    return parse_coded(text, PHYS_STATES)


def _shaped(check: t.Callable[[str], bool], expected: str) -> t.Callable[[str], str]:
    """A parser returning its text when ``check`` accepts it, else raising :class:`ParseError` (``not <expected>``)."""
    def parse(text: str) -> str:
        if not check(text):
            raise ParseError(f"not {expected}")
        return text
    return parse


parse_device_id = _shaped(is_pci_id, "a PCI device id (expected 0x and four hex digits)")
parse_fw_ver = _shaped(is_firmware_version, "a firmware version (expected <major>.<minor>.<build>)")
parse_board_id = _shaped(is_board_id, "a board id (expected 1 to 64 letters, digits and _.-)")


def parse_rate(text: str) -> int | float:
    """Parse a port ``rate`` such as ``400 Gb/sec (4X NDR)`` into Gb/s (``400``; ``2.5`` stays a float)."""
    match = _RATE_RE.match(text)
    if not match:
        raise ParseError("not a rate (expected '<number> Gb/sec (<width>X <speed>)')")
    value = float(match.group("value"))
    if value <= 0:
        raise ParseError("not a rate (expected '<number> Gb/sec (<width>X <speed>)')")
    return int(value) if value.is_integer() else value


def parse_numa_node(text: str) -> int | None:
    """Parse a PCI ``numa_node`` attribute; ``-1`` (unknown) becomes ``None``."""
    try:
        value = int(text)
    except ValueError:
        raise ParseError("not a NUMA node number") from None
    return None if value < 0 else value


def shares_pcie_switch(path_a: str, path_b: str) -> bool:
    """Whether two resolved ``/sys/devices`` paths of PCI functions sit below the same PCIe switch.

    True when their deepest common ancestor is a PCI bridge function that is not the
    root port directly under the ``pci<domain>:<bus>`` host bridge.
    """
    parents_a = path_a.strip("/").split("/")[:-1]
    parents_b = path_b.strip("/").split("/")[:-1]
    common = 0
    for part_a, part_b in zip(parents_a, parents_b, strict=False):
        if part_a != part_b:
            break
        common += 1
    if common == 0:
        return False
    host_bridges = [i for i, part in enumerate(parents_a[:common]) if _HOST_BRIDGE_RE.match(part)]
    if not host_bridges:
        return False
    deepest = common - 1
    return bool(_BDF_RE.match(parents_a[deepest])) and deepest >= host_bridges[-1] + 2


class _Walk:
    """State of one sysfs walk: the root, collected errors and warnings."""

    def __init__(self, root: str):
        self.root = root
        self.errors: list[str] = []
        self.warnings: list[str] = []

    # --- attribute reading ---------------------------------------------------------------------

    def read(self, path: str) -> str | None:
        """Read an attribute the probe needs; ``None`` and an error entry when it cannot be read."""
        text = read_text(self.root, path)
        if text is None:
            self.errors.append(f"{path}: {problem(self.root, path)}")
        return text

    def dangling(self, path: str) -> bool:
        """Whether a link that should lead to a device is there but leads nowhere (an error entry when so)."""
        if resolve(self.root, path) is not None or not exists(self.root, path):
            return False
        reason = "outside root" if outside(self.root, path) else "dangling link"
        self.errors.append(f"{path}: {reason}")
        return True

    def parsed(self, path: str, parser):
        """Read and parse an attribute; ``None`` and an error entry when either fails."""
        text = self.read(path)
        if text is None:
            return None
        try:
            return parser(text)
        except ParseError as exc:
            self.errors.append(f"{path}: {exc}")
            return None

    # --- PCI -----------------------------------------------------------------------------------

    def pci_functions(self) -> list[PciFunction]:
        """Every PCI function under /sys/bus/pci/devices with its resolved path."""
        if not exists(self.root, PCI_DEVICES):
            self.errors.append(f"{PCI_DEVICES}: is missing (sysfs not mounted below the root?)")
            return []
        functions = []
        for address in list_dir(self.root, PCI_DEVICES):
            link = f"{PCI_DEVICES}/{address}"
            path = resolve(self.root, link)
            if path is None:
                reason = "outside root" if outside(self.root, link) else "does not resolve to a device below the root"
                self.errors.append(f"{link}: {reason}")
                continue
            vendor = read_text(self.root, f"{path}/vendor")
            pci_class = read_text(self.root, f"{path}/class")
            numa_text = read_text(self.root, f"{path}/numa_node")
            try:
                numa_node = parse_numa_node(numa_text) if numa_text is not None else None
            except ParseError:
                numa_node = None
            functions.append(PciFunction(address=address.lower(), path=path,
                                         vendor=vendor.lower() if vendor else None,
                                         pci_class=pci_class.lower() if pci_class else None,
                                         numa_node=numa_node))
        return functions

    # --- netdev --------------------------------------------------------------------------------

    def is_connectx_netdev(self, netdev_dir: str) -> bool:
        """Whether the netdev at ``netdev_dir`` belongs to a Mellanox/NVIDIA Networking PCI function."""
        vendor = read_text(self.root, f"{netdev_dir}/device/vendor")
        return vendor is not None and vendor.lower() == MELLANOX_VENDOR

    def netdev_for_port(self, port_dir: str, function: PciFunction, port: int) -> tuple[str | None, str | None]:
        """Return ``(name, sysfs directory)`` of the netdev of a port, as ibdev2netdev finds it."""
        ndev = read_text(self.root, f"{port_dir}/gid_attrs/ndevs/0")
        if ndev and not is_interface_name(ndev):
            self.errors.append(f"{port_dir}/gid_attrs/ndevs/0: not a network interface name")
            ndev = None
        if ndev:
            netdev_dir = f"{CLASS_NET}/{ndev}"
            if self.dangling(netdev_dir) or self.dangling(f"{netdev_dir}/device"):
                return None, None
            if self.is_connectx_netdev(netdev_dir):
                return ndev, netdev_dir
            self.warnings.append(f"{port_dir}/gid_attrs/ndevs/0 names a netdev that is not a ConnectX netdev "
                                 f"(its device/vendor is not {MELLANOX_VENDOR}); ignored")
        candidates = []
        for name in list_dir(self.root, f"{function.path}/net"):
            netdev_dir = f"{function.path}/net/{name}"
            if not self.is_connectx_netdev(netdev_dir):
                continue
            if self.netdev_port_index(netdev_dir) == port:
                candidates.append(name)
        if not candidates:
            return None, None
        name = sorted(candidates, key=natural_key)[0]
        return name, f"{function.path}/net/{name}"

    def netdev_port_index(self, netdev_dir: str) -> int | None:
        """Port index of a netdev: ``max(dev_id, dev_port) + 1`` as ibdev2netdev computes it."""
        dev_id_text = read_text(self.root, f"{netdev_dir}/dev_id")
        if dev_id_text is None:
            return None
        dev_port_text = read_text(self.root, f"{netdev_dir}/dev_port", "0")
        try:
            dev_id = int(dev_id_text, 0)
            dev_port = int(dev_port_text, 0)
        except ValueError:
            self.errors.append(f"{netdev_dir}: dev_id or dev_port is not an integer")
            return None
        return max(dev_id, dev_port) + 1

    # --- ports ---------------------------------------------------------------------------------

    def device_dir(self, function: PciFunction, rdma_device: str) -> str:
        """The directory of an RDMA device: /sys/class/infiniband/<dev> when linked, else below the PCI function."""
        class_dir = f"{CLASS_INFINIBAND}/{rdma_device}"
        if resolve(self.root, class_dir) is not None:
            return class_dir
        self.dangling(class_dir)
        return f"{function.path}/infiniband/{rdma_device}"

    def ports_of(self, function: PciFunction, rdma_device: str, gpus: list[PciFunction]) -> list[ConnectXPort]:
        """Every port of one RDMA device."""
        device_start = len(self.errors)
        device_dir = self.device_dir(function, rdma_device)
        device_id = self.parsed(f"{function.path}/device", lambda text: parse_device_id(text.lower()))
        fw_ver = self.parsed(f"{device_dir}/fw_ver", parse_fw_ver)
        # board_id only names the card (its PSID): absent (a BlueField DPU, some kernels) it is None, not an error;
        # present, it must read and have a board id's shape.
        board_id = (self.parsed(f"{device_dir}/board_id", parse_board_id)
                    if exists(self.root, f"{device_dir}/board_id") else None)
        numa_node = self.parsed(f"{function.path}/numa_node", parse_numa_node)
        same_switch = tuple(sorted(gpu.address for gpu in gpus if shares_pcie_switch(function.path, gpu.path)))
        same_numa = tuple(sorted(gpu.address for gpu in gpus if numa_node is not None and gpu.numa_node == numa_node))
        port_numbers = []
        for name in list_dir(self.root, f"{device_dir}/ports"):
            if name.isdigit():
                port_numbers.append(int(name))
            else:
                self.warnings.append(f"{device_dir}/ports/{name}: not a port number; skipped")
        if not port_numbers:
            self.errors.append(f"{device_dir}/ports: no ports found")
        device_errors = tuple(self.errors[device_start:])
        ports = []
        for number in sorted(port_numbers):
            port_start = len(self.errors)
            port_dir = f"{device_dir}/ports/{number}"
            state = self.parsed(f"{port_dir}/state", parse_port_state)
            phys_state = self.parsed(f"{port_dir}/phys_state", parse_phys_state)
            rate = self.read(f"{port_dir}/rate")
            rate_gbps = None
            if rate is not None:
                try:
                    rate_gbps = parse_rate(rate)
                except ParseError as exc:
                    self.errors.append(f"{port_dir}/rate: {exc}")
                    rate = None  # only a rate as the kernel writes it is reported
            netdev, netdev_dir = self.netdev_for_port(port_dir, function, number)
            mtu = self.parsed(f"{netdev_dir}/mtu", _parse_int) if netdev_dir else None
            link_layer = self.read(f"{port_dir}/link_layer")
            counters, counter_errors = read_port_counters(self.root, port_dir)
            if link_layer is not None and link_layer not in LINK_LAYERS:
                self.errors.append(f"{port_dir}/link_layer: not a link layer (expected InfiniBand or Ethernet)")
                link_layer = None
            ports.append(ConnectXPort(
                pci_address=function.address, device_id=device_id, model=MODELS.get(device_id or ""),
                rdma_device=rdma_device, port=number, netdev=netdev,
                link_layer=link_layer,
                state=state[1] if state else None, state_code=state[0] if state else None,
                phys_state=phys_state[1] if phys_state else None,
                rate_gbps=rate_gbps, rate=rate, mtu=mtu, fw_ver=fw_ver, board_id=board_id, numa_node=numa_node,
                gpus_same_switch=same_switch, gpus_same_numa=same_numa,
                errors=device_errors + tuple(self.errors[port_start:]),
                counters=counters, counter_errors=tuple(counter_errors),
            ))
        return ports


def _parse_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ParseError("not an integer") from None


def _is_gpu(function: PciFunction) -> bool:
    return function.vendor == NVIDIA_VENDOR and (function.pci_class or "").startswith(GPU_CLASS_PREFIXES)


def _is_connectx(function: PciFunction) -> bool:
    # ConnectX/BlueField network functions; the vendor's PCIe switch ports and SoC functions are not ports.
    if function.vendor != MELLANOX_VENDOR:
        return False
    return function.pci_class is None or function.pci_class.startswith(NETWORK_CLASS_PREFIX)


def _payload(ports: list[dict], functions_without_rdma: list[str], errors: list[str], warnings: list[str]) -> dict:
    link_layers = dict.fromkeys(LINK_LAYERS, 0)
    for port in ports:
        if port["link_layer"]:
            link_layers[port["link_layer"]] = link_layers.get(port["link_layer"], 0) + 1
    return {
        "ports": ports,
        "count": len(ports),
        "rdma_devices": sorted({port["rdma_device"] for port in ports}, key=natural_key),
        "link_layers": link_layers,
        "functions_without_rdma": functions_without_rdma,
        "errors": errors,
        "warnings": warnings,
    }


def collect_connectx(root: str, runner=None) -> dict:
    """Return the ``connectx_info`` payload for the host below ``root``.

    ``runner`` is accepted for the common ``collect_*`` signature; this probe only reads sysfs.
    """
    del runner  # sysfs only
    try:
        root = check_root(root)
    except ProbeRootError as exc:
        return _payload([], [], [str(exc)], [])
    walk = _Walk(root)
    functions = walk.pci_functions()
    gpus = [function for function in functions if _is_gpu(function)]
    ports: list[ConnectXPort] = []
    without_rdma = []
    for function in functions:
        if not _is_connectx(function):
            continue
        rdma_devices = list_dir(root, f"{function.path}/infiniband")
        if not rdma_devices:
            without_rdma.append(function.address)
            continue
        for rdma_device in rdma_devices:
            ports.extend(walk.ports_of(function, rdma_device, gpus))
    ports.sort(key=lambda port: (natural_key(port.rdma_device), port.port))
    walk.errors.extend(root.refusal_errors(walk.errors))
    return _payload([port.as_dict() for port in ports], sorted(without_rdma), walk.errors, walk.warnings)
