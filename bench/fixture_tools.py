# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BENCH FIXTURE: stand-ins for ``lspci``, ``ibdev2netdev``, ``lsmod`` and ``nvidia-smi``, and a pass-through ``ip``.

The shell-based probing that deepops / Cloud Native Stack style playbooks do runs these tools
on every host.  The simulated hosts of ``bench/fleet_preflight.py`` are recorded fixture trees,
so these stand-ins answer from the tree named by ``$BENCH_FIXTURE_ROOT`` instead of the machine:

- ``lspci``: ``/sys/bus/pci/devices/*/{vendor,device,class}`` in lspci's default format
  (``0008:01:00.0 3D controller: NVIDIA Corporation Device 2941``; ``-D`` forces the domain).
- ``ibdev2netdev``: ``/sys/class/infiniband/*/ports/*`` -> netdev -> carrier, in mlnx-tools'
  format (``mlx5_0 port 1 ==> ibp3s0 (Up)``).
- ``lsmod``: ``/proc/modules`` in kmod's format.
- ``nvidia-smi``: ``/proc/driver/nvidia/version`` (driver loaded or not) and the host's recorded
  NVML answers (``<root>.nvml.json``, the file the recorded NVML double, tests/fixtures/recorded_nvml.py, reads);
  ``--query-gpu=...`` with ``--format=csv[,noheader][,nounits]`` and ``-L``.

They are never installed anywhere: ``write_tools`` writes them into a bench temp directory that
the shell tasks put first on ``PATH``.  Each is a small Python script run with ``python -I``
(about 15 ms to start), cheaper than the real ``nvidia-smi``, which initialises NVML.
"""

from __future__ import annotations

import os
import stat

_COMMON = '''\
# BENCH FIXTURE (gpufabric.cluster bench/fixture_tools.py): a stand-in for the real tool that
# answers from the recorded host tree in $BENCH_FIXTURE_ROOT. Not the real tool.
import os
import sys

ROOT = os.environ.get("BENCH_FIXTURE_ROOT", "/")


def read(*parts, default=""):
    try:
        with open(os.path.join(ROOT, *parts), encoding="utf-8") as handle:
            return handle.read().strip()
    except OSError:
        return default
'''

_LSPCI = '''
CLASSES = {"0300": "VGA compatible controller", "0302": "3D controller", "0200": "Ethernet controller",
           "0207": "Infiniband controller", "0680": "Bridge", "0604": "PCI bridge",
           "0108": "Non-Volatile memory controller"}
VENDORS = {"10de": "NVIDIA Corporation", "15b3": "Mellanox Technologies", "8086": "Intel Corporation",
           "14e4": "Broadcom Inc. and subsidiaries", "1af4": "Red Hat, Inc.", "1000": "Broadcom / LSI"}
DEVICES = {("10de", "2330"): "GH100 [H100 SXM5 80GB]", ("10de", "2331"): "GH100 [H100 PCIe]",
           ("10de", "22a3"): "GH100 [H100 NVSwitch]", ("15b3", "1021"): "MT2910 Family [ConnectX-7]",
           ("15b3", "a2dc"): "MT43244 BlueField-3 integrated ConnectX-7 network controller",
           ("8086", "1563"): "Ethernet Controller X550", ("8086", "1533"): "I210 Gigabit Network Connection",
           ("14e4", "165f"): "NetXtreme BCM5720 Gigabit Ethernet PCIe", ("1af4", "1000"): "Virtio network device"}
base = os.path.join(ROOT, "sys/bus/pci/devices")
try:
    functions = sorted(os.listdir(base))
except OSError:
    functions = []
show_domain = "-D" in sys.argv[1:] or any(not bdf.startswith("0000:") for bdf in functions)
for bdf in functions:
    vendor = read("sys/bus/pci/devices", bdf, "vendor")[2:]
    device = read("sys/bus/pci/devices", bdf, "device")[2:]
    pci_class = read("sys/bus/pci/devices", bdf, "class")[2:6]
    address = bdf if show_domain else bdf[5:]
    vendor_name = VENDORS.get(vendor, "Device " + vendor)
    device_name = DEVICES.get((vendor, device), "Device " + device)
    print(f"{address} {CLASSES.get(pci_class, 'Class ' + pci_class)}: {vendor_name} {device_name}")
'''

_IBDEV2NETDEV = '''
base = os.path.join(ROOT, "sys/class/infiniband")
try:
    devices = sorted(os.listdir(base))
except OSError:
    devices = []
for dev in devices:
    try:
        ports = sorted(os.listdir(os.path.join(base, dev, "ports")), key=int)
    except OSError:
        continue
    for port in ports:
        netdev = ""
        if read("sys/class/infiniband", dev, "ports", port, "link_layer") == "Ethernet":
            netdev = read("sys/class/infiniband", dev, "ports", port, "gid_attrs/ndevs/0")
        else:
            try:
                netdev = sorted(os.listdir(os.path.join(base, dev, "device", "net")))[0]
            except (OSError, IndexError):
                netdev = ""
        if not netdev:
            print(f"{dev} port {port} ==> NA (NA)")
            continue
        carrier = read("sys/class/net", netdev, "carrier")
        print(f"{dev} port {port} ==> {netdev} ({'Up' if carrier == '1' else 'Down'})")
'''

_LSMOD = '''
print("Module                  Size  Used by")
for line in read("proc/modules").splitlines():
    fields = line.split()
    if len(fields) < 4:
        continue
    users = fields[3].rstrip(",")
    users = "" if users == "-" else users
    print(f"{fields[0]:<19} {fields[1]:>8}  {fields[2]} {users}".rstrip())
'''

_NVIDIA_SMI = '''
import json

FABRIC_STATES = {0: "N/A", 1: "Not Started", 2: "In Progress", 3: "Completed"}
if not read("proc/driver/nvidia/version"):
    print("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
          "Make sure that the latest NVIDIA driver is installed and running.")
    sys.exit(9)
try:
    with open(ROOT.rstrip("/") + ".nvml.json", encoding="utf-8") as handle:
        recording = json.load(handle)
except OSError:
    recording = {}
devices = recording.get("devices") or []


def value(gpu, field, units):
    fabric = gpu.get("fabric") or {}
    mib = gpu["memory_total"] // (1024 * 1024)
    answers = {
        "index": str(gpu["index"]), "name": gpu["name"], "uuid": gpu["uuid"], "pci.bus_id": gpu["pci_bus_id"],
        "driver_version": recording.get("driver_version", "N/A"),
        "memory.total": f"{mib} MiB" if units else str(mib),
        "persistence_mode": "Enabled" if gpu.get("persistence_mode") else "Disabled",
        "mig.mode.current": "Enabled" if (gpu.get("mig_mode") or [0])[0] else "Disabled",
        "fabric.state": FABRIC_STATES.get(fabric.get("state", 0), "N/A") if fabric else "N/A",
        "fabric.status": ("Success" if fabric.get("status") == 0 else "Failure") if fabric else "N/A",
        "fabric.cliqueId": str(fabric["clique_id"]) if fabric else "N/A",
        "fabric.clusterUuid": fabric["cluster_uuid"] if fabric else "N/A",
    }
    if field not in answers:
        print(f'Field "{field}" is not a valid field to query.')
        sys.exit(2)
    return answers[field]


args = sys.argv[1:]
query = next((arg.split("=", 1)[1] for arg in args if arg.startswith("--query-gpu=")), None)
fmt = next((arg.split("=", 1)[1] for arg in args if arg.startswith("--format=")), "")
if query is not None:
    fields = [field.strip() for field in query.split(",") if field.strip()]
    options = fmt.split(",")
    units = "nounits" not in options
    if "noheader" not in options:
        print(", ".join(field + (" [MiB]" if field == "memory.total" and units else "") for field in fields))
    for gpu in devices:
        print(", ".join(value(gpu, field, units) for field in fields))
elif "-L" in args:
    for gpu in devices:
        print(f"GPU {gpu['index']}: {gpu['name']} (UUID: {gpu['uuid']})")
else:
    print(f"NVIDIA-SMI {recording.get('driver_version', 'N/A')}  (bench fixture: use --query-gpu or -L)")
'''

TOOLS = {"lspci": _LSPCI, "ibdev2netdev": _IBDEV2NETDEV, "lsmod": _LSMOD, "nvidia-smi": _NVIDIA_SMI}


def write_tools(dest: str, python: str) -> str:
    """Write the four stand-in tools into ``dest`` (created) for ``python``; return ``dest``."""
    os.makedirs(dest, exist_ok=True)
    for name, body in TOOLS.items():
        path = os.path.join(dest, name)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"#!{python} -I\n{_COMMON}{body}")
        os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return dest


def write_ip_passthrough(root: str) -> str:
    """Put ``usr/bin/ip`` into a host tree: the machine's own ``ip`` (BENCH FIXTURE); return its path.

    ``fabric_facts``' network subset runs the ``ip`` found below its root; a recorded tree has none, and the
    addresses of a simulated host are this machine's, as ``setup`` (which ignores the root) reported them.
    """
    real = next((path for path in ("/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip")
                 if os.path.isfile(path) and os.access(path, os.X_OK)), None)
    if real is None:
        raise SystemExit("no ip tool (iproute2) on this machine; the network subset of fabric_facts needs one")
    path = os.path.join(root, "usr", "bin", "ip")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"#!/bin/sh\n# BENCH FIXTURE: the simulated host's ip is this machine's.\nexec {real} \"$@\"\n")
    os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    return path
