# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/tier_cpu.py: a command's processes by name from the kernel's process accounting."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "bench", "tier_cpu.py")
_SPEC = importlib.util.spec_from_file_location("tier_cpu", SCRIPT)
tier_cpu = importlib.util.module_from_spec(_SPEC)
sys.modules["tier_cpu"] = tier_cpu  # dataclasses look their module up there
_SPEC.loader.exec_module(tier_cpu)


def _record(name: bytes, user: int = 0, system: int = 0, flag: int = 0, version: int = 3) -> bytes:
    return tier_cpu.RECORD.pack(flag, version, 0, 0, 0, 0, 1, 1, 0, 0.0, user, system, 0, 0, 0, 0, 0, 0, name)


def _encode(value: int) -> int | None:
    """The comp_t of ``value`` when it has one exactly (mantissa under 2**13, exponent under 8), else None."""
    exponent = 0
    while value >= 1 << 13 and value % 8 == 0 and exponent < 7:
        value //= 8
        exponent += 1
    return (exponent << 13) | value if value < 1 << 13 else None


@given(st.integers(min_value=0, max_value=0xFFFF))
def test_comp_t_is_mantissa_times_eight_to_the_exponent(raw):
    assert tier_cpu.comp_t(raw) == (raw & 0x1FFF) * 8 ** (raw >> 13)


@given(st.integers(min_value=0, max_value=(1 << 13) - 1), st.integers(min_value=0, max_value=7))
def test_comp_t_round_trips(mantissa, exponent):
    value = mantissa * 8 ** exponent
    raw = _encode(value)
    assert raw is not None and tier_cpu.comp_t(raw) == value


@pytest.mark.parametrize("raw", [-1, 0x10000])
def test_comp_t_outside_16_bits_is_refused(raw):
    with pytest.raises(ValueError, match="16 bits"):
        tier_cpu.comp_t(raw)


def test_records_are_read_with_their_names_times_and_fork_flag():
    data = _record(b"kube-apiserver", user=(1 << 13) | 500, system=30) + _record(b"ansible-playboo", 7, 1, flag=1)
    assert tier_cpu.read_records(data) == [tier_cpu.Process("kube-apiserver", 40.0, 0.3),
                                           tier_cpu.Process("ansible-playboo*", 0.07, 0.01)]


def test_a_name_of_16_bytes_and_one_not_utf8_are_read():
    full, odd = b"a" * 16, b"py\xff\0junk-after-nul"
    assert [process.name for process in tier_cpu.read_records(_record(full) + _record(odd))] == ["a" * 16, "py\ufffd"]


@given(st.binary(max_size=300))
def test_any_bytes_give_records_or_a_clear_error(data):
    try:
        processes = tier_cpu.read_records(data)
    except tier_cpu.AccountingError as error:
        assert "record" in str(error) or "truncated" in str(error)
    else:
        assert len(processes) == len(data) // tier_cpu.RECORD.size and len(data) % tier_cpu.RECORD.size == 0


def test_a_truncated_file_is_refused():
    with pytest.raises(tier_cpu.AccountingError, match="65 bytes is not a whole number of 64-byte records"):
        tier_cpu.read_records(_record(b"sh") + b"\0")


def test_an_empty_file_has_no_process():
    assert tier_cpu.read_records(b"") == []


@pytest.mark.parametrize("version", [0, 2, 4])
def test_another_record_version_is_refused(version):
    with pytest.raises(tier_cpu.AccountingError, match=f"record 1: version {version}, only 3 is read"):
        tier_cpu.read_records(_record(b"sh") + _record(b"sh", version=version))


names = st.sampled_from(["python3", "python3.11", "sh", "ansible-playboo*", "kube-apiserver"])
processes = st.lists(st.builds(tier_cpu.Process, names, st.integers(0, 10**5).map(lambda t: t / 100),
                               st.integers(0, 10**5).map(lambda t: t / 100)), max_size=40)


@given(processes)
def test_by_name_keeps_every_process_and_second_most_cpu_first(listed):
    rows = tier_cpu.by_name(listed)
    assert sum(row[1] for row in rows) == len(listed)
    assert len({row[0] for row in rows}) == len(rows)
    for name, count, user, system in rows:
        mine = [process for process in listed if process.name == name]
        assert count == len(mine)
        assert user == pytest.approx(sum(process.user for process in mine))
        assert system == pytest.approx(sum(process.system for process in mine))
    cpu = [row[2] + row[3] for row in rows]
    assert cpu == sorted(cpu, reverse=True)


def _bench(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], cwd=REPO, capture_output=True, text=True, check=False,
                          timeout=120)


@pytest.mark.parametrize(("args", "message"), [
    ((), "give the command to run after --"),
    (("--",), "give the command to run after --"),
    (("--top", "0", "--", "true"), "--top must be at least 1, not 0"),
    (("--interval", "0", "--", "true"), "--interval must be more than 0 seconds, not 0.0"),
    (("--interval", "nan", "--", "true"), "--interval must be more than 0 seconds, not nan"),
    (("--top", "many", "--", "true"), "invalid int value: 'many'"),
])
def test_wrong_arguments_are_named(args, message):
    completed = _bench(*args)
    assert completed.returncode == 2
    assert message in completed.stderr


# The kernel's process accounting, for real: make unit installs accton (the acct package); the tiers run as root.
# The benchmark runs in a PID namespace of its own, whose accounting is its own, so its `accton off` leaves the
# accounting around it on: here that of an outer namespace of the test's own (the machine's is never touched), which
# must still record a process started after the benchmark ended.
def test_a_command_is_run_under_accounting_and_the_accounting_around_it_is_left_on(tmp_path):
    outer = tmp_path / "outer-pacct"
    outer.touch()
    for name in ("gpufabric-spin", "gpufabric-after"):  # names no other process of the machine has
        (tmp_path / name).symlink_to(sys.executable)
    spin = f"for i in 1 2 3; do {tmp_path}/gpufabric-spin -c 'sum(range(3 * 10 ** 7))'; done; exit 7"
    around = (f'accton {outer} >/dev/null || exit 99; unshare --pid --fork --mount-proc "$0" "$1" --interval 0.2 -- '
              f'sh -c "$2"; rc=$?; {tmp_path}/gpufabric-after -c pass; accton off >/dev/null; exit $rc')
    completed = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", around, sys.executable,
                                SCRIPT, spin], cwd=REPO, capture_output=True, text=True, check=False, timeout=120)
    assert completed.returncode == 7, completed.stdout + completed.stderr
    assert "exit status 7" in completed.stdout
    rows = {line.split()[0]: line.split() for line in completed.stdout.splitlines() if line.strip()}
    assert rows["gpufabric-spin"][1] == "3", completed.stdout
    assert float(rows["gpufabric-spin"][2]) > 0, completed.stdout
    assert "/proc/stat busy" in completed.stdout
    names = [process.name for process in tier_cpu.read_records(outer.read_bytes())]
    assert names.count("gpufabric-spin") == 3 and "gpufabric-after" in names, names
