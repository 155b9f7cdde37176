# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_domains`` filter: IMEX domains and nodes files from hostvars.

A thin wrapper over :func:`...plugin_utils.imex_domains.derive_domains`, which holds the logic
(shared with the preflight report).
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import ImexAddressError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_domains import derive_domains


@arguments.filter_errors("imex_domains")
def imex_domains(hostvars: Mapping, hosts: t.Sequence[str], domains: t.Any = None, family: str = "ipv4",
                 interface: str | None = None, address_var: str = "nvidia_imex_address",
                 variable: str = "nvidia_imex_domains", address_label: str | None = None,
                 fleet: t.Sequence[str] | None = None, fleet_variable: str = "nvidia_imex_fleet",
                 outside: Mapping | None = None) -> dict[str, dict]:
    """Return ``{host: {domain, clique, address, nodes}}`` for ``hosts``; see the filter documentation."""
    try:
        names = arguments.sequence("hosts", hosts)
        for name in names:
            arguments.text("hosts entry", name)
        family = arguments.text("family", "ipv4" if family is None else family)
        interface = arguments.optional(arguments.text, "interface", interface or None)
        address_var = arguments.text("address_var", address_var)
        variable = arguments.text("variable", variable)
        address_label = arguments.optional(arguments.text, "address_label", address_label or None)
        fleet_variable = arguments.text("fleet_variable", fleet_variable)
        if fleet is not None:
            fleet = arguments.sequence(fleet_variable, fleet)
        return derive_domains(hostvars, names, domains=domains, family=family, interface=interface,
                              address_var=address_var, variable=variable, address_label=address_label,
                              fleet=fleet, fleet_variable=fleet_variable, outside=outside)
    except (arguments.ArgumentError, ImexAddressError) as exc:
        raise AnsibleFilterError(f"imex_domains: {exc}") from None


class FilterModule:
    """The IMEX domain filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_domains": imex_domains}
