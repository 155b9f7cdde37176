# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.node_verdict`` filter: the preflight verdict as labels, an annotation and a taint per Node.

A thin wrapper over :func:`...plugin_utils.node_verdict.plan`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_verdict as _logic


@arguments.filter_errors("node_verdict")
def node_verdict(report: t.Any, nodes: t.Any, existing: t.Any, names: t.Any = None, taint: t.Any = False,
                 today: t.Any = None, nodes_variable: str = "nodes", kind: t.Any = "preflight") -> dict:
    """Return what to change on each host's Node; see the filter documentation."""
    try:
        return _logic.plan(report, nodes, existing, names, taint, today, nodes_variable, kind)
    except (arguments.ArgumentError, _logic.NodeVerdictError) as exc:
        raise AnsibleFilterError(f"node_verdict: {exc}") from None


class FilterModule:
    """The node verdict filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"node_verdict": node_verdict}
