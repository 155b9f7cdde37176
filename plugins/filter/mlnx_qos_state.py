# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.mlnx_qos_state`` filter: the QoS state from the text of mlnx_qos -i.

A thin wrapper over :func:`...plugin_utils.mlnx_qos_state.mlnx_qos_state`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import mlnx_qos_state as _logic


@arguments.filter_errors("mlnx_qos_state")
def mlnx_qos_state(text: t.Any) -> dict[str, str | None]:
    """See the filter documentation."""
    try:
        return _logic.mlnx_qos_state(text)
    except _logic.MlnxQosError as exc:
        raise AnsibleFilterError(f"mlnx_qos_state: {exc}") from None


class FilterModule:
    """The ``mlnx_qos_state`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"mlnx_qos_state": mlnx_qos_state}
