# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the probe modules share: their common options and the start of a run (checked root, tool runner).

Kept free of ``AnsibleModule`` calls other than ``fail_json`` so that the modules stay thin: each builds its
``AnsibleModule`` from :func:`argument_spec` and calls :func:`start`.
"""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, ProbeRootError
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import DEFAULT_TIMEOUT, ToolRunner
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_files import check_probe_root


def argument_spec(**extra: dict) -> dict:
    """The options of the gpufabric.cluster.probe doc fragment, plus a module's own ``extra`` options."""
    return {
        "root": {"type": "path", "default": "/"},
        "command_timeout": {"type": "int", "default": DEFAULT_TIMEOUT},
        **extra,
    }


def start(module: t.Any) -> tuple[str, ToolRunner]:
    """Return ``(root, runner)`` for a probe module; ``fail_json`` when the root cannot be probed.

    A root that does not exist, cannot be read or has no ``sys/`` fails the task naming the root (no probe can
    answer anything there); a ``command_timeout`` that is not greater than 0 fails naming the option.
    """
    root = module.params["root"]
    try:
        checked = check_probe_root(root)
        runner = ToolRunner(module.params["command_timeout"], checked)
    except (ProbeRootError, CommandError) as exc:
        module.fail_json(msg=str(exc))
    return checked, runner
