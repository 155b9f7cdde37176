# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_package`` filter: the nvidia-imex package of a driver branch on a host.

A thin wrapper over :func:`...plugin_utils.imex_package.decide`, which holds the table and the logic.
"""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import imex_package as _logic


@arguments.filter_errors("imex_package", _logic.ImexPackageError)
def imex_package(branch: t.Any, os_family: t.Any, distribution: t.Any, source: t.Any = "cuda", package: t.Any = "",
                 version: t.Any = "", host: t.Any = "") -> dict:
    """Return the package of ``branch``; see the filter documentation."""
    return _logic.decide(os_family, distribution, source, branch, package, version, host)


class FilterModule:
    """The nvidia-imex package filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_package": imex_package}
