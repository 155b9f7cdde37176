#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: connectx_info
version_added: 1.0.0
short_description: Report the ConnectX and BlueField RDMA ports of a host
description:
  - Walks sysfs from the PCI functions of vendor C(0x15b3) (Mellanox/NVIDIA Networking) to their RDMA devices,
    the ports of each RDMA device and the netdev of each port, as C(ibdev2netdev) does.
  - The netdev of a port is the one the kernel names in C(ports/<n>/gid_attrs/ndevs/0) (RoCE) when present,
    otherwise the netdev of the PCI function whose port index, the larger of C(dev_id) and C(dev_port) plus one,
    is the port.
    Only netdevs of vendor C(0x15b3) count.
  - For each port it also reports the NVIDIA GPUs behind the same PCIe switch and on the same NUMA node,
    the pairing that matters for GPUDirect RDMA.
  - A ConnectX function without an RDMA device (C(mlx5_ib) not loaded) is listed in RV(functions_without_rdma).
  - Unreadable or malformed attributes are returned as V(null) and named in RV(errors); the task does not fail.
    Values a kernel never writes (a link layer other than C(InfiniBand) or C(Ethernet), a rate that is not
    C(<n> Gb/sec (<w>X <speed>)), a dangling device link) are also named in the C(errors) of their port,
    RV(ports[].errors), so that a port with errors counts as failed, not as found.
  - Errors and warnings name the path and what is wrong with it, never the file's content.
  - Only a O(root) that does not exist or has no C(sys/) fails the task.
author: gpufabric.cluster contributors (@gpufabric)
extends_documentation_fragment:
  - gpufabric.cluster.probe
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.actiongroups
attributes:
  check_mode:
    support: full
    details: The module only reads; it returns the same result in check mode.
  diff_mode:
    support: none
  platform:
    platforms: posix
  action_group:
    support: full
    membership:
      - gpufabric.cluster.probes
notes:
  - Reads only sysfs; runs no tools. Works whether or not DOCA-OFED is installed, with the inbox C(mlx5_ib) driver.
seealso:
  - name: sysfs-class-infiniband
    description: Kernel ABI of the RDMA device and port attributes read here.
    link: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
"""

EXAMPLES = r"""
- name: Read the ConnectX ports of the host
  gpufabric.cluster.connectx_info:
  register: connectx

- name: Show each RDMA port with its netdev and the GPU on its PCIe switch
  ansible.builtin.debug:
    msg: "{{ item.rdma_device }}/{{ item.port }} {{ item.netdev }} {{ item.rate }} {{ item.gpus_same_switch }}"
  loop: "{{ connectx.ports }}"

- name: Require every InfiniBand port to be up
  ansible.builtin.assert:
    that:
      - ib_down | length == 0
    fail_msg: "InfiniBand ports not ACTIVE: {{ ib_down | map(attribute='rdma_device') | join(', ') }}"
  vars:
    ib_down: "{{ connectx.ports | selectattr('link_layer', '==', 'InfiniBand') | rejectattr('state', '==', 'ACTIVE') }}"

- name: Inspect a recorded copy of another host's sysfs
  gpufabric.cluster.connectx_info:
    root: /srv/recorded/gpu-node-07
"""

RETURN = r"""
ports:
  description:
    - One entry per port of every RDMA device on a ConnectX/BlueField PCI function.
    - Sorted by RDMA device in natural order (C(mlx5_2) before C(mlx5_10)), then by port.
  returned: always
  type: list
  elements: dict
  contains:
    pci_address:
      description: PCI address of the function the RDMA device sits on, in the kernel's lowercase form.
      returned: always
      type: str
      sample: "0000:18:00.0"
    device_id:
      description:
        - PCI device id of the function, C(0x) and four lower-case hex digits; V(null) when unreadable or of another
          shape (then named in RV(errors)).
      returned: always
      type: str
      sample: "0x1021"
    model:
      description: Product family of RV(ports[].device_id); V(null) when the id is not one of the known models.
      returned: always
      type: str
      sample: ConnectX-7
    rdma_device:
      description: Name of the RDMA device.
      returned: always
      type: str
      sample: mlx5_0
    port:
      description: Port number of the RDMA device (1 based).
      returned: always
      type: int
      sample: 1
    netdev:
      description:
        - The network interface of the port; V(null) when the port has none (for example IPoIB not loaded).
        - A name the kernel gives in C(gid_attrs/ndevs/0) is used only when it is an interface name (1 to 15 letters,
          digits and C(_.-)); another is named in RV(errors).
      returned: always
      type: str
      sample: ibp24s0
    link_layer:
      description: Link layer of the port; V(null) when unreadable.
      returned: always
      type: str
      sample: InfiniBand
    state:
      description:
        - Logical port state name, one of the names the kernel writes (V(NOP), V(DOWN), V(INIT), V(ARMED),
          V(ACTIVE), V(ACTIVE_DEFER), V(UNKNOWN)).
        - "V(null) when unreadable or not C(<code>: <one of these names>) (then named in RV(errors))."
      returned: always
      type: str
      sample: ACTIVE
    state_code:
      description: Numeric logical port state (V(4) is V(ACTIVE)); V(null) when unreadable.
      returned: always
      type: int
      sample: 4
    phys_state:
      description:
        - Physical port state name as the kernel writes it (V(Sleep), V(Polling), V(Disabled),
          V(PortConfigurationTraining), V(LinkUp), V(LinkErrorRecovery), V(Phy Test), V(<unknown>)).
        - V(null) when unreadable or another name (then named in RV(errors)).
      returned: always
      type: str
      sample: LinkUp
    rate_gbps:
      description:
        - Port rate in Gb/s; an integer when whole, otherwise a float (V(2.5)).
        - V(null) when the rate cannot be read or parsed (then named in RV(errors)).
      returned: always
      type: float
      sample: 400
    rate:
      description:
        - The port rate exactly as the kernel reports it (C(<number> Gb/sec (<width>X <speed>))).
        - V(null) when unreadable or of another shape, as RV(ports[].rate_gbps).
      returned: always
      type: str
      sample: 400 Gb/sec (4X NDR)
    mtu:
      description: MTU of RV(ports[].netdev); V(null) without a netdev or when unreadable.
      returned: always
      type: int
      sample: 4092
    fw_ver:
      description:
        - Firmware version of the RDMA device, C(<major>.<minor>.<build>).
        - V(null) when unreadable or of another shape (then named in RV(errors)).
      returned: always
      type: str
      sample: 28.39.1002
    board_id:
      description:
        - Board id (PSID) of the adapter, 1 to 64 letters, digits and C(_.-).
        - V(null) when the device has no C(board_id) attribute (not an error, it only names the card), or when it
          is unreadable or of another shape (then named in RV(errors)).
      returned: always
      type: str
      sample: MT_0000000838
    numa_node:
      description: NUMA node of the PCI function; V(null) when unknown (the kernel reports V(-1)) or unreadable.
      returned: always
      type: int
      sample: 0
    gpus_same_switch:
      description:
        - Sorted PCI addresses of the NVIDIA GPUs that sit below the same PCIe switch as the port's PCI function
          (their deepest common ancestor is a PCI bridge below the root port).
      returned: always
      type: list
      elements: str
      sample: ["0000:1b:00.0"]
    gpus_same_numa:
      description: Sorted PCI addresses of the NVIDIA GPUs on the same NUMA node; empty when the node is unknown.
      returned: always
      type: list
      elements: str
      sample: ["0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0"]
    errors:
      description:
        - What is wrong with this port's attributes (and those of its RDMA device and PCI function), each
          naming the path and the reason; also listed in RV(errors). Empty for a healthy port.
        - A port with entries here is not a usable port, whatever its other values say.
      returned: always
      type: list
      elements: str
      sample: ["/sys/class/infiniband/mlx5_1/ports/1/link_layer: not a link layer (expected InfiniBand or Ethernet)"]
    counters:
      description:
        - The port's error counters since the device last reset them, by the name of their file, each the number
          the kernel prints (decimal, up to 64 bits). Read from C(ports/<n>/counters/) (the port's PMA counters,
          which the device stops at their largest value, for example C(symbol_error) at 65535 and C(link_downed) at
          255; reported as they read), namely C(symbol_error), C(link_error_recovery), C(link_downed),
          C(port_rcv_errors), C(port_rcv_remote_physical_errors), C(excessive_buffer_overrun_errors),
          C(local_link_integrity_errors), C(port_xmit_discards); and from C(ports/<n>/hw_counters/) (mlx5 driver
          counters) C(out_of_sequence) and C(packet_seq_err).
        - A counter whose file is not there (an older kernel without C(hw_counters/), a driver without PMA counters
          on a RoCE port) is absent; one whose file is there but cannot be read or holds no decimal number is absent
          and named in RV(ports[].counter_errors). Only these files are read.
      returned: always
      type: dict
      sample: {"symbol_error": 27, "link_error_recovery": 4, "link_downed": 3, "port_rcv_errors": 19,
               "port_rcv_remote_physical_errors": 0, "excessive_buffer_overrun_errors": 0,
               "local_link_integrity_errors": 0, "port_xmit_discards": 0, "out_of_sequence": 0, "packet_seq_err": 0}
    counter_errors:
      description:
        - The counter files of this port that are there but could not be read or parsed, each naming the path and
          the reason (never the content). Kept out of RV(ports[].errors) and RV(errors), since a port whose
          counters cannot be read is still usable. Empty when every counter present was read.
      returned: always
      type: list
      elements: str
      sample:
        - "/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error: not a counter (expected a decimal number)"
count:
  description: Number of entries in RV(ports).
  returned: always
  type: int
  sample: 10
rdma_devices:
  description: Names of the RDMA devices found, unique, in natural order.
  returned: always
  type: list
  elements: str
  sample: ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10"]
link_layers:
  description: Number of ports per link layer.
  returned: always
  type: dict
  contains:
    InfiniBand:
      description: Ports whose link layer is InfiniBand.
      returned: always
      type: int
      sample: 8
    Ethernet:
      description: Ports whose link layer is Ethernet (RoCE).
      returned: always
      type: int
      sample: 2
  sample: {"InfiniBand": 8, "Ethernet": 2}
functions_without_rdma:
  description:
    - Sorted PCI addresses of ConnectX/BlueField network functions that have no RDMA device,
      usually because C(mlx5_ib) is not loaded.
  returned: always
  type: list
  elements: str
  sample: ["0000:aa:00.1"]
errors:
  description:
    - What could not be read or parsed, each naming the path and the reason (never the content). Empty on a
      healthy host.
    - "A path that leads outside O(root) is never read and named as C(<path>: outside root)."
    - "Every attribute is read up to one page (4096 bytes); a larger file is not read and named as
      C(<path>: larger than the limit of 4096 bytes)."
  returned: always
  type: list
  elements: str
  sample: ["/sys/class/infiniband/mlx5_1/ports/1/rate: not a rate (expected '<number> Gb/sec (<width>X <speed>)')"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.cluster.plugins.module_utils import probe_module
from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx


def main() -> None:
    """Run the module."""
    module = AnsibleModule(
        argument_spec=probe_module.argument_spec(),
        supports_check_mode=True,
    )
    root, runner = probe_module.start(module)
    payload = collect_connectx(root, runner)
    for warning in payload.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, **payload)


if __name__ == "__main__":
    main()
