# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tests/zipimport_cache (TEST FIXTURE of the test tiers): zip sources compiled once.

Each case runs fresh interpreters that import the cache first, as the image's ``.pth`` file and the controller's
``sitecustomize.py`` have them do, then a package from a zip archive laid out as an AnsiballZ payload, each run from
an archive of its own temporary path.
"""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
import zipfile

import pytest

CACHE_MODULE_DIRECTORY = os.path.join(os.path.dirname(__file__), "..", "..", "zipimport_cache")

PROGRAM = """
import json, sys, traceback
sys.path.insert(0, {directory!r})
import gpufabric_zipimport_compile_cache
sys.path.insert(0, {archive!r})
import payload.answer as answer
try:
    answer.fail()
except RuntimeError:
    where = traceback.extract_tb(sys.exc_info()[2])[-1]
print(json.dumps({{"value": answer.VALUE, "file": answer.__file__, "code_file": answer.fail.__code__.co_filename,
       "nested_file": answer.Holder.method.__code__.co_filename, "raised_in": where.filename,
       "line": where.line}}))
"""


def payload(tmp_path, run: str, value: int):
    """A payload zip at a path of its own (as each module run has), holding payload/answer.py."""
    directory = tmp_path / f"ansible_answer_payload_{run}"
    directory.mkdir()
    archive = directory / "ansible_answer_payload.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("payload/__init__.py", "")
        handle.writestr("payload/answer.py",
                        f"VALUE = {value}\n\n\ndef fail():\n    raise RuntimeError('from the archive')\n\n\n"
                        "class Holder:\n    def method(self):\n        return VALUE\n")
    return str(archive)


def run_payload(archive: str, cache: str) -> dict:
    program = PROGRAM.format(directory=CACHE_MODULE_DIRECTORY, archive=archive)
    completed = subprocess.run([sys.executable, "-c", program],
                               env=dict(os.environ, GPUFABRIC_ZIPIMPORT_CACHE=cache),
                               capture_output=True, text=True, check=True)
    return json.loads(completed.stdout)


def cached_files(cache) -> dict:
    return {path: os.stat(path).st_mtime_ns for path in (os.path.join(root, name)
            for root, _dirs, names in os.walk(cache) for name in names)}


def test_the_second_run_reads_the_code_back_and_names_its_own_archive(tmp_path):
    cache = str(tmp_path / "cache")
    first = run_payload(payload(tmp_path, "one", 7), cache)
    written = cached_files(cache)
    assert len(written) == 2 and all(".tmp" not in path for path in written)  # __init__ and answer, no leftover
    second_archive = payload(tmp_path, "two", 7)
    second = run_payload(second_archive, cache)
    assert cached_files(cache) == written  # read, not compiled and written again
    assert first["value"] == second["value"] == 7
    expected = os.path.join(second_archive, "payload", "answer.py")
    assert second["file"] == second["code_file"] == second["nested_file"] == second["raised_in"] == expected
    assert second["line"] == "raise RuntimeError('from the archive')"


def test_a_changed_source_at_the_same_path_is_compiled_again(tmp_path):
    cache = str(tmp_path / "cache")
    assert run_payload(payload(tmp_path, "one", 7), cache)["value"] == 7
    assert run_payload(payload(tmp_path, "two", 8), cache)["value"] == 8
    assert len([path for path in cached_files(cache) if "answer.py" in path]) == 2


@pytest.mark.parametrize("damage", ["empty", "truncated", "foreign bytes", "not code"])
def test_an_empty_truncated_or_foreign_cache_file_is_compiled_again(tmp_path, damage):
    cache = str(tmp_path / "cache")
    run_payload(payload(tmp_path, "one", 7), cache)
    answer = next(path for path in cached_files(cache) if "answer.py" in path)
    with open(answer, "rb") as handle:
        whole = handle.read()
    replacement = {"empty": b"", "truncated": whole[: len(whole) // 2], "foreign bytes": b"\xe3 not marshal data",
                   "not code": marshal.dumps({"not": "code"})}[damage]
    with open(answer, "wb") as handle:
        handle.write(replacement)
    result = run_payload(payload(tmp_path, "two", 7), cache)
    assert result["value"] == 7
    assert result["raised_in"] == os.path.join(tmp_path, "ansible_answer_payload_two", "ansible_answer_payload.zip",
                                               "payload", "answer.py")
    with open(answer, "rb") as handle:
        assert handle.read() == whole  # compiled again and written back whole


def test_a_cache_that_cannot_be_written_compiles_every_time(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be", encoding="ascii")
    for run in ("one", "two"):
        assert run_payload(payload(tmp_path, run, 7), str(blocker))["value"] == 7
    assert blocker.read_text(encoding="ascii") == "a file where the cache directory would be"


def test_the_cache_is_keyed_by_the_interpreter_bytecode_magic(tmp_path):
    cache = str(tmp_path / "cache")
    run_payload(payload(tmp_path, "one", 7), cache)
    assert os.listdir(cache) == [importlib.util.MAGIC_NUMBER.hex()]
    assert json.dumps(sorted(os.path.basename(path).rsplit(".", 1)[0] for path in cached_files(cache))) == \
        json.dumps(["payload%__init__.py", "payload%answer.py"])


@pytest.mark.parametrize("setting", ["", "relative/cache"])
def test_an_empty_or_relative_cache_setting_turns_the_cache_off(tmp_path, monkeypatch, setting):
    monkeypatch.chdir(tmp_path)
    for run in ("one", "two"):
        result = run_payload(payload(tmp_path, run, 7), setting)
        assert result["value"] == 7
        assert result["raised_in"] == os.path.join(tmp_path, f"ansible_answer_payload_{run}",
                                                   "ansible_answer_payload.zip", "payload", "answer.py")
    assert sorted(os.listdir(tmp_path)) == ["ansible_answer_payload_one", "ansible_answer_payload_two"]


def test_the_directory_on_pythonpath_turns_the_cache_on_at_interpreter_start(tmp_path):
    """The controller's way in: sitecustomize.py, found on PYTHONPATH, imports the cache before any program runs."""
    cache = tmp_path / "cache"
    program = ("import sys; sys.path.insert(0, sys.argv[1]); import payload.answer as answer; "
               "import zipimport; print(answer.VALUE, zipimport._compile_source.__module__)")
    outputs = []
    for run in ("one", "two"):
        completed = subprocess.run([sys.executable, "-c", program, payload(tmp_path, run, 7)],
                                   env=dict(os.environ, PYTHONPATH=CACHE_MODULE_DIRECTORY,
                                            GPUFABRIC_ZIPIMPORT_CACHE=str(cache)),
                                   capture_output=True, text=True, check=True)
        outputs.append(completed.stdout.split())
        if run == "one":
            written = cached_files(str(cache))
    assert outputs == [["7", "gpufabric_zipimport_compile_cache"]] * 2
    assert len(written) == 2 and cached_files(str(cache)) == written
