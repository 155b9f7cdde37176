# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.host_settings`` filter: the hosts grouped by the values they give some variables.

A thin wrapper over :func:`...plugin_utils.host_settings.host_settings`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import host_settings as settings


@arguments.filter_errors("host_settings")
def host_settings(hostvars: Mapping, hosts: t.Sequence[str], names: t.Sequence[str]) -> list[dict]:
    """Return the hosts grouped by the values they define for ``names``; see the filter documentation."""
    try:
        return settings.host_settings(hostvars, hosts, names)
    except settings.HostSettingsError as exc:
        raise AnsibleFilterError(f"host_settings: {exc}") from None


class FilterModule:
    """The host settings filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"host_settings": host_settings}
