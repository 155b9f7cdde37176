# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Judge a parsed nccl-tests run (``gpufabric.cluster.parse_nccl_tests``) against a bus bandwidth threshold.

The logic of the ``gpufabric.cluster.judge_nccl_tests`` filter; errors are :class:`NcclTestsJudgeError` (and
:class:`...arguments.ArgumentError` for a wrong argument).  A run passes when no ``#wrong`` is non-zero, the
out-of-bounds line says 0, no rank is missing, and the peak busbw over the large sizes (``>= min_size_bytes``)
reaches the threshold: given, or derived from the facts with the calibration points below. A busbw above
:data:`BUSBW_CEILING_GBPS` fails as physically impossible, and a figure that is not a finite number (NaN, an
infinity) cannot be judged.
"""

from __future__ import annotations

import itertools
import math
import re
import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments, judge_nvbandwidth

GIB = 1024 ** 3
DEFAULT_MIN_SIZE_BYTES = GIB

# all_reduce busbw floors within one NVLink domain (shape ``nvlink``), by GPU model, in GB/s: the ranks of the run
# all in one NVLink domain, the NVL72 rack of GB200 and GB300 trays (multi-node NVLink), or the eight GPUs of one HGX
# baseboard behind its NVSwitches (one node). busbw is normalised for the rank count (nccl-tests doc/PERFORMANCE.md:
# busbw = algbw * 2 (n-1) / n), so one floor holds for any number of ranks of the domain. The floor, not the peak, is
# the threshold: a healthy domain passes it with room; a degraded one (a link down, NVLink SHARP off, a GPU off the
# switch) falls below it. Each row: the family, the pattern its NVML product name (or GPU Feature Discovery's
# ``nvidia.com/gpu.product`` label, the same name with hyphens) matches, a pattern it must not match, the floor, and
# where the figure comes from. A model no row matches has no floor: the judge asks for threshold_gbps, never guesses.
#
# GB300: NVIDIA aicr issue 2640 (https://github.com/NVIDIA/aicr/issues/2640) and pull request 2782 (its GB300 NCCL
#   profile) floor GB300 NVL72 NVLS all_reduce busbw at 700 GB/s; measured 841.17 GB/s on two trays (8 GPUs, 16 GiB,
#   https://github.com/NVIDIA/aicr/issues/1256, comment of 2026-08-25) and 895.08 GB/s on bare metal (the baseline of
#   aicr's generic GB300 recipe, https://github.com/NVIDIA/aicr/issues/2787). 700 is that public floor, 83 % of 841.
# GB200: a full GB200 NVL72 all_reduce reaches about 835-847 GB/s busbw at 4-8 GiB (average about 745 over 0.5-8 GiB,
#   https://github.com/coreweave/nccl-tests/pull/43), and production acceptance floors of about 600 GB/s are used
#   (public GB200 NVL72 all_reduce results cited in gpufabric.cluster issue 19). 600 is 71 % of the 840 peak.
# H100, H200 (HGX, eight SXM GPUs on NVLink 4 and third-generation NVSwitch, one node): "On 8 GPUs, you should reach
#   a peak busBw of ~480GB/s" with NVLink SHARP (NCCL's maintainer, https://github.com/NVIDIA/nccl-tests/issues/212);
#   an 8x H200 node measured 475 GB/s (https://github.com/NVIDIA/nccl-tests/issues/272). The floor is GB200's ratio
#   of floor to peak, 600/840 of 480, rounded down: 340 GB/s. It is below the ~370 GB/s of the ring algorithm without
#   NVLink SHARP (issue 212), so a node that runs without NVLS still passes; the transport lines of the log say which.
#   The PCIe cards (``H100 PCIe``; ``H100 NVL`` and ``H200 NVL``, PCIe cards paired by NVLink bridges) have no
#   NVSwitch: their all_reduce over eight GPUs crosses PCIe, so they get no HGX floor.
# B200: no point. The public 8x B200 all_reduce figures found are a user's question without its output ("830+",
#   https://github.com/NVIDIA/nccl/issues/1807) and a two-node run bound by its network
#   (https://github.com/NVIDIA/nccl-tests/issues/389); neither is a calibration point. Give threshold_gbps.
NVLINK_FLOORS: tuple[tuple[str, str, str | None, float, str], ...] = (
    ("GB300", r"\bGB300\b", None, 700.0,
     "GB300 NVL72 NVLink domain all_reduce floor 700 GB/s (NVIDIA aicr issue 2640; measured 841-895 GB/s)"),
    ("GB200", r"\bGB200\b", None, 600.0,
     "GB200 NVLink domain all_reduce floor 600 GB/s (NVL72 peak about 835-847 GB/s)"),
    ("H200", r"\bH200\b", r"\b(PCIe|NVL)\b", 340.0,
     "HGX H200 8-GPU NVLink all_reduce floor 340 GB/s (475 GB/s measured, nccl-tests issue 272)"),
    ("H100", r"\bH100\b", r"\b(PCIe|NVL)\b", 340.0,
     "HGX H100 8-GPU NVLink all_reduce floor 340 GB/s (peak about 480 GB/s with NVLink SHARP, nccl-tests issue 212)"),
)
NVLINK_FLOORS_GBPS = {family: floor for family, _pattern, _exclude, floor, _source in NVLINK_FLOORS}

# all_reduce busbw per NIC over the RDMA rails (shape ``rdma``), by NIC rate in Gb/s, in GB/s.
# Calibration: InfiniBand NDR 400G gives about 46-48 GB/s busbw per NIC; about 24 GB/s per 200G (HDR) NIC (public
# multi-node all_reduce results cited in gpufabric.cluster issue 19).  The lower end of each range is the floor.
RDMA_PER_NIC_GBPS = {400: 46.0, 200: 24.0}

# The most busbw one GPU can show, over the NVLink domain and over the rails alike: twice the most one GPU's NVLink
# carries in one direction in any generation (judge_nvbandwidth.CELL_CEILING_GBPS, NVLink 5: 900 GB/s each way,
# 1.8 TB/s in all). busbw = algbw * 2 (n-1) / n (nccl-tests doc/PERFORMANCE.md) is less than twice algbw, and algbw
# no more than what a GPU receives: the whole buffer, at most at NVLink's rate in one direction even with NVLink
# SHARP reducing in the switch. Over the rails the NICs carry part of the bytes and NVLink the rest (a few nodes
# move most of them over NVLink, so the NICs' rate bounds no busbw), and a GPU receives no faster. A busbw above this
# is a parse or unit error, never a measurement.
BUSBW_CEILING_GBPS = 2 * judge_nvbandwidth.CELL_CEILING_GBPS

# The most ranks one job can have: 2**20, far above any job this collection plans (a GB200 NVL72 domain has 72
# GPUs; the RDMA rails' job one rank a GPU of the nodes given) and above the GPUs of any one system built. A device
# line of a higher rank is not of a job's run, and the judge never counts up to a rank number a log holds.
MAX_RANKS = 1_048_576

# NCCL_DEBUG=INFO lines that show the path a run took (NCCL's own log words).
_TRANSPORT_PATTERNS = (
    ("mnnvl", re.compile(r"\bMNNVL\b")),
    ("nvls", re.compile(r"\bNVLS\b")),
    ("network", re.compile(r"\bNET/(IB|Socket)\b|Using network (IB|Socket)|via NET/")),
)


class NcclTestsJudgeError(ValueError):
    """Input the ``judge_nccl_tests`` filter cannot judge; the message says what is wrong."""


def _gpu_family(model: str) -> tuple[str, float, str] | None:
    """The calibration row (family, floor, source) whose pattern ``model`` matches, or ``None``.

    A name that two families match (``'GB200 GB300'``) is no one model's name: an error, never the first one.
    """
    matched = [(family, floor, source) for family, pattern, exclude, floor, source in NVLINK_FLOORS
               if re.search(pattern, model, re.IGNORECASE)
               and not (exclude and re.search(exclude, model, re.IGNORECASE))]
    if len(matched) > 1:
        raise NcclTestsJudgeError(f"facts.gpu_model {model!r} names more than one GPU model "
                                  f"({', '.join(family for family, _floor, _source in matched)}); give one model's "
                                  "name or threshold_gbps")
    return matched[0] if matched else None


def derive_threshold(facts: Mapping) -> tuple[float, str]:
    """The busbw threshold (GB/s) and how it was derived, from ``facts``.

    ``facts``: ``shape`` ``nvlink`` with ``gpu_model`` (``'NVIDIA GB200'``, ``'NVIDIA H100 80GB HBM3'``: all ranks in
    one NVLink domain, see :data:`NVLINK_FLOORS`); or ``shape`` ``rdma`` with
    ``nic_rate_gbps`` (400, 200) and ``nics`` (NICs per node used by the run).  Raises
    :class:`NcclTestsJudgeError` when no calibration point covers them: give ``threshold_gbps`` then.
    """
    shape = arguments.text("facts.shape", facts.get("shape"))
    if shape == "nvlink":
        model = arguments.text("facts.gpu_model", facts.get("gpu_model"))
        matched = _gpu_family(model)
        if matched is None:
            raise NcclTestsJudgeError(f"no public all_reduce calibration for GPU model {model!r} over NVLink "
                                      f"(known: {', '.join(NVLINK_FLOORS_GBPS)}; HGX SXM only, not PCIe or NVL "
                                      "cards); give threshold_gbps")
        _family, floor, source = matched
        return floor, source
    if shape == "rdma":
        rate = arguments.positive("facts.nic_rate_gbps", facts.get("nic_rate_gbps"))
        nics = arguments.positive("facts.nics", facts.get("nics"))
        if int(nics) != nics:
            raise arguments.ArgumentError(f"facts.nics must be a whole number, got {nics!r}")
        per_nic = RDMA_PER_NIC_GBPS.get(int(rate)) if int(rate) == rate else None
        if per_nic is None:
            raise NcclTestsJudgeError(f"no public all_reduce calibration for {rate:g} Gb/s NICs "
                                      f"(known: {', '.join(str(key) for key in RDMA_PER_NIC_GBPS)}); "
                                      "give threshold_gbps")
        return per_nic * int(nics), f"{int(nics)} x {int(rate)}G NIC at {per_nic:g} GB/s busbw each"
    raise arguments.ArgumentError(f"facts.shape must be 'nvlink' or 'rdma', got {shape!r}")


def transport(log: str | None) -> dict:
    """What paths an NCCL_DEBUG=INFO log shows: ``used`` (``mnnvl``, ``nvls``, ``network``) and the evidence."""
    if not log:
        return {"used": [], "evidence": [], "known": False}
    used: list[str] = []
    evidence: list[str] = []
    for line in log.splitlines():
        for name, pattern in _TRANSPORT_PATTERNS:
            if name not in used and pattern.search(line):
                used.append(name)
                evidence.append(line.strip()[:200])
    return {"used": used, "evidence": evidence, "known": bool(used)}


def _placements(row: Mapping) -> list[Mapping]:
    return [placement for placement in (row.get("out_of_place"), row.get("in_place")) if isinstance(placement, Mapping)]


def _listed(items: list, separator: str = ", ", limit: int = 8, total: int | None = None) -> str:
    """The first ``limit`` of ``items`` joined, and how many more of ``total`` (default: all of ``items``): a
    failure of a 72-rank job lists no 72 ranks."""
    total = len(items) if total is None else total
    shown = separator.join(map(str, items[:limit]))
    return shown if total <= limit else f"{shown} and {total - limit} more"


def _check_parsed(parsed: t.Any) -> Mapping:
    parsed = arguments.mapping("the input", parsed)
    for key in ("rows", "devices"):
        if not isinstance(parsed.get(key), list):
            raise NcclTestsJudgeError(f"the input has no '{key}' list: give the output of parse_nccl_tests")
    for index, row in enumerate(parsed["rows"]):
        if not isinstance(row, Mapping) or not isinstance(row.get("size_bytes"), int) \
                or isinstance(row.get("size_bytes"), bool):
            raise NcclTestsJudgeError(f"rows[{index}] is not a parse_nccl_tests row")
        for which in ("out_of_place", "in_place"):
            placement = row.get(which)
            if not isinstance(placement, Mapping):
                continue
            busbw, wrong = placement.get("busbw_gbps"), placement.get("wrong")
            if isinstance(busbw, float) and not math.isfinite(busbw):
                raise NcclTestsJudgeError(f"rows[{index}].{which}.busbw_gbps is {busbw!r}, not a finite number (a "
                                          "figure parse_nccl_tests refuses)")
            if wrong is not None and (isinstance(wrong, bool) or not isinstance(wrong, int) or wrong < 0):
                raise NcclTestsJudgeError(f"rows[{index}].{which}.wrong must be a count or null (not checked), got "
                                          f"{wrong!r}")
    return parsed


def _busbw(placement: Mapping) -> float | None:
    value = placement.get("busbw_gbps")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def judge_nccl_tests(parsed: t.Any, threshold_gbps: t.Any = None, facts: t.Any = None,
                     min_size_bytes: t.Any = DEFAULT_MIN_SIZE_BYTES, ranks: t.Any = None, log: t.Any = None) -> dict:
    """Judge the output of ``parse_nccl_tests``.

    ``threshold_gbps`` (busbw, GB/s) or ``facts`` (see :func:`derive_threshold`) gives the threshold;
    ``min_size_bytes`` the smallest size counted as large; ``ranks`` the number of ranks the job ran (a missing
    rank fails); ``log`` the launcher's text, read for the NCCL_DEBUG=INFO lines that show the path taken.
    """
    parsed = _check_parsed(parsed)
    threshold = arguments.optional(arguments.positive, "threshold_gbps", threshold_gbps)
    min_size = arguments.positive("min_size_bytes", min_size_bytes)
    expected_ranks = arguments.optional(arguments.positive, "ranks", ranks)
    if expected_ranks is not None and int(expected_ranks) != expected_ranks:
        raise arguments.ArgumentError(f"ranks must be a whole number, got {expected_ranks!r}")
    if expected_ranks is not None and expected_ranks > MAX_RANKS:
        raise arguments.ArgumentError(f"ranks must be at most {MAX_RANKS:,}, the most ranks a job can have, "
                                      f"got {int(expected_ranks):,}")
    if log is not None:
        log = arguments.text("log", arguments.bounded_output("log", log), allow_empty=True)
    if threshold is not None:
        source = "given"
    elif facts is not None:
        threshold, source = derive_threshold(arguments.mapping("facts", facts))
    else:
        raise arguments.ArgumentError("give threshold_gbps or facts to derive it from")

    failures: list[str] = []
    rows = parsed["rows"]
    wrong_sizes = sorted({row["size_bytes"] for row in rows for placement in _placements(row)
                          if isinstance(placement.get("wrong"), int) and placement["wrong"] > 0})
    wrong_total = sum(placement["wrong"] for row in rows for placement in _placements(row)
                      if isinstance(placement.get("wrong"), int) and placement["wrong"] > 0)
    if wrong_total:
        failures.append(f"{wrong_total} wrong value(s) (#wrong) at size(s) {', '.join(map(str, wrong_sizes))} B")
    oob = parsed.get("out_of_bounds")
    if oob is not None and (not isinstance(oob, int) or isinstance(oob, bool) or oob < 0):
        raise NcclTestsJudgeError(f"out_of_bounds must be a count or null, got {oob!r}")
    if oob is None:
        failures.append("no 'Out of bounds values' line: the run did not finish (truncated output)")
    elif oob:
        failures.append(f"{oob} out-of-bounds value(s)")
    errors = parsed.get("errors") or []
    if not isinstance(errors, list):
        raise NcclTestsJudgeError("errors must be a list")
    errors = [str(error) for error in errors]
    failures += [f"nccl-tests error: {error}" for error in errors]

    lines_by_rank: dict[int, list[str | None]] = {}
    for device in parsed["devices"]:
        if isinstance(device, Mapping) and isinstance(device.get("rank"), int):
            lines_by_rank.setdefault(device["rank"], []).append(device.get("host"))
    hosts_by_rank = {rank: hosts[0] for rank, hosts in lines_by_rank.items()}
    impossible = sorted(rank for rank in hosts_by_rank if rank >= MAX_RANKS)
    if impossible:
        failures.append(f"rank(s) above the {MAX_RANKS:,} a job can have: {_listed(impossible)} (the log is not of "
                        "one job's run)")
    possible = [rank for rank in hosts_by_rank if rank < MAX_RANKS]
    count = int(expected_ranks) if expected_ranks is not None else (max(possible) + 1 if possible else 0)
    # Counted from the device lines, not up to the rank count: a log of a few lines costs a few steps.
    present = sum(1 for rank in hosts_by_rank if 0 <= rank < count)
    if present < count:
        first = list(itertools.islice((rank for rank in range(count) if rank not in hosts_by_rank), 8))
        failures.append(f"rank(s) missing from the device lines: {_listed(first, total=count - present)}")
    # A rank the job did not have, or one printed by two processes, means the log is not this one job's run (another
    # run's output, or processes that each ran alone because MPI did not join them).
    extra = [rank for rank in sorted(hosts_by_rank) if rank < 0 or count <= rank < MAX_RANKS]
    if extra:
        failures.append(f"rank(s) the job of {count} did not have: {_listed(extra)}")
    repeated = [f"{rank} ({', '.join(map(str, hosts))})" for rank, hosts in sorted(lines_by_rank.items())
                if len(hosts) > 1]
    if repeated:
        failures.append(f"rank(s) on more than one device line: {_listed(repeated, '; ')}")
    hosts: dict[str, list[int]] = {}
    for rank in sorted(hosts_by_rank):
        hosts.setdefault(str(hosts_by_rank[rank]), []).append(rank)

    large = [(row["size_bytes"], busbw) for row in rows if row["size_bytes"] >= min_size
             for busbw in [max((value for value in map(_busbw, _placements(row)) if value is not None), default=None)]
             if busbw is not None]
    peak = max(large, key=lambda item: item[1], default=None)
    worst = min(large, key=lambda item: item[1], default=None)
    impossible = max(((row["size_bytes"], value) for row in rows for value in map(_busbw, _placements(row))
                      if value is not None and value > BUSBW_CEILING_GBPS), key=lambda item: item[1], default=None)
    if impossible:
        failures.append(f"busbw {impossible[1]:g} GB/s (at {impossible[0]} B) is above {BUSBW_CEILING_GBPS:,.0f} "
                        "GB/s, what one GPU's NVLink 5 carries in both directions: physically impossible, a parse or "
                        "unit error, not a measurement")
    if not large:
        failures.append(f"no row at or above {int(min_size)} B with a busbw: the run did not reach the large sizes")
    elif peak[1] < threshold:
        failures.append(f"peak busbw {peak[1]:g} GB/s (at {peak[0]} B) below the threshold {threshold:g} GB/s")
    paths = transport(log)
    return {
        "passed": not failures,
        "failures": failures,
        "threshold_gbps": threshold,
        "threshold_source": source,
        "min_size_bytes": int(min_size),
        "large_sizes": len(large),
        "peak_busbw_gbps": peak[1] if peak else None,
        "peak_size_bytes": peak[0] if peak else None,
        "worst_busbw_gbps": worst[1] if worst else None,
        "worst_size_bytes": worst[0] if worst else None,
        "wrong_total": wrong_total,
        "out_of_bounds": oob,
        "ranks": len(hosts_by_rank),
        "hosts": hosts,
        "transport": paths["used"],
        "transport_known": paths["known"],
        "transport_evidence": paths["evidence"],
    }
