# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Rolling reboots on the controller: at most ``serial`` hosts of one NVLink clique in a batch.

The hosts of a batch reboot together; the next batch starts when the whole batch is back.  A host's
group is its fabric clique (``ansible_facts['gpufabric']['gpu']['cliques']``, as the IMEX domains read
them); hosts whose facts show no clique (no driver loaded, a single-node system) share one group,
``NO_CLIQUE``, so they also go ``serial`` at a time.  A host whose GPUs are in several cliques counts in
each of them.

Hosts are placed in name order into the first batch where every group of the host still has room
(first fit), so the result is the same for the same input in any order, and a group of ``n`` hosts is
spread over ``ceil(n / serial)`` batches when the hosts are in one clique each.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

NO_CLIQUE = "(no clique)"


class RebootBatchError(ValueError):
    """Input from which no batches can be made; the message names the host or argument."""


def groups_of(hostvars: Mapping, host: str) -> list[str]:
    """The groups ``host`` counts in: its cliques, or ``[NO_CLIQUE]`` when its facts show none."""
    if host not in hostvars:
        raise RebootBatchError(f"host {host}: not in hostvars")
    value: t.Any = hostvars[host]
    path = "hostvars"
    for key in ("ansible_facts", "gpufabric", "gpu", "cliques"):
        if not isinstance(value, Mapping):
            raise RebootBatchError(f"host {host}: {path} must be a mapping, got {type(value).__name__}")
        value = value.get(key)
        path = "ansible_facts" if key == "ansible_facts" else f"{path}['{key}']"
        if value is None:
            return [NO_CLIQUE]
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise RebootBatchError(f"host {host}: {path} must be a list, got {type(value).__name__}")
    return sorted({str(clique) for clique in value}) or [NO_CLIQUE]


def reboot_batches(hosts: t.Any, hostvars: t.Any, serial: t.Any) -> list[list[str]]:
    """Split ``hosts`` into batches with at most ``serial`` hosts of one clique each (see the module doc)."""
    names = arguments.sequence("hosts", hosts)
    for name in names:
        if not isinstance(name, str) or not name:
            raise arguments.ArgumentError(f"hosts must be a list of host names, got {name!r} in it")
    hostvars = arguments.mapping("hostvars", hostvars)
    if isinstance(serial, bool) or not isinstance(serial, int):
        raise arguments.ArgumentError(f"serial must be a whole number greater than 0, got {serial!r}")
    serial = int(arguments.positive("serial", serial))
    batches: list[list[str]] = []
    counts: list[dict[str, int]] = []
    for name in sorted(set(names)):
        groups = groups_of(hostvars, name)
        index = next((index for index, count in enumerate(counts)
                      if all(count.get(group, 0) < serial for group in groups)), len(batches))
        if index == len(batches):
            batches.append([])
            counts.append({})
        batches[index].append(name)
        for group in groups:
            counts[index][group] = counts[index].get(group, 0) + 1
    return batches
