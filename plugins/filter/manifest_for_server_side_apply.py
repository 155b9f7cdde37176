# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.manifest_for_server_side_apply`` filter: a manifest's objects fit to apply server-side.

A thin wrapper over :func:`...plugin_utils.k8s_manifest.for_server_side_apply`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, k8s_manifest


@arguments.filter_errors("manifest_for_server_side_apply")
def manifest_for_server_side_apply(documents: t.Any) -> list[dict]:
    """Return the objects of ``documents`` to apply server-side; see the filter documentation."""
    try:
        return k8s_manifest.for_server_side_apply(documents)
    except k8s_manifest.ManifestError as exc:
        raise AnsibleFilterError(f"manifest_for_server_side_apply: {exc}") from None


class FilterModule:
    """The server-side apply manifest filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"manifest_for_server_side_apply": manifest_for_server_side_apply}
