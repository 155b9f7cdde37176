# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The report directory (issue 39, item 2): null or empty is refused by name, never taken as the root directory."""

from __future__ import annotations

import os

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.report_dir import FilterModule
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_dir import ReportDirError, report_dir


@pytest.mark.parametrize(("value", "message"), [
    (None, "gpufabric_report_dir is null: set it to a directory on the controller, or leave it unset for reports "
           "in the working directory"),
    ("", "gpufabric_report_dir is empty: set it to a directory on the controller, or leave it unset for reports "
         "in the working directory"),
    ("  ", "gpufabric_report_dir is empty: "),
    (["reports"], "gpufabric_report_dir must be the path of a directory on the controller, got a list"),
    ({"path": "reports"}, "gpufabric_report_dir must be the path of a directory on the controller, got a mapping"),
    (7, "gpufabric_report_dir must be the path of a directory on the controller, got a number"),
    (True, "gpufabric_report_dir must be the path of a directory on the controller, got a boolean"),
    ("rep\x00orts", "gpufabric_report_dir must not contain a NUL character"),
])
def test_no_directory_is_refused_by_name(value, message):
    with pytest.raises(ReportDirError) as caught:
        report_dir(value)
    assert str(caught.value).startswith(message)


def test_the_role_variable_is_named():
    with pytest.raises(ReportDirError, match=r"^validate_rdma_report_dir is empty: "):
        report_dir("", "validate_rdma_report_dir")


def test_relative_is_the_working_directory_of_the_process_not_pwd(tmp_path, monkeypatch):
    """ansible-playbook started with a stale or missing PWD (cron, a subprocess with its own cwd) still writes to
    reports/ of its working directory; lookup('env', 'PWD') ~ '/reports' was /reports without PWD."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PWD", raising=False)
    assert report_dir("reports") == str(tmp_path / "reports")
    monkeypatch.setenv("PWD", "/elsewhere")
    assert report_dir("./out/../reports/") == str(tmp_path / "reports")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert report_dir("~/reports") == str(tmp_path / "home" / "reports")
    assert report_dir("/srv//reports/.") == "/srv/reports"


def test_the_filter_names_itself_and_the_variable():
    flt = FilterModule().filters()["report_dir"]
    assert flt("/srv/reports") == "/srv/reports"
    with pytest.raises(AnsibleFilterError, match=r"^report_dir: validate_nccl_report_dir is null: "):
        flt(None, "validate_nccl_report_dir")
    with pytest.raises(AnsibleFilterError, match=r"^report_dir: name must be a string, got null"):
        flt("/srv/reports", None)


@given(value=st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12),
                       st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.text())))
def test_property_an_absolute_directory_or_a_refusal_naming_the_variable(value):
    """Only two outcomes: the documented path, or ReportDirError naming the variable; never "" or "/" from nothing."""
    try:
        resolved = report_dir(value, "some_report_dir")
    except ReportDirError as exc:
        assert str(exc).startswith("some_report_dir ")
        assert value is None or not isinstance(value, str) or not value.strip() or "\x00" in value
    else:
        assert isinstance(value, str) and value.strip() and "\x00" not in value
        assert resolved == os.path.normpath(os.path.abspath(os.path.expanduser(value)))
        assert os.path.isabs(resolved)
