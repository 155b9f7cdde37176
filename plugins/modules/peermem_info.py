#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: peermem_info
version_added: 1.0.0
short_description: Report how a host can do GPUDirect RDMA (DMA-BUF or nvidia_peermem)
description:
  - Reports whether the C(nvidia_peermem) kernel module is loaded (C(/proc/modules) or C(/sys/module)), loaded at boot
    (a C(modules-load.d) file or C(/etc/modules)) and available for the running kernel (a C(nvidia-peermem.ko) below
    C(/lib/modules/<release>)); whether the legacy C(nv_peer_mem) module is loaded; the OFED version
    (C(ofed_info -s)); and the loaded NVIDIA driver.
  - Judges DMA-BUF support with the GPU Operator's prerequisites (open NVIDIA kernel module, Linux 5.12 or newer, a
    loaded driver) and names every unmet requirement in RV(dma_buf.reasons).
  - GPUDirect RDMA is ready when DMA-BUF is supported, else when C(nvidia_peermem) is loaded.
  - Unreadable files and a failing C(ofed_info) are named in RV(errors); the task does not fail (only a O(root)
    that does not exist or has no C(sys/) fails it). A host without OFED
    is not an error.
  - No text of the files read is returned; the files only answer yes or no, except the kernel release and the
    driver version, which are returned only in their documented shapes. Each file is read up to a limit (one page
    for C(/proc/sys) and C(/sys) values, 1 MiB for C(/proc/modules), 64 KiB for a C(modules-load.d) file or
    C(/etc/modules), 16 MiB for C(modules.dep)); a larger file is not read and is named in RV(errors) with the
    limit.
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
  - Runs only C(ofed_info -s), read-only, and only when it exists below O(root).
  - The DMA-BUF judgement does not check the GPU architecture (Turing or newer) or the network driver; see
    M(gpufabric.cluster.gpu_info) and M(gpufabric.cluster.connectx_info).
seealso:
  - name: GPUDirect RDMA and GPUDirect Storage (GPU Operator)
    description: DMA-BUF and legacy nvidia-peermem prerequisites.
    link: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html
  - module: community.general.modprobe
"""

EXAMPLES = r"""
- name: Read the GPUDirect RDMA state of the host
  gpufabric.cluster.peermem_info:
  register: peermem

- name: Say why DMA-BUF cannot be used
  ansible.builtin.debug:
    msg: "DMA-BUF unsupported: {{ peermem.dma_buf.reasons | map(attribute='message') | join('; ') }}"
  when: not peermem.dma_buf.supported

- name: Require GPUDirect RDMA
  ansible.builtin.assert:
    that: peermem.gpudirect_rdma.ready
    fail_msg: >-
      No GPUDirect RDMA: {{ peermem.dma_buf.reasons | map(attribute='message') | join('; ') }};
      nvidia_peermem loaded: {{ peermem.nvidia_peermem.loaded }}
"""

RETURN = r"""
kernel_version:
  description:
    - The running kernel release (C(/proc/sys/kernel/osrelease)); V(null) when unreadable or not a release as
      C(uname -r) prints it (then named in RV(errors)).
  returned: always
  type: str
  sample: 6.8.0-1025-nvidia-64k
nvidia_peermem:
  description: The C(nvidia_peermem) kernel module.
  returned: always
  type: dict
  contains:
    loaded:
      description: Whether it is in C(/proc/modules) or C(/sys/module/nvidia_peermem/initstate) is C(live).
      returned: always
      type: bool
      sample: false
    persisted:
      description: Whether a file loads it at boot (see RV(nvidia_peermem.persisted_in)).
      returned: always
      type: bool
      sample: false
    persisted_in:
      description:
        - Host paths of the files naming C(nvidia_peermem) or C(nvidia-peermem) on a non-comment line, among
          C(/etc/modules-load.d), C(/run/modules-load.d), C(/usr/lib/modules-load.d), C(/lib/modules-load.d)
          (a same-named file in an earlier directory hides later ones; a link to C(/dev/null) masks it)
          and C(/etc/modules).
      returned: always
      type: list
      elements: str
      sample: ["/etc/modules-load.d/nvidia-peermem.conf"]
    available:
      description:
        - Whether an C(nvidia-peermem.ko) (optionally C(.xz), C(.zst), C(.gz)) exists below
          C(/lib/modules/<kernel_version>).
      returned: always
      type: bool
      sample: true
nv_peer_mem:
  description: The legacy C(nv_peer_mem) module (Mellanox nv_peer_memory), replaced by C(nvidia_peermem).
  returned: always
  type: dict
  contains:
    loaded:
      description: Whether it is loaded.
      returned: always
      type: bool
      sample: false
ofed:
  description: MLNX_OFED / DOCA-OFED, from C(ofed_info -s).
  returned: always
  type: dict
  contains:
    installed:
      description: Whether C(ofed_info) exists below O(root).
      returned: always
      type: bool
      sample: true
    version:
      description:
        - What C(ofed_info -s) prints, without the trailing colon, when it is a version string (a letter or digit,
          then letters, digits and C(.+~:_-), at most 64 characters, at least one digit).
        - V(null) when not installed, it failed or printed something else (then named in RV(errors)).
      returned: always
      type: str
      sample: OFED-internal-25.04-0.6.1
driver:
  description: The loaded NVIDIA kernel driver.
  returned: always
  type: dict
  contains:
    loaded:
      description: Whether the C(nvidia) module is loaded.
      returned: always
      type: bool
      sample: true
    version:
      description: Driver version; V(null) when not loaded.
      returned: always
      type: str
      sample: 570.172.08
    kernel_module:
      description: C(open) or C(proprietary); V(null) when not loaded or unknown.
      returned: always
      type: str
      sample: open
dma_buf:
  description: Whether GPUDirect RDMA through DMA-BUF is possible on this host.
  returned: always
  type: dict
  contains:
    supported:
      description: True when the open NVIDIA kernel module is loaded on Linux 5.12 or newer.
      returned: always
      type: bool
      sample: false
    reasons:
      description:
        - One entry per unmet requirement; empty when supported.
        - C(code) is what to decide on, one of C(no_driver) (the NVIDIA driver is not loaded),
          C(proprietary_modules) (the proprietary kernel module is loaded), C(kernel_module_unknown) (the kernel
          module flavour is unknown), C(kernel_unknown) (the kernel version is unknown), C(kernel_too_old) (older
          than Linux 5.12) or C(host_unreadable) (O(root) cannot be read); C(message) is for people.
      returned: always
      type: list
      elements: dict
      sample:
        - {code: no_driver, message: NVIDIA driver not loaded}
        - {code: kernel_too_old, message: kernel 5.4.0-216-generic is older than 5.12}
gpudirect_rdma:
  description: Whether GPUDirect RDMA can be used now, and how.
  returned: always
  type: dict
  contains:
    ready:
      description: True when DMA-BUF is supported or C(nvidia_peermem) is loaded.
      returned: always
      type: bool
      sample: true
    method:
      description: C(dma_buf) (preferred when supported), C(nvidia_peermem), or V(null) when not ready.
      returned: always
      type: str
      sample: dma_buf
errors:
  description:
    - What could not be read or run, each naming the path or tool and the reason (never the content). Empty on a
      healthy host.
    - "A file over its limit is named as C(<path>: larger than the limit of <n> bytes)."
  returned: always
  type: list
  elements: str
  sample: ["ofed_info -s exited 1: no output"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.cluster.plugins.module_utils import probe_module
from ansible_collections.gpufabric.cluster.plugins.module_utils.peermem import collect_peermem


def main() -> None:
    """Run the module."""
    module = AnsibleModule(
        argument_spec=probe_module.argument_spec(),
        supports_check_mode=True,
    )
    root, runner = probe_module.start(module)
    payload = collect_peermem(root, runner)
    for warning in payload.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, **payload)


if __name__ == "__main__":
    main()
