# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What one NVLink domain is judged by over all its members: one driver and one nvidia-imex version, one chassis, and
where each tray sits.

Pure functions over the members' ``gpufabric`` facts (``{host: facts}``); :func:`.preflight.imex_domains` adds what
they find to a domain's problems (fail) and notes (warn).  Peers of another nvidia-imex version are ``!V!`` to each
other (version mismatch, communication disabled), and a driver that differs from its peers' is a tray that was
changed alone: a domain is coherent only when every member reports the same driver version and the same nvidia-imex
version.  A member whose nvidia-imex version is unknown is a note (the domain cannot be shown coherent), never a guess.

Trays are named by host and, where NVML's platform info gives it, by ``rack <chassis serial>, slot <N>``
(:func:`tray_place`).  A GB200 or GB300 NVL72 domain is one rack (18 compute trays, one chassis serial); an NVL36x2
domain spans two racks, so members in more than one chassis are a note unless the site says its domains are one rack
(``imex_domain_single_chassis`` of ``gpufabric_preflight_settings``), then a failure.
"""

from __future__ import annotations

import typing as t
from collections.abc import Iterable, Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import is_version
from ansible_collections.gpufabric.cluster.plugins.module_utils.nvml import CHASSIS_SERIAL_RE
from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key

# How many host names a message lists before it counts the rest.
SHOWN_NAMES = 8


def _map(value: t.Any) -> Mapping:
    return value if isinstance(value, Mapping) else {}


def _list(value: t.Any) -> list:
    return list(value) if isinstance(value, (list, tuple)) else []


def _number(value: t.Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _names(names: t.Sequence[str]) -> str:
    shown = ", ".join(names[:SHOWN_NAMES])
    return shown + (f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else "")


def tray_place(facts: Mapping) -> dict | None:
    """Where a host's tray sits: ``{'chassis_serial', 'slot_number', 'tray_index'}`` from its ``gpu.platform``
    summary, or ``None`` when its GPUs name no chassis or more than one.

    A slot or tray index its GPUs disagree on (or do not give) is ``None``.  Only a chassis serial of the shape the
    probe reports (:data:`...module_utils.nvml.CHASSIS_SERIAL_RE`) is taken.
    """
    platform = _map(_map(facts.get("gpu")).get("platform"))
    serials = [serial for serial in _list(platform.get("chassis_serials"))
               if isinstance(serial, str) and CHASSIS_SERIAL_RE.match(serial)]
    if len(set(serials)) != 1:
        return None

    def single(key: str) -> int | None:
        values = {_number(value) for value in _list(platform.get(key))}
        return values.pop() if len(values) == 1 else None
    return {"chassis_serial": serials[0], "slot_number": single("slot_numbers"), "tray_index": single("tray_indices")}


def place_text(place: Mapping | None) -> str | None:
    """``rack <chassis serial>, slot <N>`` (``rack <serial>`` without a slot), ``None`` without a place."""
    if not place:
        return None
    slot = place.get("slot_number")
    return f"rack {place['chassis_serial']}" + (f", slot {slot}" if slot is not None else "")


def place_key(place: Mapping | None, name: str) -> tuple:
    """Sort key of a tray: by rack, then slot, then host name; trays without a place after every rack."""
    if not place:
        return (1, "", -1, name)
    slot = place.get("slot_number")
    return (0, str(place["chassis_serial"]), -1 if slot is None else slot, name)


def driver_version(facts: Mapping) -> str | None:
    """The NVIDIA driver version a member reports (``gpu.driver_version``), ``None`` when not a version string."""
    version = _map(facts.get("gpu")).get("driver_version")
    return version if isinstance(version, str) and is_version(version) else None


def imex_version(facts: Mapping) -> str | None:
    """The nvidia-imex version of a member, as the daemon reports it: the installed package's version without its
    packaging revision (``570.172.08-1`` is ``570.172.08``, what ``nvidia-imex --version`` prints); ``None`` when
    nvidia-imex is not installed or its version is unknown."""
    imex = _map(facts.get("imex"))
    version = imex.get("version")
    if not imex.get("installed") or not isinstance(version, str) or not is_version(version):
        return None
    return version.split("-", 1)[0]


def _label(name: str, places: Mapping[str, Mapping | None]) -> str:
    """A member for a message: its host name, with ``(rack <serial>, slot <N>)`` where its platform info gives it."""
    place = place_text(places.get(name))
    return f"{name} ({place})" if place else name


def _labels(names: t.Iterable[str], places: Mapping[str, Mapping | None]) -> str:
    return _names([_label(name, places) for name in sorted(names)])


def _differ(what: str, versions: Mapping[str, str], places: Mapping[str, Mapping | None] | None = None) -> str:
    """One line naming the odd members (with their rack and slot, ``places``, where known): each version with its
    members, the largest group by its count only when it is larger than every other (the majority)."""
    groups: dict[str, list[str]] = {}
    for name, version in versions.items():
        groups.setdefault(version, []).append(name)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    parts = []
    for position, (version, names) in enumerate(ordered):
        majority = position == 0 and len(names) > len(ordered[1][1])
        parts.append(f"{version} on {len(names)} member(s)" if majority
                     else f"{version} on {_labels(names, places or {})}")
    return f"members run different {what} versions: " + "; ".join(parts)


def version_problems(members: Mapping[str, Mapping]) -> tuple[list[str], list[str]]:
    """``(problems, notes)`` of a domain's versions: one driver version and one nvidia-imex version for all members.

    Different known versions are a problem naming the odd members (with their rack and slot where the platform info
    gives them, :func:`tray_place`) and every version; a member without nvidia-imex
    while another member has it, or whose nvidia-imex version is unknown, is a note.  A member without a driver
    version is not compared: its own ``driver`` check fails it (no driver loaded, or a version below the minimum),
    and so the domain.  nvidia-imex installed on no member (the DRA driver runs IMEX) is not judged.
    """
    problems: list[str] = []
    notes: list[str] = []
    places = {name: tray_place(_map(facts)) for name, facts in members.items()}
    drivers = {name: driver_version(_map(facts)) for name, facts in members.items()}
    known = {name: version for name, version in drivers.items() if version is not None}
    if len(set(known.values())) > 1:
        problems.append(_differ("NVIDIA driver", known, places))
    installed = {name for name, facts in members.items() if _map(_map(facts).get("imex")).get("installed")}
    if installed:
        imex = {name: imex_version(_map(facts)) for name, facts in members.items()}
        known = {name: version for name, version in imex.items() if version is not None}
        if len(set(known.values())) > 1:
            suffix = " (peers of another version are !V!, communication disabled)"
            problems.append(_differ("nvidia-imex", known, places) + suffix)
        absent = [name for name in members if name not in installed]
        if absent:
            notes.append(f"nvidia-imex not installed on {_labels(absent, places)} while other members have it")
        unknown = [name for name in installed if imex[name] is None]
        if unknown:
            notes.append(f"nvidia-imex version unknown on {_labels(unknown, places)}: the domain's nvidia-imex "
                         "coherence is not shown")
    return problems, notes


def chassis_problems(places: Mapping[str, Mapping | None], single_chassis: bool) -> tuple[list[str], list[str]]:
    """``(problems, notes)`` of a domain whose members sit in more than one chassis: each chassis with its trays (and
    their slots where known).

    A problem when ``single_chassis`` (the site's domains are one rack each), else a note (NVL36x2 spans two racks).
    Members without platform info are not counted.
    """
    racks: dict[str, list[str]] = {}
    for name, place in places.items():
        if place:
            racks.setdefault(place["chassis_serial"], []).append(name)
    if len(racks) < 2:
        return [], []

    def trays(names: list[str]) -> str:
        shown = []
        for name in sorted(names, key=lambda name: place_key(places[name], name)):
            slot = (places[name] or {}).get("slot_number")
            shown.append(name if slot is None else f"{name} (slot {slot})")
        return _names(shown)
    spread = "; ".join(f"rack {serial}: {trays(names)}"
                       for serial, names in sorted(racks.items(), key=lambda item: (-len(item[1]), item[0])))
    if single_chassis:
        return [f"members sit in {len(racks)} chassis ({spread}); settings.imex_domain_single_chassis says a domain "
                "is one rack: a tray of another rack is cabled or configured into this domain"], []
    return [], [f"members sit in {len(racks)} chassis ({spread}): fine for a domain that spans racks (NVL36x2); set "
                "settings.imex_domain_single_chassis where every domain is one rack (NVL72)"]


def named_entries(entries: t.Sequence[str], owners: Mapping[str, str], places: Mapping[str, Mapping | None]) -> str:
    """Nodes file entries a domain's members list beyond its members that are addresses of hosts of the report (in
    another domain or none): each with its host, and the host's rack and slot where known
    (``10.0.0.4 of tray-3 (rack 1, slot 4)``)."""
    return _names([f"{entry} of {_label(owners[entry], places)}" for entry in entries])


def undecided_members(clique: str, cliques: Mapping[str, t.Sequence[str]], unknown: Iterable[str]) -> dict[str, str]:
    """The hosts that may be members of ``clique`` but that no domain holds, each with why: ``{host: why}``.

    ``cliques`` maps each host with facts to the cliques of its GPUs; ``unknown`` are hosts without fabric facts (not
    gathered, unreachable, the probe failed), any of which may be a member of any domain.  A host whose GPUs name
    several cliques, ``clique`` among them, is in no domain (a broken fabric): it may be a member too.  A domain with
    undecided members is never judged from the others alone.
    """
    found = {name: "no gpufabric facts" for name in unknown if name not in cliques}
    for name, host_cliques in cliques.items():
        if len(host_cliques) > 1 and clique in host_cliques:
            found[name] = f"its GPUs are in {len(host_cliques)} cliques"
    return {name: found[name] for name in sorted(found, key=natural_key)}


def undecided_note(undecided: Mapping[str, str], places: Mapping[str, Mapping | None]) -> str:
    """One line naming the undecided members of a domain (:func:`undecided_members`) with their place where known."""
    named = []
    for name, why in undecided.items():
        place = place_text(places.get(name))
        named.append(f"{name} ({place + ': ' if place else ''}{why})")
    return (f"membership not complete: {_names(named)} may be members; the domain is not judged from the others "
            "alone (its expected nodes file is not derived, the members' nodes files are checked for gaps only)")
