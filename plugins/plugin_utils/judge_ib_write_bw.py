# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge parsed perftest bandwidth against what the port it ran on can carry.

The logic of the ``gpufabric.cluster.judge_ib_write_bw`` filter; errors are :class:`IbWriteBwJudgeError` and
:class:`...arguments.ArgumentError`.

A bidirectional run (``-b``, ``Bidirectional`` in the banner) reports the sum of both directions, so it is
judged against twice the line rate. perftest's Gb/s count payload bits over the port's data rate (the sysfs
rate is already after line encoding), so no row can exceed what the link carries: an average above it by more
than :data:`ABOVE_CAPACITY_TOLERANCE` (room for perftest's cycle-counter calibration) is a parse or unit error
(MiB/sec read as Gb/sec, a rate of the wrong port), reported as such and never as a pass.
"""

from __future__ import annotations

import math
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments


class IbWriteBwJudgeError(ValueError):
    """Input the ``judge_ib_write_bw`` filter cannot use; the message says what is wrong."""


DEFAULT_MIN_FRACTION = 0.9
ABOVE_CAPACITY_TOLERANCE = 0.03


def _capacity_basis(line_rate: float, bidirectional: bool) -> str:
    rate = f"{line_rate:g} Gb/s line rate"
    return f"2 x {rate} (bidirectional run)" if bidirectional else rate


def judge_ib_write_bw(parsed: t.Any, line_rate_gbps: t.Any, min_fraction: t.Any = DEFAULT_MIN_FRACTION,
                      port: t.Any = None, bidirectional: t.Any = None) -> dict:
    """Judge ``parse_ib_write_bw`` output: the best average over large messages against what the link carries.

    ``line_rate_gbps`` is the port's rate from the ConnectX facts (``rate_gbps``); a port without a known rate
    cannot be judged and is an error naming the port. ``bidirectional`` defaults to what the output's banner
    says; given, it must agree with the banner.
    """
    port = arguments.optional(arguments.text, "port", port)
    where = f"port {port}: " if port else ""
    parsed = arguments.mapping("_input", parsed)
    if "best_average_gbps" not in parsed or not isinstance(parsed.get("rows", []), list):
        raise IbWriteBwJudgeError("expected the result of gpufabric.cluster.parse_ib_write_bw")
    if isinstance(line_rate_gbps, bool) or not isinstance(line_rate_gbps, (int, float)) or not line_rate_gbps > 0 \
            or line_rate_gbps == float("inf"):
        raise IbWriteBwJudgeError(f"{where}the line rate is unknown ({line_rate_gbps!r}); line_rate_gbps must be "
                                  "a number greater than 0, the port's rate_gbps from the ConnectX facts")
    min_fraction = arguments.fraction("min_fraction", min_fraction)
    banner = parsed.get("bidirectional")
    given = arguments.optional(arguments.boolean, "bidirectional", bidirectional)
    reasons = []
    if given is not None and isinstance(banner, bool) and given != banner:
        reasons.append(f"{where}bidirectional is {str(given).lower()} but the output is of a "
                       f"{'bidirectional' if banner else 'unidirectional'} run ({parsed.get('test')!r})")
    bidir = bool(banner) if given is None else given
    line_rate = float(line_rate_gbps)
    capacity = line_rate * (2 if bidir else 1)
    basis = _capacity_basis(line_rate, bidir)
    required = round(capacity * min_fraction, 2)
    ceiling = capacity * (1 + ABOVE_CAPACITY_TOLERANCE)
    best = parsed["best_average_gbps"]
    if best is not None and (isinstance(best, bool) or not isinstance(best, (int, float)) or not math.isfinite(best)):
        raise IbWriteBwJudgeError(f"best_average_gbps must be a number or null, got {best!r}")
    for index, row in enumerate(parsed.get("rows") or []):
        average = row.get("bw_average_gbps") if isinstance(row, dict) else None
        if isinstance(average, float) and not math.isfinite(average):
            raise IbWriteBwJudgeError(f"{where}rows[{index}].bw_average_gbps is {average!r}, not a finite number (a "
                                      "figure parse_ib_write_bw refuses)")
    impossible = [row for row in parsed.get("rows") or [] if isinstance(row, dict)
                  and isinstance(row.get("bw_average_gbps"), (int, float)) and row["bw_average_gbps"] > ceiling]
    fraction = round(best / capacity, 4) if best is not None else None
    if impossible:
        row = max(impossible, key=lambda row: row["bw_average_gbps"])
        reasons.append(f"{where}average {row['bw_average_gbps']} Gb/s at {row.get('bytes')} bytes is above the "
                       f"{capacity:g} Gb/s the link can carry ({basis}, +{ABOVE_CAPACITY_TOLERANCE:.0%}): a parse "
                       f"or unit error (unit {parsed.get('unit')!r}), not a measurement")
    elif best is None:
        reasons.append(f"{where}no message of 64 KiB or more was measured (run ib_write_bw with -a or -s 65536+)")
    elif best < required:
        reasons.append(f"{where}best average {best} Gb/s is {fraction:.1%} of the {basis}, "
                       f"below the required {min_fraction:.0%} ({required} Gb/s)")
    return {"status": "fail" if reasons else "pass", "reasons": reasons, "best_average_gbps": best,
            "line_rate_gbps": line_rate, "bidirectional": bidir, "capacity_gbps": capacity,
            "required_gbps": required, "fraction_of_line_rate": fraction}
