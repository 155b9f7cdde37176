# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/hardware_fixture.py: a hardware run's results made a fixture of tests/fixtures/hardware.

Checked on the results of a real run: the committed recording of the offline container run is split back into the
run's files and made a fixture again, which must give the same file; and on incomplete results, which must be refused
naming the file and what it lacks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import string

import pytest
from fixtures import hardware_recordings
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("hardware_fixture", os.path.join(ROOT, "tools", "hardware_fixture.py"))
hardware_fixture = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hardware_fixture)

RECORDINGS = hardware_recordings.recording_paths()


def _run_files(recording: dict, outdir) -> None:
    """The files a run leaves in its OUTDIR, from a recording made of them."""
    outdir.mkdir(exist_ok=True)
    run = {section: recording[section] for section in hardware_fixture.RECORDING_SECTIONS}
    run["recorded"] = {key: value for key, value in recording["recorded"].items() if key != "verdict"}
    (outdir / "recording.json").write_text(json.dumps(run))
    (outdir / "modules.json").write_text(json.dumps(recording["modules"]))
    (outdir / "summary.json").write_text(json.dumps({"verdict": recording["recorded"]["verdict"], "status": 0}))


@pytest.mark.parametrize("path", RECORDINGS, ids=[path.stem for path in RECORDINGS])
def test_a_committed_recording_is_what_the_step_makes_of_its_run(path, tmp_path):
    recording = hardware_recordings.load(path)
    _run_files(recording, tmp_path / "out")
    written = hardware_fixture.write_fixture(tmp_path / "out", tmp_path / "fixtures", path.stem)
    assert written.read_text() == path.read_text()


def test_the_name_is_the_first_gpu_and_the_date():
    fixture = {"recorded": {"when": "2026-11-28T02:49:49+00:00"},
               "nvml": {"devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]}}
    assert hardware_fixture.fixture_name(fixture) == "nvidia-h100-80gb-hbm3-2026-11-28"
    fixture["nvml"] = {"init_error": "NVMLError_LibraryNotFound: NVML Shared Library Not Found"}
    assert hardware_fixture.fixture_name(fixture) == "no-nvidia-gpu-2026-11-28"


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.text(max_size=30), st.datetimes(timezones=st.timezones() | st.none()))
def test_a_name_is_always_a_plain_file_name(gpu_name, when):
    fixture = {"recorded": {"when": when.isoformat()}, "nvml": {"devices": [{"index": 0, "name": gpu_name}]}}
    name = hardware_fixture.fixture_name(fixture)
    assert set(name) <= set(string.ascii_lowercase + string.digits + "-")
    assert name[0] != "-"
    assert name.endswith(when.date().isoformat())


def _complete() -> tuple[dict, dict, dict]:
    recording = {"recorded": {"when": "2026-11-28T02:49:49+00:00", "where": "here", "by": "tools/hardware-run.sh"},
                 "present": {}, "tree": {"dirs": [], "files": {}, "drivers": {}}, "nvml": {"init_error": "x"},
                 "nvidia_smi": {"reason": "absent"}}
    modules = {name: {"changed": False} for name in hardware_fixture.PROBE_MODULES}
    return recording, modules, {"verdict": "no NVIDIA GPU here"}


@pytest.mark.parametrize(("spoil", "message"), [
    (lambda r, m: r.pop("nvml"), "recording.json: no nvml"),
    (lambda r, m: r["recorded"].pop("where"), "recording.json: recorded has no where"),
    (lambda r, m: r["recorded"].update(when="yesterday"), "recording.json: recorded.when 'yesterday' is not an ISO"),
    (lambda r, m: m.pop("imex_info"), "modules.json: no result of imex_info"),
], ids=["section", "where", "when", "module"])
def test_incomplete_results_are_refused_naming_the_file_and_what_it_lacks(spoil, message):
    recording, modules, summary = _complete()
    spoil(recording, modules)
    with pytest.raises(ValueError, match=f"^{message}"):
        hardware_fixture.make_fixture(recording, modules, summary)


def test_the_verdict_goes_with_where_and_when(tmp_path):
    recording, modules, summary = _complete()
    fixture = hardware_fixture.make_fixture(recording, modules, summary)
    assert fixture["recorded"]["verdict"] == "no NVIDIA GPU here"
    assert set(fixture) == set(hardware_recordings.SECTIONS)


def test_a_fixture_is_never_overwritten_and_a_missing_run_is_one_line(tmp_path, capsys):
    recording, modules, summary = _complete()
    _run_files(dict(recording, modules=modules, recorded=dict(recording["recorded"], **summary)), tmp_path / "out")
    assert hardware_fixture.main([str(tmp_path / "out"), "--dest", str(tmp_path / "fixtures")]) == 0
    assert (tmp_path / "fixtures" / "no-nvidia-gpu-2026-11-28.json").exists()
    assert hardware_fixture.main([str(tmp_path / "out"), "--dest", str(tmp_path / "fixtures")]) == 1
    assert "no-nvidia-gpu-2026-11-28.json exists already; give another --name" in capsys.readouterr().err
    assert hardware_fixture.main([str(tmp_path / "absent"), "--dest", str(tmp_path / "fixtures")]) == 1
    assert capsys.readouterr().err == (f"hardware_fixture: {tmp_path / 'absent' / 'recording.json'}: cannot be read "
                                       "(No such file or directory)\n")
