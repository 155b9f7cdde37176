# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""All probes of one host in one call: the payload of ``ansible_facts['gpufabric']``."""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.module_utils.connectx import collect_connectx
from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import GpuFabricError
from ansible_collections.gpufabric.cluster.plugins.module_utils.gpu import collect_gpu
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import Runner
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import collect_imex
from ansible_collections.gpufabric.cluster.plugins.module_utils.network import collect_network
from ansible_collections.gpufabric.cluster.plugins.module_utils.peermem import collect_peermem

COLLECTORS: dict[str, t.Callable[[str, Runner], dict]] = {
    "gpu": collect_gpu,
    "connectx": collect_connectx,
    "imex": collect_imex,
    "peermem": collect_peermem,
    "network": collect_network,
}


def select_subsets(requested: list[str]) -> list[str]:
    """Resolve a ``gather_subset`` list (``all``, names, ``!name``) to the collectors to run, in a fixed order.

    Raises :class:`GpuFabricError` naming an unknown subset.
    """
    chosen: set[str] = set()
    excluded: set[str] = set()
    for item in requested or ["all"]:
        name = item.strip()
        negate = name.startswith("!")
        name = name.lstrip("!")
        if name == "all":
            target = set(COLLECTORS)
        elif name in COLLECTORS:
            target = {name}
        else:
            known = ", ".join(COLLECTORS)
            raise GpuFabricError(
                f"gather_subset: unknown subset {item!r}; choose from all, {known} (prefix ! to exclude)"
            )
        (excluded if negate else chosen).update(target)
    if not chosen and excluded:
        chosen = set(COLLECTORS)
    return [name for name in COLLECTORS if name in chosen - excluded]


def collect_fabric(root: str, runner: Runner, subsets: list[str]) -> dict:
    """Run the selected collectors; return ``{subset: payload, 'gather_subset': [...], 'warnings': [...]}``.

    Each payload keeps its own ``errors``; their warnings are gathered (prefixed with the subset) so the
    module can emit them once.
    """
    facts: dict[str, t.Any] = {"gather_subset": list(subsets)}
    warnings: list[str] = []
    for name in subsets:
        try:
            payload = COLLECTORS[name](root, runner)
        except GpuFabricError as exc:
            payload = {"errors": [str(exc)], "warnings": []}
        warnings.extend(f"{name}: {message}" for message in payload.pop("warnings", []))
        facts[name] = payload
    facts["warnings"] = warnings
    return facts
