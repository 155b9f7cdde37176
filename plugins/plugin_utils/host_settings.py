# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The values a set of hosts gives some variables, grouped: one check per distinct set of values, not per host.

Reads each host's variables once (``hostvars[host]`` builds all of a host's variables, the costly part), and
only the named ones.  A variable a host does not define is left out of its settings (the play's default applies).
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping


class HostSettingsError(ValueError):
    """Input from which the settings cannot be grouped; the message names the argument."""


def _names(value: t.Any, what: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise HostSettingsError(f"{what} must be a list of names, got {type(value).__name__}")
    names = []
    for item in value:
        if not isinstance(item, str) or not item:
            raise HostSettingsError(f"{what} must hold non-empty strings, got {item!r}")
        if item in names:
            raise HostSettingsError(f"{what} names {item!r} twice")
        names.append(item)
    return names


def host_settings(hostvars: Mapping, hosts: t.Sequence[str], names: t.Sequence[str]) -> list[dict]:
    """Group ``hosts`` by the values they define for ``names``.

    Returns ``[{'hosts': [...], 'settings': {name: value}}]``, one entry per distinct ``settings`` in the order
    their first host comes in ``hosts``, each listing its hosts in that order.  A host missing from ``hostvars``
    defines nothing.  Raises :class:`HostSettingsError` when ``hostvars`` is not a mapping or ``hosts`` /
    ``names`` are not lists of distinct non-empty strings.
    """
    if not isinstance(hostvars, Mapping):
        raise HostSettingsError(f"the input must be hostvars, got {type(hostvars).__name__}")
    host_names = _names(hosts, "hosts")
    wanted = _names(names, "names")
    groups: list[dict] = []
    for host in host_names:
        host_vars = hostvars.get(host) or {}
        if not isinstance(host_vars, Mapping):
            raise HostSettingsError(f"hostvars of {host} is not a mapping, got {type(host_vars).__name__}")
        settings = {name: host_vars[name] for name in wanted if name in host_vars}
        group = next((item for item in groups if item["settings"] == settings), None)
        if group is None:
            groups.append({"hosts": [host], "settings": settings})
        else:
            group["hosts"].append(host)
    return groups
