# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a report says about its own making: when, by which release of the collection, and which hosts it judged.

:func:`report_stamp` is the logic of the ``gpufabric.cluster.report_stamp`` filter; :func:`stamp_line` is the one
sentence the Markdown and HTML reports print from it. The time is UTC to the second in one format
(:data:`TIME_FORMAT`); the report tasks hand ``__gpufabric_report_volatile`` (roles/gpufabric/vars/main.yml) to
``gpufabric.cluster.write_files`` as the text that changes on every run, so a report whose judgement is unchanged is
not rewritten and keeps the time it was first written with that content.
"""

from __future__ import annotations

import datetime
import json
import os
import typing as t
from collections.abc import Mapping

import yaml

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments

# The time as the reports print it ("generated at <time>" in Markdown and HTML, "generated_at": "<time>" in JSON),
# which roles/gpufabric/vars/main.yml's __gpufabric_report_volatile matches.
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# This file is <collection>/plugins/plugin_utils/report_stamp.py.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTION = "gpufabric.cluster"


def collection_version(root: str = COLLECTION_ROOT) -> str:
    """The collection's version: MANIFEST.json of an installed collection, else galaxy.yml of a source tree, else
    ``unknown`` (never an error: a report is not refused for it)."""
    try:
        with open(os.path.join(root, "MANIFEST.json"), encoding="utf-8") as stream:
            version = json.load(stream)["collection_info"]["version"]
    except (OSError, ValueError, KeyError, TypeError):
        try:
            with open(os.path.join(root, "galaxy.yml"), encoding="utf-8") as stream:
                version = (yaml.safe_load(stream) or {}).get("version")
        except (OSError, yaml.YAMLError, AttributeError):
            version = None
    return str(version) if isinstance(version, (str, int, float)) and str(version).strip() else "unknown"


def report_stamp(hosts: t.Any, limit: t.Any = None, inventory: t.Any = None,
                 at: datetime.datetime | None = None, version: str | None = None) -> dict:
    """``{generated_at, generated_by, hosts_pattern, limit, inventory}`` of a report judging ``hosts`` (a host
    pattern), run with ``--limit`` ``limit`` (None or empty: none) over the inventory sources ``inventory``."""
    pattern = arguments.text("hosts", hosts)
    limit_text = None if limit in (None, "") else arguments.text("limit", limit)
    sources = [] if inventory is None else [arguments.text(f"inventory[{index}]", item)
                                            for index, item in enumerate(arguments.sequence("inventory", inventory))]
    when = at or datetime.datetime.now(datetime.UTC)
    if when.tzinfo is None:
        raise arguments.ArgumentError("at must carry a time zone")
    return {
        "generated_at": when.astimezone(datetime.UTC).strftime(TIME_FORMAT),
        "generated_by": f"{COLLECTION} {version or collection_version()}",
        "hosts_pattern": pattern,
        "limit": limit_text,
        "inventory": sources,
    }


def stamp_line(report: Mapping) -> str:
    """One sentence for people from the stamp keys of ``report``; empty when it has none."""
    if not isinstance(report, Mapping) or not isinstance(report.get("generated_at"), str):
        return ""
    limit = report.get("limit")
    sources = [str(item) for item in report.get("inventory") or [] if isinstance(item, str)]
    return (f"Report generated at {report['generated_at']} by {report.get('generated_by') or COLLECTION} for hosts "
            f"{report.get('hosts_pattern') or '-'}" + (f" with --limit {limit}" if limit else "")
            + (f", inventory {', '.join(sources)}" if sources else "") + ".")
