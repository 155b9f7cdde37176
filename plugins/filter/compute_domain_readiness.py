# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.compute_domain_readiness`` filter: whether a 0.4+ ComputeDomain is ready,
from its IMEX daemon pods and the workload's pods.

A thin wrapper over :func:`...plugin_utils.compute_domain_spec.compute_domain_readiness`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import compute_domain_spec as _logic


@arguments.filter_errors("compute_domain_readiness")
def compute_domain_readiness(daemon_pods: t.Any, workload_pods: t.Any, nodes: t.Any,
                             launcher_started: t.Any = False) -> dict:
    """See the filter documentation."""
    try:
        return _logic.compute_domain_readiness(daemon_pods, workload_pods, nodes, launcher_started)
    except (arguments.ArgumentError, _logic.ComputeDomainError) as exc:
        raise AnsibleFilterError(f"compute_domain_readiness: {exc}") from None


class FilterModule:
    """The ``compute_domain_readiness`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"compute_domain_readiness": compute_domain_readiness}
