# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.node_textfile`` filter: a host's verdict and counters as a node-exporter textfile.

A thin wrapper over :func:`...plugin_utils.node_textfile.textfile`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_textfile as _logic


@arguments.filter_errors("node_textfile")
def node_textfile(entry: t.Any, facts: t.Any = None) -> str:
    """Return the textfile's content; see the filter documentation."""
    try:
        return _logic.textfile(entry, facts)
    except (arguments.ArgumentError, _logic.TextfileError) as exc:
        raise AnsibleFilterError(f"node_textfile: {exc}") from None


class FilterModule:
    """The node-exporter textfile filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"node_textfile": node_textfile}
