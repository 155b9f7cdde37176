# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turn the results of a hardware run (tools/hardware-run.sh's OUTDIR) into a fixture of tests/fixtures/hardware/.

    python tools/hardware_fixture.py OUTDIR [--dest tests/fixtures/hardware] [--name NAME]

Reads OUTDIR/recording.json, modules.json and summary.json (the device tool brings them back under its files_at
folder) and writes ``DEST/NAME.json`` in the form tests/fixtures/hardware_recordings.py documents: the recorded NVML
answers, files and nvidia-smi reading, where and when they were recorded, the verdict, and the five probe modules'
results on that machine. NAME defaults to the first GPU's name and the recording's date
(``nvidia-h100-80gb-hbm3-2026-11-28``; ``no-nvidia-gpu-<date>`` where NVML saw none). An existing fixture is never
overwritten. The unit tier then replays it (tests/unit/plugins/module_utils/test_gpu_real_recordings.py).
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "tests" / "fixtures" / "hardware"
PROBE_MODULES = ("gpu_info", "connectx_info", "imex_info", "peermem_info", "fabric_facts")
RECORDING_SECTIONS = ("recorded", "present", "tree", "nvml", "nvidia_smi")
RECORDED_FIELDS = ("when", "where", "by")


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a JSON object")
    return data


def make_fixture(recording: dict, modules: dict, summary: dict) -> dict:
    """The fixture of one run from its ``recording.json``, ``modules.json`` and ``summary.json``.

    Raises ``ValueError`` (one line, naming the file) when a section, a recorded field or a module's result is missing,
    or the recording's ``when`` is not an ISO 8601 time.
    """
    missing = [section for section in RECORDING_SECTIONS if section not in recording]
    if missing:
        raise ValueError(f"recording.json: no {', '.join(missing)}")
    recorded = recording["recorded"]
    missing = [field for field in RECORDED_FIELDS if field not in recorded]
    if missing:
        raise ValueError(f"recording.json: recorded has no {', '.join(missing)}")
    try:
        datetime.datetime.fromisoformat(recorded["when"])
    except (TypeError, ValueError):
        raise ValueError(f"recording.json: recorded.when {recorded['when']!r} is not an ISO 8601 time") from None
    missing = [name for name in PROBE_MODULES if not isinstance(modules.get(name), dict)]
    if missing:
        raise ValueError(f"modules.json: no result of {', '.join(missing)}")
    fixture = {section: recording[section] for section in RECORDING_SECTIONS}
    fixture["recorded"] = dict(recorded, verdict=summary.get("verdict"))
    fixture["modules"] = {name: modules[name] for name in PROBE_MODULES}
    return fixture


def fixture_name(fixture: dict) -> str:
    """``<first GPU's name>-<date>``, lower case, words joined by ``-`` (``gpu`` for a name without any);
    ``no-nvidia-gpu-<date>`` where NVML answered for no GPU."""
    devices = fixture["nvml"].get("devices") or []
    label = next((device["name"] for device in devices if device.get("name")), "no NVIDIA GPU")
    date = datetime.datetime.fromisoformat(fixture["recorded"]["when"]).date().isoformat()
    return f"{re.sub(r'[^a-z0-9]+', '-', label.lower()).strip('-') or 'gpu'}-{date}"


def write_fixture(outdir: Path, dest: Path, name: str | None = None) -> Path:
    """Write the fixture of the run in ``outdir`` to ``dest/<name>.json``; return its path.

    Raises ``ValueError`` when the run's files are incomplete or the fixture exists already.
    """
    fixture = make_fixture(_read_json(outdir / "recording.json"), _read_json(outdir / "modules.json"),
                           _read_json(outdir / "summary.json"))
    name = name or fixture_name(fixture)
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", name):
        raise ValueError(f"--name {name!r}: use lower-case letters, digits, '.' and '-'")
    path = dest / f"{name}.json"
    if path.exists():
        raise ValueError(f"{path} exists already; give another --name")
    dest.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fixture, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path, help="the hardware run's results folder")
    parser.add_argument("--dest", type=Path, default=DEST)
    parser.add_argument("--name", help="the fixture's file name, without .json")
    args = parser.parse_args(argv)
    try:
        path = write_fixture(args.outdir, args.dest, args.name)
    except ValueError as exc:
        print(f"hardware_fixture: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {path}; the unit tier replays it: pytest tests/unit/plugins/module_utils/test_gpu_real_recordings.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
