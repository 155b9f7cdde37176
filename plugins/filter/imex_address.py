# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.imex_address`` filter: the IMEX address of one host.

A thin wrapper over :func:`...plugin_utils.imex_address.imex_address`, the one rule that preflight and the
``nvidia_imex`` role share.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import ImexAddressError
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_address import imex_address as _imex_address


@arguments.filter_errors("imex_address")
def imex_address(facts: Mapping | None, host: str, address: t.Any = "", interface: t.Any = "",
                 family: t.Any = "ipv4", prefix: str = "gpufabric_imex") -> str:
    """Return the IMEX address of ``host`` from its ``ansible_facts``; see the filter documentation."""
    if facts is not None and not isinstance(facts, Mapping):
        raise AnsibleFilterError(f"imex_address: the input must be a host's ansible_facts, got {type(facts).__name__}")
    try:
        host = arguments.text("host", host)
        prefix = arguments.text("prefix", prefix)
        return _imex_address(host, facts or {}, address, interface, family, prefix=prefix)
    except (arguments.ArgumentError, ImexAddressError) as exc:
        raise AnsibleFilterError(f"imex_address: {exc}") from None


class FilterModule:
    """The IMEX address filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"imex_address": imex_address}
