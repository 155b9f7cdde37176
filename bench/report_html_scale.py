# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Size and render time of the preflight HTML page (``preflight_report_html``) for fleets of NVL72 racks.

Per size (trays; 18 a rack): the preflight report of the fleet of tests/fixtures/rack_fleet.py (the recorded GB200
tray, most trays passing, one whole rack degraded, a few trays failing for a handful of reasons), then the filter's
render time (the best and the median of ``--runs`` renders, CPU seconds of this process) and the page's size in bytes.
The preflight report itself is timed once per size, for scale (it is not the filter's cost).  With ``--write DIR``
each page is written as ``DIR/preflight-<trays>.html``, to open in a browser.

Usage (from the repository root, after ``make test-venv collection``):
  PYTHONPATH=.build/collections .venv/bin/python bench/report_html_scale.py [--sizes 288 576 2304] [--runs 5]
  PYTHONPATH=.build/collections .venv/bin/python bench/report_html_scale.py --sizes 2304 --write /tmp/pages
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from fixtures.rack_fleet import TRAYS_PER_RACK, gathered_facts, rack_fleet

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import preflight_report
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight_html import (
    preflight_report_html,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[288, 576, 2304],
                        help=f"fleet sizes in trays, each a multiple of {TRAYS_PER_RACK}")
    parser.add_argument("--runs", type=int, default=5, help="renders per size")
    parser.add_argument("--write", metavar="DIR", help="write each page to DIR/preflight-<trays>.html")
    args = parser.parse_args()
    if any(size <= 0 or size % TRAYS_PER_RACK for size in args.sizes):
        parser.error(f"--sizes: every size must be a positive multiple of {TRAYS_PER_RACK} (trays of a rack)")
    facts = gathered_facts()
    print(f"{'trays':>6} {'failing':>8} {'report s':>9} {'render best s':>14} {'render median s':>16} {'bytes':>10} "
          f"{'bytes/tray':>11}")
    for size in args.sizes:
        hostvars = rack_fleet(facts, size // TRAYS_PER_RACK)
        started = time.process_time()
        report = preflight_report(hostvars, list(hostvars), {"imex_domain_members": TRAYS_PER_RACK})
        report_cpu = time.process_time() - started
        times = []
        for _run in range(args.runs):
            started = time.process_time()
            page = preflight_report_html(report)
            times.append(time.process_time() - started)
        size_bytes = len(page.encode("utf-8"))
        failing = sum(1 for entry in report["hosts"].values() if entry["status"] != "pass")
        print(f"{len(hostvars):>6} {failing:>8} {report_cpu:>9.2f} {min(times):>14.3f} "
              f"{statistics.median(times):>16.3f} {size_bytes:>10} {size_bytes / len(hostvars):>11.0f}")
        if args.write:
            os.makedirs(args.write, exist_ok=True)
            with open(os.path.join(args.write, f"preflight-{len(hostvars)}.html"), "w", encoding="utf-8") as handle:
                handle.write(page)


if __name__ == "__main__":
    main()
