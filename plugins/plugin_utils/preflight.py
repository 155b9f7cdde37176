# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Readiness rules: turn every host's ``ansible_facts['gpufabric']`` into one preflight report.

Pure functions over plain data; the filter ``gpufabric.cluster.preflight_report`` is their thin entry
point from playbooks.  Errors are :class:`PreflightError`.  Statuses, worst first: ``fail``, ``warn``,
``pass``; ``skip`` marks a check that does not apply (no GPU, no ConnectX port).  A host with neither GPU
nor ConnectX port is ``no_hardware``.

No message quotes the text of a host file: the probes report only values of a documented shape, and the rules
name a nodes file's bad entries by line number (whatever the facts hold besides) and its path only when it is an
absolute path of safe characters (:func:`...module_utils.host_values.is_safe_path`; facts cached by an older
probe may hold another).
"""

from __future__ import annotations

import datetime
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import is_safe_path, is_version
from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import COUNTERS
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key, natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, driver_lifecycle, rail_selection
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings as site_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.dma_buf import blocking_messages
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fabric_health import check_fabric_health
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.fleet_facts import missing_text
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import ImexAddressError, imex_address
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import (
    ImexDomainError,
    group_by_clique,
    nodes_file,
    unusable_nodes,
    with_outside,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_socket import socket_path_problem
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.nvlink_domain import (
    chassis_problems,
    named_entries,
    place_key,
    place_text,
    tray_place,
    undecided_members,
    undecided_note,
    version_problems,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_rules import (
    MINIMUM_DRIVER_SETTING,
    RuleError,
    read_rules,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.services import (
    check_fabric_manager,
    imex_service_findings,
)
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import at_least

STATUS_ORDER = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}
# The connection states of `nvidia-imex-ctl -N` other than CONNECTED, with their meaning from its legend (the letter
# or mark in the connectivity table first); ../shared/reference/imex/nvidia-imex-ctl-N.sample.txt.
CONNECTION_STATES = {
    "VERSION_MISMATCH": "!V!: version mismatch, communication disabled; every member needs one nvidia-imex version",
    "NODE_MAP_MISMATCH": "!M!: node map mismatch, communication disabled; the members' nodes files differ",
    "INVALID": "I: the node was not reachable",
    "NEVER_CONNECTED": "N: never connected",
    "DISCONNECTED": "D: connection lost and cleaned up",
    "RECOVERING": "R: connection lost, clean-up not yet triggered",
    "AUTHENTICATING": "A: mutual authentication in progress",
}

# The readiness rules are the suboptions of the site setting gpufabric_preflight_settings: their defaults are read from
# its argument spec (roles/gpufabric/meta/argument_specs.yml), the one place they are written; min_driver_version has
# none there (its default is gpufabric_min_driver_version, which the caller passes or the spec gives).
RULES_SETTING = "gpufabric_preflight_settings"
# The site variables a host's IMEX address comes from (roles/gpufabric); a host that sets none has the site's default.
IMEX_ADDRESS_VARIABLES = {"address": "gpufabric_imex_address", "interface": "gpufabric_imex_interface",
                          "family": "gpufabric_imex_address_family"}
# Who runs IMEX on a host and its control socket: the role variable where the inventory sets it, else the site's.
IMEX_MODE_VARIABLES = ("nvidia_imex_mode", "gpufabric_imex_mode")
IMEX_SOCKET_VARIABLES = ("nvidia_imex_socket_path", "gpufabric_imex_socket_path")
# The most ports a port_counters finding lists before "and N more".
SHOWN_PORTS = 8
# The most GPUs a gpu_health finding lists before "and N more", and per GPU the most XID codes and NVLink links.
SHOWN_GPUS = 8
SHOWN_XIDS = 4
SHOWN_LINKS = 2
# The recovery actions (gpu_info recovery_action) that ask for a GPU reset or a reboot: gpu_health fails; any other
# action but none warns.
RESET_ACTIONS = ("gpu_reset", "node_reboot", "drain_and_reset", "bus_reset", "system_reboot")


def site_default(name: str) -> t.Any:
    """The default of the site setting ``name``, from the argument spec of ``roles/gpufabric``."""
    return site_settings.option(site_settings.SITE_ROLE, name).get("default")


class PreflightError(ValueError):
    """Input from which no report can be built; the message names the variable."""


def _check(name: str, status: str, message: str) -> dict:
    return {"name": name, "status": status, "message": message}


def _worst(statuses: t.Iterable[str]) -> str:
    return max(statuses, key=lambda status: STATUS_ORDER[status], default="pass")


def _map(value: t.Any) -> Mapping:
    """``value`` when it is a mapping, else an empty one: facts of an unexpected shape hold nothing."""
    return value if isinstance(value, Mapping) else {}


def _list(value: t.Any) -> list:
    """``value`` when it is a list, else an empty one (a string is never iterated by character)."""
    return list(value) if isinstance(value, (list, tuple)) else []


def _facts_of(host_vars: t.Any) -> dict | None:
    facts = _map(_map(host_vars).get("ansible_facts"))
    gpufabric = facts.get("gpufabric")
    return dict(gpufabric) if isinstance(gpufabric, Mapping) and gpufabric else None


def site_imex_address(name: str, host_vars: Mapping) -> tuple[str | None, str | None]:
    """The IMEX address of a host by the shared rule over the site variables, or ``(None, why)``."""
    settings = {key: host_vars.get(variable, site_default(variable))
                for key, variable in IMEX_ADDRESS_VARIABLES.items()}
    try:
        return imex_address(name, host_vars.get("ansible_facts") or {}, **settings), None
    except ImexAddressError as exc:
        return None, str(exc)


# What each probe subset reports whenever its collector ran (the key it always returns), and what it found.
PROBE_SUBSETS = {
    "gpu": ("count", lambda payload: bool(payload.get("count") or _list(payload.get("gpus")))),
    "connectx": ("count", lambda payload: bool(payload.get("count") or _list(payload.get("ports")))),
    "imex": ("installed", lambda payload: bool(payload.get("installed"))),
    "peermem": ("nvidia_peermem", lambda payload: bool(payload.get("kernel_version"))),
}


def site_imex_mode(host_vars: Mapping) -> tuple[t.Any, t.Any]:
    """``(mode, socket path)`` of a host: ``nvidia_imex_mode``, ``nvidia_imex_socket_path`` where set, else the site's.

    The site variables are ``gpufabric_imex_mode`` and ``gpufabric_imex_socket_path``: the host's where its inventory
    or the extra vars set them, else their defaults (roles/gpufabric).
    """
    def first(variables: tuple[str, ...]) -> t.Any:
        for variable in variables:
            if host_vars.get(variable) is not None:
                return host_vars.get(variable)
        return site_default(variables[-1])
    return first(IMEX_MODE_VARIABLES), first(IMEX_SOCKET_VARIABLES)


def host_managed_problems(imex: Mapping, socket_path: t.Any) -> list[str]:
    """What keeps the DRA driver's host-managed IMEX from using this host's daemon (mode ``dra_host_managed``).

    The wanted socket path itself is checked first by the one rule of :mod:`.imex_socket` (absolute, normal form, not
    under a world-writable directory), as the roles check it. The service's own state is judged by the one rule for
    host services (:func:`.services.imex_service_findings`), in :func:`check_imex_host`.
    """
    problem = socket_path_problem("gpufabric_imex_socket_path", socket_path)
    problems = [problem] if problem else []
    control = _map(imex.get("control"))
    if not control.get("enabled"):
        problems.append("the IMEX command service is off (IMEX_CMD_ENABLED is not 1 in config.cfg)")
    if control.get("socket_path") != socket_path:
        problems.append(f"the IMEX control socket is {control.get('socket_path')} (IMEX_CMD_UNIX_DOMAIN_PATH), "
                        f"not {socket_path} (gpufabric_imex_socket_path)")
    if control.get("ready") is not True:
        problems.append(f"the host IMEX daemon is not READY on its control socket: "
                        f"{control.get('reason') or 'not reported'}")
    return problems


def check_probe(facts: Mapping) -> dict:
    """Whatever a probe could not read, named with its subset.

    ``fail`` when a subset is missing (its collector did not run or its payload is not a mapping) or read
    nothing (it reports errors and found nothing: GPUs or ports may be there unseen), ``warn`` when a subset
    found something but could not read all of its sources.
    """
    failed = []
    problems = []
    for subset, (key, found) in PROBE_SUBSETS.items():
        payload = facts.get(subset)
        if not isinstance(payload, Mapping) or key not in payload:
            failed.append(f"{subset}: the probe did not report it")
            continue
        errors = [str(error) for error in _list(payload.get("errors"))]
        if errors and not found(payload):
            failed.append(f"{subset}: read nothing ({'; '.join(errors)})")
        elif errors:
            problems.append(f"{subset}: {'; '.join(errors)}")
    if failed:
        return _check("probe", "fail", "; ".join(failed + problems))
    if problems:
        return _check("probe", "warn", "; ".join(problems))
    return _check("probe", "pass", "every probe read its sources")


def check_driver(gpu: dict, settings: dict) -> dict:
    """The NVIDIA driver is loaded and at least the minimum version."""
    count = _count(gpu)
    if not count:
        return _check("driver", "skip", "no NVIDIA GPU found")
    if not gpu.get("driver_loaded"):
        return _check("driver", "fail", f"{count} NVIDIA GPU(s) on PCI but the nvidia kernel driver is not loaded")
    version = str(gpu.get("driver_version") or "")
    minimum = str(settings["min_driver_version"])
    flavour = gpu.get("kernel_module") or "unknown"
    if not at_least(version, minimum):
        return _check("driver", "fail", f"driver {version} ({flavour}) is older than the minimum {minimum}")
    return _check("driver", "pass", f"driver {version} ({flavour} kernel module) on {count} GPU(s)")


# The site setting that says the site runs production work (roles/gpufabric): a new feature branch is then a warning.
PRODUCTION_SITE_VARIABLE = "gpufabric_production_site"


def check_driver_lifecycle(gpu: Mapping, host_vars: Mapping, today: datetime.date | None = None) -> dict:
    """The running driver's branch against NVIDIA's lifecycle table (:mod:`.driver_lifecycle`); warnings only.

    ``warn`` when the branch is past its end of life (its date and the branch to move to), when it is a new feature
    branch and the host's ``gpufabric_production_site`` (default: the site's) is true, or when the table does not
    hold it (lifecycle unknown); ``skip`` without a loaded driver of a readable version.  ``today`` is the
    controller's date unless given.
    """
    version = gpu.get("driver_version")
    if not gpu.get("driver_loaded") or not version:
        return _check("driver_lifecycle", "skip", "no loaded NVIDIA driver to judge")
    production = host_vars.get(PRODUCTION_SITE_VARIABLE)
    production = site_default(PRODUCTION_SITE_VARIABLE) if production is None else production
    if not isinstance(production, bool):
        return _check("driver_lifecycle", "warn", f"{PRODUCTION_SITE_VARIABLE} must be true or false, got "
                      f"{type(production).__name__}; the driver's lifecycle is not judged")
    try:
        branch = driver_lifecycle.branch_of(version, "the loaded driver version")
        findings = driver_lifecycle.judge(branch, today or datetime.date.today(), production)
    except driver_lifecycle.LifecycleError as exc:
        return _check("driver_lifecycle", "warn", f"{exc}; the driver's lifecycle is not judged")
    status = _worst(finding.level for finding in findings)
    return _check("driver_lifecycle", status, "; ".join(finding.message for finding in findings))


def check_fabric(gpu: dict) -> dict:
    """Every GPU's NVLink fabric registration is COMPLETED and the host sits in at most one clique."""
    gpus = [_map(item) for item in _list(gpu.get("gpus"))]
    if not gpus:
        return _check("fabric", "skip", "no NVIDIA GPU found")
    if not gpu.get("driver_loaded"):
        return _check("fabric", "skip", "fabric state is unknown while the driver is not loaded")
    if gpu.get("source") != "nvml" and gpu.get("nvml_bindings") is False:
        return _check("fabric", "warn", "fabric state and NVLink clique unknown: nvidia-ml-py (the NVML bindings) is "
                                        "not installed for the Python that runs the probe on this host; install it "
                                        "there (pip install nvidia-ml-py) so that its IMEX domain can be judged")
    if gpu.get("source") != "nvml":
        return _check("fabric", "warn", "fabric state is unknown: NVML was not usable, GPUs were listed from PCI")
    fabrics = [(item.get("index"), item.get("fabric") if isinstance(item.get("fabric"), Mapping) else None)
               for item in gpus]
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
    cliques = [str(clique) for clique in _list(gpu.get("cliques"))]
    if len(cliques) > 1:
        problems.append(f"GPUs disagree on their clique: {', '.join(cliques)}")
    if problems:
        return _check("fabric", "fail", "; ".join(problems))
    if not cliques:
        return _check("fabric", "pass", "NVLink fabric COMPLETED, no multi-node clique (cluster UUID is zero)")
    return _check("fabric", "pass", f"fabric COMPLETED on {len(gpus)} GPU(s), clique {cliques[0]}")


def _invalid_lines(invalid: list) -> str:
    """The line numbers of a nodes file's entries that are not IP addresses (``line 6``, ``lines 2, 9``).

    Only the ``line`` of each entry is read, and only when it is a whole number: an entry's text is never shown,
    whatever the facts hold.
    """
    numbers = [entry.get("line") for entry in invalid if isinstance(entry, Mapping)]
    shown = [str(number) for number in numbers if isinstance(number, int) and not isinstance(number, bool)]
    unnumbered = len(invalid) - len(shown)
    if unnumbered:
        shown.append(f"{unnumbered} without a line number")
    return ("line " if len(invalid) == 1 else "lines ") + ", ".join(shown)


def _nodes_path(path: t.Any) -> str:
    """A nodes file path for a message: the path when it is an absolute path of safe characters, else a mention."""
    return str(path) if is_safe_path(path) else "(its path is not shown: not an absolute path of safe characters)"


def _node_versions(domain: Mapping) -> str:
    """The nvidia-imex versions the domain's nodes report, with the nodes of each (``570.172 on nodes 0, 1``)."""
    by_version: dict[str, list[str]] = {}
    for node in _list(domain.get("nodes")):
        version = _map(node).get("version")
        index = _map(node).get("index")
        if isinstance(version, str) and is_version(version) and isinstance(index, int):
            by_version.setdefault(version, []).append(str(index))
    return "; ".join(f"nvidia-imex {version} on node(s) {_shown(indexes)}"
                     for version, indexes in sorted(by_version.items(), key=lambda item: (len(item[1]), item[0])))


def connection_problems(domain: Mapping) -> list[str]:
    """The connections of a live IMEX domain (``nvidia-imex-ctl -N``) that are not CONNECTED, one line per state.

    Each state is named with its meaning from the command's legend; a version mismatch (``!V!``) also names the
    versions the nodes report, fewest nodes first (the odd ones).  Pairs are ``from->to`` node indexes.
    """
    by_state: dict[str, list[str]] = {}
    connections = _map(domain.get("connections"))
    for pair in _list(domain.get("not_connected")):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            continue
        state = _map(connections.get(str(pair[0]))).get(str(pair[1]))
        state = state if isinstance(state, str) and state in CONNECTION_STATES else "not CONNECTED"
        by_state.setdefault(state, []).append("->".join(map(str, pair)))
    problems = []
    for state, pairs in sorted(by_state.items(), key=lambda item: list(CONNECTION_STATES).index(item[0])
                               if item[0] in CONNECTION_STATES else len(CONNECTION_STATES)):
        problem = f"IMEX connections {state} ({CONNECTION_STATES.get(state, 'a state nvidia-imex-ctl does not list')})"
        problem += f": {_shown(pairs)}"
        if state == "VERSION_MISMATCH" and _node_versions(domain):
            problem += f"; {_node_versions(domain)}"
        problems.append(problem)
    return problems


def check_imex_host(gpu: dict, imex: dict, mode: t.Any, socket_path: t.Any, host: str | None = None) -> dict:
    """The host's own IMEX state: installed where a clique needs it, valid nodes file, domain UP.

    Where the IMEX mode runs the host service, its state by the one rule for host services
    (:func:`.services.imex_service_findings`: not installed, masked or not active fails, restarted by systemd warns;
    in ``dra`` mode and on a ``host`` mode host without a clique it is not judged), naming ``host`` when given.
    In mode ``dra_host_managed`` also the command service on at ``socket_path`` and the daemon READY there
    (:func:`host_managed_problems`); a clique host without nvidia-imex fails.
    """
    cliques = _list(gpu.get("cliques"))
    host_managed = mode == "dra_host_managed"
    if not imex.get("installed"):
        if cliques and host_managed:
            return _check("imex", "fail", "GPUs are in an MNNVL clique but nvidia-imex is not installed "
                                          "(gpufabric_imex_mode dra_host_managed needs the host service)")
        if cliques:
            return _check("imex", "warn", "GPUs are in an MNNVL clique but nvidia-imex is not installed "
                                          "(fine only when the DRA driver runs IMEX per ComputeDomain)")
        return _check("imex", "skip", "nvidia-imex not installed and no MNNVL clique")
    problems = []
    nodes = imex.get("nodes")
    path = None
    if not isinstance(nodes, Mapping):
        nodes = None
        problems.append("nodes file missing or unreadable")
    else:
        path = _nodes_path(nodes.get("path"))
        addresses = [str(address) for address in _list(nodes.get("addresses"))]
        if _list(nodes.get("duplicates")):
            problems.append(f"nodes file {path} lists duplicates: {', '.join(map(str, nodes['duplicates']))}")
        invalid = _list(nodes.get("invalid"))
        if invalid:
            problems.append(f"nodes file {path} has entries that are not IP addresses on {_invalid_lines(invalid)}")
        unusable = unusable_nodes(addresses)
        if unusable:
            problems.append(f"nodes file {path} is invalid: {', '.join(unusable)} "
                            "(IMEX peers need routable addresses of one family)")
        if not addresses:
            problems.append(f"nodes file {path} lists no address")
    service = _map(imex.get("service"))
    domain = imex.get("domain")
    if service.get("active") and isinstance(domain, Mapping) and domain:
        if domain.get("status") != "UP":
            problems.append(f"IMEX domain status {domain.get('status')}")
        else:
            listed = len({str(address) for address in _list((nodes or {}).get("addresses"))})
            live = len(_list(domain.get("nodes")))
            if live < listed:
                problems.append(f"IMEX domain UP with {live} of the {listed} node(s) of nodes file {path}")
        problems.extend(connection_problems(domain))
    service_failures, service_warnings = imex_service_findings(host, gpu, imex, mode)
    problems.extend(service_failures)
    if host_managed:
        problems.extend(host_managed_problems(imex, socket_path))
    if problems:
        return _check("imex", "fail", "; ".join(problems))
    if service_warnings:
        return _check("imex", "warn", "; ".join(service_warnings))
    state = "active" if service.get("active") else ("masked" if service.get("masked") else "inactive")
    count = len(_list((nodes or {}).get("addresses")))
    ready = f", READY on {socket_path}" if host_managed else ""
    return _check("imex", "pass",
                  f"nvidia-imex {imex.get('version')} {state}, nodes file with {count} address(es){ready}")


def check_rdma_ports(connectx: Mapping, settings: Mapping, selection: rail_selection.Selection | None = None,
                     selection_problems: t.Sequence[str] = ()) -> dict:
    """Every rail is ACTIVE at the expected rate and MTU, and the probe read it without error.

    The rails are the ports the rail rule selects (``selection``, :func:`.rail_selection.host_rails`: the host's
    ``rdma_network_*`` settings, the rule the ``rdma_network`` role plans by; without it, the rule's defaults with
    nothing protected); the other ports are named in the message as not judged and never fail the check.
    ``selection_problems`` (the host's selection settings that are no values) fail it. A rail whose ``errors`` the
    probe filled (values a kernel would never write: an unknown link layer, a rate that is not a rate, a dangling PCI
    link) fails with those errors, whatever else it reports.
    """
    ports = [_map(port) for port in _list(connectx.get("ports"))]
    if selection_problems:
        return _check("rdma_ports", "fail", "; ".join(selection_problems))
    if not ports:
        return _check("rdma_ports", "skip", "no ConnectX port found")
    if selection is None:
        selection = rail_selection.select_rails(ports, {}, {}, "", [])
    rails = selection.rails
    not_judged = ""
    if selection.left_out:
        not_judged = (f"{len(selection.left_out)} non-rail port(s) not judged: "
                      + ", ".join(f"{_port_name(port)} ({port['reason']})" for port in selection.left_out))
    if not rails:
        return _check("rdma_ports", "skip", f"no rail among {len(ports)} ConnectX port(s); {not_judged}")
    fastest: dict[t.Any, float] = {}
    for port in rails:
        if _list(port.get("errors")):
            continue
        layer = str(port.get("link_layer"))
        fastest[layer] = max(fastest.get(layer, 0), _rate(port))
    mtus = _map(settings.get("rdma_mtu"))
    problems = []
    for port in rails:
        label = f"{port.get('rdma_device')}/{port.get('port')} ({port.get('netdev') or 'no netdev'})"
        errors = [str(error) for error in _list(port.get("errors"))]
        if errors:
            problems.append(f"{label}: unreadable ({'; '.join(errors)})")
            continue
        issues = []
        if settings.get("rdma_require_active", True) and port.get("state") != "ACTIVE":
            issues.append(f"state {port.get('state')}/{port.get('phys_state')}")
        expected_rate = settings.get("rdma_min_rate_gbps") or fastest.get(str(port.get("link_layer")), 0)
        if _rate(port) < expected_rate:
            issues.append(f"rate {port.get('rate_gbps')} Gb/s below {expected_rate} Gb/s")
        expected_mtu = mtus.get(port.get("link_layer")) if isinstance(port.get("link_layer"), str) else None
        if expected_mtu and port.get("mtu") != expected_mtu:
            issues.append(f"mtu {port.get('mtu')} instead of {expected_mtu}")
        if issues:
            problems.append(f"{label}: {', '.join(issues)}")
    tail = f"; {not_judged}" if not_judged else ""
    if problems:
        return _check("rdma_ports", "fail", "; ".join(problems) + tail)
    counts: dict[str, int] = {}
    for port in rails:
        counts[str(port.get("link_layer"))] = counts.get(str(port.get("link_layer")), 0) + 1
    layers = ", ".join(f"{count} {layer}" for layer, count in sorted(counts.items()))
    return _check("rdma_ports", "pass", f"{len(rails)} port(s) ACTIVE at expected rate and MTU ({layers}){tail}")


def _port_name(port: Mapping) -> str:
    """A port in a message: its netdev, else its RDMA device and port number."""
    return str(port.get("netdev") or f"{port.get('rdma_device')}/{port.get('port')}")


def _counter_label(entry: t.Any) -> str | None:
    """The counter a port's ``counter_errors`` entry (``<path>/<counter>: <why>``) names, when it is one the probe
    reads; the entry's path and reason are not repeated."""
    path = str(entry).split(": ", 1)[0]
    name = path.rsplit("/", 1)[-1]
    return name if name in COUNTERS else None


def check_port_counters(host: str, connectx: Mapping, settings: Mapping) -> dict:
    """The error counters of every ConnectX port with a netdev at most their thresholds (``port_counter_thresholds``).

    Judges all ports with a netdev (not only the rails), each counter against its threshold; a counter the kernel
    does not expose is not judged, one the probe could not read is named. Above a threshold or unreadable is a
    warning, never a failure: counters count since the device last reset them, and a port with errors counted is
    still up (``rdma_ports`` judges its state). Each finding names the host, the RDMA device, port and netdev, and
    the counter with its value and threshold; at most :data:`SHOWN_PORTS` ports are listed, then how many more.
    """
    thresholds = {str(name): limit for name, limit in _map(settings.get("port_counter_thresholds")).items()
                  if isinstance(limit, int) and not isinstance(limit, bool)}
    ports = [_map(port) for port in _list(connectx.get("ports")) if _map(port).get("netdev")]
    if not ports:
        return _check("port_counters", "skip", "no ConnectX port with a netdev found")
    if not thresholds:
        return _check("port_counters", "skip", "no counter is judged (settings.port_counter_thresholds sets none)")
    findings = []
    unexposed = 0
    for port in sorted(ports, key=lambda port: (natural_key(str(port.get("rdma_device"))), str(port.get("port")))):
        counters = _map(port.get("counters"))
        if not counters and not _list(port.get("counter_errors")):
            unexposed += 1
            continue
        over = []
        for name, limit in thresholds.items():
            value = counters.get(name)
            if isinstance(value, int) and not isinstance(value, bool) and value > limit:
                over.append(f"{name} {value} (threshold {limit})")
        unread = sorted({label for label in map(_counter_label, _list(port.get("counter_errors")))
                         if label in thresholds}, key=COUNTERS.index)
        if unread:
            over.append(f"{', '.join(unread)} unreadable")
        if over:
            findings.append(f"{port.get('rdma_device')}/{port.get('port')} ({port.get('netdev')}): {', '.join(over)}")
    if unexposed == len(ports):
        return _check("port_counters", "skip", f"the kernel exposes no error counters on the {len(ports)} port(s) "
                                               "with a netdev")
    absent = f"; no counters exposed on {unexposed} port(s)" if unexposed else ""
    if findings:
        return _check("port_counters", "warn", f"port error counters above their thresholds "
                                               f"(settings.port_counter_thresholds) on {host}: "
                                               f"{_shown(findings, SHOWN_PORTS, '; ')}{absent}")
    return _check("port_counters", "pass", f"{len(ports) - unexposed} port(s) with a netdev: every error counter at or "
                                           f"below its threshold{absent}")


def _count_of(value: t.Any) -> int | None:
    """``value`` when it is a whole number (not a boolean), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _gpu_findings(gpu: Mapping, thresholds: Mapping) -> tuple[list[str], list[str], bool]:
    """``(failures, warnings, read)`` of one GPU's health facts; ``read``: NVML or the kernel log told anything."""
    failures: list[str] = []
    warnings: list[str] = []
    memory = _map(gpu.get("memory_errors"))
    rows = _map(memory.get("remapped_rows"))
    if rows.get("pending") is True:
        failures.append("row remap pending")
    if rows.get("failure") is True:
        failures.append("row remap failure")
    ecc = _map(memory.get("ecc_uncorrected"))
    volatile, aggregate = _count_of(ecc.get("volatile")), _count_of(ecc.get("aggregate"))
    if volatile:
        failures.append(f"volatile uncorrectable ECC errors {volatile}")
    limit = _count_of(thresholds.get("ecc_aggregate_uncorrected"))
    if limit is not None and aggregate is not None and aggregate > limit:
        warnings.append(f"aggregate uncorrectable ECC errors {aggregate} (threshold {limit})")
    action = gpu.get("recovery_action")
    if isinstance(action, str) and action != "none":
        (failures if action in RESET_ACTIONS else warnings).append(f"recovery action {action}")
    limit = _count_of(thresholds.get("nvlink_errors"))
    links = [_map(link) for link in _list(gpu.get("nvlink_errors"))]
    if limit is not None:
        over = [f"link {link.get('link')} "
                + ", ".join(f"{name} {link[name]}" for name in ("replay", "recovery", "crc")
                            if (_count_of(link.get(name)) or 0) > limit)
                for link in links if any((_count_of(link.get(name)) or 0) > limit
                                         for name in ("replay", "recovery", "crc"))]
        if over:
            warnings.append(f"NVLink errors {_shown(over, SHOWN_LINKS, '; ')} (threshold {limit})")
    serious = set(_list(thresholds.get("xids")))
    counts = _map(gpu.get("xid_counts"))
    logged = sorted(((int(code), count) for code, count in counts.items()
                     if str(code).isdigit() and int(code) in serious and _count_of(count)),
                    key=lambda item: item[0])
    if logged:
        warnings.append("XID " + _shown([f"{code}" + (f" x{count}" if count > 1 else "") for code, count in logged],
                                        SHOWN_XIDS))
    read = bool(memory) or isinstance(action, str) or gpu.get("xid_counts") is not None
    return failures, warnings, read


def check_gpu_health(host: str, gpu: Mapping, settings: Mapping) -> dict:
    """Each GPU's memory errors, recovery action, NVLink errors and XIDs (``gpu_info``'s health facts).

    Fails on a pending row remap, a row-remap failure, any volatile uncorrectable ECC error or a recovery action that
    asks for a GPU reset or a reboot (:data:`RESET_ACTIONS`); warns on what ``gpu_health_thresholds`` judges: more
    aggregate uncorrectable ECC errors than ``ecc_aggregate_uncorrected``, an NVLink error counter above
    ``nvlink_errors``, an XID of ``xids`` in the kernel log, and any other recovery action. Each finding names the
    host, the GPU (index and PCI address) and the counter; at most :data:`SHOWN_GPUS` GPUs are listed, then how many
    more. A GPU whose health nothing could read (listed from PCI, the kernel log unreadable) is not judged.
    """
    thresholds = _map(settings.get("gpu_health_thresholds"))
    gpus = [_map(item) for item in _list(gpu.get("gpus"))]
    if not gpus:
        return _check("gpu_health", "skip", "no GPU found")
    findings = []
    failed = False
    unread = 0
    for item in sorted(gpus, key=lambda item: (_count_of(item.get("index")) is None,
                                               _count_of(item.get("index")) or 0)):
        failures, warnings, read = _gpu_findings(item, thresholds)
        if not read:
            unread += 1
            continue
        if failures or warnings:
            failed = failed or bool(failures)
            findings.append(f"GPU {item.get('index')} ({item.get('pci_address')}): {', '.join(failures + warnings)}")
    if unread == len(gpus):
        return _check("gpu_health", "skip", f"the health of the {len(gpus)} GPU(s) could not be read (no NVML, no "
                                            "kernel log)")
    absent = f"; the health of {unread} GPU(s) could not be read" if unread else ""
    if findings:
        return _check("gpu_health", "fail" if failed else "warn",
                      f"GPU health on {host} (warnings by settings.gpu_health_thresholds): "
                      f"{_shown(findings, SHOWN_GPUS, '; ')}{absent}")
    return _check("gpu_health", "pass", f"{len(gpus) - unread} GPU(s): no pending row remap, remap failure, volatile "
                                        f"uncorrectable ECC error or pending reset, nothing above its threshold"
                                        f"{absent}")


def _rate(port: Mapping) -> float:
    """The port's rate in Gb/s; anything that is not a number counts as 0."""
    rate = port.get("rate_gbps")
    return rate if isinstance(rate, (int, float)) and not isinstance(rate, bool) else 0


def check_gpudirect(gpu: dict, connectx: dict, peermem: dict) -> dict:
    """GPUDirect RDMA is possible: DMA-BUF supported or nvidia_peermem loaded."""
    if not _count(gpu) or not _count(connectx):
        return _check("gpudirect_rdma", "skip", "needs both NVIDIA GPUs and ConnectX ports")
    readiness = _map(peermem.get("gpudirect_rdma"))
    if readiness.get("ready"):
        return _check("gpudirect_rdma", "pass", f"GPUDirect RDMA through {readiness.get('method')}")
    reasons = blocking_messages(peermem.get("dma_buf") if isinstance(peermem.get("dma_buf"), Mapping) else None)
    reasons.append("nvidia_peermem is not loaded")
    return _check("gpudirect_rdma", "fail", "; ".join(reasons))


def check_numa_alignment(gpu: dict, connectx: dict) -> dict:
    """Every GPU has an ACTIVE ConnectX port on its PCIe switch or at least its NUMA node."""
    gpus = [str(_map(item).get("pci_address")) for item in _list(gpu.get("gpus"))]
    all_ports = [_map(port) for port in _list(connectx.get("ports"))]
    ports = [port for port in all_ports if port.get("state") == "ACTIVE" and not _list(port.get("errors"))]
    if not gpus or not all_ports:
        return _check("numa_alignment", "skip", "needs both NVIDIA GPUs and ConnectX ports")
    same_switch = {str(address) for port in ports for address in _list(port.get("gpus_same_switch"))}
    same_numa = {str(address) for port in ports for address in _list(port.get("gpus_same_numa"))}
    unaligned = [address for address in gpus if address not in same_switch and address not in same_numa]
    if unaligned:
        return _check("numa_alignment", "warn",
                      f"no ACTIVE ConnectX port on the PCIe switch or NUMA node of GPU(s) {', '.join(unaligned)}")
    switched = sum(1 for address in gpus if address in same_switch)
    return _check("numa_alignment", "pass",
                  f"every GPU has an ACTIVE port nearby ({switched}/{len(gpus)} on a shared PCIe switch)")


def _entry_key(entry: str) -> tuple:
    """Sort key of a nodes file entry: IP addresses as :func:`...sort_keys.address_key`, anything else after."""
    try:
        return (0, *address_key(entry))
    except ValueError:
        return (1, entry)


def _shown(addresses: t.Sequence[str], limit: int = 8, separator: str = ", ") -> str:
    shown = separator.join(addresses[:limit])
    return shown + (f" and {len(addresses) - limit} more" if len(addresses) > limit else "")


def imex_domains(hosts: Mapping[str, dict], expected_members: int | None = None,
                 single_chassis: bool = False, unknown: t.Sequence[str] = (),
                 missing: Mapping[str, t.Sequence[str]] | None = None) -> list[dict]:
    """Group hosts into IMEX domains by fabric clique and check what the domain is judged by over all its members.

    ``hosts`` maps a host name to ``{'facts': gpufabric facts, 'address': IMEX address or None, 'why': why no
    address}``.  The expected nodes file of a domain is :func:`...imex_domains.nodes_file` of its members'
    addresses (the file the ``nvidia_imex`` role writes); every member whose file differs from it is named
    with what its file lacks, lists beyond it, or orders differently. With ``expected_members``, a domain with
    fewer members is a warning (a tray of the rack is not in this run) and one with more a failure (one clique
    cannot span more hosts than one NVLink domain holds).  The members must run one driver and one nvidia-imex version
    (:func:`.nvlink_domain.version_problems`), and members in more than one chassis are a note, or a problem with
    ``single_chassis`` (:func:`.nvlink_domain.chassis_problems`).  ``racks`` lists the members by rack and slot where
    their platform info gives them (``chassis_serial`` None: the trays without).  Hosts that may be members but sit
    in no domain (``unknown``: without facts; a host whose GPUs name several cliques) are a note naming them
    (:func:`.nvlink_domain.undecided_members`), and the domain is not judged from the others alone: no expected nodes
    file, the members' files checked for gaps only.  A domain with members recorded but missing (``missing``, per
    clique: :func:`.fleet_facts.outside_members`) is refused: a problem naming them, no expected nodes file.

    ``status`` here is the domain's own verdict; :func:`preflight_report` makes it the worst of this and its members'
    host verdicts.
    """
    host_cliques = {name: [str(clique) for clique in _list(_map(_map(entry.get("facts")).get("gpu")).get("cliques"))]
                    for name, entry in hosts.items()}
    by_clique = group_by_clique(host_cliques)
    owners_of = {entry["address"]: name for name, entry in hosts.items() if entry.get("address")}
    places_of = {name: tray_place(_map(entry.get("facts"))) for name, entry in hosts.items()}
    domains = []
    for clique, members in by_clique.items():
        undecided = undecided_members(clique, host_cliques, unknown)
        absent = list((missing or {}).get(clique) or [])
        addresses = {name: hosts[name].get("address") for name in members}
        problems: list[str] = []
        if absent:
            problems.append(f"not judged: {missing_text({clique: absent})}, recorded as members by the run that judged "
                            "the whole domain (gpufabric_imex_membership) and neither in this run's inventory (a job "
                            "slice holds part of it) nor in the fact cache: a domain is judged from all of its members "
                            "or not at all")
        notes: list[str] = []
        owners: dict[str, list[str]] = {}
        for name, address in addresses.items():
            if address:
                owners.setdefault(address, []).append(name)
        for address, names in sorted(owners.items()):
            if len(names) > 1:
                problems.append(f"hosts {' and '.join(names)} have the same IMEX address {address}; "
                                "every member needs its own")
        no_address = sorted(name for name, address in addresses.items() if not address)
        unsure = bool(no_address or undecided or absent)  # a member unknown: an entry cannot be told from a stale one
        expected = nodes_file(address for address in addresses.values() if address)
        expected_set = set(expected)
        differences: dict[str, list[str]] = {}
        for name in members:
            imex = _map(_map(hosts[name].get("facts")).get("imex"))
            nodes = imex.get("nodes")
            if not imex.get("installed") or not isinstance(nodes, Mapping):
                continue
            found = [str(address) for address in _list(nodes.get("addresses"))]
            listed = set(found)
            lacks = [address for address in expected if address not in listed]
            # With a member's address unknown, its entry cannot be told from a stale one: only gaps are sure.
            extra = [] if unsure else sorted(listed - expected_set, key=_entry_key)
            parts = []
            if lacks:
                parts.append(f"lacks {_shown(lacks)}")
            if extra:
                unowned = [entry for entry in extra if entry not in owners_of]
                owned = [entry for entry in extra if entry in owners_of]
                if owned:
                    parts.append(f"lists {named_entries(owned, owners_of, places_of)} (not of this clique)")
                if unowned:
                    parts.append(f"lists {_shown(unowned)} (no member of this run)")
            if not parts and not unsure and found != expected:  # the same addresses, written otherwise
                parts.append("lists the addresses in another order" if len(found) == len(expected)
                             else "lists an address more than once")
            if parts:
                differences.setdefault("; ".join(parts), []).append(name)
        for difference, names in sorted(differences.items(), key=lambda item: item[1]):
            problems.append(f"nodes file of {', '.join(names)} differs from the expected one "
                            f"({len(expected)} member address(es), sorted, as nvidia_imex writes it): {difference}")
        if no_address:
            notes.append(f"no IMEX address known for {', '.join(no_address)} (set gpufabric_imex_address): "
                         + "; ".join(hosts[name].get("why") or "" for name in no_address))
        if undecided:
            notes.append(undecided_note(undecided, {name: tray_place(_map(hosts[name].get("facts")))
                                                    for name in undecided if name in hosts}))
        member_facts = {name: _map(hosts[name].get("facts")) for name in members}
        places = {name: tray_place(facts) for name, facts in member_facts.items()}
        for found_problems, found_notes in (version_problems(member_facts), chassis_problems(places, single_chassis)):
            problems += found_problems
            notes += found_notes
        if expected_members is not None and len(members) > expected_members:
            problems.append(f"{len(members)} members, more than the {expected_members} of one IMEX domain "
                            "(settings.imex_domain_members): the hosts' clique IDs are wrong or repeated")
        short = expected_members is not None and len(members) < expected_members
        if short:
            notes.append(f"{len(members)} of {expected_members} expected members (settings.imex_domain_members): "
                         "the other trays of this domain are not in this run (not in the inventory, unreachable "
                         "or not probed)")
        status = "fail" if problems else ("warn" if notes else "pass")
        domains.append({"clique": clique, "members": members, "expected_members": expected_members,
                        "addresses": addresses, "status": status, "racks": _racks(places),
                        "expected_nodes": expected if not unsure else None,
                        "stale": sorted(name for names in differences.values() for name in names),
                        "problems": problems, "notes": notes})
    return domains


def _racks(places: Mapping[str, dict | None]) -> list[dict]:
    """The members by rack, then slot: ``[{'chassis_serial', 'trays': [{'host', 'slot_number', 'tray_index'}]}]``; the
    trays without platform info last, under ``chassis_serial`` None."""
    racks: dict[str | None, list[dict]] = {}
    for name in sorted(places, key=lambda name: place_key(places[name], name)):
        place = places[name] or {}
        racks.setdefault(place.get("chassis_serial"), []).append(
            {"host": name, "slot_number": place.get("slot_number"), "tray_index": place.get("tray_index")})
    return [{"chassis_serial": serial, "trays": trays} for serial, trays in racks.items()]


def judge_domain_members(domain: dict, report_hosts: Mapping[str, Mapping]) -> None:
    """Make a domain's ``status`` the worst of its own verdict (kept as ``own_status``) and its members' host verdicts,
    and name every member that does not pass in ``member_problems`` (host, place, its failed or warned checks).

    A member's verdict here is that of its own checks: its ``imex_domain`` check repeats the domain's own verdict,
    which ``own_status`` holds.  A domain is never headed PASS while a member fails: the operator reads the rack's
    verdict first.
    """
    own = domain["status"]
    lines = []
    statuses = [own]
    for name in sorted(domain["members"], key=lambda name: place_key(report_hosts[name].get("platform"), name)):
        entry = report_hosts[name]
        checks = [check for check in entry.get("checks", []) if check["name"] != "imex_domain"]
        status = _worst(check["status"] for check in checks)
        if status not in ("fail", "warn"):
            continue
        statuses.append(status)
        place = entry.get("place")
        what = "failed" if status == "fail" else "warnings"
        names = ", ".join(check["name"] for check in checks if check["status"] == status)
        lines.append(f"{name}{f' ({place})' if place else ''}: {what}: {names}")
    domain["own_status"] = own
    domain["status"] = _worst(statuses)
    domain["member_problems"] = lines


def _count(payload: Mapping) -> int:
    count = payload.get("count")
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def _settings(settings: t.Any, min_driver_version: t.Any = None) -> dict:
    """The rule settings over their defaults, each checked (:func:`.preflight_rules.read_rules`).

    The defaults are the suboptions' of ``gpufabric_preflight_settings`` (its argument spec); ``min_driver_version``
    is the minimum where ``settings`` sets none (null), else the default of ``gpufabric_min_driver_version``.
    """
    defaults = site_settings.suboption_defaults(site_settings.SITE_ROLE, RULES_SETTING)
    minimum = site_default(MINIMUM_DRIVER_SETTING) if min_driver_version is None else min_driver_version
    try:
        return read_rules(settings, defaults, minimum)
    except RuleError as exc:
        raise PreflightError(str(exc)) from None


def preflight_report(hostvars: Mapping, hosts: list[str], settings: Mapping | None = None,
                     min_driver_version: t.Any = None, unknown_members: t.Sequence[str] = (),
                     today: datetime.date | None = None, outside: t.Any = None) -> dict:
    """Build the readiness report for ``hosts`` from their hostvars.

    Reads ``ansible_facts['gpufabric']`` and the IMEX address of each host, decided by
    :func:`.imex_address.imex_address` over ``gpufabric_imex_address``, ``gpufabric_imex_interface`` and
    ``gpufabric_imex_address_family`` (the rule the ``nvidia_imex`` role writes the nodes file by), and its rails by
    the rail rule over its ``rdma_network_*`` variables (:func:`.rail_selection.host_rails`, the rule the
    ``rdma_network`` role plans by): only they are judged by the ``rdma_ports`` check.
    ``settings`` are the rules (``gpufabric_preflight_settings``), ``min_driver_version`` the site's minimum driver
    (``gpufabric_min_driver_version``) where they name none.  ``unknown_members`` are hosts outside ``hosts`` that
    may be members of their IMEX domains but have no facts (``imex_domain_peers``' ``unknown``): with the hosts of
    ``hosts`` without facts, every domain names them and is not judged from its other members alone.  ``today`` is
    the day the drivers' lifecycle is judged on (default: the controller's date).  ``outside``
    (:func:`.fleet_facts.outside_members`) holds the recorded members outside the inventory (a job slice's peers),
    read as hostvars, and those missing: their domains are refused by name.
    """
    merged = _settings(settings, min_driver_version)
    if not isinstance(hostvars, Mapping):
        raise PreflightError(f"the input must be hostvars (a mapping), got {type(hostvars).__name__}")
    try:
        hostvars, _fleet, missing = with_outside(hostvars, None, outside)
    except ImexDomainError as exc:
        raise PreflightError(str(exc)) from None
    try:
        hosts = [arguments.text("hosts entry", name) for name in arguments.sequence("hosts", hosts)]
        unknown = [arguments.text("unknown_members entry", name)
                   for name in arguments.sequence("unknown_members", unknown_members)]
    except arguments.ArgumentError as exc:
        raise PreflightError(str(exc)) from None
    collected = {}
    report_hosts = {}
    for name in hosts:
        host_vars = _map(hostvars.get(name))
        facts = _facts_of(host_vars)
        if facts is None:
            report_hosts[name] = {"status": "fail", "summary": "no gpufabric facts (host unreachable or probe failed)",
                                  "checks": [_check("probe", "fail", "no gpufabric facts were gathered "
                                                                     "(unreachable, or the probe failed)")]}
            continue
        address, why = site_imex_address(name, host_vars)
        collected[name] = {"facts": facts, "address": address, "why": why}
        gpu = _map(facts.get("gpu"))
        connectx = _map(facts.get("connectx"))
        imex = _map(facts.get("imex"))
        peermem = _map(facts.get("peermem"))
        checks = [
            check_probe(facts),
            check_driver(gpu, merged),
            check_driver_lifecycle(gpu, host_vars, today),
            check_fabric(gpu),
            check_fabric_health(gpu),
            check_fabric_manager(name, gpu, host_vars),
            check_imex_host(gpu, imex, *site_imex_mode(host_vars), host=name),
            check_rdma_ports(connectx, merged, *rail_selection.host_rails(
                name, host_vars, [_map(port) for port in _list(connectx.get("ports"))])),
            check_gpudirect(gpu, connectx, peermem),
            check_numa_alignment(gpu, connectx),
            check_port_counters(name, connectx, merged),
            check_gpu_health(name, gpu, merged),
        ]
        platform = tray_place(facts)
        report_hosts[name] = {
            "gpus": _count(gpu),
            "gpu_models": sorted({str(_map(item).get("name") or _map(item).get("device_id") or "unknown")
                                  for item in _list(gpu.get("gpus"))}),
            "driver_version": gpu.get("driver_version"),
            "cliques": [str(clique) for clique in _list(gpu.get("cliques"))],
            "connectx_ports": _count(connectx),
            "imex_address": collected[name]["address"],
            "platform": platform,
            "place": place_text(platform),
            "checks": checks,
        }
    unknown += [name for name in hosts if name not in collected]
    domains = imex_domains(collected, merged["imex_domain_members"], merged["imex_domain_single_chassis"], unknown,
                           missing)
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
        probe_failed = any(check["name"] == "probe" and check["status"] == "fail" for check in entry["checks"])
        if not entry["gpus"] and not entry["connectx_ports"] and not probe_failed:
            entry["status"] = "no_hardware"
            entry["summary"] = "no NVIDIA GPU or ConnectX port found; nothing to prepare on this host"
            continue
        entry["status"] = _worst(check["status"] for check in entry["checks"])
        failed = [check["name"] for check in entry["checks"] if check["status"] == "fail"]
        warned = [check["name"] for check in entry["checks"] if check["status"] == "warn"]
        entry["summary"] = ("failed: " + ", ".join(failed)) if failed else \
            (("warnings: " + ", ".join(warned)) if warned else "ready")
    for domain in domains:
        judge_domain_members(domain, report_hosts)
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
