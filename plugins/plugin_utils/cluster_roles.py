# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared helpers of the cluster-role filters (``gpu_operator``, ``network_operator``, ``dra_driver``).

Pure functions over hostvars-like mappings and plain data. Errors are :class:`ClusterRoleError` with a
message that names the host and the variable to change.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# Where NVIDIA's charts take their images from; an image registry override replaces this prefix.
NVIDIA_REGISTRY = "nvcr.io/nvidia"


class ClusterRoleError(ValueError):
    """Input from which no decision can be made; the message names the host and the variable."""


def host_facts(hostvars: Mapping, hosts: t.Sequence[str], variable: str) -> dict[str, dict]:
    """Return ``{host: ansible_facts['gpufabric']}`` for ``hosts``; raise naming the hosts without facts."""
    if not isinstance(hostvars, Mapping):
        raise ClusterRoleError(f"_input must be hostvars (a mapping of hosts), got {type(hostvars).__name__}")
    if isinstance(hosts, str) or not isinstance(hosts, (list, tuple)):
        raise ClusterRoleError(f"{variable} must be a list of inventory host names, got {type(hosts).__name__}")
    found: dict[str, dict] = {}
    missing: list[str] = []
    for host in hosts:
        host_vars = hostvars.get(host) if isinstance(host, str) else None
        ansible_facts = host_vars.get("ansible_facts") if isinstance(host_vars, Mapping) else None
        facts = ansible_facts.get("gpufabric") if isinstance(ansible_facts, Mapping) else None
        if not isinstance(facts, Mapping):
            missing.append(str(host))
        else:
            found[str(host)] = dict(facts)
    if missing:
        raise ClusterRoleError(
            f"no ansible_facts['gpufabric'] for {', '.join(missing)} (hosts of {variable}): gather them first with "
            "gpufabric.cluster.fabric_facts in the same run or from a fact cache"
        )
    return found


def registry_repository(default: str, registry: str) -> str:
    """``default`` (an ``nvcr.io/nvidia...`` repository) moved to ``registry``; unchanged without one."""
    registry = (registry or "").rstrip("/")
    if not registry:
        return default
    if default == NVIDIA_REGISTRY or default.startswith(NVIDIA_REGISTRY + "/"):
        return registry + default[len(NVIDIA_REGISTRY):]
    return registry


def secret_names(value: t.Any, variable: str) -> list[str]:
    """A list of Secret names from ``value`` (names or ``{name: ...}``); raise naming ``variable``."""
    if value in (None, ""):
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ClusterRoleError(f"{variable} must be a list of Secret names, got {value!r}")
    names = []
    for item in value:
        name = item.get("name") if isinstance(item, Mapping) else item
        if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", name):
            raise ClusterRoleError(f"{variable}: {item!r} is not a Secret name")
        if name not in names:
            names.append(name)
    return names


def chosen_settings(
    settings: Mapping | None, defaults: Mapping[str, t.Any], choices: Mapping[str, t.Sequence], prefix: str,
    keep_none: bool = False,
) -> dict:
    """``defaults`` updated with the non-null ``settings``; unknown keys and values outside ``choices`` refused.

    ``prefix`` turns a key into the role variable it comes from (``gpu_operator_`` + ``driver``); with
    ``keep_none`` a null setting replaces its default too. A setting whose default is a boolean goes through
    Ansible's boolean conversion (``"false"``, ``"no"``, ``0`` are false; anything else not a boolean is
    refused); a setting whose default is a string must be a string (a number is taken as its text; a boolean, a
    list or a mapping is refused).
    """
    if settings is not None and not isinstance(settings, Mapping):
        raise ClusterRoleError(f"settings must be a mapping of {prefix}* settings, got {type(settings).__name__}")
    chosen = dict(defaults)
    unknown = sorted(str(key) for key in set(settings or {}) - set(defaults))
    if unknown:
        raise ClusterRoleError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(defaults)}")
    chosen.update({key: value for key, value in (settings or {}).items() if keep_none or value is not None})
    for key, default in defaults.items():
        if chosen[key] is None or chosen[key] is default:
            continue
        if isinstance(default, bool):
            try:
                chosen[key] = arguments.boolean(f"{prefix}{key}", chosen[key])
            except arguments.ArgumentError as exc:
                raise ClusterRoleError(str(exc)) from None
        elif isinstance(default, str):
            # a number is taken as its text (a version, a port in a path); a boolean or a collection is refused, so
            # `image_registry: true` is named instead of failing deep inside with "'bool' object has no attribute"
            if isinstance(chosen[key], bool) or not isinstance(chosen[key], (str, int, float)):
                raise ClusterRoleError(f"{prefix}{key} must be a string, got {type(chosen[key]).__name__}")
            chosen[key] = str(chosen[key])
    for key, allowed in choices.items():
        if chosen[key] not in allowed:
            raise ClusterRoleError(f"{prefix}{key} must be one of {', '.join(allowed)}, got {chosen[key]!r}")
    return chosen
