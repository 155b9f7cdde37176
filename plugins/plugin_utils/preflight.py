# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness rules: turn every host's ``ansible_facts['gpufabric']`` into one preflight report.

Pure functions over plain data; the filter ``gpufabric.cluster.preflight_report`` is their thin entry
point from playbooks.  Errors are :class:`PreflightError`.  Statuses, worst first: ``fail``, ``warn``,
``pass``; ``skip`` marks a check that does not apply (no GPU, no ConnectX port).  A host with neither GPU
nor ConnectX port is ``no_hardware``.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError, chosen_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dma_buf import blocking_messages
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import ImexAddressError, imex_address
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import group_by_clique
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import (
    COMPUTE_DOMAIN_MIN_DRIVER_VERSION,
    at_least,
)

STATUS_ORDER = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}

DEFAULT_SETTINGS: dict[str, t.Any] = {
    # The DRA driver's floor for ComputeDomains; any older driver fails the driver check.
    "min_driver_version": COMPUTE_DOMAIN_MIN_DRIVER_VERSION,
    # None: each port is compared with the fastest port of the same link layer on its host.
    "rdma_min_rate_gbps": None,
    # Expected netdev MTU per link layer; None leaves that link layer unchecked.
    "rdma_mtu": {"Ethernet": 9000, "InfiniBand": None},
    # Ports that are not ACTIVE are failures unless this is false.
    "rdma_require_active": True,
}

# The site variables a host's IMEX address comes from (roles/gpufabric), with the site defaults.
IMEX_ADDRESS_VARIABLES = {"address": ("gpufabric_imex_address", ""),
                          "interface": ("gpufabric_imex_interface", ""),
                          "family": ("gpufabric_imex_address_family", "ipv4")}


class PreflightError(ValueError):
    """Input from which no report can be built; the message names the variable."""


def _check(name: str, status: str, message: str) -> dict:
    return {"name": name, "status": status, "message": message}


def _worst(statuses: t.Iterable[str]) -> str:
    return max(statuses, key=lambda status: STATUS_ORDER[status], default="pass")


def _facts_of(host_vars: Mapping) -> dict | None:
    facts = host_vars.get("ansible_facts") or {}
    gpufabric = facts.get("gpufabric")
    return dict(gpufabric) if gpufabric else None


def site_imex_address(name: str, host_vars: Mapping) -> tuple[str | None, str | None]:
    """The IMEX address of a host by the shared rule over the site variables, or ``(None, why)``."""
    settings = {key: host_vars.get(variable, default) for key, (variable, default) in IMEX_ADDRESS_VARIABLES.items()}
    try:
        return imex_address(name, host_vars.get("ansible_facts") or {}, **settings), None
    except ImexAddressError as exc:
        return None, str(exc)


def check_probe(facts: dict) -> dict:
    """Whatever a probe could not read, named with its subset."""
    problems = [f"{subset}: {error}" for subset in ("gpu", "connectx", "imex", "peermem")
                for error in (facts.get(subset) or {}).get("errors", [])]
    if problems:
        return _check("probe", "warn", "; ".join(problems))
    return _check("probe", "pass", "every probe read its sources")


def check_driver(gpu: dict, settings: dict) -> dict:
    """The NVIDIA driver is loaded and at least the minimum version."""
    count = gpu.get("count", 0)
    if not count:
        return _check("driver", "skip", "no NVIDIA GPU found")
    if not gpu.get("driver_loaded"):
        return _check("driver", "fail", f"{count} NVIDIA GPU(s) on PCI but the nvidia kernel driver is not loaded")
    version = gpu.get("driver_version") or ""
    minimum = str(settings["min_driver_version"])
    flavour = gpu.get("kernel_module") or "unknown"
    if not at_least(version, minimum):
        return _check("driver", "fail", f"driver {version} ({flavour}) is older than the minimum {minimum}")
    return _check("driver", "pass", f"driver {version} ({flavour} kernel module) on {count} GPU(s)")


def check_fabric(gpu: dict) -> dict:
    """Every GPU's NVLink fabric registration is COMPLETED and the host sits in at most one clique."""
    gpus = gpu.get("gpus") or []
    if not gpus:
        return _check("fabric", "skip", "no NVIDIA GPU found")
    if not gpu.get("driver_loaded"):
        return _check("fabric", "skip", "fabric state is unknown while the driver is not loaded")
    if gpu.get("source") != "nvml":
        return _check("fabric", "warn", "fabric state is unknown: NVML was not usable, GPUs were listed from PCI")
    fabrics = [(item.get("index"), item.get("fabric")) for item in gpus]
    if all(fabric is None or fabric.get("state") == "not_supported" for _index, fabric in fabrics):
        return _check("fabric", "skip", "GPUs have no NVLink fabric (not an MNNVL system)")
    problems = []
    for index, fabric in fabrics:
        if fabric is None or fabric.get("state") == "not_supported":
            problems.append(f"GPU {index}: fabric not supported while other GPUs have one")
        elif fabric.get("state") != "completed":
            problems.append(f"GPU {index}: fabric state {fabric.get('state')}")
        elif fabric.get("status") not in (None, "success"):
            problems.append(f"GPU {index}: fabric registration failed ({fabric.get('status')})")
    cliques = gpu.get("cliques") or []
    if len(cliques) > 1:
        problems.append(f"GPUs disagree on their clique: {', '.join(cliques)}")
    if problems:
        return _check("fabric", "fail", "; ".join(problems))
    if not cliques:
        return _check("fabric", "pass", "NVLink fabric COMPLETED, no multi-node clique (cluster UUID is zero)")
    return _check("fabric", "pass", f"fabric COMPLETED on {len(gpus)} GPU(s), clique {cliques[0]}")


def check_imex_host(gpu: dict, imex: dict) -> dict:
    """The host's own IMEX state: installed where a clique needs it, valid nodes file, domain UP."""
    cliques = gpu.get("cliques") or []
    if not imex.get("installed"):
        if cliques:
            return _check("imex", "warn", "GPUs are in an MNNVL clique but nvidia-imex is not installed "
                                          "(fine only when the DRA driver runs IMEX per ComputeDomain)")
        return _check("imex", "skip", "nvidia-imex not installed and no MNNVL clique")
    problems = []
    nodes = imex.get("nodes")
    if nodes is None:
        problems.append("nodes file missing or unreadable")
    else:
        if nodes.get("duplicates"):
            problems.append(f"nodes file {nodes.get('path')} lists duplicates: {', '.join(nodes['duplicates'])}")
        if nodes.get("invalid"):
            entries = ", ".join(f"line {entry.get('line')}: {entry.get('value')!r}" if isinstance(entry, Mapping)
                                else repr(entry) for entry in nodes["invalid"])
            problems.append(f"nodes file {nodes.get('path')} has entries that are not IP addresses: {entries}")
        if not nodes.get("addresses"):
            problems.append(f"nodes file {nodes.get('path')} lists no address")
    service = imex.get("service") or {}
    domain = imex.get("domain")
    if service.get("active") and domain:
        if domain.get("status") != "UP":
            problems.append(f"IMEX domain status {domain.get('status')}")
        if domain.get("not_connected"):
            pairs = ", ".join(f"{pair[0]}->{pair[1]}" for pair in domain["not_connected"])
            problems.append(f"IMEX nodes not connected: {pairs}")
    if problems:
        return _check("imex", "fail", "; ".join(problems))
    state = "active" if service.get("active") else ("masked" if service.get("masked") else "inactive")
    count = len((nodes or {}).get("addresses") or [])
    return _check("imex", "pass", f"nvidia-imex {imex.get('version')} {state}, nodes file with {count} address(es)")


def check_rdma_ports(connectx: dict, settings: dict) -> dict:
    """Every ConnectX port is ACTIVE at the expected rate and MTU."""
    ports = connectx.get("ports") or []
    if not ports:
        return _check("rdma_ports", "skip", "no ConnectX port found")
    fastest: dict[str, float] = {}
    for port in ports:
        layer = port.get("link_layer")
        fastest[layer] = max(fastest.get(layer, 0), port.get("rate_gbps") or 0)
    mtus = settings.get("rdma_mtu") or {}
    problems = []
    for port in ports:
        label = f"{port.get('rdma_device')}/{port.get('port')} ({port.get('netdev') or 'no netdev'})"
        issues = []
        if settings.get("rdma_require_active", True) and port.get("state") != "ACTIVE":
            issues.append(f"state {port.get('state')}/{port.get('phys_state')}")
        expected_rate = settings.get("rdma_min_rate_gbps") or fastest.get(port.get("link_layer"), 0)
        if (port.get("rate_gbps") or 0) < expected_rate:
            issues.append(f"rate {port.get('rate_gbps')} Gb/s below {expected_rate} Gb/s")
        expected_mtu = mtus.get(port.get("link_layer"))
        if expected_mtu and port.get("mtu") != expected_mtu:
            issues.append(f"mtu {port.get('mtu')} instead of {expected_mtu}")
        if issues:
            problems.append(f"{label}: {', '.join(issues)}")
    if problems:
        return _check("rdma_ports", "fail", "; ".join(problems))
    layers = ", ".join(f"{count} {layer}" for layer, count in sorted((connectx.get("link_layers") or {}).items()))
    return _check("rdma_ports", "pass", f"{len(ports)} port(s) ACTIVE at expected rate and MTU ({layers})")


def check_gpudirect(gpu: dict, connectx: dict, peermem: dict) -> dict:
    """GPUDirect RDMA is possible: DMA-BUF supported or nvidia_peermem loaded."""
    if not gpu.get("count") or not connectx.get("count"):
        return _check("gpudirect_rdma", "skip", "needs both NVIDIA GPUs and ConnectX ports")
    readiness = peermem.get("gpudirect_rdma") or {}
    if readiness.get("ready"):
        return _check("gpudirect_rdma", "pass", f"GPUDirect RDMA through {readiness.get('method')}")
    reasons = blocking_messages(peermem.get("dma_buf"))
    reasons.append("nvidia_peermem is not loaded")
    return _check("gpudirect_rdma", "fail", "; ".join(reasons))


def check_numa_alignment(gpu: dict, connectx: dict) -> dict:
    """Every GPU has an ACTIVE ConnectX port on its PCIe switch or at least its NUMA node."""
    gpus = [item.get("pci_address") for item in gpu.get("gpus") or []]
    ports = [port for port in connectx.get("ports") or [] if port.get("state") == "ACTIVE"]
    if not gpus or not connectx.get("ports"):
        return _check("numa_alignment", "skip", "needs both NVIDIA GPUs and ConnectX ports")
    same_switch = {address for port in ports for address in port.get("gpus_same_switch") or []}
    same_numa = {address for port in ports for address in port.get("gpus_same_numa") or []}
    unaligned = [address for address in gpus if address not in same_switch and address not in same_numa]
    if unaligned:
        return _check("numa_alignment", "warn",
                      f"no ACTIVE ConnectX port on the PCIe switch or NUMA node of GPU(s) {', '.join(unaligned)}")
    switched = sum(1 for address in gpus if address in same_switch)
    return _check("numa_alignment", "pass",
                  f"every GPU has an ACTIVE port nearby ({switched}/{len(gpus)} on a shared PCIe switch)")


def imex_domains(hosts: Mapping[str, dict]) -> list[dict]:
    """Group hosts into IMEX domains by fabric clique and check each domain's nodes files.

    ``hosts`` maps a host name to ``{'facts': gpufabric facts, 'address': IMEX address or None, 'why': why no
    address}``.
    """
    by_clique = group_by_clique({name: ((entry.get("facts") or {}).get("gpu") or {}).get("cliques") or []
                                 for name, entry in hosts.items()})
    domains = []
    for clique, members in by_clique.items():
        addresses = {name: hosts[name].get("address") for name in members}
        problems: list[str] = []
        notes: list[str] = []
        files = {}
        for name in members:
            imex = (hosts[name].get("facts") or {}).get("imex") or {}
            if imex.get("installed") and imex.get("nodes"):
                files[name] = list(imex["nodes"].get("addresses") or [])
        if files:
            distinct = {tuple(sorted(value)) for value in files.values()}
            if len(distinct) > 1:
                reference = files[min(files)]
                differing = sorted(name for name, value in files.items() if sorted(value) != sorted(reference))
                problems.append(f"nodes files differ across the domain: {', '.join(differing)} "
                                f"differ from {min(files)}")
            listed = set().union(*files.values())
            missing = sorted(f"{name} ({address})" for name, address in addresses.items()
                             if address and address not in listed)
            if missing:
                problems.append(f"members missing from the nodes file: {', '.join(missing)}")
            unknown = sorted(listed - {address for address in addresses.values() if address})
            if unknown:
                notes.append(f"{len(unknown)} address(es) in the nodes file belong to hosts outside this run")
        no_address = sorted(name for name, address in addresses.items() if not address)
        if no_address:
            notes.append(f"no IMEX address known for {', '.join(no_address)} (set gpufabric_imex_address): "
                         + "; ".join(hosts[name].get("why") or "" for name in no_address))
        status = "fail" if problems else ("warn" if no_address else "pass")
        domains.append({"clique": clique, "members": members, "addresses": addresses, "status": status,
                        "problems": problems, "notes": notes})
    return domains


def preflight_report(hostvars: Mapping, hosts: list[str], settings: Mapping | None = None) -> dict:
    """Build the readiness report for ``hosts`` from their hostvars.

    Reads ``ansible_facts['gpufabric']`` and the IMEX address of each host, decided by
    :func:`.imex_address.imex_address` over ``gpufabric_imex_address``, ``gpufabric_imex_interface`` and
    ``gpufabric_imex_address_family`` (the rule the ``nvidia_imex`` role writes the nodes file by).
    """
    if isinstance(hosts, str) or not isinstance(hosts, (list, tuple)):
        raise PreflightError(f"hosts must be a list of host names, got {type(hosts).__name__}")
    try:
        merged = chosen_settings(settings, DEFAULT_SETTINGS, {}, "", keep_none=True)
    except ClusterRoleError as exc:
        raise PreflightError(str(exc)) from None
    collected = {}
    report_hosts = {}
    for name in hosts:
        host_vars = hostvars.get(name) or {}
        facts = _facts_of(host_vars)
        if facts is None:
            report_hosts[name] = {"status": "fail", "summary": "no gpufabric facts (host unreachable or probe failed)",
                                  "checks": [_check("probe", "fail", "no gpufabric facts were gathered")]}
            continue
        address, why = site_imex_address(name, host_vars)
        collected[name] = {"facts": facts, "address": address, "why": why}
        gpu = facts.get("gpu") or {}
        connectx = facts.get("connectx") or {}
        imex = facts.get("imex") or {}
        peermem = facts.get("peermem") or {}
        checks = [
            check_probe(facts),
            check_driver(gpu, merged),
            check_fabric(gpu),
            check_imex_host(gpu, imex),
            check_rdma_ports(connectx, merged),
            check_gpudirect(gpu, connectx, peermem),
            check_numa_alignment(gpu, connectx),
        ]
        report_hosts[name] = {
            "gpus": gpu.get("count", 0),
            "gpu_models": sorted({item.get("name") or item.get("device_id") or "unknown"
                                  for item in gpu.get("gpus") or []}),
            "driver_version": gpu.get("driver_version"),
            "cliques": gpu.get("cliques") or [],
            "connectx_ports": connectx.get("count", 0),
            "imex_address": collected[name]["address"],
            "checks": checks,
        }
    domains = imex_domains(collected)
    for domain in domains:
        for member in domain["members"]:
            status = "fail" if domain["problems"] else "pass"
            message = "; ".join(domain["problems"] + domain["notes"]) or \
                f"{len(domain['members'])} member(s) of clique {domain['clique']} agree on one nodes file"
            if domain["notes"] and not domain["problems"]:
                status = domain["status"]
            report_hosts[member]["checks"].append(_check("imex_domain", status, message))
    for entry in report_hosts.values():
        if "gpus" not in entry:
            continue
        if not entry["gpus"] and not entry["connectx_ports"]:
            entry["status"] = "no_hardware"
            entry["summary"] = "no NVIDIA GPU or ConnectX port found; nothing to prepare on this host"
            continue
        entry["status"] = _worst(check["status"] for check in entry["checks"])
        failed = [check["name"] for check in entry["checks"] if check["status"] == "fail"]
        warned = [check["name"] for check in entry["checks"] if check["status"] == "warn"]
        entry["summary"] = ("failed: " + ", ".join(failed)) if failed else \
            (("warnings: " + ", ".join(warned)) if warned else "ready")
    counts = dict.fromkeys(("pass", "warn", "fail", "no_hardware"), 0)
    for entry in report_hosts.values():
        counts[entry["status"]] += 1
    return {
        "settings": merged,
        "summary": {"hosts": len(report_hosts), **counts,
                    "failed_hosts": sorted(name for name, entry in report_hosts.items() if entry["status"] == "fail"),
                    "ready": counts["fail"] == 0},
        "hosts": report_hosts,
        "imex_domains": domains,
    }
