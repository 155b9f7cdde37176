# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What fixes a failing preflight check, and the failures of a fleet grouped, for the reports people read.

:data:`FIXED_BY` names, per check of :mod:`.preflight`, the role or setting that repairs it; :func:`grouped_problems`
gathers the checks that did not pass by check, status and message, so that 72 trays failing the same way read as one
line naming them instead of 72; a message that names its own host ("GPU health on rack007-tray01: ...") is grouped with
the same message of other hosts, the name read as "each host".
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

# Per check: the role or setting that fixes it (the checks of plugins/plugin_utils/preflight.py).
FIXED_BY = {
    "probe": "the host's reachability and the probe's own errors (gpufabric.cluster.fabric_facts, "
             "gpufabric_probe_root)",
    "driver": "role gpufabric.cluster.nvidia_driver (nvidia_driver_branch, nvidia_driver_version); the minimum is "
              "gpufabric_min_driver_version",
    "fabric": "the NVLink fabric: nvidia-fabricmanager on HGX (role gpufabric.cluster.nvidia_driver, "
              "nvidia_driver_fabricmanager), the rack's NVLink switch trays on an NVL72",
    "fabric_health": "the NVLink fabric: the tray's NVLink links and the rack's NVLink switch trays (inactive links, "
                     "degraded bandwidth), the fabric's configuration where a GPU reports it incorrect, "
                     "nvidia-fabricmanager on HGX (role gpufabric.cluster.nvidia_driver, nvidia_driver_fabricmanager)",
    "fabric_manager": "nvidia-fabricmanager on an NVSwitch system: installed, enabled and started with the driver by "
                      "role gpufabric.cluster.nvidia_driver (nvidia_driver_fabricmanager); a unit that failed: its "
                      "journal (journalctl -u nvidia-fabricmanager), then systemctl restart nvidia-fabricmanager (its "
                      "version must be the driver's)",
    "rdma_ports": "role gpufabric.cluster.doca_ofed (driver and firmware) and role gpufabric.cluster.rdma_network "
                  "(rdma_network_mtu, which ports are rails: rdma_network_*); the rules are "
                  "gpufabric_preflight_settings rdma_min_rate_gbps, rdma_mtu, rdma_require_active",
    "imex": "role gpufabric.cluster.nvidia_imex (gpufabric_imex_mode); a failed nvidia-imex.service: its journal "
            "(journalctl -u nvidia-imex), then systemctl restart nvidia-imex",
    "imex_domain": "role gpufabric.cluster.nvidia_imex (every member's nodes file); the expected size is "
                   "gpufabric_preflight_settings imex_domain_members",
    "gpudirect_rdma": "role gpufabric.cluster.nvidia_peermem, or DMA-BUF with the open kernel modules "
                      "(role gpufabric.cluster.nvidia_driver)",
    "numa_alignment": "the placement of the NICs in the host (hardware)",
    "driver_lifecycle": "role gpufabric.cluster.nvidia_driver (nvidia_driver_branch: a supported branch); "
                        "gpufabric_production_site",
    "port_counters": "the port's cable, transceiver or switch port (error counters); the thresholds are "
                     "gpufabric_preflight_settings port_counter_thresholds",
    "gpu_health": "the GPU: a GPU reset or a reboot for a pending row remap or the recovery action NVML names, "
                  "the vendor's service for a row-remap failure or repeated uncorrectable ECC errors (NVIDIA's XID "
                  "catalogue gives the action per XID); the warnings' thresholds are gpufabric_preflight_settings "
                  "gpu_health_thresholds",
}
# How many hosts a grouped line names before "and N more".
NAMED_HOSTS = 8
# What a grouped message says where each of its hosts' messages names that host.
EACH_HOST = "each host"


def fixed_by(check: t.Any) -> str:
    """The role or setting that fixes ``check``; empty for a check this table does not know."""
    return FIXED_BY.get(check, "") if isinstance(check, str) else ""


def own_name_generic(message: str, name: str) -> str:
    """``message`` with ``name`` (as a whole word: not inside a longer host name or word) read as :data:`EACH_HOST`;
    ``message`` itself when it does not name ``name``."""
    if not name:
        return message
    return re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", EACH_HOST, message)


def grouped_problems(hosts: Mapping) -> list[dict]:
    """``[{check, status, message, hosts, fixed_by}]``: every check that failed or warned, one entry per check, status
    and message with the hosts that share it (sorted), failures first, then by how many hosts share it.

    A message only one host has and which names that host joins the other such messages that read the same with each
    one's own host name as :data:`EACH_HOST`; the entry's message is then that generic one.
    """
    groups: dict[tuple[str, str, str], list[str]] = {}
    for name, entry in hosts.items():
        if not isinstance(entry, Mapping):
            continue
        for check in entry.get("checks") or []:
            if isinstance(check, Mapping) and check.get("status") in ("fail", "warn"):
                key = (str(check.get("name")), str(check["status"]), str(check.get("message")))
                groups.setdefault(key, []).append(str(name))
    generic: dict[tuple[str, str, str], list[tuple[str, str, str]]] = {}
    for key, names in groups.items():
        if len(names) == 1 and own_name_generic(key[2], names[0]) != key[2]:
            generic.setdefault((key[0], key[1], own_name_generic(key[2], names[0])), []).append(key)
    for merged, keys in generic.items():
        if len(keys) > 1:
            groups[merged] = groups.get(merged, []) + [name for key in keys for name in groups.pop(key)]
    found = [{"check": check, "status": status, "message": message, "hosts": sorted(names),
              "fixed_by": fixed_by(check)} for (check, status, message), names in groups.items()]
    return sorted(found, key=lambda item: (item["status"] != "fail", -len(item["hosts"]), item["check"],
                                           item["message"]))


def named_hosts(names: t.Sequence[str], limit: int = NAMED_HOSTS) -> str:
    """The first ``limit`` names, then how many more."""
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")
