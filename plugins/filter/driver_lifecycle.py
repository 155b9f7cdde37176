# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.driver_lifecycle`` filter: the lifecycle of an NVIDIA driver branch.

A thin wrapper over :func:`...plugin_utils.driver_lifecycle.lifecycle`, which holds the table and the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import driver_lifecycle as _logic


@arguments.filter_errors("driver_lifecycle")
def driver_lifecycle(version: t.Any, today: t.Any = None, production: t.Any = True,
                     name: t.Any = "version") -> dict:
    """Return the lifecycle of the branch of ``version``; see the filter documentation."""
    try:
        return _logic.lifecycle(version, today, production, str(name))
    except _logic.LifecycleError as exc:
        raise AnsibleFilterError(f"driver_lifecycle: {exc}") from None


class FilterModule:
    """The driver lifecycle filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"driver_lifecycle": driver_lifecycle}
