# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stable host indices of the RDMA rails: a host's addresses never move because other hosts joined, left or were
left out of a run (issue 41).

A host's address on rail N is ``network + offset + host index`` (:mod:`...plugin_utils.rail_plan`).  The index of a
host of the run comes from, in this order:

1. ``explicit``: its ``rdma_network_host_index`` (0 or more);
2. what the host holds: ``record``, the record the role wrote on the host when it first planned it (index, offset
   and the addresses of every rail, :data:`RECORD_FILE`); without one ``addresses``, the index its live addresses
   on the planned rails (its network facts: primary, secondary and IPv6 addresses) were made from (a host converged
   by a build that wrote no record); without those ``facts``, its rail plan of an earlier run
   (``ansible_facts['rdma_network_rail_plan']``, from a fact cache);
3. ``allocated``: the lowest index that no host of the fleet is given explicitly or holds, hosts in natural name
   order.  The fleet is every host whose addresses are kept apart (the inventory's GPU hosts), the run's hosts and
   the others; a host outside the run is known by its explicit index or its rail plan in the facts.  While one is
   unknown no index is allocated: the refusal names them, since any index might be theirs.

Before any change, a plan is refused (every problem named, host and variable) that moves the address a host holds on
a rail (unless ``allow_readdress``), or that gives one address to two hosts of the fleet.  The record a host keeps
is what it holds after the run: the planned rails, and the rails that are down or not selected this run as they
were (dropped only when pruned, as their files are).

Pure functions over hostvars-like mappings; problems are appended to an ``errors`` list, never raised.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import natural_key
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import network_facts

RECORD_FILE = "/etc/gpufabric/rdma_network.json"
RECORD_VERSION = 1
# The record is a few hundred bytes; anything much larger is not one the role wrote, and is not read.
RECORD_LIMIT = 65536
PLAN_FACT = "rdma_network_rail_plan"
FAMILIES = {"ipv4": 4, "ipv6": 6}
NOT_EXPLICIT = (None, "", -1, "-1")


@dataclasses.dataclass
class Held:
    """What a host holds: its index, the offset its addresses were made with, and its address per rail and family.

    ``source`` is where it was read: ``record``, ``addresses`` or ``facts``.
    """

    source: str
    host_index: int | None
    address_offset: int | None
    rails: dict[int, dict[str, t.Any]]
    netdevs: dict[int, str]


@dataclasses.dataclass
class Claim:
    """A fleet host's claim on indices: its explicit index and what it holds (each None when unknown)."""

    explicit: int | None
    held: Held | None


HELD_WORDS = {"record": "its recorded host index {index}",
              "addresses": "host index {index} (of its live rail addresses)",
              "facts": "host index {index} (of its rail plan in the facts)"}


def explicit_index(value: t.Any, host: str, label: str, errors: list[str]) -> int | None:
    """The explicit index of a host: None when unset (empty, null or -1); a value that is not 0 or more is an error."""
    if value in NOT_EXPLICIT:
        return None
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()) or \
            (isinstance(value, str) and not value.isascii()):  # int() reads other scripts' digits ("\u0663" is 3)
        errors.append(f"host {host}: {label}: {value!r} is not an integer")
        return None
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        errors.append(f"host {host}: {label}: {value!r} is not an integer")
        return None
    if number < 0:
        errors.append(f"host {host}: {label}: {number} is below 0 (-1 leaves the index to the role)")
        return None
    return number


def _whole(value: t.Any) -> int | None:
    """``value`` when it is an integer (a boolean is not); else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _interface(value: t.Any, family: str):
    """``value`` as an address with its prefix (``172.31.0.3/24``) of ``family`` that is a host address; else None."""
    if not isinstance(value, str):
        return None
    try:
        interface = ipaddress.ip_interface(value)
    except ValueError:
        return None
    if interface.version != FAMILIES[family] or "/" not in value or interface.network.num_addresses == 1:
        return None
    return interface


def held_of_record(record: t.Any, source: str) -> tuple[Held | None, str]:
    """Read a record mapping (the record file's JSON, or the ``record`` of a rail plan); return ``(held, problem)``.

    ``problem`` names the key that is wrong, never its value (the text of a host file is not quoted).
    """
    if not isinstance(record, Mapping):
        return None, "not a JSON object"
    if _whole(record.get("version")) != RECORD_VERSION:  # true and 1.0 are not the 1 the role writes
        return None, f"version is not {RECORD_VERSION}"
    index = _whole(record.get("host_index"))
    if index is None or index < 0:
        return None, "host_index is not an integer of 0 or more"
    offset = _whole(record.get("address_offset"))
    if offset is None:
        return None, "address_offset is not an integer"
    rails = record.get("rails")
    if not isinstance(rails, Mapping):
        return None, "rails is not an object"
    held = Held(source, index, offset, {}, {})
    for key, entry in rails.items():
        if not isinstance(key, str) or not key.isdigit() or not key.isascii():
            return None, "a key of rails is not a rail number"
        if not isinstance(entry, Mapping):
            return None, f"rails.{key} is not an object"
        unknown = set(entry) - {"netdev", *FAMILIES}
        if unknown:
            return None, f"rails.{key} has keys other than netdev, ipv4 and ipv6"
        number = int(key)
        if "netdev" in entry:
            if not isinstance(entry["netdev"], str) or not entry["netdev"]:
                return None, f"rails.{key}.netdev is not a name"
            held.netdevs[number] = entry["netdev"]
        addresses = {}
        for family in FAMILIES:
            if family in entry:
                interface = _interface(entry[family], family)
                if interface is None:
                    return None, f"rails.{key}.{family} is not an IPv{FAMILIES[family]} address with its prefix"
                addresses[family] = interface
        held.rails[number] = addresses
    return held, ""


def parse_record(record: t.Any, host: str, labels: Mapping[str, str], errors: list[str]) -> Held | None:
    """The record file as the role read it on the host: ``{path, exists, regular, size, content}``.

    None when there is none; a file that is not a regular file, too large, not JSON or not of the record's shape is an
    error naming the host and the path (never the file's text).
    """
    if record is None or record == "":
        return None
    if not isinstance(record, Mapping):
        errors.append(f"host {host}: record (the rail record read on the host) must be a mapping, got "
                      f"{type(record).__name__}")
        return None
    if not record.get("exists"):
        return None
    path = str(record.get("path") or RECORD_FILE)
    remedy = (f"remove it, and set {labels['host_index']} to the index the host's rail addresses were made with "
              "if it has some")
    where = f"host {host}: {path} (the record of its rail addresses)"
    if not record.get("regular"):
        errors.append(f"{where} is not a regular file; {remedy}")
        return None
    size = _whole(record.get("size"))
    if size is None or size > RECORD_LIMIT:
        errors.append(f"{where} is larger than {RECORD_LIMIT} bytes, not a record the role wrote; {remedy}")
        return None
    content = record.get("content")
    if not isinstance(content, str):
        errors.append(f"{where} was not read; {remedy}")
        return None
    try:
        data = json.loads(content)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        errors.append(f"{where} is not JSON{f' (line {line})' if line else ''}; {remedy}")
        return None
    except RecursionError:  # arrays or objects nested deeper than Python follows, well within the size limit
        errors.append(f"{where} is nested deeper than a record the role wrote; {remedy}")
        return None
    held, problem = held_of_record(data, "record")
    if held is None:
        errors.append(f"{where} is not a record the role wrote: {problem}; {remedy}")
    return held


def held_of_plan_fact(fact: t.Any, host: str, labels: Mapping[str, str], errors: list[str]) -> Held | None:
    """A host's rail plan of an earlier run (``ansible_facts['rdma_network_rail_plan']``): its ``record`` when it has
    one, else (a plan of a build that kept no record) its ``host_index`` and its rails' addresses.
    None when there is no plan; a plan of another shape is an error naming the host and the fact.
    """
    if fact is None:
        return None
    where = (f"host {host}: ansible_facts['{PLAN_FACT}'] (its rail plan of an earlier run, from the facts) is not a "
             "rail plan of the role")
    remedy = f"clear this host's facts in the fact cache, or set {labels['host_index']} for it"
    if not isinstance(fact, Mapping):
        errors.append(f"{where}; {remedy}")
        return None
    if "record" in fact:
        held, problem = held_of_record(fact["record"], "facts")
        if held is None:
            errors.append(f"{where} (record: {problem}); {remedy}")
        return held
    index = _whole(fact.get("host_index"))
    rails = fact.get("rails")
    if index is None or index < 0 or not isinstance(rails, (list, tuple)):
        errors.append(f"{where} (no host_index of 0 or more and list of rails); {remedy}")
        return None
    held = Held("facts", index, None, {}, {})
    for entry in rails:
        number = _whole(entry.get("rail")) if isinstance(entry, Mapping) else None
        if number is None or number < 0:
            errors.append(f"{where} (a rail without its number); {remedy}")
            return None
        addresses = {}
        for family in FAMILIES:
            if entry.get(family) is None:
                continue
            interface = _interface(f"{entry.get(family)}/{entry.get(f'{family}_prefix')}", family)
            if interface is None:
                errors.append(f"{where} (rail {number}: {family} is not an address with its prefix); {remedy}")
                return None
            addresses[family] = interface
        held.rails[number] = addresses
        if isinstance(entry.get("netdev"), str):
            held.netdevs[number] = entry["netdev"]
    return held


def _live_addresses(network: Mapping, netdev: str, host: str, errors: list[str]) -> list:
    """The global addresses of ``netdev`` in the host's network facts (``setup``'s layout,
    :mod:`...plugin_utils.network_facts`): its primary IPv4 address, its ``ipv4_secondaries`` (a rail address may be
    one) and its IPv6 addresses of scope ``global``, each with its prefix (or, for IPv4, netmask)."""
    entry = network_facts.interface_entry(network, netdev)
    where = f"host {host}: {network_facts.FABRIC_FACT}['interfaces']['{netdev}'] (its live addresses)"
    candidates: list[t.Any] = []
    for key, many in (("ipv4", False), ("ipv4_secondaries", True), ("ipv6", True)):
        value = entry.get(key)
        if value is None:
            continue
        if many and not isinstance(value, (list, tuple)):
            errors.append(f"{where}: {key} must be a list of addresses, got {type(value).__name__}")
            continue
        candidates.extend((key, item) for item in (value if many else [value]))
    found = []
    for key, item in candidates:
        if not isinstance(item, Mapping):
            errors.append(f"{where}: an entry of {key} is not a mapping")
            continue
        if key == "ipv6" and item.get("scope", "global") != "global":
            continue
        try:
            interface = ipaddress.ip_interface(f"{item.get('address')}/{item.get('prefix') or item.get('netmask')}")
        except ValueError:
            errors.append(f"{where}: an entry of {key} is not an address with its prefix length")
            continue
        if interface.version == FAMILIES["ipv4" if key != "ipv6" else "ipv6"]:
            found.append(interface)
    return found


def held_of_addresses(rails: t.Sequence[Mapping], live: t.Any, offset: int | None, host: str,
                      labels: Mapping[str, str], errors: list[str]) -> Held | None:
    """The index a host's live addresses on its planned rails were made from (a host converged before records).

    ``rails`` are the planned rails, each with ``rail``, ``netdev`` and ``networks`` (family to subnet); ``live``
    is the host's network facts in ``setup``'s layout (:func:`...plugin_utils.network_facts.network_facts`; None when
    not gathered).  Only live addresses inside a rail's subnet count.  None when there are none; addresses that are
    not one index, or below the offset, are an error naming the host, the rails and the addresses.
    """
    if live is None or offset is None:
        return None
    if not isinstance(live, Mapping):
        errors.append(f"host {host}: {network_facts.FABRIC_FACT} (the live addresses of the links) must be a mapping, "
                      f"got {type(live).__name__}")
        return None
    found = []
    for rail in rails:
        for interface in _live_addresses(live, rail["netdev"], host, errors):
            for family, network in rail["networks"].items():
                if interface.version == network.version and interface.ip in network:
                    index = int(interface.ip) - int(network.network_address) - offset
                    found.append((rail["rail"], rail["netdev"], family, interface.ip, network, index))
    if not found:
        return None
    indices = sorted({item[5] for item in found})
    listed = ", ".join(f"{ip} on rail {number} ({netdev}, index {index})"
                       for number, netdev, _family, ip, _network, index in found)
    if len(indices) > 1:
        errors.append(f"host {host}: its live rail addresses are not of one host index: {listed}; set "
                      f"{labels['host_index']} to the index it keeps")
        return None
    if indices[0] < 0:
        errors.append(f"host {host}: its live rail addresses are below {labels['address_offset']} {offset}: {listed}; "
                      f"set {labels['address_offset']} and {labels['host_index']} to what they were made with")
        return None
    held = Held("addresses", indices[0], offset, {}, {})
    for number, netdev, family, ip, network, _index in found:
        held.rails.setdefault(number, {})[family] = ipaddress.ip_interface(f"{ip}/{network.prefixlen}")
        held.netdevs[number] = netdev
    return held


def fleet_of(hosts: t.Sequence[str], fleet: t.Sequence[str] | None, labels: Mapping[str, str],
             errors: list[str]) -> list[str]:
    """The fleet in natural order (``hosts`` when None); hosts of the run outside it are an error naming them."""
    if fleet is None:
        return sorted(dict.fromkeys(hosts), key=natural_key)
    outside = sorted({host for host in hosts if host not in fleet}, key=natural_key)
    if outside:
        errors.append(f"host {', '.join(outside)}: not in {labels['fleet']} ({len(set(fleet))} host(s)), the hosts "
                      "whose rail addresses are kept apart; set it to a host pattern that holds every GPU host of the "
                      "fabric")
    return sorted(dict.fromkeys([*fleet, *hosts]), key=natural_key)


def choose_indices(run: t.Sequence[str], claims: Mapping[str, Claim], labels: Mapping[str, str],
                   errors: list[str]) -> dict[str, tuple[int, str]]:
    """``{host: (index, source)}`` for the hosts of the run: explicit, else held, else the lowest free index.

    Free: neither explicit nor held by any host of the fleet (``claims``, the run's hosts and the others).  Hosts that
    need a new index get none while a fleet host outside the run has no known index (the error names them all).
    """
    taken: set[int] = set()
    for claim in claims.values():
        if claim.explicit is not None:
            taken.add(claim.explicit)
        if claim.held is not None and claim.held.host_index is not None:
            taken.add(claim.held.host_index)
    chosen: dict[str, tuple[int, str]] = {}
    new = []
    for host in sorted(run, key=natural_key):
        claim = claims[host]
        if claim.explicit is not None:
            chosen[host] = (claim.explicit, "explicit")
        elif claim.held is not None and claim.held.host_index is not None:
            chosen[host] = (claim.held.host_index, claim.held.source)
        else:
            new.append(host)
    if not new:
        return chosen
    unknown = [host for host in sorted(claims, key=natural_key) if host not in run and claims[host].explicit is None
               and (claims[host].held is None or claims[host].held.host_index is None)]
    if unknown:
        errors.append(f"host {', '.join(new)}: a new host index is needed, but the index of {', '.join(unknown)} "
                      f"({labels['fleet']}, not in this run) is unknown: neither {labels['host_index']} nor a rail "
                      "plan in their facts; run the role on them too (or keep a fact cache), leave them out of "
                      f"{labels['fleet']} if they have no rails, or set {labels['host_index']} for {', '.join(new)}")
        return chosen
    index = 0
    for host in new:
        while index in taken:
            index += 1
        chosen[host] = (index, "allocated")
        taken.add(index)
    return chosen


def describe_index(index: int, source: str, labels: Mapping[str, str]) -> str:
    """How a host came by its index, for messages."""
    if source == "explicit":
        return f"{labels['host_index']} {index}"
    if source == "allocated":
        return f"the new host index {index}"
    return HELD_WORDS[source].format(index=index)


def moves(host: str, planned: t.Sequence[Mapping], held: Held | None, index: int, source: str, offset: int | None,
          labels: Mapping[str, str]) -> list[dict]:
    """The addresses the plan moves: ``[{rail, netdev, family, from, to, cause}]``.

    A planned address differs from the one the host holds on that rail (address, not prefix: a resized subnet
    keeps its addresses).  A family the plan drops, or a rail it adds, is no move.
    """
    if held is None:
        return []
    found = []
    for rail in planned:
        for family in FAMILIES:
            before = held.rails.get(rail["rail"], {}).get(family)
            if before is None or rail.get(family) is None:
                continue
            after = ipaddress.ip_interface(f"{rail[family]}/{rail[f'{family}_prefix']}")
            if before.ip == after.ip:
                continue
            causes = []
            if held.host_index is not None and held.host_index != index:
                causes.append(f"{describe_index(index, source, labels)}, "
                              f"{describe_index(held.host_index, held.source, labels)}")
            if held.address_offset is not None and offset is not None and held.address_offset != offset:
                causes.append(f"{labels['address_offset']} {offset}, {held.address_offset} before")
            if before.network != after.network:
                causes.append(f"{labels['rails']}[{rail['rail']}].{family} {after.network}, {before.network} before")
            found.append({"rail": rail["rail"], "netdev": rail["netdev"], "family": family, "from": str(before.ip),
                          "to": str(after.ip), "cause": "; ".join(causes) or "the plan differs"})
    return found


def move_errors(host: str, found: t.Sequence[Mapping], labels: Mapping[str, str]) -> list[str]:
    """One message per moved address: host, rail, both addresses and the cause."""
    return [f"host {host}: rail {item['rail']} ({item['netdev']}) {item['family']}: the plan moves the host's address "
            f"{item['from']} to {item['to']} ({item['cause']}); a host keeps its rail addresses, set "
            f"{labels['allow_readdress']} to move them" for item in found]


def record_of(index: int, offset: int, planned: t.Sequence[Mapping], held: Held | None, kept: t.Collection[int],
              prune: bool) -> dict:
    """The record a host keeps after the run: the planned rails' addresses, and the rails it held that are not
    planned this run (down or not selected) as they were, unless pruned (neither planned nor in ``kept``)."""
    rails: dict[int, dict[str, str]] = {}
    if held is not None:
        for number, addresses in held.rails.items():
            if prune and number not in kept:
                continue
            entry = {family: str(interface) for family, interface in addresses.items()}
            if number in held.netdevs:
                entry["netdev"] = held.netdevs[number]
            rails[number] = entry
    for rail in planned:
        entry = {"netdev": rail["netdev"]}
        for family in FAMILIES:
            if rail.get(family) is not None:
                entry[family] = f"{rail[family]}/{rail[f'{family}_prefix']}"
        rails[rail["rail"]] = entry
    return {"version": RECORD_VERSION, "host_index": index, "address_offset": offset,
            "rails": {str(number): rails[number] for number in sorted(rails)}}


def duplicate_errors(owned: Mapping[str, Mapping], run: t.Collection[str], descriptions: Mapping[str, str],
                     labels: Mapping[str, str]) -> list[str]:
    """One message per address two hosts of the fleet would hold, naming both.

    ``owned`` maps each host (those outside the run first, then the run's in natural order) to the record it keeps
    (or holds); ``descriptions`` how each host came by its index.
    """
    owners: dict[str, tuple[str, str]] = {}
    messages = []
    for host, record in owned.items():
        for key, entry in record["rails"].items():
            for family in FAMILIES:
                if family not in entry:
                    continue
                address = entry[family].split("/")[0]
                netdev = f" ({entry['netdev']})" if entry.get("netdev") else ""
                where = f"rail {key}{netdev}"
                if address in owners and owners[address][0] != host:
                    other, other_where = owners[address]
                    outside = "" if other in run else ", from its facts (not in this run)"
                    messages.append(f"host {host}: {descriptions[host]} gives {address} on "
                                    f"{where}, already the address of host {other} ({other_where}{outside}); give "
                                    f"every host a distinct {labels['host_index']}")
                else:
                    owners.setdefault(address, (host, where))
    return messages
