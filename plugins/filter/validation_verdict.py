# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.validation_verdict`` filter: the validation's verdict per Kubernetes node.

A thin wrapper over :func:`...plugin_utils.validation_verdict.node_report`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import validation_verdict as _logic


@arguments.filter_errors("validation_verdict")
def validation_verdict(validation: t.Any) -> dict:
    """Return each measured node's verdict; see the filter documentation."""
    try:
        return _logic.node_report(validation)
    except (arguments.ArgumentError, _logic.ValidationVerdictError) as exc:
        raise AnsibleFilterError(f"validation_verdict: {exc}") from None


class FilterModule:
    """The validation verdict filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"validation_verdict": validation_verdict}
