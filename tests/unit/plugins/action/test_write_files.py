# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The write_files action and its logic: several files written on the controller in one task."""

from __future__ import annotations

import os
import stat
from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.action.write_files import ActionModule
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import write_files as logic

ERRORS = (arguments.ArgumentError, logic.WriteFilesError)


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def two_files(directory):
    return [
        {"path": str(directory / "report.json"), "content": '{"a": 1}\n', "mode": "0644"},
        {"path": str(directory / "report.md"), "content": "# Report\n", "mode": "0644"},
    ]


def test_creates_directory_and_files(tmp_path):
    target = tmp_path / "reports" / "deep"
    result = logic.write_files(two_files(target), "0755")
    assert result["changed"] is True
    assert [item["state"] for item in result["files"]] == ["created", "created"]
    assert result["directories"] == [{"path": str(target), "state": "created"}]
    assert (target / "report.json").read_text() == '{"a": 1}\n'
    assert (target / "report.md").read_text() == "# Report\n"
    assert mode_of(target) == 0o755
    assert mode_of(target / "report.json") == 0o644
    assert "diff" not in result


def test_second_run_changes_nothing(tmp_path):
    logic.write_files(two_files(tmp_path), "0755")
    before = {name: os.stat(tmp_path / name).st_ino for name in ("report.json", "report.md")}
    result = logic.write_files(two_files(tmp_path), "0755")
    assert result["changed"] is False
    assert {item["state"] for item in result["files"]} == {"unchanged"}
    assert result["directories"][0]["state"] == "unchanged"
    # Not rewritten: the same inode, no temporary files left behind.
    assert {name: os.stat(tmp_path / name).st_ino for name in before} == before
    assert sorted(os.listdir(tmp_path)) == ["report.json", "report.md"]


def test_content_change_rewrites_only_that_file(tmp_path):
    files = two_files(tmp_path)
    logic.write_files(files)
    files[1]["content"] = "# Report v2\n"
    result = logic.write_files(files, diff=True)
    assert [item["state"] for item in result["files"]] == ["unchanged", "updated"]
    assert result["diff"] == [{"before_header": files[1]["path"], "after_header": files[1]["path"],
                               "before": "# Report\n", "after": "# Report v2\n"}]
    assert (tmp_path / "report.md").read_text() == "# Report v2\n"


def test_mode_change_only(tmp_path):
    files = two_files(tmp_path)
    logic.write_files(files)
    os.chmod(files[0]["path"], 0o600)
    inode = os.stat(files[0]["path"]).st_ino
    result = logic.write_files(files, diff=True)
    assert result["changed"] is True
    assert [item["state"] for item in result["files"]] == ["mode", "unchanged"]
    assert result["diff"] == [{"before_header": f"{files[0]['path']} (mode)",
                               "after_header": f"{files[0]['path']} (mode)", "before": "0600\n", "after": "0644\n"}]
    assert mode_of(files[0]["path"]) == 0o644
    assert os.stat(files[0]["path"]).st_ino == inode


def test_directory_mode_enforced_only_when_given(tmp_path):
    os.chmod(tmp_path, 0o700)
    assert logic.write_files(two_files(tmp_path))["directories"][0]["state"] == "unchanged"
    assert mode_of(tmp_path) == 0o700
    result = logic.write_files(two_files(tmp_path), "0755", diff=True)
    assert result["changed"] is True
    assert result["directories"] == [{"path": str(tmp_path), "state": "mode"}]
    assert result["diff"][0]["before"] == "0700\n" and result["diff"][0]["after"] == "0755\n"
    assert mode_of(tmp_path) == 0o755


def test_check_mode_writes_nothing_and_tells_the_truth(tmp_path):
    target = tmp_path / "reports"
    result = logic.write_files(two_files(target), "0755", check_mode=True, diff=True)
    assert result["changed"] is True
    assert [item["state"] for item in result["files"]] == ["created", "created"]
    assert result["directories"][0]["state"] == "created"
    assert [entry["after"] for entry in result["diff"]] == ['{"a": 1}\n', "# Report\n"]
    assert not target.exists()
    logic.write_files(two_files(target), "0755")
    again = logic.write_files(two_files(target), "0755", check_mode=True, diff=True)
    assert again["changed"] is False and again["diff"] == []
    os.chmod(target / "report.md", 0o600)
    (target / "report.json").write_text("old\n")
    changed = logic.write_files(two_files(target), "0755", check_mode=True)
    assert [item["state"] for item in changed["files"]] == ["updated", "mode"]
    assert (target / "report.json").read_text() == "old\n"
    assert mode_of(target / "report.md") == 0o600


def test_content_and_mode_both_change(tmp_path):
    files = two_files(tmp_path)
    logic.write_files(files)
    os.chmod(files[0]["path"], 0o600)
    files[0]["content"] = "new\n"
    result = logic.write_files(files, diff=True)
    assert result["files"][0]["state"] == "updated"
    assert [entry["before_header"] for entry in result["diff"]] == [files[0]["path"], f"{files[0]['path']} (mode)"]
    assert mode_of(files[0]["path"]) == 0o644


def test_path_that_is_a_directory_fails_before_writing(tmp_path):
    (tmp_path / "report.md").mkdir()
    with pytest.raises(logic.WriteFilesError, match="is a directory"):
        logic.write_files(two_files(tmp_path))
    assert not (tmp_path / "report.json").exists()


def test_parent_that_is_a_file_fails(tmp_path):
    (tmp_path / "reports").write_text("x")
    with pytest.raises(logic.WriteFilesError, match="not a directory"):
        logic.write_files(two_files(tmp_path / "reports"))


def test_duplicate_paths_fail(tmp_path):
    files = two_files(tmp_path)
    files.append(dict(files[0], path=str(tmp_path / "sub" / ".." / "report.json")))
    with pytest.raises(logic.WriteFilesError, match=r"also files\[0\]"):
        logic.write_files(files)
    assert not (tmp_path / "report.json").exists()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ("report.json", "files must be a list"),
        ({"path": "/x", "content": ""}, "files must be a list"),
        (None, "files must be a list"),
        (["/x"], r"files\[0\] must be a mapping"),
        ([{"path": "/x"}], "needs path and content"),
        ([{"content": "x"}], "needs path and content"),
        ([{"path": "/x", "content": "x", "owner": "root"}], "unknown key"),
        ([{"path": 1, "content": "x"}], r"path must be a string"),
        ([{"path": "", "content": "x"}], "path must not be empty"),
        ([{"path": "/x\x00y", "content": "x"}], "NUL"),
        ([{"path": "/x", "content": {"a": 1}}], "content must be a string"),
        ([{"path": "/x", "content": b"bytes"}], "content must be a string"),
        ([{"path": "/x", "content": None}], "content must be a string"),
        ([{"path": "/x", "content": "x", "mode": "rw-r--r--"}], "octal mode"),
        ([{"path": "/x", "content": "x", "mode": "0999"}], "octal mode"),
        ([{"path": "/x", "content": "x", "mode": "true"}], "octal mode"),
        ([{"path": "/x", "content": "x", "mode": True}], "octal mode"),
        ([{"path": "/x", "content": "x", "mode": 0o17777}], "between 0000 and 7777"),
        ([{"path": "/x", "content": "x", "mode": -1}], "between 0000 and 7777"),
        ([{"path": "/x", "content": "x", "mode": 6.44}], "octal mode"),
        ([{"path": "/x", "content": "x", "mode": ""}], "octal mode"),
    ],
)
def test_bad_input_is_refused(files, message):
    with pytest.raises(ERRORS, match=message):
        logic.write_files(files)


@pytest.mark.parametrize("directory_mode", ["abc", True, 0o10000, [], "  "])
def test_bad_directory_mode(tmp_path, directory_mode):
    with pytest.raises(arguments.ArgumentError, match="directory_mode"):
        logic.write_files(two_files(tmp_path), directory_mode)
    assert not (tmp_path / "report.json").exists()


@pytest.mark.parametrize(("value", "expected"), [("0644", 0o644), ("644", 0o644), ("0o600", 0o600), (0o755, 0o755),
                                                 (420, 0o644), (" 0600 ", 0o600), ("0", 0)])
def test_modes(value, expected):
    assert logic.parse_mode("mode", value) == expected


def test_empty_list_changes_nothing():
    assert logic.write_files([]) == {"changed": False, "files": [], "directories": []}


def test_relative_and_home_paths_are_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = logic.write_files([{"path": "out/a.txt", "content": "a"}, {"path": "~/b.txt", "content": "b"}])
    assert [item["path"] for item in result["files"]] == [str(tmp_path / "out" / "a.txt"),
                                                          str(tmp_path / "home" / "b.txt")]
    assert (tmp_path / "home" / "b.txt").read_text() == "b"


NAMES = st.text(alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
                min_size=1, max_size=20).filter(lambda name: name not in (".", ".."))


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=4),
       contents=st.lists(st.text(max_size=200), min_size=4, max_size=4),
       mode=st.sampled_from(["0644", "0600", "0444", 0o640]), check=st.booleans())
def test_property_written_bytes_and_idempotence(tmp_path_factory, names, contents, mode, check):
    """Any names and texts: written exactly (UTF-8) or refused as duplicates; a second run changes nothing."""
    directory = tmp_path_factory.mktemp("prop")
    files = [{"path": str(directory / name), "content": contents[index], "mode": mode}
             for index, name in enumerate(names)]
    if len({os.path.normpath(entry["path"]) for entry in files}) < len(files):
        with pytest.raises(logic.WriteFilesError, match="is also"):
            logic.write_files(files)
        return
    try:
        result = logic.write_files(files, check_mode=check, diff=True)
    except logic.WriteFilesError as exc:  # a name too long in bytes is refused before any file is written
        assert any(str(exc).startswith(f"{entry['path']}: ") for entry in files), str(exc)
        assert os.listdir(directory) == []
        return
    assert result["changed"] is True
    assert [entry["after"] for entry in result["diff"]] == [entry["content"] for entry in files]
    if check:
        assert os.listdir(directory) == []
        return
    expected_mode = logic.parse_mode("mode", mode)
    for entry in files:
        with open(entry["path"], "rb") as handle:
            assert handle.read() == entry["content"].encode("utf-8")
        assert mode_of(entry["path"]) == expected_mode
    again = logic.write_files(files, check_mode=True, diff=True)
    assert again["changed"] is False and again["diff"] == []
    assert sorted(os.listdir(directory)) == sorted(os.path.basename(entry["path"]) for entry in files)


@given(value=st.one_of(st.text(max_size=6), st.integers(), st.booleans(), st.none(), st.floats()))
def test_property_mode_parsed_or_refused(value):
    try:
        mode = logic.parse_mode("mode", value)
    except arguments.ArgumentError as exc:
        assert "mode must be an octal mode" in str(exc)
    else:
        assert 0 <= mode <= 0o7777


def run_action(args, check_mode=False, diff=False):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.diff = diff
    task.async_val = 0
    action = ActionModule(task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None,
                          shared_loader_obj=None)
    return action.run(task_vars={})


def test_action_writes_and_reports(tmp_path):
    result = run_action({"files": two_files(tmp_path / "r"), "directory_mode": "0755"}, diff=True)
    assert result["changed"] is True
    assert len(result["diff"]) == 2
    assert run_action({"files": two_files(tmp_path / "r"), "directory_mode": "0755"})["changed"] is False


def test_action_check_mode(tmp_path):
    result = run_action({"files": two_files(tmp_path / "r")}, check_mode=True)
    assert result["changed"] is True
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("args", "message"), [
    ({}, "files is required"),
    ({"files": "x"}, "write_files: files must be a list"),
    ({"files": [], "owner": "root"}, "owner"),
])
def test_action_errors(args, message):
    with pytest.raises(AnsibleActionFail, match=message):
        run_action(args)


def test_action_os_error(tmp_path):
    with pytest.raises(AnsibleActionFail, match=r"write_files: .*aaaa"):
        run_action({"files": [{"path": str(tmp_path / ("a" * 300)), "content": "a"}]})
