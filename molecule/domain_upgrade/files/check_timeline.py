# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE of molecule/domain_upgrade: what the trays' timeline and the cordon log say about a domain upgrade.

Two logs, neither written by the role under test:

- the timeline the trays append to (tests/standin/build-repo.sh: the stand-in driver's load at each boot, the
  stand-in IMEX daemon's starts), one line an event::

    2026-11-28T21:50:01.123456Z gb200-tray-01 driver-loaded 580.95.05 previous=570.172.08
    2026-11-28T21:50:01.223456Z gb200-tray-02 driver-load-failed 580.95.05 loaded=570.172.08
    2026-11-28T21:50:02.000000Z gb200-tray-01 imex-started 580.95.05

- the cordon log the scenario's watcher writes from the API server (files/watch_cordons.py)::

    2026-11-28T21:49:58.000000Z gb200-tray-01 cordoned

The answer, one JSON object on standard output (exit 0; 2 and one line naming the file and line on unreadable input):

- ``safe``: no domain ever held two driver versions while one of its nodes was uncordoned; ``mixed_while_uncordoned``
  lists each time it did (the domain, from ``time`` ``until`` when it no longer did (null: to the end), every
  member's version then, the uncordoned members);
- ``windows``: each time a domain was out of service, in order: from its first cordon or reboot (``started``) until
  every member was uncordoned again (``finished``; null while one stays cordoned);
- ``domains``: per domain, in the order given: ``touched`` (it had a window), ``started`` (its first window's start),
  ``finished`` (its last window's end), ``reboots``, ``load_failures``, ``versions`` and ``cordoned`` at the end,
  ``imex_versions`` (each member's last IMEX start);
- ``started_order`` and ``finished_order`` (the domains of the windows by those times), and ``one_at_a_time``: each
  window started after the one before it had finished.

A member's driver version is known from its first timeline line (``previous=`` or ``loaded=``); a node without a
cordon line counts as uncordoned. Events before ``--since`` only set the state the run starts from (the trays'
first load in prepare, the watcher's first listing); they touch no domain.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime

_TIME = r"(?P<time>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z)"
_TRAY_LINE = re.compile(_TIME + r" (?P<host>\S+) (?P<event>driver-loaded|driver-load-failed|imex-started) "
                        r"(?P<version>\d+\.\d+(?:\.\d+)?)(?: (?P<key>previous|loaded)=(?P<before>\S+))?$")
_CORDON_LINE = re.compile(_TIME + r" (?P<host>\S+) (?P<event>cordoned|uncordoned)$")


class TimelineError(ValueError):
    """A line of a log that is not an event this checker knows."""


@dataclass(frozen=True, order=True)
class Event:
    """One line of either log, ordered by time (then by the order it was read in)."""

    when: datetime
    seq: int
    time: str = field(compare=False)
    host: str = field(compare=False)
    kind: str = field(compare=False)
    version: str | None = field(compare=False, default=None)
    before: str | None = field(compare=False, default=None)


def _when(text: str) -> datetime:
    """A UTC time of the logs; fractions beyond microseconds are cut."""
    head, _dot, fraction = text[:-1].partition(".")
    return datetime.fromisoformat(f"{head}.{(fraction or '0')[:6].ljust(6, '0')}+00:00")


def parse(text: str, source: str, cordons: bool, start: int = 0) -> list[Event]:
    """The events of one log; ``source`` names it in errors; ``start``: the first sequence number."""
    pattern = _CORDON_LINE if cordons else _TRAY_LINE
    events = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        match = pattern.match(line.strip())
        if match is None:
            kind = "cordon log" if cordons else "timeline"
            raise TimelineError(f"{source}:{number}: not a {kind} event")
        before = None if cordons or match.group("before") in (None, "none") else match.group("before")
        events.append(Event(when=_when(match.group("time")), seq=start + len(events), time=match.group("time"),
                            host=match.group("host"), kind=match.group("event"),
                            version=None if cordons else match.group("version"), before=before))
    return events


def check(tray_events: list[Event], cordon_events: list[Event], domains: dict[str, list[str]],
          since: datetime | None = None) -> dict:
    """The answer described in the module docstring, for ``domains`` (name -> member hosts, in order)."""
    version: dict[str, str | None] = {}
    for event in sorted(tray_events):  # each member's version before its first line
        if event.kind != "imex-started":
            version.setdefault(event.host, event.before)
    cordoned: dict[str, bool] = {}
    imex: dict[str, str] = {}
    domain_of = {host: name for name, members in domains.items() for host in members}
    report = {name: {"members": list(members), "touched": False, "started": None, "finished": None, "reboots": 0,
                     "load_failures": []} for name, members in domains.items()}
    windows: list[dict] = []  # each time a domain was out of service: {domain, started, finished}
    open_window: dict[str, dict] = {}
    mixed: list[dict] = []
    events = sorted(tray_events + cordon_events)
    index = 0
    while index < len(events):
        # the events of one instant are applied together before the domains are looked at
        group = [event for event in events[index:] if event.when == events[index].when]
        index += len(group)
        for event in group:
            name = domain_of.get(event.host)
            touches = False
            if event.kind in ("cordoned", "uncordoned"):
                touches = event.kind == "cordoned" and not cordoned.get(event.host, False)
                cordoned[event.host] = event.kind == "cordoned"
            elif event.kind == "imex-started":
                imex[event.host] = event.version
            else:
                if event.kind == "driver-loaded":
                    version[event.host] = event.version
                touches = True
                if name and (since is None or event.when >= since):
                    report[name]["reboots"] += 1
                    if event.kind == "driver-load-failed":
                        report[name]["load_failures"].append({"host": event.host, "time": event.time,
                                                              "wanted": event.version, "loaded": event.before})
            if touches and name and (since is None or event.when >= since) and name not in open_window:
                open_window[name] = {"domain": name, "started": event.time, "finished": None}
                windows.append(open_window[name])
        time = group[-1].time
        for name, members in domains.items():
            known = {version[host] for host in members if version.get(host)}
            uncordoned = [host for host in members if not cordoned.get(host, False)]
            was_mixed = bool(mixed) and any(entry["domain"] == name and entry["until"] is None for entry in mixed)
            if len(known) > 1 and uncordoned and not was_mixed:
                mixed.append({"domain": name, "time": time, "until": None, "uncordoned": uncordoned,
                              "versions": {host: version.get(host) for host in members}})
            elif not (len(known) > 1 and uncordoned) and was_mixed:
                next(entry for entry in mixed if entry["domain"] == name and entry["until"] is None)["until"] = time
            if name in open_window and len(uncordoned) == len(members):
                open_window.pop(name)["finished"] = time
    for name, members in domains.items():
        mine = [window for window in windows if window["domain"] == name]
        report[name].update(touched=bool(mine), started=mine[0]["started"] if mine else None,
                            finished=mine[-1]["finished"] if mine else None,
                            versions={host: version.get(host) for host in members},
                            cordoned=[host for host in members if cordoned.get(host, False)],
                            imex_versions={host: imex.get(host) for host in members})
    started = [window["domain"] for window in windows]
    done = [window for window in windows if window["finished"]]
    finished = [window["domain"] for window in sorted(done, key=lambda window: _when(window["finished"]))]
    one_at_a_time = all(before["finished"] is not None and _when(after["started"]) >= _when(before["finished"])
                        for before, after in itertools.pairwise(windows))
    return {"safe": not mixed, "mixed_while_uncordoned": mixed, "domains": report, "windows": windows,
            "started_order": started, "finished_order": finished, "one_at_a_time": one_at_a_time}


def _domain(text: str) -> tuple[str, list[str]]:
    name, _sep, members = text.partition("=")
    hosts = [host for host in members.split(",") if host]
    if not name or not hosts:
        raise argparse.ArgumentTypeError(f"--domain {text!r}: expected NAME=HOST[,HOST...]")
    return name, hosts


def main(argv: list[str] | None = None) -> int:
    """Command line: print the JSON answer; 2 on an unreadable log."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--timeline", required=True, help="the trays' timeline")
    parser.add_argument("--cordons", required=True, help="the watcher's cordon log")
    parser.add_argument("--domain", action="append", type=_domain, required=True,
                        help="NAME=HOST[,HOST...], once a domain, in the order to report them")
    parser.add_argument("--since", type=lambda text: _when(text if text.endswith("Z") else text + "Z"),
                        help="UTC time the run started (YYYY-MM-DDTHH:MM:SS[.ffffff]Z); earlier events only set the "
                             "state it starts from")
    args = parser.parse_args(argv)
    try:
        with open(args.timeline, encoding="utf-8") as handle:
            trays = parse(handle.read(), args.timeline, cordons=False)
        with open(args.cordons, encoding="utf-8") as handle:
            cordons = parse(handle.read(), args.cordons, cordons=True, start=len(trays))
    except (OSError, TimelineError, UnicodeDecodeError) as error:
        print(f"check_timeline: {error}", file=sys.stderr)
        return 2
    print(json.dumps(check(trays, cordons, dict(args.domain), args.since), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
