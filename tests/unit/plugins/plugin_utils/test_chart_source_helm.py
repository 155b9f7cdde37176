# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 45: a helm the controller cannot run is named as such, not as "chart source not usable ... Error executing
command." (what ``ansible.builtin.command`` reports for a program it cannot start: ansible-core's
``AnsibleModule.run_command`` fails with ``rc`` the OSError's errno, empty output and that message)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.chart_source import ChartSourceError, chart_source

SPEC = {"path": "", "oci_ref": "", "repo_url": "https://helm.ngc.nvidia.com/nvidia", "name": "gpu-operator",
        "version": "v26.7.0"}


def _not_started(rc: int, cmd) -> dict:
    return {"failed": True, "rc": rc, "stdout": "", "stderr": "", "msg": "Error executing command.", "cmd": cmd}


@pytest.mark.parametrize(("rc", "cmd", "line"), [
    (2, ["/opt/bin/helm", "show", "chart"], "helm not found on the controller: /opt/bin/helm"),
    (13, "/opt/bin/helm show chart", "helm not executable on the controller: /opt/bin/helm"),
    (257, ["helm", "show"], "helm cannot be run on the controller: helm"),
])
def test_a_helm_that_cannot_be_started_is_named(rc, cmd, line):
    with pytest.raises(ChartSourceError) as caught:
        chart_source(SPEC, "gpu_operator", shown=_not_started(rc, cmd))
    assert str(caught.value) == (f"{line} (gpu_operator_helm_binary, empty: helm on the PATH); install helm 3 on the "
                                 "controller or set gpu_operator_helm_binary to its path")


def test_helm_that_ran_and_failed_is_still_the_chart_source():
    shown = {"rc": 1, "stdout": "", "stderr": "Error: looks like the repository cannot be reached", "msg": "non-zero"}
    with pytest.raises(ChartSourceError, match=r"^chart source not usable: gpu_operator_chart_repo_url"):
        chart_source(SPEC, "gpu_operator", shown=shown)


@given(rc=st.one_of(st.none(), st.integers(), st.text(max_size=5)), msg=st.one_of(st.none(), st.text(max_size=40)),
       stdout=st.text(max_size=20), cmd=st.one_of(st.none(), st.text(max_size=30), st.lists(st.text(max_size=10))))
def test_any_result_is_read_or_refused_naming_helm_or_the_chart_source(rc, msg, stdout, cmd):
    shown = {"rc": rc, "msg": msg, "stdout": stdout, "stderr": "", "cmd": cmd}
    try:
        chart_source(SPEC, "gpu_operator", shown=shown)
    except ChartSourceError as exc:
        assert str(exc).startswith(("helm ", "chart source not usable", "gpu_operator_chart_version",
                                    "gpu_operator_chart_repo_url")), str(exc)
        assert "\n" not in str(exc)
