# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA IMEX on one host: package, systemd service, config.cfg, nodes file, channels and domain state.

The parsers (:func:`parse_imex_config`, :func:`validate_nodes_file`,
:func:`parse_imex_ctl_json`, :func:`parse_imex_ctl_text`, ...) are pure
functions over text; :func:`collect_imex` reads a host below ``root`` and
returns the ``imex_info`` module's payload.

No text of ``config.cfg``, the nodes file or the dpkg status file reaches the payload: a setting is reported
only when its value has the shape nvidia-imex documents for it (:data:`CONFIG_SETTINGS`), a nodes file entry
only as a canonical IP address, a package version only as a version string
(:func:`.host_values.is_version`); anything else is named by path, key and line number.  Both IMEX files are
read up to :data:`.host_files.IMEX_FILE_LIMIT`, the dpkg status file up to
:data:`.host_files.PACKAGE_STATUS_LIMIT`.
"""

from __future__ import annotations

import json
import re
import typing as t
from collections import Counter

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import (
    CommandError,
    CommandTimeout,
    ParseError,
    ProbeRootError,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import (
    Runner,
    find_command,
    run_found,
    run_tool,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import (
    IMEX_FILE_LIMIT,
    PACKAGE_STATUS_LIMIT,
    PROC_TABLE_LIMIT,
    check_root,
    exists,
    link_target,
    list_dir,
    outside,
    problem,
    read_lines,
    read_text,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import (
    SAFE_PATH_CHARACTERS,
    canonical_ip,
    is_interface_name,
    is_version,
    path_problem,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key
from ansible_collections.gpufabric.cluster.plugins.module_utils.systemd_units import empty_state, read_unit

CONFIG_PATH = "/etc/nvidia-imex/config.cfg"
DEFAULT_NODES_PATH = "/etc/nvidia-imex/nodes_config.cfg"
NODES_CONFIG_KEY = "IMEX_NODE_CONFIG_FILE"
# The command service (nvidia-imex-ctl's server side) and its Unix domain socket, which the DRA driver's
# host-managed mode queries with `nvidia-imex-ctl -q --u=<socket path>`.
CMD_ENABLED_KEY = "IMEX_CMD_ENABLED"
CMD_SOCKET_KEY = "IMEX_CMD_UNIX_DOMAIN_PATH"
# The daemon states `nvidia-imex-ctl -q` prints, one word (DCGM's dcgm_fields.h, DCGM_FI_IMEX_DAEMON_STATUS);
# only READY lets the DRA driver hand out a channel.
DAEMON_STATES = ("INITIALIZING", "STARTING_AUTH_SERVER", "WAITING_FOR_PEERS", "WAITING_FOR_RECOVERY", "INIT_GPU",
                 "READY", "SHUTTING_DOWN", "UNAVAILABLE")
READY = "READY"
# The longest query answer kept in the payload (a daemon printing pages of text is not READY either).
QUERY_STATUS_LIMIT = 200
CHANNELS_DIR = "/dev/nvidia-caps-imex-channels"
CHANNELS_DEVICE = "nvidia-caps-imex-channels"
SERVICE_UNIT = "nvidia-imex.service"
DPKG_STATUS = "/var/lib/dpkg/status"
# Directories systemd loads units from, highest precedence first.
UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system")
# Only these can hold a mask (a link to /dev/null) or the enablement links of an admin.
MASK_DIRS = ("/etc/systemd/system", "/run/systemd/system")

DOMAIN_STATES = ("UP", "DOWN", "DEGRADED")
CONNECTION_STATES = ("CONNECTED", "NEVER_CONNECTED", "INVALID", "RECOVERING", "DISCONNECTED", "AUTHENTICATING",
                     "VERSION_MISMATCH", "NODE_MAP_MISMATCH")
# The one-letter cells of the `nvidia-imex-ctl -N` connectivity table (its legend).
CONNECTION_LETTERS = {
    "C": "CONNECTED",
    "N": "NEVER_CONNECTED",
    "I": "INVALID",
    "R": "RECOVERING",
    "D": "DISCONNECTED",
    "A": "AUTHENTICATING",
    "!V!": "VERSION_MISMATCH",
    "!M!": "NODE_MAP_MISMATCH",
}

_PACKAGE_RE = re.compile(r"nvidia-imex(?:-[0-9][A-Za-z0-9_.+~]*)?\Z")
_CONFIG_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_VERSION_RE = re.compile(r"\b(\d+\.\d+(?:\.\d+)*)\b", re.ASCII)
_TIMESTAMP_RE = re.compile(r"^\d+/\d+/\d+\s+\d+:\d+:\d+(?:\.\d+)?$")
_NODE_RE = re.compile(r"^Node\s+#(?P<index>\d+)\s+(?P<mark>[-*])\s+(?P<rest>.*)$")
_DOMAIN_RE = re.compile(r"^Domain State:\s*(?P<status>\S+)")
_MATRIX_MARK = "Nodes From\\To"


# --- config.cfg ------------------------------------------------------------------------------

_INTEGER_RE = re.compile(r"-?[0-9]{1,10}\Z")
_VARIABLE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}\Z")
_HOST_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}\Z")
_SERVICE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@/-]{0,254}\Z")


def _integer(value: str) -> str | None:
    return None if _INTEGER_RE.match(value) else "is not an integer"


def _ip_address(value: str) -> str | None:
    return None if canonical_ip(value) is not None else "is not an IP address"


def _path(value: str) -> str | None:
    return path_problem(value)


def _choice(*choices: str) -> t.Callable[[str], str | None]:
    def check(value: str) -> str | None:
        return None if value in choices else "is not one of " + ", ".join(choices)
    return check


def _interface(value: str) -> str | None:
    return None if is_interface_name(value) else "is not a network interface name"


def _path_or_variable(value: str) -> str | None:
    if _VARIABLE_RE.match(value) or path_problem(value) is None:
        return None
    return f"is neither an environment variable name nor an absolute path of {SAFE_PATH_CHARACTERS}"


def _host_name(value: str) -> str | None:
    return None if _HOST_NAME_RE.match(value) else "is not a host name"


def _service_name(value: str) -> str | None:
    return None if _SERVICE_NAME_RE.match(value) else "is not a service principal name (letters, digits, _.@/-)"


# Every setting nvidia-imex knows, in the order of the config.cfg the nvidia-imex package installs, with the
# check its value must pass to be reported (the values each key's comment in that file documents: NVIDIA's
# k8s-dra-driver-gpu keeps the file as its IMEX daemon configuration template, kept as
# reference/imex/config.cfg.template-from-k8s-dra-driver-gpu beside this project).  An empty value is reported
# as it is for every key (nvidia-imex's default).  The key, certificate and authority settings are paths when
# IMEX_AUTH_SOURCE is FILE, environment variable names otherwise.
CONFIG_SETTINGS: dict[str, t.Callable[[str], str | None]] = {
    "LOG_LEVEL": _integer,
    "LOG_FILE_NAME": _path,
    "STATS_FILE_NAME": _path,
    "LOG_APPEND_TO_LOG": _integer,
    "LOG_FILE_MAX_SIZE": _integer,
    "LOG_MAX_ROTATE_COUNT": _integer,
    "LOG_USE_SYSLOG": _integer,
    "DAEMONIZE": _integer,
    "BIND_INTERFACE_IP": _ip_address,
    "SERVER_PORT": _integer,
    "IMEX_NODE_CONFIG_FILE": _path,
    "NETWORK_INTERFACE": _interface,
    "IMEX_WAIT_FOR_QUORUM": _choice("NONE", "RECOVERY"),
    "IMEX_ENABLE_AUTH_ENCRYPTION": _integer,
    "IMEX_AUTH_ENCRYPTION_MODE": _choice("SSL_TLS", "GSS_AUTH_ENCRYPT", "GSS_AUTH_ONLY"),
    "IMEX_AUTH_SOURCE": _choice("FILE", "ENV_PATH", "ENV_VAL"),
    "IMEX_SERVER_KEY": _path_or_variable,
    "IMEX_SERVER_CERT": _path_or_variable,
    "IMEX_SERVER_CERT_AUTH": _path_or_variable,
    "IMEX_CLIENT_KEY": _path_or_variable,
    "IMEX_CLIENT_CERT": _path_or_variable,
    "IMEX_CLIENT_CERT_AUTH": _path_or_variable,
    "IMEX_SECURITY_TARGET_OVERRIDE": _host_name,
    "IMEX_GSS_SERVICE_NAME": _service_name,
    "IMEX_GSS_TIMEOUT_SEC": _integer,
    "IMEX_GSS_RETRY_INTERVAL_SEC": _integer,
    "IMEX_GSS_SEC_CONTEXT_LIFETIME_SEC": _integer,
    "IMEX_GSS_SHUTDOWN_ON_FAILURE": _integer,
    "IMEX_CMD_ENABLED": _integer,
    "IMEX_CMD_BIND_INTERFACE_IP": _ip_address,
    "IMEX_CMD_PORT": _integer,
    "IMEX_CMD_UNIX_DOMAIN_PATH": _path,
    "IMEX_NODE_DISCONNECTED_GRACE_TIME": _integer,
}
CONFIG_KEYS: tuple[str, ...] = tuple(CONFIG_SETTINGS)


def read_settings(lines: list[str]) -> tuple[dict[str, str], dict[str, int], list[int]]:
    """Split the lines of an IMEX ``config.cfg`` into ``(settings, line_of, bad_lines)``.

    ``settings``: the ``KEY=VALUE`` settings, keys and values trimmed (a later key wins, as IMEX reads it);
    ``line_of``: the line number (from 1) each setting was read from; ``bad_lines``: the numbers of the lines
    that are neither a setting, a comment (``#``) nor blank.
    """
    settings: dict[str, str] = {}
    line_of: dict[str, int] = {}
    bad_lines: list[int] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, separator, value = line.partition("=")
        key = key.strip()
        if not separator or not _CONFIG_KEY_RE.match(key):
            bad_lines.append(number)
            continue
        settings[key] = value.strip()
        line_of[key] = number
    return settings, line_of, bad_lines


def scan_imex_config(text: str) -> tuple[dict[str, str], list[tuple[int, str]]]:
    """Split an IMEX ``config.cfg`` into its ``KEY=VALUE`` settings and the lines that are neither.

    Comments (``#``) and blank lines are skipped.  Returns ``(settings, bad_lines)``
    where ``bad_lines`` holds ``(line_number, line)`` of every malformed line;
    the settings of the good lines are kept (a later key wins, as IMEX reads it).
    """
    lines = text.splitlines()
    settings, _line_of, bad_lines = read_settings(lines)
    return settings, [(number, lines[number - 1]) for number in bad_lines]


def describe_lines(numbers: list[int], limit: int = 5) -> str:
    """Name lines by number only (``line 3``, ``lines 3, 7``, ``lines 1, 2, 3, 4, 5, and 2 more``)."""
    shown = [("line " if len(numbers) == 1 else "lines ") + ", ".join(str(number) for number in numbers[:limit])]
    if len(numbers) > limit:
        shown.append(f"and {len(numbers) - limit} more")
    return ", ".join(shown)


def describe_bad_lines(bad_lines: list[tuple[int, str]], limit: int = 5) -> str:
    """Describe malformed lines for an error message by number only (``lines 3, 7``): never their text."""
    return describe_lines([number for number, _line in bad_lines], limit)


def report_settings(settings: t.Mapping[str, str], line_of: t.Mapping[str, int]) -> tuple[dict, list[str]]:
    """The settings ``imex_info`` reports, and an error for each value it does not report.

    Only the keys of :data:`CONFIG_SETTINGS` are reported (other keys are left out: a key is text of the file
    too); each with its value when the value is empty or passes its key's check, else with ``None`` and an
    error ``"<config.cfg>: line <n>: <KEY> <why>"`` that never quotes the value.
    """
    reported: dict[str, str | None] = {}
    errors: list[str] = []
    for key, check in CONFIG_SETTINGS.items():
        if key not in settings:
            continue
        value = settings[key]
        why = check(value) if value else None
        reported[key] = value if why is None else None
        if why is not None:
            errors.append(f"{CONFIG_PATH}: line {line_of.get(key, '?')}: {key} {why}")
    return reported, errors


def parse_imex_config(text: str) -> dict[str, str]:
    """Parse an IMEX ``config.cfg``; raise :class:`ParseError` naming the malformed lines.

    Use :func:`scan_imex_config` to keep the settings of a file that has bad lines.
    """
    settings, bad_lines = scan_imex_config(text)
    if bad_lines:
        raise ParseError(f"not KEY=VALUE: {describe_bad_lines(bad_lines)}")
    return settings


# --- nodes_config.cfg ------------------------------------------------------------------------

def validate_nodes_file(lines: list[str]) -> dict:
    """Validate the lines of an IMEX nodes file (one IP address per line, the same file on every node).

    Returns ``addresses`` (every IP entry in file order, stripped and in the
    canonical form of :mod:`ipaddress`, :func:`.host_values.canonical_ip`: an
    IPv6 scope only when it is an interface name), ``duplicates`` (addresses
    listed more than once, sorted), ``invalid`` (``{line}`` of each entry that
    is not an IP address: a host name, garbage; never its text),
    ``blank_or_comment`` (count) and ``valid``.
    """
    addresses: list[str] = []
    invalid: list[dict] = []
    blank_or_comment = 0
    for number, raw in enumerate(lines, start=1):
        entry = raw.strip()
        if not entry or entry.startswith("#"):
            blank_or_comment += 1
            continue
        address = canonical_ip(entry)
        if address is None:
            invalid.append({"line": number})
        else:
            addresses.append(address)
    counts = Counter(addresses)
    duplicates = sorted((address for address, count in counts.items() if count > 1), key=address_key)
    return {
        "addresses": addresses,
        "duplicates": duplicates,
        "invalid": invalid,
        "blank_or_comment": blank_or_comment,
        "valid": bool(addresses) and not duplicates and not invalid,
    }


def describe_nodes_problems(nodes: dict) -> str:
    """Say in one line why a validated nodes file is not valid."""
    problems = []
    if not nodes["addresses"]:
        problems.append("no IP addresses")
    if nodes["duplicates"]:
        problems.append("addresses listed more than once: " + ", ".join(nodes["duplicates"]))
    if nodes["invalid"]:
        entries = [str(item["line"]) for item in nodes["invalid"][:5]]
        if len(nodes["invalid"]) > 5:
            entries.append(f"and {len(nodes['invalid']) - 5} more")
        problems.append("entries that are not IP addresses on line" + ("s " if len(nodes["invalid"]) > 1 else " ")
                        + ", ".join(entries))
    return "; ".join(problems)


# --- nvidia-imex-ctl -N [-j] -----------------------------------------------------------------

def normalise_connection_status(value: t.Any) -> str | None:
    """Return a connection state in full words (``C`` and ``CONNECTED`` both give ``CONNECTED``)."""
    if value is None:
        return None
    text = str(value).strip()
    if text in CONNECTION_LETTERS:
        return CONNECTION_LETTERS[text]
    return re.sub(r"[\s-]+", "_", text.upper())


def _not_connected(connections: dict[str, dict[str, str | None]]) -> list[list[int]]:
    pairs = [[int(source), int(target)]
             for source, row in connections.items()
             for target, status in row.items()
             if status != "CONNECTED"]
    return sorted(pairs)


def _domain(status: t.Any, timestamp: t.Any, nodes: list[dict], connections: dict, source: str) -> dict:
    nodes = sorted(nodes, key=lambda node: node["index"])
    ordered = {str(source_index): dict(sorted(connections[str(source_index)].items(), key=lambda item: int(item[0])))
               for source_index in sorted(int(key) for key in connections)}
    return {
        "status": str(status).strip().upper() if status not in (None, "") else None,
        "timestamp": str(timestamp) if timestamp not in (None, "") else None,
        "nodes": nodes,
        "connections": ordered,
        "not_connected": _not_connected(ordered),
        "source": source,
    }


def _index(value: t.Any, what: str) -> int:
    try:
        index = int(str(value).strip())
    except ValueError:
        raise ParseError(f"{what} {value!r} is not a node index") from None
    if index < 0:
        raise ParseError(f"{what} {value!r} is not a node index")
    return index


def _optional_str(value: t.Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


def parse_imex_ctl_json(text: str) -> dict:
    """Parse ``nvidia-imex-ctl -N -j`` output into the domain shape shared with :func:`parse_imex_ctl_text`.

    The document is ``{"nodes": {"0": {"status", "host", "version", "connections":
    {"1": {"host", "status", "changed"}}}}, "timestamp", "status"}``.  Raises
    :class:`ParseError` when the text is not such a document.
    """
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"output is not JSON ({exc})") from None
    if not isinstance(document, dict) or ("nodes" not in document and "status" not in document):
        raise ParseError("JSON output has neither 'nodes' nor 'status'")
    raw_nodes = document.get("nodes")
    if raw_nodes is None:
        raw_nodes = {}
    if not isinstance(raw_nodes, dict):
        raise ParseError("'nodes' is not an object")
    nodes: list[dict] = []
    connections: dict[str, dict[str, str | None]] = {}
    for key, node in raw_nodes.items():
        index = _index(key, "node key")
        if not isinstance(node, dict):
            raise ParseError(f"node {key!r} is not an object")
        nodes.append({
            "index": index,
            "host": _optional_str(node.get("host")),
            "status": _optional_str(node.get("status")),
            "version": _optional_str(node.get("version")),
            "local": None,
        })
        raw_connections = node.get("connections")
        if raw_connections is None:
            raw_connections = {}
        if not isinstance(raw_connections, dict):
            raise ParseError(f"connections of node {key!r} are not an object")
        row: dict[str, str | None] = {}
        for peer, connection in raw_connections.items():
            status = connection.get("status") if isinstance(connection, dict) else connection
            row[str(_index(peer, f"peer of node {key!r}"))] = normalise_connection_status(status)
        connections[str(index)] = row
    return _domain(document.get("status"), document.get("timestamp"), nodes, connections, "json")


def _parse_node_line(match: re.Match) -> dict:
    parts = [part.strip() for part in re.split(r"\s+-\s+", match.group("rest").strip())]
    host = parts[0].split()[0] if parts and parts[0] else None
    status = parts[1] if len(parts) > 1 and not parts[1].startswith("Version:") else None
    version = None
    for part in parts[1:]:
        if part.startswith("Version:"):
            version = part[len("Version:"):].strip() or None
    return {
        "index": int(match.group("index")),
        "host": host,
        "status": status,
        "version": version,
        "local": match.group("mark") == "*",
    }


def parse_imex_ctl_text(text: str) -> dict:
    """Parse the text output of ``nvidia-imex-ctl -N`` into the same shape as :func:`parse_imex_ctl_json`.

    Reads the timestamp line, ``Node #N  [-*] HOST - STATUS - Version: V`` lines
    (``*`` marks the local node), the ``Nodes From\\To`` connectivity table and
    ``Domain State:``.  Elision lines (``...``) and ``...`` cells are skipped;
    lines starting with ``#`` are comments.  Raises :class:`ParseError` when there
    are neither node lines nor a domain state.
    """
    status = None
    timestamp = None
    nodes: list[dict] = []
    connections: dict[str, dict[str, str | None]] = {}
    columns: list[int | None] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if not line:
                columns = None  # a blank line ends the connectivity table
            continue
        if _MATRIX_MARK in line:
            header = line.split(_MATRIX_MARK, 1)[1].split()
            columns = [int(cell) if cell.isdigit() else None for cell in header]
            continue
        if columns is not None:
            cells = line.split()
            if cells[0].isdigit():
                row = connections.setdefault(str(int(cells[0])), {})
                for column, cell in zip(columns, cells[1:], strict=False):
                    if column is None or cell.strip(".") == "":
                        continue
                    row[str(column)] = normalise_connection_status(cell)
                continue
            if cells[0].strip(".") == "":
                continue  # an elided row
            columns = None
        node = _NODE_RE.match(line)
        if node:
            nodes.append(_parse_node_line(node))
            continue
        domain = _DOMAIN_RE.match(line)
        if domain:
            status = domain.group("status")
            continue
        if timestamp is None and _TIMESTAMP_RE.match(line):
            timestamp = line
    if not nodes and status is None:
        raise ParseError("no 'Node #' lines and no 'Domain State' line in the output")
    return _domain(status, timestamp, nodes, connections, "text")


# --- command service: IMEX_CMD_* and nvidia-imex-ctl -q -------------------------------------

def control_settings(config: t.Any) -> tuple[bool, str | None, list[str]]:
    """Read the command service settings of a parsed ``config.cfg``: ``(enabled, socket_path, warnings)``.

    ``enabled``: ``IMEX_CMD_ENABLED`` is ``1`` once surrounding whitespace is trimmed (``"1 "`` counts, as
    :func:`scan_imex_config` trims every value); ``0``, empty, absent and anything else (``true``, ``yes``,
    ``01``) is disabled, a value other than ``0``, ``1`` or empty with a warning that does not quote it.
    ``socket_path``: ``IMEX_CMD_UNIX_DOMAIN_PATH`` trimmed, inner spaces kept; ``None`` when absent or empty
    (whether it may be reported is :func:`read_control`'s check).  A ``config`` that is not a mapping (no file)
    reads as disabled with no socket path; a value that is not a string is ignored with a warning.
    """
    if not isinstance(config, t.Mapping):
        return False, None, []
    warnings: list[str] = []
    values: dict[str, str] = {}
    for key in (CMD_ENABLED_KEY, CMD_SOCKET_KEY):
        value = config.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            warnings.append(f"{CONFIG_PATH}: {key} is not text ({type(value).__name__}); ignored")
            continue
        values[key] = value.strip()
    enabled_value = values.get(CMD_ENABLED_KEY, "")
    if enabled_value not in ("", "0", "1"):
        warnings.append(f"{CONFIG_PATH}: {CMD_ENABLED_KEY} is neither 0 nor 1; read as disabled")
    return enabled_value == "1", values.get(CMD_SOCKET_KEY) or None, warnings


def parse_imex_ctl_query(text: t.Any) -> str:
    """Return what ``nvidia-imex-ctl -q`` printed: the daemon state, trimmed (``READY``, ``WAITING_FOR_PEERS``...).

    The text is kept verbatim apart from the surrounding whitespace, cut to :data:`QUERY_STATUS_LIMIT`
    characters (``...`` appended).  Raises :class:`ParseError` when ``text`` is not a string or holds nothing
    but whitespace.  Whether the answer means ready is :func:`is_ready`.
    """
    if not isinstance(text, str):
        raise ParseError(f"output is not text ({type(text).__name__})")
    status = text.strip()
    if not status:
        raise ParseError("no output")
    if len(status) > QUERY_STATUS_LIMIT:
        status = status[:QUERY_STATUS_LIMIT] + "..."
    return status


def is_ready(status: t.Any) -> bool:
    """Whether a query answer is ``READY``: exactly that word (the comparison the DRA driver makes)."""
    return status == READY


def empty_control() -> dict:
    """The ``control`` payload of a host whose config.cfg could not be read."""
    return {"enabled": False, "socket_path": None, "ready": None, "status": None,
            "reason": f"no {CONFIG_PATH}"}


def _query_reason(enabled: bool, socket_path: str | None, active: t.Any, tool: bool) -> str | None:
    """Why the daemon is not asked; ``None`` when it is."""
    if not enabled:
        return f"the command service is off ({CMD_ENABLED_KEY} is not 1)"
    if socket_path is None:
        return f"no control socket ({CMD_SOCKET_KEY} is not set)"
    why = path_problem(socket_path)
    if why is not None:
        return f"{CMD_SOCKET_KEY} {why}"
    if not tool:
        return "nvidia-imex-ctl not found"
    if active is None:
        return "whether nvidia-imex.service runs is unknown (no systemctl)"
    if not active:
        return "nvidia-imex.service is not active"
    return None


def read_control(root: str, runner: Runner, config: t.Any, active: t.Any, errors: list[str],
                 warnings: list[str]) -> dict:
    """The ``control`` payload: the command service settings and, when asked, the daemon's answer.

    Asks ``nvidia-imex-ctl -q --u=<socket path>`` only when the command service is enabled with a socket path
    that is an absolute path of safe characters (:func:`.host_values.path_problem`), the tool exists below
    ``root`` and the service is active; otherwise ``ready`` is ``None`` and ``reason`` says why.  A socket path
    of another shape is not reported (``socket_path`` is ``None``) and never quoted.  ``ready`` is ``True`` only
    when the query exits 0 and prints ``READY``; a query that fails or prints another state gives ``False`` with
    the reason.  A query that does not finish in time is also named in ``errors``.
    """
    if not isinstance(config, t.Mapping):
        return empty_control()
    enabled, socket_path, found = control_settings(config)
    warnings.extend(found)
    shown = socket_path if socket_path is not None and path_problem(socket_path) is None else None
    control: dict = {"enabled": enabled, "socket_path": shown, "ready": None, "status": None, "reason": None}
    reason = _query_reason(enabled, socket_path, active, find_command(root, "nvidia-imex-ctl") is not None)
    if reason is not None:
        control["reason"] = reason
        return control
    argv = ["nvidia-imex-ctl", "-q", f"--u={socket_path}"]
    try:
        rc, out, err = run_found(runner, root, argv)
    except CommandTimeout as exc:
        errors.append(str(exc))
        control.update(ready=False, reason=f"the daemon did not answer on {socket_path} ({exc})")
        return control
    except CommandError as exc:
        control.update(ready=False, reason=f"nvidia-imex-ctl -q could not ask the daemon ({exc})")
        return control
    try:
        control["status"] = parse_imex_ctl_query(out)
    except ParseError:
        control["status"] = None
    if rc != 0:
        detail = (err or out or "").strip().splitlines()
        control.update(ready=False, reason=f"nvidia-imex-ctl -q on {socket_path} exited {rc}: "
                                           f"{detail[-1][:200] if detail else 'no output'}")
    elif control["status"] is None:
        control.update(ready=False, reason=f"nvidia-imex-ctl -q on {socket_path} printed nothing")
    else:
        control["ready"] = is_ready(control["status"])
        if not control["ready"]:
            control["reason"] = f"the daemon answered {control['status']!r}, not READY"
    return control


# --- package ---------------------------------------------------------------------------------

def _dpkg_stanzas(text: str) -> t.Iterator[dict[str, str]]:
    fields: dict[str, str] = {}
    last = None
    for line in text.splitlines():
        if not line.strip():
            if fields:
                yield fields
            fields, last = {}, None
            continue
        if line[0] in " \t":
            if last is not None:
                fields[last] += "\n" + line.strip()
            continue
        key, separator, value = line.partition(":")
        if separator:
            last = key.strip()
            fields[last] = value.strip()
    if fields:
        yield fields


def find_dpkg_packages(text: str) -> list[tuple[str, str | None]]:
    """Return ``(package, version)`` of the installed IMEX packages in a dpkg ``status`` file.

    Matches ``nvidia-imex`` and the branch-suffixed ``nvidia-imex-<branch>`` whose
    ``Status`` is ``install ok installed``.
    """
    found = []
    for stanza in _dpkg_stanzas(text):
        name = stanza.get("Package", "")
        if _PACKAGE_RE.match(name) and stanza.get("Status", "").split() == ["install", "ok", "installed"]:
            found.append((name, stanza.get("Version") or None))
    return found


def parse_rpm_query(text: str) -> list[tuple[str, str | None]]:
    """Return ``(package, version)`` from ``rpm -qa --qf '%{NAME}\\t%{VERSION}-%{RELEASE}\\n'`` output."""
    found = []
    for line in text.splitlines():
        name, _tab, version = line.strip().partition("\t")
        if _PACKAGE_RE.match(name.strip()):
            found.append((name.strip(), version.strip() or None))
    return found


def parse_imex_version(text: str) -> str | None:
    """Return the version printed by ``nvidia-imex --version`` (``IMEX version is: 570.172.08``)."""
    match = _VERSION_RE.search(text)
    return match.group(1) if match else None


def _checked_versions(found: list[tuple[str, str | None]], source: str,
                      errors: list[str]) -> list[tuple[str, str | None]]:
    """``found`` with each version that is not a version string replaced by ``None`` (an error naming it)."""
    checked = []
    for name, version in found:
        if version is not None and not is_version(version):
            errors.append(f"{source}: the version of package {name} is not a version string")
            version = None
        checked.append((name, version))
    return checked


def _read_installation(root: str, runner: Runner, errors: list[str], warnings: list[str]) -> dict:
    found: list[tuple[str, str | None]] = []
    status = read_text(root, DPKG_STATUS, limit=PACKAGE_STATUS_LIMIT)
    if status is not None:
        found = _checked_versions(find_dpkg_packages(status), DPKG_STATUS, errors)
    if not found and find_command(root, "rpm"):
        try:
            found = _checked_versions(parse_rpm_query(run_tool(runner, root, [
                "rpm", "-qa", "--qf", "%{NAME}\\t%{VERSION}-%{RELEASE}\\n", "nvidia-imex*"])), "rpm -qa", errors)
        except CommandError as exc:
            errors.append(str(exc))
    if found:
        if len(found) > 1:
            warnings.append("several IMEX packages are installed: " + ", ".join(name for name, _version in found))
        return {"installed": True, "package": found[0][0], "version": found[0][1]}
    if find_command(root, "nvidia-imex"):
        try:
            version = parse_imex_version(run_tool(runner, root, ["nvidia-imex", "--version"]))
        except CommandError as exc:
            errors.append(str(exc))
            version = None
        return {"installed": True, "package": None, "version": version}
    return {"installed": False, "package": None, "version": None}


# --- service ---------------------------------------------------------------------------------

def service_from_unit_files(root: str) -> dict:
    """Return the service state from the unit files alone (no systemctl below ``root``).

    Masked: ``nvidia-imex.service`` in /etc or /run is a link to ``/dev/null``
    (read with :func:`link_target`, never followed).  Enabled: a
    ``*.wants``/``*.requires`` link below /etc/systemd/system.  Whether it runs
    cannot be told from files: ``active`` is ``None``.
    """
    masked = any(link_target(root, f"{directory}/{SERVICE_UNIT}") == "/dev/null" for directory in MASK_DIRS)
    present = masked or any(exists(root, f"{directory}/{SERVICE_UNIT}") for directory in UNIT_DIRS)
    enabled = not masked and any(
        exists(root, f"{directory}/{entry}/{SERVICE_UNIT}")
        for directory in MASK_DIRS
        for entry in list_dir(root, directory)
        if entry.endswith((".wants", ".requires"))
    )
    if masked:
        unit_file_state = "masked"
    elif enabled:
        unit_file_state = "enabled"
    elif present:
        unit_file_state = "disabled"
    else:
        unit_file_state = None
    return {**empty_state(), "exists": present, "enabled": enabled, "masked": masked,
            "unit_file_state": unit_file_state}


def _read_service(root: str, runner: Runner, errors: list[str], warnings: list[str]) -> dict:
    """The state of ``nvidia-imex.service`` (:func:`.systemd_units.read_unit`), from the unit files without
    systemctl or when its answer cannot be used (:func:`service_from_unit_files`)."""
    try:
        state = read_unit(root, runner, SERVICE_UNIT)
    except CommandTimeout as exc:
        errors.append(f"{exc}; service state read from the unit files")
    except (CommandError, ParseError) as exc:
        warnings.append(f"{exc}; service state read from the unit files")
    else:
        if state is not None:
            return state
    return service_from_unit_files(root)


# --- domain and channels ---------------------------------------------------------------------

def _read_domain(root: str, runner: Runner, errors: list[str], warnings: list[str]) -> dict | None:
    try:
        return parse_imex_ctl_json(run_tool(runner, root, ["nvidia-imex-ctl", "-N", "-j"]))
    except CommandTimeout as exc:
        errors.append(str(exc))  # a hung daemon answers the text form no better
        return None
    except CommandError:
        pass  # older daemons have no -j: read the text form
    except ParseError as exc:
        warnings.append(f"nvidia-imex-ctl -N -j: {exc}; read the text output of nvidia-imex-ctl -N instead")
    try:
        return parse_imex_ctl_text(run_tool(runner, root, ["nvidia-imex-ctl", "-N"]))
    except CommandError as exc:
        errors.append(str(exc))
    except ParseError as exc:
        errors.append(f"nvidia-imex-ctl -N: {exc}")
    return None


def _read_channels(root: str) -> dict:
    devices = read_lines(root, "/proc/devices", limit=PROC_TABLE_LIMIT) or []
    supported = any(line.split()[1:] == [CHANNELS_DEVICE] for line in devices)
    return {"supported": supported, "devices": list_dir(root, CHANNELS_DIR)}


# --- collector -------------------------------------------------------------------------------

def empty_payload() -> dict:
    """The payload of a host where nothing could be read."""
    return {
        "installed": False,
        "package": None,
        "version": None,
        "service": empty_state(),
        "config_path": CONFIG_PATH,
        "config": None,
        "nodes": None,
        "channels": {"supported": False, "devices": []},
        "domain": None,
        "control": empty_control(),
        "errors": [],
        "warnings": [],
    }


def _read_config(root: str, installed: bool, errors: list[str],
                 warnings: list[str]) -> tuple[dict[str, str] | None, dict | None]:
    """``(settings, reported)``: every setting of config.cfg as read (for the collector only), and the settings
    the payload reports (:func:`report_settings`); ``(None, None)`` when the file cannot be read."""
    lines = read_lines(root, CONFIG_PATH, limit=IMEX_FILE_LIMIT)  # unstripped: line numbers match the file
    if lines is None:
        if exists(root, CONFIG_PATH) or outside(root, CONFIG_PATH):
            errors.append(f"{CONFIG_PATH}: {problem(root, CONFIG_PATH)}")
        elif installed:
            warnings.append(f"{CONFIG_PATH} does not exist although nvidia-imex is installed")
        return None, None
    settings, line_of, bad_lines = read_settings(lines)
    if bad_lines:
        errors.append(f"{CONFIG_PATH}: not KEY=VALUE: {describe_lines(bad_lines)}")
    reported, malformed = report_settings(settings, line_of)
    errors.extend(malformed)
    return settings, reported


def _read_nodes(root: str, path: str, expected: bool, errors: list[str], warnings: list[str]) -> dict | None:
    lines = read_lines(root, path, limit=IMEX_FILE_LIMIT)
    if lines is None:
        if exists(root, path) or outside(root, path):
            errors.append(f"{path}: {problem(root, path)}")
        elif expected:
            warnings.append(f"IMEX nodes file {path} does not exist")
        return None
    nodes = {"path": path, **validate_nodes_file(lines)}
    if not nodes["valid"]:
        warnings.append(f"IMEX nodes file {path} is not valid: {describe_nodes_problems(nodes)}")
    return nodes


def collect_imex(root: str, runner: Runner) -> dict:
    """Read IMEX below ``root``; return the ``imex_info`` payload (with ``errors`` and ``warnings``).

    ``runner`` has the signature of ``AnsibleModule.run_command``; tools are only
    run from below ``root``.  Nothing raises: problems become ``errors`` entries
    (unreadable or malformed input, failing tools) or ``warnings``.
    """
    payload = empty_payload()
    errors: list[str] = payload["errors"]
    warnings: list[str] = payload["warnings"]
    try:
        root = check_root(root)
    except ProbeRootError as exc:
        errors.append(str(exc))
        return payload
    payload.update(_read_installation(root, runner, errors, warnings))
    payload["service"] = _read_service(root, runner, errors, warnings)
    config, reported = _read_config(root, payload["installed"], errors, warnings)
    payload["config"] = reported
    expected = payload["installed"] or config is not None
    if reported is None or reported.get(NODES_CONFIG_KEY, "") is not None:  # None: not a path, named in errors
        nodes_path = (reported or {}).get(NODES_CONFIG_KEY) or DEFAULT_NODES_PATH
        payload["nodes"] = _read_nodes(root, nodes_path, expected, errors, warnings)
    payload["channels"] = _read_channels(root)
    if payload["service"]["active"]:
        payload["domain"] = _read_domain(root, runner, errors, warnings)
    payload["control"] = read_control(root, runner, config, payload["service"]["active"], errors, warnings)
    errors.extend(root.refusal_errors(errors))
    return payload
