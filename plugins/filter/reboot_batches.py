# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.reboot_batches`` filter: rolling reboot batches, ``serial`` hosts per clique.

A thin wrapper over :func:`...plugin_utils.reboot_batches.reboot_batches`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import reboot_batches as _logic


@arguments.filter_errors("reboot_batches")
def reboot_batches(hosts: t.Any, hostvars: t.Any, serial: t.Any = 1) -> list[list[str]]:
    """Return the batches of ``hosts``; see the filter documentation."""
    try:
        return _logic.reboot_batches(hosts, hostvars, serial)
    except (arguments.ArgumentError, _logic.RebootBatchError) as exc:
        raise AnsibleFilterError(f"reboot_batches: {exc}") from None


class FilterModule:
    """The rolling reboot filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"reboot_batches": reboot_batches}
