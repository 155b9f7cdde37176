# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""write_files and symbolic links, and the litter of killed writes (issue 39, items 5 and 11).

A link at a file's path, or as the file's own directory, is refused before anything is written (a link as the
directory is allowed by follow_directory_links, without its mode being touched); links further up the path are
followed. A mode is never set through a link and a diff never shows a file the task would not replace. A
temporary file that a killed write left is removed by the next write of the same file once it is stale.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import write_files as logic

STALE = logic.STALE_AFTER + 60
# The documented name of a temporary file of report.md: .<name>.<8 random characters>, as tempfile.mkstemp names.
TEMPORARY = re.compile(r"\.report\.md\.[a-z0-9_]{8}")


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def report(directory, content="# Report\n", mode="0644"):
    return [{"path": str(directory / "report.md"), "content": content, "mode": mode}]


def make_old(path):
    """Give ``path`` a modification time older than STALE_AFTER, as a write killed long ago left it."""
    before = os.lstat(path).st_mtime - STALE
    os.utime(path, (before, before), follow_symlinks=False)


@pytest.fixture
def secret(tmp_path):
    """A private file elsewhere, the target a link at a report path points to."""
    path = tmp_path / "elsewhere" / "secret"
    path.parent.mkdir()
    path.write_text("# Report\n")
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def private(tmp_path):
    """A private directory elsewhere, the target a link as the report directory points to."""
    path = tmp_path / "private"
    path.mkdir(mode=0o700)
    os.chmod(path, 0o700)
    return path


# Item 5: a link at the file.

def test_a_link_at_the_file_is_refused_and_its_target_keeps_its_mode(tmp_path, secret):
    """On the starting commit the content matched, so only the mode differed: the 0600 target became 0644."""
    (tmp_path / "report.md").symlink_to(secret)
    with pytest.raises(logic.WriteFilesError) as caught:
        logic.write_files(report(tmp_path))
    assert str(caught.value) == f"{tmp_path / 'report.md'} is a symbolic link; write_files does not follow links"
    assert mode_of(secret) == 0o600 and secret.read_text() == "# Report\n"
    assert (tmp_path / "report.md").is_symlink()


def test_a_link_at_the_file_is_never_read_for_the_diff(tmp_path, secret):
    """On the starting commit --diff printed the link target's content as the file's "before"."""
    secret.write_text("the content of another file\n")
    (tmp_path / "report.md").symlink_to(secret)
    for check_mode in (True, False):
        with pytest.raises(logic.WriteFilesError, match="is a symbolic link; write_files does not follow links"):
            logic.write_files(report(tmp_path), check_mode=check_mode, diff=True)
    assert (tmp_path / "report.md").is_symlink() and secret.read_text() == "the content of another file\n"


def test_a_link_at_one_file_refuses_the_task_before_any_file_is_written(tmp_path, secret):
    files = [{"path": str(tmp_path / "a.json"), "content": "{}\n"}, *report(tmp_path)]
    (tmp_path / "report.md").symlink_to(secret)
    with pytest.raises(logic.WriteFilesError, match=r"report\.md is a symbolic link"):
        logic.write_files(files)
    assert not (tmp_path / "a.json").exists()


def test_a_dangling_link_at_the_file_is_refused(tmp_path):
    (tmp_path / "report.md").symlink_to(tmp_path / "nowhere")
    with pytest.raises(logic.WriteFilesError, match=r"report\.md is a symbolic link"):
        logic.write_files(report(tmp_path))
    assert not (tmp_path / "nowhere").exists()


def test_a_link_swapped_in_after_the_checks_is_not_followed(tmp_path, secret, monkeypatch):
    """The mode of an existing file is set through a descriptor opened with O_NOFOLLOW, not by its path."""
    target = tmp_path / "report.md"
    target.write_text("# Report\n")
    os.chmod(target, 0o600)
    read = logic._read

    def read_then_swap(directory, name, path):
        found = read(directory, name, path)
        os.unlink(path)
        os.symlink(secret, path)
        return found

    monkeypatch.setattr(logic, "_read", read_then_swap)
    with pytest.raises(logic.WriteFilesError, match=f"^{target} is a symbolic link; write_files does not follow"):
        logic.write_files(report(tmp_path))
    assert mode_of(secret) == 0o600


# Item 5: a link as the directory.

def test_a_link_as_the_directory_is_refused_and_its_target_untouched(tmp_path, private):
    """On the starting commit the 0700 target became 0755 and the report was written into it."""
    (tmp_path / "reports").symlink_to(private)
    with pytest.raises(logic.WriteFilesError) as caught:
        logic.write_files(report(tmp_path / "reports"), "0755")
    assert str(caught.value) == (f"{tmp_path / 'reports'} is a symbolic link; write_files does not follow links "
                                 "(follow_directory_links allows a link as the directory of the files)")
    assert mode_of(private) == 0o700 and os.listdir(private) == []


def test_follow_directory_links_writes_into_the_target_without_changing_its_mode(tmp_path, private):
    (tmp_path / "reports").symlink_to(private)
    result = logic.write_files(report(tmp_path / "reports"), "0755", follow_directory_links=True, diff=True)
    assert result["directories"] == [{"path": str(tmp_path / "reports"), "state": "unchanged"}]
    assert result["files"] == [{"path": str(tmp_path / "reports" / "report.md"), "state": "created"}]
    assert [entry["before_header"] for entry in result["diff"]] == [str(tmp_path / "reports" / "report.md")]
    assert (private / "report.md").read_text() == "# Report\n"
    assert mode_of(private) == 0o700 and (tmp_path / "reports").is_symlink()
    again = logic.write_files(report(tmp_path / "reports"), "0755", follow_directory_links="yes")
    assert again["changed"] is False


@pytest.mark.parametrize("follow", [False, True])
def test_a_directory_link_to_nothing_is_refused(tmp_path, follow):
    (tmp_path / "reports").symlink_to(tmp_path / "gone")
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / 'reports'} is a symbolic link"):
        logic.write_files(report(tmp_path / "reports"), follow_directory_links=follow)
    assert not (tmp_path / "gone").exists()


def test_a_directory_link_to_a_file_is_not_a_directory(tmp_path, secret):
    (tmp_path / "reports").symlink_to(secret)
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / 'reports'} exists and is not a directory$"):
        logic.write_files(report(tmp_path / "reports"), follow_directory_links=True)


def test_links_above_the_directory_are_followed(tmp_path):
    """A home directory on a link, /var -> /private/var: the directories above the files' own keep working."""
    (tmp_path / "real" / "reports").mkdir(parents=True)
    (tmp_path / "home").symlink_to(tmp_path / "real")
    result = logic.write_files(report(tmp_path / "home" / "reports") + report(tmp_path / "home" / "new" / "deep"),
                               "0750")
    assert [item["state"] for item in result["directories"]] == ["mode", "created"]
    assert (tmp_path / "real" / "reports" / "report.md").read_text() == "# Report\n"
    assert (tmp_path / "real" / "new" / "deep" / "report.md").read_text() == "# Report\n"
    assert mode_of(tmp_path / "real" / "reports") == 0o750


def test_a_missing_directory_under_a_file_or_a_dangling_link_is_refused_before_writing(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    first = [{"path": str(tmp_path / "ok.md"), "content": "ok"}]
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / 'file'} exists and is not a directory$"):
        logic.write_files(first + report(tmp_path / "file" / "sub"))
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / 'dangling'} is a symbolic link to a missing path$"):
        logic.write_files(first + report(tmp_path / "dangling" / "sub"))
    assert not (tmp_path / "ok.md").exists() and not (tmp_path / "gone").exists()


def test_a_path_that_is_a_file_and_a_directory_of_another_is_refused(tmp_path):
    files = [{"path": str(tmp_path / "out"), "content": "x"}, {"path": str(tmp_path / "out" / "a"), "content": "y"}]
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / 'out'} is a file to write and a directory of "):
        logic.write_files(files)
    assert not (tmp_path / "out").exists()


def test_an_operating_system_error_names_the_whole_path(tmp_path):
    long_name = "a" * 300
    with pytest.raises(logic.WriteFilesError, match=f"^{tmp_path / long_name}: File name too long$"):
        logic.write_files([{"path": str(tmp_path / long_name), "content": "a"}])


@pytest.mark.parametrize("where", ["existing", "missing"])
def test_a_name_too_long_for_its_temporary_file_is_refused_before_writing(tmp_path, where):
    """A 250-byte name fits a directory entry, ``.<name>.<8 characters>`` does not: refused in the checks."""
    directory = tmp_path if where == "existing" else tmp_path / "new"
    files = [{"path": str(tmp_path / "first.md"), "content": "a"},
             {"path": str(directory / ("a" * 250)), "content": "a"}]
    with pytest.raises(logic.WriteFilesError, match=f"^{directory / ('a' * 250)}: the file name is too long "
                                                    r"\(250 bytes; with its temporary file's prefix and suffix at "
                                                    r"most 245\)$"):
        logic.write_files(files)
    assert os.listdir(tmp_path) == []


# Item 11: temporaries left by killed writes.

def test_a_killed_write_leaves_a_temporary_that_the_next_write_removes(tmp_path):
    """The write is killed (SIGKILL) between writing its temporary file and the rename, as a killed run would be."""
    script = textwrap.dedent(f"""
        import os, signal
        from ansible_collections.gpufabric.cluster.plugins.plugin_utils import write_files as logic
        os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
        logic.write_files([{{"path": {str(tmp_path / 'report.md')!r}, "content": "# Report\\n"}}])
    """)
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                            env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    litter = sorted(os.listdir(tmp_path))
    assert len(litter) == 1 and TEMPORARY.fullmatch(litter[0]), litter
    (tmp_path / ".report.md.swp").write_text("an editor's swap file")
    (tmp_path / ".report.md").write_text("an unrelated dotfile")
    for name in (litter[0], ".report.md.swp", ".report.md"):
        make_old(tmp_path / name)
    result = logic.write_files(report(tmp_path))
    assert result["files"][0]["state"] == "created"
    assert result["removed_temporaries"] == [str(tmp_path / litter[0])]
    assert sorted(os.listdir(tmp_path)) == [".report.md", ".report.md.swp", "report.md"]


def test_stale_temporaries_go_also_when_the_file_is_unchanged_and_young_ones_stay(tmp_path):
    logic.write_files(report(tmp_path))
    names = {"stale": ".report.md.k2j3h4k5", "young": ".report.md.x9y8z7w6", "other": ".other.md.k2j3h4k5",
             "longer": ".report.md.k2j3h4k5.bak", "upper": ".report.md.K2J3H4K5"}
    for name in names.values():
        (tmp_path / name).write_text("partial")
        if name != names["young"]:
            make_old(tmp_path / name)
    (tmp_path / ".report.md.linkaaaa").symlink_to(tmp_path / "report.md")
    make_old(tmp_path / ".report.md.linkaaaa")
    check = logic.write_files(report(tmp_path), check_mode=True)
    assert "removed_temporaries" not in check and (tmp_path / names["stale"]).exists()
    result = logic.write_files(report(tmp_path))
    assert result["changed"] is False and result["files"][0]["state"] == "unchanged"
    assert result["removed_temporaries"] == [str(tmp_path / names["stale"])]
    assert sorted(os.listdir(tmp_path)) == sorted([*(name for key, name in names.items() if key != "stale"),
                                                   ".report.md.linkaaaa", "report.md"])


def test_a_temporary_of_another_owner_is_kept(tmp_path, monkeypatch):
    (tmp_path / ".report.md.abcdefgh").write_text("partial")
    make_old(tmp_path / ".report.md.abcdefgh")
    monkeypatch.setattr(logic.os, "geteuid", lambda: os.lstat(tmp_path).st_uid + 1)
    assert "removed_temporaries" not in logic.write_files(report(tmp_path))
    assert (tmp_path / ".report.md.abcdefgh").exists()


def test_the_temporary_file_has_the_name_the_cleanup_recognises(tmp_path, monkeypatch):
    seen = []
    replace = os.replace

    def spy(source, *args, **kwargs):
        seen.append(source)
        return replace(source, *args, **kwargs)

    monkeypatch.setattr(logic.os, "replace", spy)
    logic.write_files(report(tmp_path))
    assert len(seen) == 1 and TEMPORARY.fullmatch(seen[0]) and logic.stale_temporaries(seen, "report.md") == seen


# Any arrangement of files, directories and links.

KINDS = ("missing", "file", "dir", "link_file", "link_dir", "link_missing")
TARGETS = ("a/report.md", "a", "a/b/report.md", "a/b", "report.md")


def build(root, kinds):
    """``root/a`` and ``root/a/b`` (when a is a directory or a link to one) as ``kinds`` says; the links point to
    ``root/outside/file`` (0600) and ``root/outside/dir`` (0700)."""
    outside = root / "outside"
    (outside / "dir").mkdir(parents=True)
    os.chmod(outside / "dir", 0o700)
    (outside / "file").write_text("outside\n")
    os.chmod(outside / "file", 0o600)
    for name, kind in zip(("a", "a/b"), kinds, strict=True):
        path = root / name
        if not path.parent.is_dir() or (path.parent.is_symlink() and name == "a/b"):
            break
        if kind == "file":
            path.write_text("old\n")
        elif kind == "dir":
            path.mkdir()
            os.chmod(path, 0o700)
        elif kind != "missing":
            path.symlink_to({"link_file": outside / "file", "link_dir": outside / "dir",
                             "link_missing": outside / "gone"}[kind])


def snapshot(root):
    """Every path under ``root`` with its type, mode and content (links by their target)."""
    found = {}
    for directory, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[path] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[path] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                with open(path, "rb") as handle:
                    found[path] = ("file", stat.S_IMODE(info.st_mode), handle.read())
    return found


def expected_refusal(root, paths, follow):
    """Whether write_files must refuse ``paths`` (the documented rules, read with os.path)."""
    for path in paths:
        if any(os.path.dirname(other) == path or os.path.dirname(other).startswith(path + os.sep) for other in paths):
            return True
        parent = os.path.dirname(path)
        if os.path.islink(parent) and not follow:
            return True
        if os.path.lexists(parent) and not os.path.isdir(parent):
            return True
        if not os.path.lexists(parent):
            ancestor = parent
            while not os.path.exists(ancestor):
                if os.path.islink(ancestor):
                    return True
                ancestor = os.path.dirname(ancestor)
            if not os.path.isdir(ancestor):
                return True
        if os.path.islink(path) or os.path.isdir(path) or (os.path.lexists(path) and not os.path.isfile(path)):
            return True
    return False


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
       targets=st.lists(st.sampled_from(TARGETS), min_size=1, max_size=2, unique=True),
       follow=st.booleans(), check=st.booleans(), directory_mode=st.sampled_from([None, "0755"]))
def test_property_any_arrangement_is_written_as_documented_or_refused_naming_the_path(
        tmp_path_factory, kinds, targets, follow, check, directory_mode):
    """Either the documented result (regular files with the content and mode, nothing outside changed but the
    files written into a followed directory link) or a WriteFilesError that names the path, with nothing written."""
    root = tmp_path_factory.mktemp("arrangement")
    build(root, kinds)
    paths = [os.path.join(root, target) for target in targets]
    files = [{"path": path, "content": f"new {index}\n", "mode": "0640"} for index, path in enumerate(paths)]
    before = snapshot(root)
    refuse = expected_refusal(str(root), paths, follow)
    try:
        result = logic.write_files(files, directory_mode, check_mode=check, follow_directory_links=follow)
    except logic.WriteFilesError as exc:
        assert refuse, f"refused what the rules allow: {exc}"
        named = str(exc).split(" ", maxsplit=1)[0].rstrip(":")
        assert any(path == named or path.startswith(named + os.sep) for path in paths), str(exc)
        assert snapshot(root) == before
        return
    assert not refuse, f"wrote what the rules refuse: {targets} over {kinds}"
    outside = root / "outside"
    assert mode_of(outside / "file") == 0o600 and (outside / "file").read_text() == "outside\n"
    assert mode_of(outside / "dir") == 0o700
    if check:
        assert snapshot(root) == before
        return
    for entry in files:
        assert stat.S_ISREG(os.lstat(entry["path"]).st_mode)
        with open(entry["path"], encoding="utf-8") as handle:
            assert handle.read() == entry["content"]
        assert mode_of(entry["path"]) == 0o640
        parent = os.path.dirname(entry["path"])
        if directory_mode and not os.path.islink(parent):
            assert mode_of(parent) == 0o755
    written = set(paths) | {os.path.join(outside, "dir", os.path.basename(path)) for path in paths}
    for path, found in snapshot(root).items():
        if path not in written and path in before and found != before[path]:
            assert found[0] == "dir" and directory_mode, (path, found, before[path])
    assert logic.write_files(files, directory_mode, follow_directory_links=follow)["changed"] is False
    assert result["changed"] is True
