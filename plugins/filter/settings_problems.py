# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.settings_problems`` filter: every problem of the settings the hosts give, one line each.

A thin wrapper over :func:`...plugin_utils.settings.settings_problems`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, settings


@arguments.filter_errors("settings_problems")
def settings_problems(hostvars: Mapping, hosts: t.Sequence[str], roles: t.Sequence[str]) -> list[str]:
    """Return one line per problem of the hosts' settings; see the filter documentation."""
    try:
        return settings.settings_problems(hostvars, hosts, roles)
    except settings.SettingsError as exc:
        raise AnsibleFilterError(f"settings_problems: {exc}") from None


class FilterModule:
    """The settings check filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"settings_problems": settings_problems}
