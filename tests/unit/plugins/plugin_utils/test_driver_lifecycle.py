# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""driver_lifecycle: the table of NVIDIA driver branches and the judgement of a branch on a day."""

from __future__ import annotations

import datetime

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.driver_lifecycle import driver_lifecycle
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.driver_lifecycle import (
    BRANCHES,
    LifecycleError,
    branch_of,
    judge,
    lifecycle,
    lookup,
    recommended,
)

DAY = datetime.date(2026, 11, 28)


@pytest.mark.parametrize(("branch", "kind", "end"), [
    (535, "LTSB", "2026-06-30"), (570, "PB", "2026-02-28"), (575, "NFB", "2025-08-04"), (580, "LTSB", "2028-06-30"),
    (590, "NFB", None), (595, "PB", "2027-03-31"), (610, "NFB", "2026-08-31"), (620, "LTSB", "2029-09-30"),
])
def test_the_table(branch, kind, end):
    row = lookup(branch)
    assert row.kind == kind
    assert (row.end_of_life.isoformat() if row.end_of_life else None) == end


def test_a_branch_outside_the_table_is_not_found():
    assert lookup(560) is None and lookup(630) is None


@pytest.mark.parametrize(("version", "branch"), [
    ("570.172.08", 570), ("570", 570), (570, 570), ("R580", 580), (" 580.95.05 ", 580), ("1000.1", 1000),
])
def test_branch_of(version, branch):
    assert branch_of(version) == branch


@pytest.mark.parametrize("version", ["", "latest", True, False, None, 57, "57", "570.", "570.172.08-1", "v580",
                                     5.8, ["580"], "580\n570", "000", "0570.1"])
def test_branch_of_refuses_what_names_no_branch(version):
    with pytest.raises(LifecycleError, match=r"^nvidia_driver_branch must be a driver version such as 580\.95\.05"):
        branch_of(version, "nvidia_driver_branch")


def test_the_end_of_life_day_itself_is_still_supported():
    eol = lookup(535).end_of_life
    assert judge(535, eol, True)[0].level == "pass"
    after = judge(535, eol + datetime.timedelta(days=1), True)
    assert [finding.code for finding in after] == ["end_of_life"]
    assert after[0].message == ("driver branch R535 (long-term support branch) is past its end of life 2026-06-30; "
                                "move to R580 (long-term support branch, supported to 2028-06-30)")


def test_past_end_of_life_names_the_date_and_the_branch_to_move_to():
    (finding,) = judge(570, DAY, True)
    assert finding.level == "warn" and finding.code == "end_of_life"
    assert finding.message == ("driver branch R570 (production branch) is past its end of life 2026-02-28; "
                               "move to R580 (long-term support branch, supported to 2028-06-30)")


def test_the_branch_to_move_to_is_supported_on_the_day():
    # after R535's end of life, R570 has ended too: the move is to R580, not to the ended R570
    assert recommended(535, datetime.date(2026, 7, 1)).number == 580
    # past every table entry, the newest supported branch
    assert recommended(700, DAY).number == 620
    assert recommended(580, datetime.date(2040, 1, 1)) is None


def test_a_new_feature_branch_warns_on_a_production_site_only():
    assert [finding.code for finding in judge(590, DAY, True)] == ["new_feature_branch"]
    assert judge(590, DAY, True)[0].message == (
        "driver branch R590 is a new feature branch on a production site (gpufabric_production_site); "
        "move to R595 (production branch, supported to 2027-03-31)")
    assert [finding.code for finding in judge(590, DAY, False)] == ["supported"]
    assert judge(590, DAY, False)[0].message == "driver branch R590 (new feature branch), no end-of-life date published"


def test_an_ended_new_feature_branch_on_a_production_site_has_both_findings():
    assert [finding.code for finding in judge(610, DAY, True)] == ["end_of_life", "new_feature_branch"]
    assert "(no date published: listed as end of life" in judge(575, DAY, False)[0].message


def test_an_unknown_branch_is_never_guessed():
    (finding,) = judge(630, DAY, True)
    assert (finding.level, finding.code) == ("warn", "unknown")
    assert finding.message.startswith("driver branch R630: lifecycle unknown")


def test_a_supported_branch_passes():
    assert judge(580, DAY, True)[0].message == "driver branch R580 (long-term support branch), supported to 2028-06-30"


def test_lifecycle_as_data():
    assert lifecycle("570.172.08", "2026-11-28") == {
        "branch": 570, "known": True, "kind": "PB", "end_of_life": "2026-02-28", "past_end_of_life": True,
        "findings": [{"level": "warn", "code": "end_of_life", "message": judge(570, DAY, True)[0].message}]}
    assert lifecycle(630, DAY)["known"] is False and lifecycle(630, DAY)["past_end_of_life"] is False


def test_today_defaults_to_the_controllers_date():
    today = datetime.date.today()
    assert lifecycle(610)["past_end_of_life"] is (today > BRANCHES[610].end_of_life)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"today": "tomorrow"}, "today must be a date such as 2026-11-28"),
    ({"today": 20261128}, "today must be a date such as 2026-11-28"),
    ({"production": "yes"}, "production must be true or false, got str"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(LifecycleError, match=message):
        lifecycle("580", **kwargs)
    with pytest.raises(AnsibleFilterError, match=f"^driver_lifecycle: {message}"):
        driver_lifecycle("580", **kwargs)


def test_the_filter_names_the_variable():
    with pytest.raises(AnsibleFilterError, match=r"^driver_lifecycle: nvidia_driver_branch must be a driver version"):
        driver_lifecycle("latest", name="nvidia_driver_branch")


def test_judge_refuses_a_branch_that_is_not_a_number():
    with pytest.raises(LifecycleError, match="branch must be a whole number"):
        judge("570", DAY, True)


@given(version=st.one_of(st.text(max_size=30), st.from_regex(r"\A[0-9]{1,5}(\.[0-9]{1,3}){0,4}\Z"),
                         st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False)),
       day=st.dates(), production=st.booleans())
def test_any_version_gives_documented_findings_or_a_clear_error(version, day, production):
    try:
        result = lifecycle(version, day, production, "nvidia_driver_branch")
    except LifecycleError as exc:
        assert str(exc).startswith("nvidia_driver_branch must be a driver version such as 580.95.05")
        assert "\n" not in str(exc)
        return
    assert 100 <= result["branch"] <= 9999
    assert result["findings"]
    for finding in result["findings"]:
        assert finding["level"] in ("warn", "pass")
        assert finding["code"] in ("end_of_life", "new_feature_branch", "unknown", "supported")
        assert finding["message"].startswith(f"driver branch R{result['branch']}")
    codes = [finding["code"] for finding in result["findings"]]
    assert ("end_of_life" in codes) is result["past_end_of_life"]
    assert ("unknown" in codes) is (not result["known"])
