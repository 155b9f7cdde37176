# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A host's network facts in ``setup``'s layout, from ``setup`` or from ``gpufabric.cluster.fabric_facts``.

``setup``'s ``network`` subset lays the facts out flat: ``default_ipv4`` / ``default_ipv6``, ``interfaces`` (the
names) and one entry per interface under its name (``-`` written ``_``).  ``fabric_facts``' ``network`` subset
(``ansible_facts['gpufabric']['network']``, :mod:`...module_utils.network`) holds the same values nested, the
interfaces under ``interfaces`` by name, and adds each link's ``max_mtu``.  :func:`network_facts` gives either in the
flat layout, so that the IMEX address rule (:mod:`...plugin_utils.imex_address`) and the rail plan
(:mod:`...plugin_utils.rail_plan`, :mod:`...plugin_utils.rail_indices`) read them one way.  Pure functions; facts of
an unexpected shape read as nothing gathered.
"""

from __future__ import annotations

from collections.abc import Mapping

SETUP_KEYS = ("interfaces", "default_ipv4", "default_ipv6")
FABRIC_FACT = "ansible_facts['gpufabric']['network']"


def setup_gathered(facts: Mapping) -> bool:
    """Whether ``setup``'s network subset is in ``facts``."""
    return isinstance(facts, Mapping) and any(key in facts for key in SETUP_KEYS)


def fabric_network(facts: Mapping) -> Mapping | None:
    """``ansible_facts['gpufabric']['network']`` when it was gathered (a mapping), else ``None``."""
    gpufabric = facts.get("gpufabric") if isinstance(facts, Mapping) else None
    network = gpufabric.get("network") if isinstance(gpufabric, Mapping) else None
    return network if isinstance(network, Mapping) else None


def flatten(network: Mapping) -> dict:
    """``fabric_facts``' network subset in ``setup``'s layout: ``default_ipv4``, ``default_ipv6`` (``{}`` when
    none), ``interfaces`` (the names, in the facts' order) and each interface's entry under its name."""
    interfaces = network.get("interfaces")
    interfaces = interfaces if isinstance(interfaces, Mapping) else {}
    flat = {str(name): entry for name, entry in interfaces.items()}
    flat.update({key: network.get(key) or {} for key in ("default_ipv4", "default_ipv6")})
    flat["interfaces"] = [str(name) for name in interfaces]
    return flat


def network_facts(facts: Mapping, prefer: str = "setup") -> Mapping:
    """A host's network facts in ``setup``'s layout.

    ``prefer`` says which source wins when both were gathered: ``setup`` (``setup``'s facts as they are; the IMEX
    address rule) or ``fabric`` (``ansible_facts['gpufabric']['network']`` flattened, which alone has ``max_mtu``;
    the rail plan).  The other source is read when the preferred one is missing; with neither, ``facts`` as given
    (``{}`` when it is not a mapping).
    """
    if not isinstance(facts, Mapping):
        return {}
    network = fabric_network(facts)
    if network is not None and (prefer == "fabric" or not setup_gathered(facts)):
        return flatten(network)
    return facts


def interface_entry(facts: Mapping, name: str) -> Mapping:
    """The entry of interface ``name`` in flat network facts (under its name, or with ``-`` written ``_`` as
    ``setup`` writes it); ``{}`` when there is none or it is not a mapping."""
    entry = facts.get(name) or facts.get(name.replace("-", "_"))
    return entry if isinstance(entry, Mapping) else {}
