# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The site run's gate, lost hosts, summary and its Markdown (site_gate, site_lost, site_summary, ...markdown)."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.site_gate import site_gate
from ansible_collections.gpufabric.cluster.plugins.filter.site_lost import site_lost
from ansible_collections.gpufabric.cluster.plugins.filter.site_summary import site_summary
from ansible_collections.gpufabric.cluster.plugins.filter.site_summary_markdown import site_summary_markdown

REPORT = {
    "summary": {"ready": False},
    "hosts": {
        "hgx": {"status": "warn", "checks": [{"name": "fabric", "status": "warn", "message": "no NVML"}]},
        "broken": {"status": "fail", "checks": [
            {"name": "driver", "status": "fail", "message": "driver not loaded"},
            {"name": "fabric", "status": "skip", "message": "-"}]},
        "plain": {"status": "no_hardware", "checks": []},
        "split": {"status": "fail", "checks": [{"name": "fabric", "status": "fail", "message": "two cliques"}]},
        "gone": {"status": "fail", "checks": [{"name": "probe", "status": "fail", "message": "no facts"}]},
        "ctl": {"status": "no_hardware", "checks": []},
    },
}
ALL = ["hgx", "broken", "plain", "split", "gone", "ctl"]
ACTIVE = ["hgx", "broken", "plain", "split", "ctl"]
TARGETS = ["hgx", "broken", "plain", "split", "gone"]


def test_default_gate_excludes_what_no_host_role_repairs():
    record = site_gate(REPORT, TARGETS, ["probe", "fabric"], ALL, ACTIVE)
    assert record["ready"] == ["hgx", "broken"]
    assert record["excluded"] == {"plain": ["no NVIDIA GPU or ConnectX port found"], "split": ["two cliques"]}
    assert record["failed"] == {"gone": "failed or unreachable in the preflight phase"}
    assert record["preflight_status"]["ctl"] == "no_hardware" and record["preflight_ready"] is False
    assert record["preflight_hosts"] == ALL


def test_gate_on_all_checks():
    record = site_gate(REPORT, TARGETS, ["all"], ALL, ACTIVE)
    assert record["ready"] == ["hgx"]
    assert record["excluded"]["broken"] == ["driver not loaded"]


def test_lost_in_the_host_phase_keeps_earlier_reasons():
    record = site_gate(REPORT, TARGETS, ["probe", "fabric"], ALL, ACTIVE)
    record = site_lost(record, ["hgx", "broken", "gone"], ["hgx"], "host")
    assert record["failed"] == {"broken": "failed or unreachable in the host phase",
                                "gone": "failed or unreachable in the preflight phase"}


def test_summary_and_markdown():
    record = site_gate(REPORT, TARGETS, ["probe", "fabric"], ALL, ACTIVE)
    summary = site_summary(record, ["hgx", "broken"], None, None, "/r")
    assert summary["result"] == "fail"
    assert summary["message"] == ("site run incomplete: excluded plain, split; failed gone; cluster ok; "
                                  "validation ok. See /r/site-summary.md")
    assert summary["reports"] == {"preflight": "/r/preflight.md", "validation": None,
                                  "summary": "/r/site-summary.md"}
    markdown = site_summary_markdown(summary)
    assert markdown.startswith("# gpufabric.cluster site run: FAIL\n\n| host | preflight | outcome |\n|---|---|---|\n")
    assert "| plain | no_hardware | excluded: no NVIDIA GPU or ConnectX port found |\n" in markdown
    assert "| gone | fail | failed or unreachable in the preflight phase |\n" in markdown
    assert "| hgx | warn | converged |\n" in markdown and "| ctl | no_hardware | - |\n" in markdown
    assert markdown.endswith("- cluster phase: ok or not run\n- validation: not run\n"
                             "- preflight report: /r/preflight.md\n")


def test_a_clean_run_passes_and_a_failed_phase_fails():
    record = {"preflight_status": {"a": "pass"}, "preflight_ready": True, "excluded": {}, "failed": {}}
    passed = site_summary(record, ["a"], None, {"failures": []}, "/r")
    assert (passed["result"], passed["message"], passed["validation_ran"]) == ("pass", None, True)
    assert "- validation: PASS, /r/validation.md\n" in site_summary_markdown(passed)
    failed = site_summary(record, ["a"], "helm timed out", {"failures": ["rail0 below line rate"]}, "/r")
    assert failed["result"] == "fail"
    text = site_summary_markdown(failed)
    assert "- cluster phase: failed: helm timed out\n- validation: FAIL: rail0 below line rate\n" in text
    assert site_summary(None, [], None, None, "/r")["result"] == "pass"


@pytest.mark.parametrize("written", [False, "false", "no", 0])
def test_in_check_mode_the_summary_points_at_no_report(written):
    record = site_gate(REPORT, TARGETS, ["probe", "fabric"], ALL, ACTIVE)
    summary = site_summary(record, ["hgx", "broken"], None, {"failures": []}, "/r", written)
    assert summary["reports"] == {"preflight": None, "validation": None, "summary": None}
    assert summary["reports_written"] is False
    assert summary["message"] == ("site run incomplete: excluded plain, split; failed gone; cluster ok; "
                                  "validation ok. No report written (check mode).")
    markdown = site_summary_markdown(summary)
    assert "/r/" not in markdown
    assert markdown.endswith("- cluster phase: ok or not run\n- validation: PASS\n"
                             "- preflight report: not written (check mode)\n")


def test_written_is_an_ansible_boolean_or_refused():
    assert site_summary(None, [], None, None, "/r", "yes")["reports"]["summary"] == "/r/site-summary.md"
    with pytest.raises(AnsibleFilterError, match=r'^site_summary: written must be a boolean .*, got \'maybe\'$'):
        site_summary(None, [], None, None, "/r", "maybe")


@pytest.mark.parametrize(("call", "message"), [
    (lambda: site_gate({}, [], [], [], []), "site_gate: the input must be the report"),
    (lambda: site_gate(REPORT, "gpu_nodes", [], ALL, ACTIVE), "site_gate: targets must be a list"),
    (lambda: site_lost([], [], [], "host"), "site_lost: the input must be the record"),
    (lambda: site_summary_markdown({}), "site_summary_markdown: expected the dict"),
])
def test_bad_input(call, message):
    with pytest.raises(AnsibleFilterError, match=message):
        call()


def test_validation_markdown_is_what_validate_yml_wrote():
    from ansible_collections.gpufabric.cluster.plugins.filter.validation_markdown import validation_markdown

    validation = {"compute_domain": {"verdict": {"status": "pass"}},
                  "rdma": [{"name": "0-mlx5-0-cuda",
                            "verdict": {"status": "fail", "best_average_gbps": 180.5, "line_rate_gbps": 400}}],
                  "failures": ["RDMA: 0-mlx5-0-cuda below line rate"]}
    assert validation_markdown(validation) == (
        "# gpufabric.cluster validation: FAIL\n\n- ComputeDomain: pass (compute-domain.md)\n"
        "- RDMA 0-mlx5-0-cuda: fail, 180.5 of 400 Gb/s\n- failed: RDMA: 0-mlx5-0-cuda below line rate\n")
    assert validation_markdown({"compute_domain": None, "rdma": [], "failures": []}) == \
        "# gpufabric.cluster validation: PASS\n\n"
    with pytest.raises(AnsibleFilterError, match="validation_markdown: expected the validation result"):
        validation_markdown({})


def test_a_target_the_preflight_report_does_not_hold_is_excluded_not_ready():
    report = {"hosts": {}, "summary": {"ready": True}}
    gate = site_gate(report, ["tray-1"], ["probe", "fabric"], ["tray-1"], ["tray-1"])
    assert gate["ready"] == []
    assert gate["excluded"] == {"tray-1": ["not judged by the preflight (no entry in its report)"]}


def test_the_string_false_for_the_gate_checks_is_refused_naming_the_variable():
    with pytest.raises(AnsibleFilterError, match="gpufabric_site_gate_checks must be a list, got str"):
        site_gate({"hosts": {}}, ["tray-1"], "false", ["tray-1"], ["tray-1"])


@given(st.permutations(["hgx", "broken", "split"]))
def test_the_summary_does_not_depend_on_the_order_the_hosts_finished_in(finished):
    # group_by lists the converged hosts in the order they finished, which differs between two runs over the same
    # hosts; the summary written from it must not (site.yml's second run would rewrite site-summary.json)
    record = site_gate(REPORT, TARGETS, ["probe", "fabric"], ALL, ACTIVE)
    summary = site_summary(record, finished, None, None, "/r")
    assert summary == site_summary(record, ["broken", "hgx", "split"], None, None, "/r")
    assert summary["converged_hosts"] == ["broken", "hgx", "split"]


def test_the_summary_and_its_markdown_never_echo_a_secret():
    url = "https://fabric:s3cr3t-pw@charts.example.com/nvidia"
    failure = f'Install the release: Error: looks like "{url}" is not a valid chart repository'
    site = site_gate(REPORT, TARGETS, ["probe"], ALL, ACTIVE)
    site = {**site, "failed": {"gone": f"lost reading {url}"}}
    summary = site_summary(site, ["hgx"], failure, {"failures": [f"rdma: {url} unreachable"]}, "reports")
    redacted = failure.replace("fabric:s3cr3t-pw", "***")
    assert summary["cluster_failure"] == redacted
    assert summary["failed_hosts"]["gone"] == "lost reading https://***@charts.example.com/nvidia"
    assert summary["validation_failures"] == ["rdma: https://***@charts.example.com/nvidia unreachable"]
    assert f"cluster {redacted};" in summary["message"]
    markdown = site_summary_markdown(summary)
    assert f"- cluster phase: failed: {redacted}" in markdown
    # a failure that is a mapping (a kubeconfig passed where a path belongs) has its secrets masked
    mapping = site_summary(site, [], {"users": [{"user": {"token": "tok-9", "client-key-data": "S0VZ"}}]}, None, "/r")
    assert mapping["cluster_failure"] == {"users": [{"user": {"token": "********", "client-key-data": "********"}}]}
    raw = site_summary_markdown({**mapping, "cluster_failure": {"password": "pw-7", "server": url}})
    for text in (repr(summary), markdown, repr(mapping), raw):
        assert "s3cr3t" not in text and "tok-9" not in text and "S0VZ" not in text and "pw-7" not in text
