#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: gpu_info
short_description: Report the NVIDIA GPUs of a host, their driver and their NVLink fabric cliques
version_added: 1.0.0
description:
  - Lists the NVIDIA GPUs of a host with the loaded driver, CUDA and NVML versions and the kernel module
    flavour (open or proprietary).
  - When the nvidia driver is loaded the GPUs are queried through NVML (nvidia-ml-py) and each is matched
    to its PCI function in sysfs for its NUMA node. Otherwise, and when NVML cannot be used, the GPUs are
    listed from C(/sys/bus/pci/devices) (vendor C(0x10de), class VGA C(0x0300) or 3D controller C(0x0302);
    NVSwitches are not listed as GPUs) and the fields only NVML knows are V(null).
  - The NVSwitches of an HGX baseboard (vendor C(0x10de), PCI class bridge/other C(0x0680)) are listed in
    RV(nvswitches) from PCI sysfs alone, with or without a loaded driver, so a host's first run can tell that it
    needs nvidia-fabricmanager. The NVLink switches of a GB200/GB300 NVL72 rack are in its switch trays, not on the
    compute trays' PCI bus, and are not listed.
  - For every GPU the NVLink fabric registration is returned with its clique C(<ClusterUUID>.<CliqueId>),
    the same string GPU Feature Discovery puts in the node label C(nvidia.com/gpu.clique). Hosts of one
    Multi-Node NVLink domain share a clique; an NVSwitch system that is not multi-node reports an all-zero
    cluster UUID and no clique.
  - The fabric info is read from the newest struct the driver and nvidia-ml-py offer (C(nvmlGpuFabricInfo_v4),
    then v3, v2, v1), and every field of its health mask and its health summary is decoded; a value NVML does not
    define, or does not support, is reported as unknown, never as healthy.
  - The platform info of each GPU (C(nvmlDeviceGetPlatformInfo), with the chassis serial, slot, tray index, host
    and module) names the rack and slot of a Grace-Blackwell tray; other GPUs have none.
  - Each GPU's health as NVML counts it between runs, read only (a query NVML answers NOT_SUPPORTED for is V(null)),
    its row remapper and uncorrected ECC counts (RV(gpus[].memory_errors)), its recovery action (a pending GPU
    reset or node reboot, RV(gpus[].recovery_action)) and the error counters of its active NVLinks
    (RV(gpus[].nvlink_errors)).
  - The XID events the driver logged since boot, counted per GPU and code (RV(gpus[].xid_counts)), never the log's
    text. They are read from C(/dev/kmsg) below O(root) without blocking (as C(dmesg) reads it), which holds the
    kernel's ring buffer (RV(xid_events.complete) says whether it still starts at boot) and needs root (or
    C(CAP_SYSLOG) where C(kernel.dmesg_restrict) is set); when it cannot be read the counts are V(null) and the module
    warns, it never fails for it.
  - The state of C(nvidia-fabricmanager.service) in RV(fabricmanager) (active or not, since when, its last result),
    from one C(systemctl show) call run from below O(root), on a host with an NVIDIA GPU or NVSwitch.
  - Read only. A host without GPUs reports none; what cannot be read is listed in RV(errors) or warned
    about, and does not fail the task; only a O(root) that does not exist or has no C(sys/) fails it.
  - NVML always describes the running host, so it is only asked when O(root) is C(/) or the running host's root
    mounted elsewhere (a probe in a container that mounts the host's C(/) at C(/host)), known by its
    C(proc/sys/kernel/random/boot_id) reading the running kernel's boot id; a recorded tree is listed from PCI.
author: gpufabric.cluster contributors (@gpufabric)
requirements:
  - nvidia-ml-py on the managed host to read NVML (without it the GPUs are listed from PCI sysfs, with a warning)
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
seealso:
  - module: gpufabric.cluster.fabric_facts
  - name: NVML API reference, nvmlDeviceGetGpuFabricInfoV
    description: The fabric information the clique is derived from.
    link: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
  - name: NVML API reference, fabric definitions
    description: The fabric health mask fields, the health summary and the clique types.
    link: https://docs.nvidia.com/deploy/nvml-api/api/group__nvmlFabricDefs.html
"""

EXAMPLES = r"""
- name: Read the GPUs of the host
  gpufabric.cluster.gpu_info:
  register: gpu

- name: Fail when a GB200 tray has not joined its NVLink domain
  ansible.builtin.assert:
    that:
      - gpu.count > 0
      - gpu.cliques | length == 1
    fail_msg: "GPUs report cliques {{ gpu.cliques }}"

- name: Inspect a recorded copy of another host's /sys and /proc
  gpufabric.cluster.gpu_info:
    root: /srv/recorded/node-07
"""

RETURN = r"""
driver_loaded:
  description: Whether the nvidia kernel module is loaded (C(/proc/driver/nvidia/version) or C(/sys/module/nvidia)).
  returned: always
  type: bool
  sample: true
driver_version:
  description:
    - The driver version NVML reports, or the loaded module's when NVML is not used (C(/proc/driver/nvidia/version),
      else C(/sys/module/nvidia/version) when it is a driver version such as C(570.172.08)).
    - V(null) without a driver or when neither file names a driver version.
  returned: always
  type: str
  sample: "570.172.08"
kernel_module:
  description: Flavour of the loaded kernel module, V(open) or V(proprietary); V(null) without a driver.
  returned: always
  type: str
  sample: open
cuda_driver_version:
  description: The highest CUDA version the driver supports, from NVML; V(null) when NVML is not used.
  returned: always
  type: str
  sample: "12.8"
nvml_version:
  description: The NVML library version; V(null) when NVML is not used.
  returned: always
  type: str
  sample: "12.570.172.08"
source:
  description: Where the GPUs were read, V(nvml) or V(pci) (sysfs, no driver or NVML not usable).
  returned: always
  type: str
  sample: nvml
nvml_bindings:
  description:
    - Whether nvidia-ml-py (C(import pynvml)), the NVML bindings the probe asks NVML through, is installed for the
      Python that ran the probe; V(null) when NVML was not tried (no driver loaded).
    - Without it there is no NVLink fabric state and no clique, so no IMEX domain for the host.
  returned: always
  type: bool
  sample: true
count:
  description: Number of GPUs in RV(gpus).
  returned: always
  type: int
  sample: 4
gpus:
  description: The GPUs, in NVML index order (by PCI address when listed from PCI).
  returned: always
  type: list
  elements: dict
  contains:
    index:
      description: NVML index; the position in PCI address order when listed from PCI.
      type: int
      sample: 0
    uuid:
      description: GPU UUID; V(null) when listed from PCI.
      type: str
      sample: GPU-5e0d7b3a-91c4-4f0e-b1d2-7a3c9e0f1200
    name:
      description: Product name; V(null) when listed from PCI.
      type: str
      sample: NVIDIA GB200
    pci_address:
      description: PCI address in the kernel's form.
      type: str
      sample: "0008:01:00.0"
    device_id:
      description: PCI device id, from sysfs.
      type: str
      sample: "0x2941"
    numa_node:
      description: NUMA node of the PCI function; V(null) when it has no NUMA affinity.
      type: int
      sample: 0
    memory_total_mib:
      description: Total GPU memory in MiB; V(null) when listed from PCI.
      type: int
      sample: 190464
    mig_mode:
      description: MIG mode; V(null) when listed from PCI or the GPU has no MIG.
      type: dict
      contains:
        current:
          description: MIG is enabled now.
          type: bool
          sample: false
        pending:
          description: MIG will be enabled after the next GPU reset.
          type: bool
          sample: false
    persistence_mode:
      description: Whether persistence mode is on; V(null) when listed from PCI.
      type: bool
      sample: true
    fabric:
      description:
        - The GPU's NVLink fabric registration (NVML GPU fabric info); V(null) when listed from PCI or unreadable.
      type: dict
      contains:
        state:
          description:
            - V(not_supported) (the GPU has no NVLink fabric), V(not_started), V(in_progress) or V(completed).
          type: str
          sample: completed
        status:
          description: V(success) or NVML's error text for the registration; V(null) when not supported.
          type: str
          sample: success
        cluster_uuid:
          description:
            - The fabric's cluster UUID; all zeros on NVSwitch systems that are not multi-node.
            - V(null) when the state is V(not_supported).
          type: str
          sample: 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21
        clique_id:
          description:
            - The clique within the cluster, the C(cliqueId) of the v1 to v3 fabric info; from the v4 fabric info the
              id of its first V(unicast_pointer) clique, which NVML documents as that C(cliqueId) and GPU Feature
              Discovery and the DRA driver read.
            - V(null) when the state is V(not_supported) or the v4 fabric info lists no V(unicast_pointer) clique.
          type: int
          sample: 1
        clique:
          description:
            - C(<cluster_uuid>.<clique_id>) for a completed, successful registration with a non-zero cluster
              UUID, else V(null).
          type: str
          sample: 3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1
        clique_unset:
          description:
            - Why C(clique) is V(null) (no fabric, registration not completed or failed, an all-zero cluster UUID,
              no unicast-pointer clique in the v4 fabric info); V(null) when the clique is set.
          type: str
          sample: the cluster UUID is all zero (an NVLink system that is not multi-node)
        info_version:
          description:
            - The fabric info struct NVML answered, V(4), V(3), V(2) or V(1) (the newest the driver and nvidia-ml-py
              both have); V(null) when NVML answered NOT_SUPPORTED.
          type: int
          sample: 4
        cliques:
          description:
            - The GPU's cliques. From the v4 fabric info every entry NVML lists, in its order (by type, then id), with
              C(type) V(unicast_pointer), V(multicast_pointer), V(unicast_logical_endpoint),
              V(multicast_logical_endpoint) or C(unknown_<n>) for a type NVML did not define.
            - "From an older struct the one entry C({type: null, id: <clique_id>}); V([]) when the state is
              V(not_supported)."
          type: list
          elements: dict
          sample: [{type: unicast_pointer, id: 1}, {type: multicast_pointer, id: 1}]
        health:
          description:
            - The fabric info's health mask (C(nvmlGpuFabricInfo_v2) and later) decoded into every field NVML
              defines, and its health summary (v3 and later); V(null) when the state is V(not_supported).
            - A field is V(null) with the reason in C(reasons) when NVML reports it not supported (a driver older
              than the field leaves it so), when its value is one NVML does not define, or when the driver or
              nvidia-ml-py only has the v1 struct without a mask. An unknown value is never reported as healthy.
          type: dict
          contains:
            mask:
              description: The raw C(healthMask); V(null) when NVML gave none.
              type: int
              sample: 20906
            degraded_bandwidth:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_DEGRADED_BW) is TRUE.
              type: bool
              sample: false
            route_recovery:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY) is TRUE (route recovery in progress).
              type: bool
              sample: false
            route_unhealthy:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY) is TRUE.
              type: bool
              sample: false
            access_timeout_recovery:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY) is TRUE.
              type: bool
              sample: false
            incorrect_configuration:
              description:
                - C(NVML_GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION) (bits 8-11), V(none) when the
                  configuration is correct, else V(incorrect_sysguid), V(incorrect_chassis_sn), V(no_partition),
                  V(insufficient_nvlinks), V(incompatible_gpu_fw), V(invalid_location) or V(gpu_state_invalid).
                - C(unknown_<n>) for a value NVML does not define (with a reason); V(null) when not supported.
              type: str
              sample: none
            partition_assigned:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_PARTITION_ASSIGNED) is TRUE (bits 12-13; V(false) when the
                GPU is in no NVLink partition).
              type: bool
              sample: true
            gfm_connected:
              description: C(NVML_GPU_FABRIC_HEALTH_MASK_GFM_STATE) is CONNECTED (bits 14-15; V(false) when the
                global fabric manager is disconnected).
              type: bool
              sample: true
            undefined_bits:
              description:
                - The mask's bits NVML does not define (16-31) as a number, V(0) when none is set (with a reason
                  when some are, conditions of a newer driver); V(null) when NVML gave no mask.
              type: int
              sample: 0
            summary:
              description:
                - C(healthSummary) (C(NVML_GPU_FABRIC_HEALTH_SUMMARY_*)) V(healthy), V(unhealthy),
                  V(limited_capacity), V(not_supported) or C(unknown_<n>) (the last two with a reason).
                - V(null) when the fabric info read has no summary (older than v3).
              type: str
              sample: healthy
            reasons:
              description: Why a field is V(null) or unknown, each naming the field.
              type: list
              elements: str
              sample: []
    platform:
      description:
        - The GPU's NVML platform info (C(nvmlDeviceGetPlatformInfo), v2 or else v1), where the GPU sits.
        - V(null) when listed from PCI, unreadable, or when NVML has none (NOT_SUPPORTED, as for every GPU outside a
          Grace-Blackwell rack, such as an HGX H100; or a driver or nvidia-ml-py without the query). A GPU of a
          multi-node NVLink clique without it is warned about.
        - Every value is parsed into its documented shape; one that is not is V(null) with the reason in C(reasons).
      type: dict
      contains:
        info_version:
          description: The platform info struct NVML answered, V(2) or V(1) (drivers before 570).
          type: int
          sample: 2
        chassis_serial:
          description:
            - The serial number of the chassis (the rack) holding the GPU, 1 to 16 letters, digits and C(_.-).
            - V(null) when NVML gives none or an invalid one (all bytes 0xff) or it has another shape.
          type: str
          sample: "1823124190518"
        slot_number:
          description: The slot in the chassis, switch trays counted; V(null) when NVML reports it invalid (255).
          type: int
          sample: 21
        tray_index:
          description: The tray among the chassis' compute trays, switch trays not counted; V(null) when invalid
            (255).
          type: int
          sample: 11
        host_id:
          description: The node within the slot.
          type: int
          sample: 1
        peer_type:
          description: NVML's NVLink peer type (C(nvidia-smi -q) shows V(1) as Switch Connected).
          type: int
          sample: 1
        module_id:
          description: The GPU within the node.
          type: int
          sample: 2
        ib_guid:
          description:
            - The GPU's InfiniBand GUID as C(0x) and 16 hex digits (the first 8 bytes NVML gives, as DCGM prints
              them); V(null) when all zero, invalid, or more than 8 bytes are set.
          type: str
          sample: "0x5e0d7b3a91c4f000"
        reasons:
          description: Why a value is V(null).
          type: list
          elements: str
          sample: []
    nvlink:
      description:
        - The GPU's NVLinks from NVML (C(nvmlDeviceGetNvLinkState) over links 0 to C(NVML_NVLINK_MAX_LINKS)-1, a
          link NVML answers NOT_SUPPORTED for being absent, and the field C(NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON)).
        - V(null) when listed from PCI; a value NVML cannot give is V(null) with the reason in
          C(reasons).
      type: dict
      contains:
        present:
          description: How many links the GPU has (0 without NVLink); V(null) when NVML has no state query.
          type: int
          sample: 18
        active:
          description: How many of them are active.
          type: int
          sample: 18
        inactive_links:
          description: The indexes of the present links that are not active.
          type: list
          elements: int
          sample: []
        speed_mbps:
          description: The common speed of the active links in MB/s; V(null) when NVML cannot give it or no link.
          type: int
          sample: 53125
        reasons:
          description: Why a value is V(null).
          type: list
          elements: str
          sample: []
    driver:
      description: The driver bound to the PCI function (V(nvidia), V(vfio-pci)); V(null) when none.
      type: str
      sample: nvidia
    memory_errors:
      description:
        - The GPU's memory errors from NVML; V(null) when listed from PCI. A count NVML answers NOT_SUPPORTED for is
          V(null) with the reason in C(reasons).
      type: dict
      contains:
        remapped_rows:
          description:
            - The row remapper (C(nvmlDeviceGetRemappedRows), Ampere and later); V(null) on older GPUs, whose
              retired pages are not read.
          type: dict
          contains:
            correctable:
              description: Rows remapped for correctable errors.
              type: int
              sample: 0
            uncorrectable:
              description: Rows remapped for uncorrectable errors.
              type: int
              sample: 0
            pending:
              description: A remap waits for the next GPU reset.
              type: bool
              sample: false
            failure:
              description: A row could not be remapped (the bank's spare rows are used up).
              type: bool
              sample: false
        ecc_uncorrected:
          description:
            - Uncorrected ECC errors (C(nvmlDeviceGetTotalEccErrors), C(NVML_MEMORY_ERROR_TYPE_UNCORRECTED)); V(null)
              when ECC is off.
          type: dict
          contains:
            volatile:
              description: Since the driver was loaded (C(NVML_VOLATILE_ECC)).
              type: int
              sample: 0
            aggregate:
              description: Over the GPU's lifetime (C(NVML_AGGREGATE_ECC)).
              type: int
              sample: 0
        reasons:
          description: Why a value is V(null).
          type: list
          elements: str
          sample: []
    recovery_action:
      description:
        - What NVML says the GPU needs (the field C(NVML_FI_DEV_GET_GPU_RECOVERY_ACTION)), V(none), V(gpu_reset),
          V(node_reboot), V(drain_p2p), V(drain_and_reset), V(recover_imex_domain), V(bus_reset), V(system_reboot)
          or V(unknown_<n>); V(null) when listed from PCI or the driver has no such field (before 570).
      type: str
      sample: none
    nvlink_errors:
      description:
        - The active NVLinks whose error counters are not zero, in link order (C(nvmlDeviceGetNvLinkErrorCounter)
          replay, recovery and flit CRC; where it answers NOT_SUPPORTED the per-link fields
          C(NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY), C(_RECOVERY) and C(_CRC)). Empty when every counter is zero.
        - V(null) when listed from PCI, the GPU has no active link or NVML gives no error counter.
      type: list
      elements: dict
      sample: [{link: 3, replay: 14, recovery: 2, crc: 31}]
    xid_counts:
      description:
        - "The XID events the kernel log holds for this GPU (lines C(NVRM: Xid (PCI:<address>): <code>, ...)), code
          (as text) to count; empty when none. V(null) when the kernel log could not be read (see RV(xid_events))."
      type: dict
      sample: {"79": 1}
cliques:
  description: The distinct cliques of the GPUs, sorted; empty when no GPU is in a multi-node NVLink domain.
  returned: always
  type: list
  elements: str
  sample: ["3c1a5f2e-9b7d-4c2a-8e6f-1d0b7a9c4e21.1"]
platform:
  description:
    - Where the host sits, from its GPUs' platform info (RV(gpus[].platform)), as the distinct values of each
      field, sorted, so that a report can say "rack <chassis serial>, slot <n>" per host without walking the GPUs.
    - The lists are empty when no GPU has platform info. The GPUs of one host sit in one tray of one chassis; when
      they report more than one chassis serial, slot number or tray index, the module warns.
  returned: always
  type: dict
  contains:
    chassis_serials:
      description: The chassis serials (racks).
      type: list
      elements: str
      sample: ["1823124190518"]
    slot_numbers:
      description: The slot numbers.
      type: list
      elements: int
      sample: [21]
    tray_indices:
      description: The tray indices.
      type: list
      elements: int
      sample: [11]
    host_ids:
      description: The host ids.
      type: list
      elements: int
      sample: [1]
xid_events:
  description:
    - Where the XID events were read; V(null) when the host has no GPU or the kernel log could not be read (the module
      then warns why).
  returned: always
  type: dict
  contains:
    source:
      description: The file read, C(/dev/kmsg).
      type: str
      sample: /dev/kmsg
    complete:
      description:
        - V(true) when the ring buffer still holds the boot's first record (the counts are since boot), V(false)
          when older records were overwritten (the counts are since the oldest kept), V(null) when unknown.
      type: bool
      sample: true
    other_addresses:
      description: XID counts of PCI addresses no listed GPU has (address without function, code, count).
      type: dict
      sample: {}
nvswitches:
  description: The NVSwitch PCI functions of the host (vendor C(0x10de), class C(0x0680)), read without NVML.
  returned: always
  type: dict
  contains:
    count:
      description: How many.
      type: int
      sample: 4
    pci_addresses:
      description: Their PCI addresses, in address order.
      type: list
      elements: str
      sample: ["0000:07:00.0", "0000:08:00.0"]
fabricmanager:
  description:
    - The state of C(nvidia-fabricmanager.service), which an NVSwitch system (HGX) needs for its NVLink fabric, read
      with one C(systemctl show) call on a host with an NVIDIA GPU or NVSwitch, whatever the system (a GB200/GB300
      compute tray has none installed, its rack's switch trays run the fabric manager).
    - V(null) on a host without NVIDIA GPU or NVSwitch, without C(systemctl) below O(root), or when C(systemctl)
      failed (then named in RV(errors)). A unit systemd does not know has RV(fabricmanager.exists) V(false).
  returned: always
  type: dict
  contains:
    exists:
      description: Whether systemd knows the unit (C(LoadState) other than C(not-found); a masked unit exists).
      returned: always
      type: bool
      sample: true
    enabled:
      description: Whether the unit is enabled (C(UnitFileState) starts with C(enabled)).
      returned: always
      type: bool
      sample: true
    active:
      description: Whether the service runs (C(ActiveState=active)).
      returned: always
      type: bool
      sample: true
    masked:
      description: Whether the unit is masked.
      returned: always
      type: bool
      sample: false
    unit_file_state:
      description: C(UnitFileState) (C(enabled), C(disabled), C(masked), ...); V(null) when the unit does not exist.
      returned: always
      type: str
      sample: enabled
    active_state:
      description: C(ActiveState) (C(active), C(inactive), C(failed), C(activating), ...).
      returned: always
      type: str
      sample: failed
    sub_state:
      description: C(SubState) (C(running), C(dead), C(failed), C(auto-restart), ...).
      returned: always
      type: str
      sample: running
    since:
      description:
        - When the unit entered its present state, as systemd prints a timestamp (C(StateChangeTimestamp), else
          C(ActiveEnterTimestamp) of an active unit or C(InactiveEnterTimestamp) of another).
        - V(null) when the unit is not installed, never changed state, or the timestamp is
          not in systemd's form.
      returned: always
      type: str
      sample: Sat 2026-11-28 06:08:10 UTC
    result:
      description:
        - The unit's last C(Result) (C(success), C(exit-code), C(signal), C(core-dump), C(timeout),
          C(start-limit-hit), ...); what ended its last run when it failed.
        - V(null) when the unit is not installed.
      returned: always
      type: str
      sample: exit-code
    exit_status:
      description: C(ExecMainStatus), the exit status (or signal number) of the main process of its last run; V(null)
        when the unit is not installed.
      returned: always
      type: int
      sample: 1
    restarts:
      description: C(NRestarts), how often systemd restarted it on its own (C(Restart=)) since it was last started;
        V(null) when the unit is not installed, or systemd is older than 235.
      returned: always
      type: int
      sample: 0
errors:
  description:
    - What could not be read (a missing root, an unreadable sysfs file, an NVML query of one GPU), each naming the
      path or query and the reason, never the content of a file.
    - "Every sysfs and C(/proc) file is read up to one page (4096 bytes); a larger one is not read and is named as
      C(<path>: larger than the limit of 4096 bytes). A C(/sys/module/nvidia/version) that is not a driver version
      is named as C(/sys/module/nvidia/version: not a driver version)."
  returned: always
  type: list
  elements: str
  sample: ["GPU 1: NVML fabric_info failed: NVMLError_GpuIsLost: GPU is lost"]
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.gpufabric.cluster.plugins.module_utils import probe_module
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import collect_gpu


def main() -> None:
    """Module entry point."""
    module = AnsibleModule(
        argument_spec=probe_module.argument_spec(),
        supports_check_mode=True,
    )
    root, runner = probe_module.start(module)
    result = collect_gpu(root, runner)
    for warning in result.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, **result)


if __name__ == "__main__":
    main()
