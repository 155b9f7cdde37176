# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""write_files' ``volatile`` text: a report's generation time does not make an unchanged report changed."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import write_files as logic

STAMP = r"generated at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"


def report(path, when, body="all hosts ready\n", volatile=STAMP):
    entry = {"path": str(path), "content": f"generated at {when}\n{body}"}
    if volatile is not None:
        entry["volatile"] = volatile
    return [entry]


def test_a_report_that_differs_only_in_its_time_is_left_as_it_was(tmp_path):
    target = tmp_path / "preflight.md"
    logic.write_files(report(target, "2026-11-28T10:00:00Z"))
    inode = os.stat(target).st_ino
    result = logic.write_files(report(target, "2026-11-28T11:00:00Z"), diff=True)
    assert result["changed"] is False
    assert result["files"] == [{"path": str(target), "state": "unchanged"}]
    assert result["diff"] == []
    assert target.read_text().startswith("generated at 2026-11-28T10:00:00Z")
    assert os.stat(target).st_ino == inode


def test_a_report_whose_content_changed_is_rewritten_with_its_new_time(tmp_path):
    target = tmp_path / "preflight.md"
    logic.write_files(report(target, "2026-11-28T10:00:00Z"))
    result = logic.write_files(report(target, "2026-11-28T11:00:00Z", body="tray1 failed\n"))
    assert result["files"][0]["state"] == "updated"
    assert target.read_text() == "generated at 2026-11-28T11:00:00Z\ntray1 failed\n"


def test_without_volatile_every_difference_counts(tmp_path):
    target = tmp_path / "preflight.md"
    logic.write_files(report(target, "2026-11-28T10:00:00Z", volatile=None))
    result = logic.write_files(report(target, "2026-11-28T11:00:00Z", volatile=None))
    assert result["files"][0]["state"] == "updated"


def test_check_mode_tells_the_same_truth(tmp_path):
    target = tmp_path / "preflight.md"
    logic.write_files(report(target, "2026-11-28T10:00:00Z"))
    assert logic.write_files(report(target, "2026-11-28T11:00:00Z"), check_mode=True)["changed"] is False
    assert logic.write_files(report(target, "2026-11-28T11:00:00Z", body="x\n"), check_mode=True)["changed"] is True


@pytest.mark.parametrize(("volatile", "message"), [
    ("(", "files[0].volatile '(' is not a regular expression"),
    ("x*", "files[0].volatile 'x*' matches the empty string, which would hide every change"),
    ("", "files[0].volatile must not be empty"),
    (5, "files[0].volatile must be a string"),
    (["a"], "files[0].volatile must be a string"),
    (True, "files[0].volatile must be a string"),
])
def test_a_bad_pattern_is_refused_by_name_before_anything_is_written(tmp_path, volatile, message):
    with pytest.raises(arguments.ArgumentError) as error:
        logic.write_files(report(tmp_path / "r.md", "2026-11-28T10:00:00Z", volatile=volatile))
    assert str(error.value).startswith(message), str(error.value)
    assert not (tmp_path / "r.md").exists()


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.text(max_size=40), after=st.text(max_size=40), pattern=st.sampled_from([STAMP, "[0-9]+", "a|b"]))
def test_property_unchanged_only_when_equal_outside_the_volatile_text(tmp_path_factory, before, after, pattern):
    """Whatever the texts: the file is left as it was exactly when the two agree once the volatile text is removed,
    and otherwise it holds the new content."""
    target = tmp_path_factory.mktemp("volatile") / "r.txt"
    target.write_bytes(before.encode("utf-8", errors="surrogateescape"))
    result = logic.write_files([{"path": str(target), "content": after, "volatile": pattern, "mode": "0644"}])
    compiled = logic.parse_volatile("volatile", pattern)
    equal = compiled.sub(b"", before.encode("utf-8", "surrogateescape")) == \
        compiled.sub(b"", after.encode("utf-8", "surrogateescape"))
    assert (result["files"][0]["state"] in ("unchanged", "mode")) is equal
    expected = before if equal else after
    assert target.read_bytes() == expected.encode("utf-8", errors="surrogateescape")
