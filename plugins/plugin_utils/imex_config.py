# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the inputs of the ``nvidia_imex`` role that end up in ``config.cfg`` and the nvidia-imex unit.

``config.cfg`` is ``KEY=value`` lines that nvidia-imex reads at start-up: a value holding a newline would add
a line of its own (another setting), a value holding ``=`` is not one the daemon parses the same way, a key
it does not know is a typo that silently keeps the package default. The two paths of the role also go into a
systemd drop-in (``ExecStartPre``), where whitespace splits an argument and ``%`` starts a specifier. The
IMEX mode of the role must agree with the driver role's: the host service needs the IMEX channel 0 that
``nvidia_driver`` creates only in its ``host`` mode, and the DRA driver must own the channels in ``dra`` and
``dra_host_managed`` mode (in the latter the host service runs too, but only for the DRA driver's ComputeDomains,
which hand out channel 0 themselves).

:func:`imex_config_problems` returns every problem as one sentence naming the host and the variable, so the
role refuses bad input before any change with all of them at once.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import CONFIG_KEYS
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_socket import socket_path_problem

# The settings nvidia-imex knows: every key of the config.cfg the nvidia-imex package installs
# (/etc/nvidia-imex/config.cfg), in its order, written once in module_utils/imex.py (CONFIG_SETTINGS, where the
# probe checks each value it reports). Source: the IMEX daemon configuration template of NVIDIA's
# k8s-dra-driver-gpu ("NVIDIA IMEX configuration file", the package's config.cfg with each key documented),
# kept as reference/imex/config.cfg.template-from-k8s-dra-driver-gpu beside this project; the same keys as the
# role's __nvidia_imex_config_defaults (roles/nvidia_imex/vars/main.yml).
KNOWN_KEYS: tuple[str, ...] = CONFIG_KEYS
# Settings whose value is a path on the host (the key, certificate and authority settings are paths when
# IMEX_AUTH_SOURCE is FILE, environment variable names otherwise: neither holds whitespace or %).
PATH_KEYS = frozenset({
    "LOG_FILE_NAME", "STATS_FILE_NAME", "IMEX_CMD_UNIX_DOMAIN_PATH", "IMEX_SERVER_KEY", "IMEX_SERVER_CERT",
    "IMEX_SERVER_CERT_AUTH", "IMEX_CLIENT_KEY", "IMEX_CLIENT_CERT", "IMEX_CLIENT_CERT_AUTH",
})
# The role writes IMEX_NODE_CONFIG_FILE from nvidia_imex_nodes_config_file; a second source would be ignored.
ROLE_KEYS = {"IMEX_NODE_CONFIG_FILE": "nvidia_imex_nodes_config_file"}
# The shape of a config.cfg key (what an unknown key allowed by allow_unknown must still look like).
KEY_PATTERN = re.compile(r"[A-Z][A-Z0-9_]*\Z")
# Who runs IMEX: the choices of the site setting gpufabric_imex_mode, read from its argument spec (the one place they
# are written; the role specs of nvidia_imex_mode, nvidia_driver_imex_mode and dra_driver_imex_mode are tested to
# agree). The driver role's mode also takes none (no IMEX channel of its own).
MODES: tuple[str, ...] = settings.choices(settings.SITE_ROLE, "gpufabric_imex_mode")
DRIVER_MODES: tuple[str, ...] = ("none", *MODES)
_UNSAFE_PATH = re.compile(r"[\s%]")
# A newline, or any character that a reader of lines may take for one (control characters, NEL, LS, PS).
_LINE_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class ImexConfigError(ValueError):
    """An argument of :func:`imex_config_problems` that is not the role's input (a caller's mistake)."""


_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _shown(value: t.Any) -> str:
    """``value`` for a message: short, one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _value_problem(key: str, value: t.Any) -> str | None:
    """What is wrong with the value of one setting, or ``None``."""
    if isinstance(value, bool):
        return f"is a boolean ({value}), which would be written as {value}; write 1 or 0"
    if value is None:
        return 'is null, which would be written as None; write "" for an empty setting'
    if not isinstance(value, (str, int, float)):
        return f"must be a string or a number, got {type(value).__name__}"
    text = str(value)
    if _LINE_BREAK.search(text):
        return "holds a newline or another control character, which would start another line of config.cfg"
    if "=" in text:
        return "holds '=', which config.cfg cannot carry in a value"
    if key in PATH_KEYS and _UNSAFE_PATH.search(text):
        return f"{_shown(text)} is a path holding whitespace or '%'"
    return None


def path_problem(variable: str, value: t.Any) -> str | None:
    """What is wrong with a path variable of the role that goes into config.cfg and the unit, or ``None``."""
    if not isinstance(value, str) or not value:
        return f"{variable} must be a non-empty path, got {_shown(value)}"
    if _UNSAFE_PATH.search(value):
        return (f"{variable} {_shown(value)} holds whitespace or '%', which the nvidia-imex unit's drop-in and "
                f"config.cfg cannot carry")
    if not value.startswith("/"):
        return f"{variable} {_shown(value)} must be an absolute path"
    return None


def config_problems(config: t.Any, allow_unknown: bool = False) -> list[str]:
    """The problems of ``nvidia_imex_config`` (without the host), in key order."""
    if not isinstance(config, Mapping):
        return [f"nvidia_imex_config must be a mapping of config.cfg settings, got {type(config).__name__}"]
    problems = []
    for key in sorted(config, key=str):
        value = config[key]
        if not isinstance(key, str) or not KEY_PATTERN.match(key):
            problems.append(f"nvidia_imex_config key {_shown(key)} is not a config.cfg key (upper case letters, "
                            f"digits and _)")
            continue
        if key in ROLE_KEYS:
            problems.append(f"nvidia_imex_config sets {key}, which the role writes from {ROLE_KEYS[key]}; "
                            f"set {ROLE_KEYS[key]} instead")
            continue
        if key not in KNOWN_KEYS and not allow_unknown:
            problems.append(f"nvidia_imex_config key {key} is not a setting nvidia-imex knows (a typo keeps the "
                            f"package default); set nvidia_imex_config_allow_unknown: true to write it anyway")
            continue
        problem = _value_problem(key, value)
        if problem:
            problems.append(f"nvidia_imex_config {key} {problem}")
    return problems


def _either(values: t.Sequence[str]) -> str:
    """``a, b or c``."""
    return f"{', '.join(values[:-1])} or {values[-1]}" if len(values) > 1 else "".join(values)


def mode_problems(mode: t.Any, driver_mode: t.Any = None) -> list[str]:
    """The problems of ``nvidia_imex_mode`` against ``nvidia_driver_imex_mode`` (``None``: not set)."""
    if mode not in MODES:
        return [f"nvidia_imex_mode must be {_either(MODES)}, got {_shown(mode)}"]
    if driver_mode is None:
        return []
    if driver_mode not in DRIVER_MODES:
        return [f"nvidia_driver_imex_mode must be {_either(DRIVER_MODES)}, got {_shown(driver_mode)}"]
    if (mode == "host") == (driver_mode == "host"):
        return []
    reason = ("the host IMEX service needs the IMEX channel 0 that nvidia_driver creates only in host mode"
              if mode == "host" else
              "nvidia_driver creates the host IMEX channel 0 in host mode, which the DRA driver must own")
    return [f"nvidia_imex_mode is {mode} but nvidia_driver_imex_mode is {driver_mode}; {reason}; "
            f"set both to the same mode (or only gpufabric_imex_mode)"]


def imex_config_problems(host: str, config: t.Any, allow_unknown: bool = False, *,
                         paths: Mapping[str, t.Any] | None = None, mode: t.Any = "host",
                         driver_mode: t.Any = None, socket_path: t.Any = None) -> list[str]:
    """Every problem of the role's input for ``host``, each one sentence starting ``host <host>: ``.

    ``paths`` maps the role's path variables (``nvidia_imex_config_file``, ...) to their values; ``mode`` and
    ``driver_mode`` are ``nvidia_imex_mode`` and ``nvidia_driver_imex_mode`` (``None`` when that is not set for
    the host); ``socket_path`` is ``nvidia_imex_socket_path``, checked by :func:`.imex_socket.socket_path_problem`
    in ``dra_host_managed`` mode (``None``: not checked). An empty list means the input may be written.
    """
    if not isinstance(host, str) or not host:
        raise ImexConfigError(f"host must be the inventory host name, got {_shown(host)}")
    if paths is not None and not isinstance(paths, Mapping):
        raise ImexConfigError(f"paths must be a mapping of variable names to paths, got {type(paths).__name__}")
    problems = mode_problems(mode, driver_mode)
    for variable in sorted(paths or {}, key=str):
        if not isinstance(variable, str) or not _VARIABLE_NAME.fullmatch(variable):
            raise ImexConfigError(f"paths must map variable names to paths, got the key {_shown(variable)}")
        problem = path_problem(variable, (paths or {})[variable])
        if problem:
            problems.append(problem)
    socket_problem = socket_path_problem("nvidia_imex_socket_path", socket_path) \
        if mode == "dra_host_managed" and socket_path is not None else None
    if socket_problem:
        problems.append(socket_problem)
    problems.extend(config_problems(config, allow_unknown))
    return [f"host {host}: {problem}" for problem in problems]
