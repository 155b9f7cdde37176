# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge parsed perftest bandwidth against the line rate of the port it ran on.

The logic of the ``gpufabric.cluster.judge_ib_write_bw`` filter; errors are :class:`IbWriteBwJudgeError`.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping


class IbWriteBwJudgeError(ValueError):
    """Input the ``judge_ib_write_bw`` filter cannot use; the message says what is wrong."""


DEFAULT_MIN_FRACTION = 0.9


def judge_ib_write_bw(parsed: t.Any, line_rate_gbps: t.Any, min_fraction: float = DEFAULT_MIN_FRACTION,
                      port: str | None = None) -> dict:
    """Judge ``parse_ib_write_bw`` output: the best average over large messages against ``min_fraction`` of the rate.

    ``line_rate_gbps`` is the port's rate from the ConnectX facts (``rate_gbps``); a port without a known rate
    cannot be judged and is an error naming the port.
    """
    where = f"port {port}: " if port else ""
    if not isinstance(parsed, Mapping) or "best_average_gbps" not in parsed:
        raise IbWriteBwJudgeError("expected the result of gpufabric.cluster.parse_ib_write_bw")
    if isinstance(line_rate_gbps, bool) or not isinstance(line_rate_gbps, (int, float)) or line_rate_gbps <= 0:
        raise IbWriteBwJudgeError(f"{where}the line rate is unknown ({line_rate_gbps!r}); "
                                  "the port's rate must come from the ConnectX facts (rate_gbps)")
    if isinstance(min_fraction, bool) or not isinstance(min_fraction, (int, float)) or not 0 < min_fraction <= 1:
        raise IbWriteBwJudgeError(f"min_fraction must be in (0, 1], got {min_fraction!r}")
    required = round(float(line_rate_gbps) * min_fraction, 2)
    best = parsed["best_average_gbps"]
    reasons = []
    if best is None:
        reasons.append(f"{where}no message of 64 KiB or more was measured (run ib_write_bw with -a or -s 65536+)")
        fraction = None
    else:
        fraction = round(best / float(line_rate_gbps), 4)
        if best < required:
            reasons.append(f"{where}best average {best} Gb/s is {fraction:.1%} of the {line_rate_gbps} Gb/s line rate, "
                           f"below the required {min_fraction:.0%} ({required} Gb/s)")
    return {"status": "fail" if reasons else "pass", "reasons": reasons, "best_average_gbps": best,
            "line_rate_gbps": float(line_rate_gbps), "required_gbps": required, "fraction_of_line_rate": fraction}
