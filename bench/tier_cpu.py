# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where a test tier's CPU goes: every process it started, by command name, and how busy the machine was.

Runs one command (a test tier: ``make cluster``, ``make molecule SCENARIO=site``) with the kernel's BSD process
accounting on (``accton``, Debian package ``acct``; root), so that every process that ends while it runs is counted,
those in the molecule containers and the daemons the tier detaches (the control plane) included, which ``time``
does not see. It prints, per command name, the processes, user and system CPU seconds and the share of the whole,
and the machine's busy share from ``/proc/stat`` every ``--interval`` seconds (the tiers are CPU-bound when it
stays near 100 %: more jobs at once cannot make them faster, only less work).

Reading the names: ``ansible-playboo`` is an ``ansible-playbook`` process, with ``*`` its forks (the workers, one
per task and host); ``python3`` a Python started as ``python3``, which here is a module Ansible runs on the
controller with ``.venv/bin/python3`` (``kubernetes.core`` and the other ``localhost`` tasks of the tiers);
``python3.11`` a module in a test container (the interpreter Ansible discovers there);
``kube-apiserver``, ``etcd``: the test control plane. The accounting file holds other processes of the machine
that ended in the same time, so run it on an otherwise idle machine. Accounting is turned off when the command ends;
where the machine keeps its own (the acct package's service), run the benchmark in a PID namespace of its own, whose
accounting is its own (``unshare --pid --fork --mount-proc .venv/bin/python bench/tier_cpu.py -- ...``; its test
does), or start the service again after.

Usage (root, from the repository root; ``sh tools/bootstrap-debian.sh accton:acct`` first):
  .venv/bin/python bench/tier_cpu.py [--top 15] [--interval 5] -- make molecule SCENARIO=site
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

# struct acct_v3 (linux/acct.h): ac_flag, ac_version, ac_tty, ac_exitcode, ac_uid, ac_gid, ac_pid, ac_ppid, ac_btime,
# ac_etime (float), ac_utime, ac_stime, ac_mem, ac_io, ac_rw, ac_minflt, ac_majflt, ac_swaps (comp_t), ac_comm[16]
RECORD = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
ACCT_VERSION = 3
AFORK = 0x01  # the process forked and did not exec
TICKS = 100  # AHZ: comp_t times are in 1/100 s


class AccountingError(ValueError):
    """The accounting file is not a whole number of version 3 records."""


@dataclass(frozen=True)
class Process:
    name: str  # the command name, ``*`` appended when it forked without exec
    user: float  # seconds
    system: float  # seconds


def comp_t(raw: int) -> int:
    """The value of a ``comp_t``: a 13-bit mantissa and a 3-bit base-8 exponent."""
    if not 0 <= raw <= 0xFFFF:
        raise ValueError(f"comp_t is 16 bits, not {raw}")
    return (raw & 0x1FFF) << (3 * (raw >> 13))


def read_records(data: bytes) -> list[Process]:
    """Every process of a version 3 accounting file."""
    if len(data) % RECORD.size:
        raise AccountingError(f"{len(data)} bytes is not a whole number of {RECORD.size}-byte records (truncated?)")
    processes = []
    for offset in range(0, len(data), RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] != ACCT_VERSION:
            raise AccountingError(f"record {offset // RECORD.size}: version {fields[1]}, only {ACCT_VERSION} is read")
        name = fields[-1].split(b"\0", 1)[0].decode("utf-8", errors="replace") + ("*" if fields[0] & AFORK else "")
        processes.append(Process(name, comp_t(fields[10]) / TICKS, comp_t(fields[11]) / TICKS))
    return processes


def by_name(processes: list[Process]) -> list[tuple[str, int, float, float]]:
    """(name, processes, user s, system s), the most CPU first, then by name."""
    totals: dict[str, list] = {}
    for process in processes:
        entry = totals.setdefault(process.name, [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += process.user
        entry[2] += process.system
    rows = [(name, count, user, system) for name, (count, user, system) in totals.items()]
    return sorted(rows, key=lambda row: (-(row[2] + row[3]), row[0]))


def cpu_times() -> tuple[int, int]:
    """(all, idle) jiffies of the machine from /proc/stat; idle includes iowait."""
    with open("/proc/stat", encoding="ascii") as handle:
        values = [int(value) for value in handle.readline().split()[1:]]
    return sum(values), values[3] + values[4]


class BusySampler(threading.Thread):
    """The machine's busy share over every ``interval`` while it runs."""

    def __init__(self, interval: float):
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[float] = []
        self._stopped = threading.Event()

    def run(self) -> None:
        before = cpu_times()
        while not self._stopped.wait(self.interval):
            after = cpu_times()
            total, idle = after[0] - before[0], after[1] - before[1]
            if total > 0:
                self.samples.append(1 - idle / total)
            before = after

    def stop(self) -> None:
        self._stopped.set()
        self.join()


def print_table(rows: list[tuple[str, int, float, float]], top: int, wall: float, samples: list[float]) -> None:
    whole = sum(user + system for _name, _count, user, system in rows)
    print(f"{'command':<18}{'processes':>10}{'user s':>10}{'system s':>10}{'share':>8}")
    for name, count, user, system in rows[:top]:
        share = (user + system) / whole if whole else 0.0
        print(f"{name:<18}{count:>10}{user:>10.1f}{system:>10.1f}{share:>8.1%}")
    rest = rows[top:]
    if rest:
        user, system = sum(row[2] for row in rest), sum(row[3] for row in rest)
        print(f"{f'({len(rest)} others)':<18}{sum(row[1] for row in rest):>10}{user:>10.1f}{system:>10.1f}"
              f"{(user + system) / whole if whole else 0.0:>8.1%}")
    print(f"{'all':<18}{sum(row[1] for row in rows):>10}{sum(row[2] for row in rows):>10.1f}"
          f"{sum(row[3] for row in rows):>10.1f}")
    cores = os.cpu_count() or 1
    busy = sum(samples) / len(samples) if samples else float("nan")
    print(f"wall {wall:.0f} s; CPU {whole:.0f} s = {whole / wall / cores if wall else 0.0:.0%} of {cores} cores; "
          f"/proc/stat busy {busy:.0%} on average, {sum(sample < 0.8 for sample in samples)} of {len(samples)} "
          f"samples under 80 %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--top", type=int, default=15, help="command names listed (default 15)")
    parser.add_argument("--interval", type=float, default=5.0, help="seconds between /proc/stat samples (default 5)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    if args.top < 1:
        parser.error(f"--top must be at least 1, not {args.top}")
    if not args.interval > 0:
        parser.error(f"--interval must be more than 0 seconds, not {args.interval}")
    accton = shutil.which("accton") or next((path for path in ("/usr/sbin/accton", "/sbin/accton")
                                             if os.access(path, os.X_OK)), None)
    if accton is None:
        sys.exit("accton not found: install the acct package (sh tools/bootstrap-debian.sh accton:acct)")
    with tempfile.TemporaryDirectory(prefix="gpufabric-tier-cpu-") as workdir:
        record = os.path.join(workdir, "pacct")
        open(record, "wb").close()
        started = subprocess.run([accton, record], capture_output=True, text=True, check=False)
        if started.returncode != 0:
            sys.exit(f"accton {record} failed (root is needed): {started.stderr.strip() or started.stdout.strip()}")
        sampler = BusySampler(args.interval)
        began = time.monotonic()
        sampler.start()
        try:
            returncode = subprocess.run(command, check=False).returncode
        finally:
            wall = time.monotonic() - began
            sampler.stop()
            subprocess.run([accton, "off"], capture_output=True, check=False)
        with open(record, "rb") as handle:
            rows = by_name(read_records(handle.read()))
    print(f"\n=== CPU by command while `{' '.join(command)}` ran (exit status {returncode})")
    print_table(rows, args.top, wall, sampler.samples)
    sys.exit(returncode)


if __name__ == "__main__":
    main()
