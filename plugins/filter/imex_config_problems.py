# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_config_problems`` filter: what is wrong with the nvidia_imex role's input.

A thin wrapper over :func:`...plugin_utils.imex_config.imex_config_problems`.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_config import ImexConfigError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_config import (
    imex_config_problems as _imex_config_problems,
)


@arguments.filter_errors("imex_config_problems")
def imex_config_problems(config: t.Any, host: t.Any, allow_unknown: t.Any = False, paths: t.Any = None,
                         mode: t.Any = "host", driver_mode: t.Any = None, socket_path: t.Any = None) -> list[str]:
    """Return the problems of ``config`` and the other inputs for ``host``; see the filter documentation."""
    try:
        return _imex_config_problems(
            arguments.text("host", host), config, arguments.boolean("allow_unknown", allow_unknown),
            paths=arguments.optional(arguments.mapping, "paths", paths), mode=mode, driver_mode=driver_mode,
            socket_path=socket_path)
    except (arguments.ArgumentError, ImexConfigError) as exc:
        raise AnsibleFilterError(f"imex_config_problems: {exc}") from None


class FilterModule:
    """The nvidia_imex input check."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_config_problems": imex_config_problems}
