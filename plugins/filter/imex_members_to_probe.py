# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_members_to_probe`` filter: the IMEX domain members whose fabric facts are missing.

A thin wrapper over :func:`...plugin_utils.imex_domains.members_to_probe`, which decides with
:func:`...plugin_utils.imex_domains.derive_domains` who belongs to a domain.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import ImexAddressError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import SUBSETS, members_to_probe


@arguments.filter_errors("imex_members_to_probe")
def imex_members_to_probe(hostvars: Mapping, fleet: t.Sequence[str], domains: t.Any = None, root: str = "/",
                          address_var: str = "nvidia_imex_address", subsets: t.Sequence[str] = ()) -> list[dict]:
    """Return ``[{name, root, gather_subset}]`` for the members lacking facts; see the filter documentation."""
    try:
        if not isinstance(hostvars, Mapping):
            raise arguments.ArgumentError(f"the input must be hostvars (a mapping), got {type(hostvars).__name__}")
        names = arguments.sequence("fleet", fleet)
        for name in names:
            arguments.text("fleet entry", name)
        root = arguments.text("root", root)
        address_var = arguments.text("address_var", address_var)
        subsets = arguments.sequence("subsets", subsets)
        for subset in subsets:
            if subset not in SUBSETS:
                raise arguments.ArgumentError(f"subsets entry must be one of {', '.join(SUBSETS)}, got {subset!r}")
        return members_to_probe(hostvars, names, domains=domains, root=root, address_var=address_var, subsets=subsets)
    except (arguments.ArgumentError, ImexAddressError) as exc:
        raise AnsibleFilterError(f"imex_members_to_probe: {exc}") from None


class FilterModule:
    """The filter of the IMEX members to probe."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_members_to_probe": imex_members_to_probe}
