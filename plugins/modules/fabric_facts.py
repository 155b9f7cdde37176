#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: fabric_facts
short_description: Gather GPU, ConnectX, IMEX and peermem facts of a host in one call
version_added: 1.0.0
description:
  - Runs the probes of M(gpufabric.cluster.gpu_info), M(gpufabric.cluster.connectx_info),
    M(gpufabric.cluster.imex_info) and M(gpufabric.cluster.peermem_info) in one module call and returns
    their results as C(ansible_facts['gpufabric']).
  - Usable as an additional facts module, so that C(gather_facts) collects it in the same round trip
    as C(ansible.builtin.setup) (set C(ansible_facts_modules) and pass options through C(module_defaults)).
  - With the C(network) subset it also returns the host's addresses the way the C(network) subset of
    M(ansible.builtin.setup) reports the ones the IMEX address rule reads (C(default_ipv4), C(default_ipv6), the
    addresses of every interface), so that one facts module per host is enough for the preflight.
  - Read only. A device that is absent is reported absent; anything that cannot be read is listed in the
    C(errors) of its subset and does not fail the task. Only a O(root) that does not exist or has no C(sys/)
    fails it.
author: gpufabric.cluster contributors (@gpufabric)
options:
  gather_subset:
    description:
      - Which probes to run. C(all) or any of C(gpu), C(connectx), C(imex), C(peermem), C(network).
      - Prefix a name with C(!) to leave it out, for example C(['all', '!imex']).
      - An unknown name fails the task with a message naming it.
    type: list
    elements: str
    default: [all]
extends_documentation_fragment:
  - gpufabric.cluster.probe
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.actiongroups
  - ansible.builtin.action_common_attributes.facts
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  facts:
    support: full
  platform:
    platforms: posix
  action_group:
    support: full
    membership:
      - gpufabric.cluster.probes
seealso:
  - module: gpufabric.cluster.gpu_info
  - module: gpufabric.cluster.connectx_info
  - module: gpufabric.cluster.imex_info
  - module: gpufabric.cluster.peermem_info
"""

EXAMPLES = r"""
- name: Gather the fabric facts of every host
  gpufabric.cluster.fabric_facts:

- name: Only GPUs and ConnectX ports
  gpufabric.cluster.fabric_facts:
    gather_subset: [gpu, connectx]

- name: Collect with setup in the same round trip
  hosts: gpu_nodes
  gather_facts: true
  vars:
    ansible_facts_modules:
      - ansible.builtin.setup
      - gpufabric.cluster.fabric_facts
  module_defaults:
    group/gpufabric.cluster.probes:
      root: /
  tasks:
    - name: Show the cliques of this host
      ansible.builtin.debug:
        var: ansible_facts['gpufabric']['gpu']['cliques']
"""

RETURN = r"""
ansible_facts:
  description: Facts added to C(ansible_facts).
  returned: always
  type: dict
  contains:
    gpufabric:
      description:
        - One key per gathered subset, each holding exactly what the matching C(_info) module returns
          (less C(changed)), plus C(gather_subset).
      returned: always
      type: dict
      contains:
        gather_subset:
          description: The subsets that were gathered, in collection order.
          returned: always
          type: list
          elements: str
          sample: [gpu, connectx, imex, peermem, network]
        gpu:
          description:
            - The result of M(gpufabric.cluster.gpu_info), with per GPU its fabric info (newest struct, the health
              mask's every field and the health summary, the cliques) and platform info, and per host the cliques
              and the C(platform) summary (chassis serials, slot numbers, tray indices, host ids).
            - Per GPU also its C(memory_errors) (row remapper and uncorrected ECC counts), C(recovery_action) (a
              pending reset or reboot), C(nvlink_errors) (the active links with non-zero error counters) and
              C(xid_counts) (the XID events the kernel log holds, by code, read from C(/dev/kmsg); V(null) with a
              warning when it cannot be read), and per host C(xid_events) (where they were read and whether since
              boot).
            - C(fabricmanager), the state of C(nvidia-fabricmanager.service) (active or not, since when, its last
              result, exit status and automatic restarts), read with one C(systemctl show) call.
          returned: when gathered
          type: dict
          sample:
            driver_loaded: true
            driver_version: "570.172.08"
            count: 4
            cliques: ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"]
            platform: {chassis_serials: ["1823124190518"], slot_numbers: [21], tray_indices: [11], host_ids: [1]}
        connectx:
          description:
            - The result of M(gpufabric.cluster.connectx_info), each of its C(ports) with its own C(errors) list
              (what is wrong with that port; a port with errors is not usable), its error C(counters) (symbol
              errors, link error recovery, link downed, receive errors, buffer overruns, local link integrity
              errors, transmit discards, and the sequence errors of C(hw_counters/); a counter the kernel does not
              expose is absent) and C(counter_errors) (counter files that could not be read, by path).
          returned: when gathered
          type: dict
          sample: {count: 5, rdma_devices: [mlx5_0, mlx5_1, mlx5_2, mlx5_3, mlx5_4]}
        imex:
          description:
            - The result of M(gpufabric.cluster.imex_info), with the state of C(nvidia-imex.service) in C(service)
              (active or not, since when, its last result, exit status and automatic restarts), its C(control) (the
              command socket and whether the daemon answers C(READY) on it, which the host-managed IMEX mode of the
              DRA driver requires).
          returned: when gathered
          type: dict
          sample: {installed: true, version: "570.172.08-1", control: {enabled: true, ready: true}}
        peermem:
          description: The result of M(gpufabric.cluster.peermem_info).
          returned: when gathered
          type: dict
          sample: {dma_buf: {supported: true, reasons: []}}
        network:
          description:
            - The host's addresses, read with the C(ip) tool below O(root) (C(addr show) and the routes
              M(ansible.builtin.setup) asks for, C(route get 8.8.8.8) and C(route get 2404:6800:400a:800::1012),
              in one C(ip -json -details -force -batch -) process), in the layout of C(setup)'s network facts,
              with each link's C(mtu) and C(max_mtu). A tool that resolves outside O(root) is not run.
            - Read by the IMEX address rule (P(gpufabric.cluster.imex_address#filter)) when C(setup)'s network
              facts were not gathered, and by the C(gpufabric.cluster.rdma_network) role
              (the default routes' interfaces, every live address, each link's maximum MTU).
          returned: when gathered
          type: dict
          contains:
            default_ipv4:
              description:
                - The route to C(8.8.8.8) as C(setup)'s C(default_ipv4) has it, C({}) when there is none.
                - C(interface), C(address) (the route's source address) and C(gateway) as far as the route has
                  them; C(broadcast), C(netmask), C(network) and C(prefix) when C(address) is the interface's
                  primary IPv4 address.
              returned: always
              type: dict
              sample: {interface: eth0, address: 192.0.2.2, gateway: 192.0.2.1, broadcast: 192.0.2.255,
                       netmask: 255.255.255.0, network: 192.0.2.0, prefix: "24"}
            default_ipv6:
              description:
                - The route to C(2404:6800:400a:800::1012) as C(setup)'s C(default_ipv6) has it, C({}) when
                  there is none. C(interface), C(address), C(gateway); C(prefix) and C(scope) when C(address)
                  is one of the interface's addresses.
              returned: always
              type: dict
              sample: {interface: eth0, address: "fd00::2", gateway: "fd00::1", prefix: "64", scope: global}
            interfaces:
              description:
                - Every interface by name. C(ipv4) (when it has an IPv4 address) is its primary IPv4 address
                  with C(address), C(broadcast) (C('') when none), C(netmask), C(network) and C(prefix) (text);
                  C(ipv4_secondaries) (when it has more IPv4 addresses) lists the others in the kernel's order,
                  with the same keys, as C(setup) does; C(ipv6) (when it has IPv6 addresses) lists them in the
                  kernel's order with C(address), C(prefix) (text) and C(scope) (C(global), C(link), C(host)).
                - C(mtu) and C(max_mtu) (integers, absent when the tool gives none) are the link's MTU and the
                  largest MTU its driver takes (C(0) when the driver sets no maximum).
              returned: always
              type: dict
              sample:
                eth0:
                  ipv4: {address: 192.0.2.2, broadcast: 192.0.2.255, netmask: 255.255.255.0, network: 192.0.2.0,
                         prefix: "24"}
                  ipv4_secondaries: [{address: 192.0.2.9, broadcast: 192.0.2.255, netmask: 255.255.255.0,
                                      network: 192.0.2.0, prefix: "24"}]
                  ipv6: [{address: "fd00::2", prefix: "64", scope: global}]
                  mtu: 1500
                  max_mtu: 9978
            errors:
              description: What could not be read (no C(ip) below O(root), a failing command, output that is
                not the tool's JSON). Never fails the task.
              returned: always
              type: list
              elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.cluster.plugins.module_utils import probe_module
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import GpuFabricError
from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import collect_fabric, select_subsets


def main() -> None:
    """Module entry point."""
    module = AnsibleModule(
        argument_spec=probe_module.argument_spec(
            gather_subset={"type": "list", "elements": "str", "default": ["all"]},
        ),
        supports_check_mode=True,
    )
    try:
        subsets = select_subsets(module.params["gather_subset"])
    except GpuFabricError as exc:
        module.fail_json(msg=str(exc))
    root, runner = probe_module.start(module)
    facts = collect_fabric(root, runner, subsets)
    for warning in facts.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, ansible_facts={"gpufabric": facts})


if __name__ == "__main__":
    main()
