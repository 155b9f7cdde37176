# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lifecycle of NVIDIA's data-center driver branches: one table, and the judgement of a branch against it.

:data:`BRANCHES` is the one table (the preflight check ``driver_lifecycle`` and the ``nvidia_driver`` role, through
the filter ``gpufabric.cluster.driver_lifecycle``, both read it).  NVIDIA publishes an end of life as a month: a
branch is supported through the last day of that month (:attr:`Branch.end_of_life`) and past its end of life from
the day after.  A branch the table does not hold has an unknown lifecycle: it is never guessed from its number.

Findings are ``warn`` (the branch is past its end of life; a new-feature branch on a production site; a branch of
unknown lifecycle) or ``pass``.  Bad input (a version that names no branch) is a :class:`LifecycleError` naming the
argument.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime
import re
import typing as t

# Branch types as NVIDIA's lifecycle documentation names them.
KINDS = {
    "LTSB": "long-term support branch",
    "PB": "production branch",
    "NFB": "new feature branch",
}
# A driver version ("570.172.08", "580.95.05") or a branch ("580", "R580"); the branch is the first number.
_VERSION = re.compile(r"[Rr]?(?P<branch>[1-9][0-9]{2,3})(?:\.[0-9]+){0,3}")


class LifecycleError(ValueError):
    """A version, branch or date from which nothing can be judged; the message names the argument."""


def _month_end(year: int, month: int) -> datetime.date:
    return datetime.date(year, month, calendar.monthrange(year, month)[1])


@dataclasses.dataclass(frozen=True)
class Branch:
    """One row of the table: the branch number, its type (a key of :data:`KINDS`) and its last supported day.

    ``end_of_life`` is ``None`` where NVIDIA publishes none (new feature branches since R620's documentation);
    ``eol_note`` says where a date that is not a published month comes from.
    """

    number: int
    kind: str
    end_of_life: datetime.date | None
    eol_note: str = ""

    @property
    def kind_text(self) -> str:
        """The type in words."""
        return KINDS[self.kind]


# Read on 2026-11-28 from NVIDIA's "Supported Drivers and CUDA Toolkit Versions" (NVIDIA Data Center Drivers
# documentation), three editions:
#   https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html
#     R580 LTSB June 2028, R595 PB March 2027, R620 LTSB September 2029; "New Feature Branches are short-lived and
#     do not have an end-of-life date".
#   https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html
#     R535 LTSB June 2026, R580 LTSB June 2028, R595 PB March 2027, R610 NFB August 2026.
#   https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html (the R580
#     edition, last updated 2025-08-04): R535 LTSB June 2026, R570 PB February 2026, R580 LTSB August 2028 (the two
#     later editions say June 2028, which is kept); "All other previous driver branches not listed in the table above
#     (such as R575, ...) are end of life" (no date: 2025-08-04, the edition's date, is the latest it can be).
# R590 is a new feature branch (https://www.nvidia.com/en-us/drivers/unix.html: "Latest New Feature Branch Version:
# 590.48.01"); no edition gives it an end of life, so it has none here.
BRANCHES: dict[int, Branch] = {branch.number: branch for branch in (
    Branch(535, "LTSB", _month_end(2026, 6)),
    Branch(570, "PB", _month_end(2026, 2)),
    Branch(575, "NFB", datetime.date(2025, 8, 4),
           "no date published: listed as end of life in NVIDIA's R580 documentation of 2025-08-04"),
    Branch(580, "LTSB", _month_end(2028, 6)),
    Branch(590, "NFB", None),
    Branch(595, "PB", _month_end(2027, 3)),
    Branch(610, "NFB", _month_end(2026, 8)),
    Branch(620, "LTSB", _month_end(2029, 9)),
)}


@dataclasses.dataclass(frozen=True)
class Finding:
    """One judgement: ``level`` ``warn`` or ``pass``, a stable ``code`` and a one-line ``message``."""

    level: str
    code: str
    message: str


def branch_of(version: t.Any, name: str = "version") -> int:
    """The driver branch of ``version``: ``570`` for ``"570.172.08"``, ``"570"``, ``"R570"`` or the number 570.

    Anything else (empty, ``latest``, a boolean, a number that is not a whole three- or four-digit branch) is a
    :class:`LifecycleError` naming ``name``.
    """
    if isinstance(version, bool):
        raise LifecycleError(f"{name} must be a driver version such as 580.95.05 or a branch such as 580, "
                             f"got a boolean")
    if isinstance(version, int):
        text = str(version)
    elif isinstance(version, str):
        text = version.strip()
    else:
        raise LifecycleError(f"{name} must be a driver version such as 580.95.05 or a branch such as 580, "
                             f"got {type(version).__name__}")
    match = _VERSION.fullmatch(text)
    if not match:
        shown = repr(text) if len(text) <= 40 else f"a text of {len(text)} characters"
        raise LifecycleError(f"{name} must be a driver version such as 580.95.05 or a branch such as 580, "
                             f"got {shown}")
    return int(match.group("branch"))


def lookup(branch: int) -> Branch | None:
    """The table's row of ``branch``, or ``None`` when the table does not hold it."""
    return BRANCHES.get(branch)


def past_end_of_life(row: Branch, today: datetime.date) -> bool:
    """Whether ``today`` is after the last supported day of ``row`` (the end-of-life day itself is not)."""
    return row.end_of_life is not None and today > row.end_of_life


def recommended(branch: int, today: datetime.date) -> Branch | None:
    """The branch to move to from ``branch``: the oldest long-term support or production branch newer than it that
    is supported ``today``, else the newest supported such branch; ``None`` when the table holds none."""
    supported = [row for number, row in sorted(BRANCHES.items())
                 if row.kind in ("LTSB", "PB") and not past_end_of_life(row, today)]
    newer = [row for row in supported if row.number > branch]
    if newer:
        return newer[0]
    return supported[-1] if supported else None


def _until(row: Branch) -> str:
    return f"supported to {row.end_of_life.isoformat()}" if row.end_of_life else "no end-of-life date published"


def _move_to(branch: int, today: datetime.date) -> str:
    target = recommended(branch, today)
    if target is None:
        return "no supported long-term support or production branch is known"
    return f"move to R{target.number} ({target.kind_text}, {_until(target)})"


def check_today(today: t.Any) -> datetime.date:
    """``today`` as a date: a ``datetime.date`` or an ISO date text (``2026-11-28``); else a :class:`LifecycleError`."""
    if isinstance(today, datetime.datetime):
        return today.date()
    if isinstance(today, datetime.date):
        return today
    if isinstance(today, str):
        try:
            return datetime.date.fromisoformat(today.strip())
        except ValueError:
            pass
    raise LifecycleError("today must be a date such as 2026-11-28")


def judge(branch: int, today: datetime.date, production: bool) -> list[Finding]:
    """The findings on driver ``branch`` ``today``, on a production site when ``production``.

    ``warn`` ``end_of_life`` when it is past its end of life (naming the date and the branch to move to),
    ``warn`` ``new_feature_branch`` when it is a new feature branch on a production site, ``warn`` ``unknown`` when
    the table does not hold it; otherwise one ``pass`` ``supported``.
    """
    if isinstance(branch, bool) or not isinstance(branch, int):
        raise LifecycleError(f"branch must be a whole number such as 580, got {type(branch).__name__}")
    today = check_today(today)
    row = lookup(branch)
    if row is None:
        return [Finding("warn", "unknown",
                        f"driver branch R{branch}: lifecycle unknown (not in the collection's table of NVIDIA driver "
                        f"branches); check NVIDIA's data center driver lifecycle")]
    findings = []
    if row.end_of_life is not None and past_end_of_life(row, today):
        note = f" ({row.eol_note})" if row.eol_note else ""
        findings.append(Finding("warn", "end_of_life",
                                f"driver branch R{branch} ({row.kind_text}) is past its end of life "
                                f"{row.end_of_life.isoformat()}{note}; {_move_to(branch, today)}"))
    if row.kind == "NFB" and production:
        findings.append(Finding("warn", "new_feature_branch",
                                f"driver branch R{branch} is a new feature branch on a production site "
                                f"(gpufabric_production_site); {_move_to(branch, today)}"))
    if findings:
        return findings
    return [Finding("pass", "supported", f"driver branch R{branch} ({row.kind_text}), {_until(row)}")]


def lifecycle(version: t.Any, today: t.Any = None, production: t.Any = True, name: str = "version") -> dict:
    """The lifecycle of the branch of ``version`` as plain data (the filter's result).

    ``today`` defaults to the controller's date; ``production`` must be a boolean.  Returns ``branch``, ``known``,
    ``kind`` and ``end_of_life`` (ISO date or ``None``), ``past_end_of_life`` and ``findings`` (``level``, ``code``,
    ``message``).
    """
    if not isinstance(production, bool):
        raise LifecycleError(f"production must be true or false, got {type(production).__name__}")
    day = datetime.date.today() if today is None else check_today(today)
    branch = branch_of(version, name)
    row = lookup(branch)
    return {
        "branch": branch,
        "known": row is not None,
        "kind": row.kind if row else None,
        "end_of_life": row.end_of_life.isoformat() if row and row.end_of_life else None,
        "past_end_of_life": bool(row and past_end_of_life(row, day)),
        "findings": [dataclasses.asdict(finding) for finding in judge(branch, day, production)],
    }
