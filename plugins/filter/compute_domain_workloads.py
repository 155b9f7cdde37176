# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.compute_domain_workloads`` filter: the ComputeDomain pods a wave's drain evicts first.

A thin wrapper over :func:`...plugin_utils.compute_domain_workloads.compute_domain_workloads`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import compute_domain_workloads as _logic


@arguments.filter_errors("compute_domain_workloads")
def compute_domain_workloads(pods: t.Any, claims: t.Any, nodes: t.Any, compute_domains: t.Any = None) -> dict:
    """See the filter documentation."""
    try:
        return _logic.compute_domain_workloads(pods, claims, nodes, compute_domains)
    except (arguments.ArgumentError, _logic.WorkloadsError) as exc:
        raise AnsibleFilterError(f"compute_domain_workloads: {exc}") from None


class FilterModule:
    """The ``compute_domain_workloads`` filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"compute_domain_workloads": compute_domain_workloads}
