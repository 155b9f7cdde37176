# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's driver_lifecycle check (issue 42 item 3): warnings per host, never a failure.

The recorded HGX H100 runs 570.172.08 (R570, a production branch that ended in February 2026).
"""

from __future__ import annotations

import copy
import datetime

import pytest

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.preflight import (
    check_driver_lifecycle,
    preflight_report,
)
from ansible_collections.gpufabric.cluster.tests.unit.plugins.plugin_utils.test_preflight_report import (
    checks_of,
    hostvars_for,
)


def hgx(fleet_facts, version=None, **host_vars):
    hostvars = hostvars_for(fleet_facts, {"hgx": ("hgx_h100", "192.0.2.21")})
    hostvars["hgx"].update(host_vars)
    if version is not None:
        hostvars["hgx"]["ansible_facts"]["gpufabric"]["gpu"]["driver_version"] = version
    return hostvars


def lifecycle_check(fleet_facts, today, version=None, **host_vars):
    report = preflight_report(hgx(fleet_facts, version, **host_vars), ["hgx"], today=today)
    return report, checks_of(report, "hgx")["driver_lifecycle"]


def test_a_branch_past_its_end_of_life_warns_with_its_date_and_the_branch_to_move_to(fleet_facts):
    report, check = lifecycle_check(fleet_facts, datetime.date(2026, 3, 1))
    assert check == {"name": "driver_lifecycle", "status": "warn",
                     "message": "driver branch R570 (production branch) is past its end of life 2026-02-28; "
                                "move to R580 (long-term support branch, supported to 2028-06-30)"}
    # a warning: the READY site stays READY
    assert report["summary"]["ready"] is True and report["summary"]["fail"] == 0


def test_the_end_of_life_day_itself_passes(fleet_facts):
    _report, check = lifecycle_check(fleet_facts, datetime.date(2026, 2, 28))
    assert check == {"name": "driver_lifecycle", "status": "pass",
                     "message": "driver branch R570 (production branch), supported to 2026-02-28"}


@pytest.mark.parametrize(("production", "status"), [(None, "warn"), (True, "warn"), (False, "pass")])
def test_a_new_feature_branch_warns_on_a_production_site(fleet_facts, production, status):
    extra = {} if production is None else {"gpufabric_production_site": production}
    _report, check = lifecycle_check(fleet_facts, datetime.date(2026, 11, 28), "590.48.01", **extra)
    assert check["status"] == status
    assert ("is a new feature branch on a production site (gpufabric_production_site)" in check["message"]) is \
        (status == "warn")


def test_an_unknown_branch_is_lifecycle_unknown(fleet_facts):
    _report, check = lifecycle_check(fleet_facts, datetime.date(2026, 11, 28), "630.10.01")
    assert check["status"] == "warn" and check["message"].startswith("driver branch R630: lifecycle unknown")


def test_a_bad_production_setting_is_named(fleet_facts):
    _report, check = lifecycle_check(fleet_facts, datetime.date(2026, 11, 28), gpufabric_production_site="yes")
    assert check == {"name": "driver_lifecycle", "status": "warn",
                     "message": "gpufabric_production_site must be true or false, got str; "
                                "the driver's lifecycle is not judged"}


def test_no_loaded_driver_is_skipped(fleet_facts):
    gpu = copy.deepcopy(hgx(fleet_facts)["hgx"]["ansible_facts"]["gpufabric"]["gpu"])
    gpu["driver_loaded"] = False
    assert check_driver_lifecycle(gpu, {})["status"] == "skip"
    gpu.update(driver_loaded=True, driver_version="not a version")
    assert check_driver_lifecycle(gpu, {}, datetime.date(2026, 11, 28)) == {
        "name": "driver_lifecycle", "status": "warn",
        "message": "the loaded driver version must be a driver version such as 580.95.05 or a branch such as 580, "
                   "got 'not a version'; the driver's lifecycle is not judged"}
