# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 40 item 2: a site run judges the preflight once and probes a host once per phase that needs fresh facts.

On the starting commit the site gate judged every host again right after the preflight had (the facts had not
changed), and validate.yml probed the GPU hosts again inside a site run, right after the checkpoint had gathered
their facts as the host phase left them.
"""

from __future__ import annotations

import json
import re

import pytest

from ansible_collections.gpufabric.cluster.tests.unit.playbooks.runner import (
    ansible_playbook,
    write_local_hosts_inventory,
)


@pytest.fixture(scope="module")
def fleet(host_trees, tmp_path_factory):
    """Three local GPU hosts reading recorded trees."""
    return write_local_hosts_inventory(tmp_path_factory.mktemp("one-pass"), host_trees,
                                       {"hgx": "hgx_h100", "broken": "broken_node", "plain": "no_nvidia"}, "gpu_nodes")


def run(workdir, name: str, playbook: str, *extra: str) -> tuple[int, str, dict | None]:
    reports = workdir / name
    completed = ansible_playbook(["-i", str(workdir / "hosts.yml"), playbook, "-e", f"gpufabric_report_dir={reports}",
                                  "-e", '{"gpufabric_host_roles": []}', *extra], workdir,
                                 env={"KUBECONFIG": str(workdir / "no-kubeconfig")})
    summary = reports / "site-summary.json"
    return (completed.returncode, " ".join((completed.stdout + completed.stderr).split()),
            json.loads(summary.read_text()) if summary.is_file() else None)


def test_the_gate_decides_from_the_preflights_verdict(fleet):
    """The gate takes gpufabric_preflight, the verdict the preflight's judge task sets, as it is: here one given as an
    extra var (which wins over any fact) says the plain server passed, and the gate lets it through although its
    facts show no hardware; judging again would exclude it."""
    verdict = {"summary": {"ready": True}, "hosts": {
        name: {"status": "pass", "summary": "ready", "checks": []} for name in ("hgx", "broken", "plain")}}
    returncode, output, summary = run(fleet, "verdict", "gpufabric.cluster.site", "--tags", "hosts",
                                      "-e", json.dumps({"gpufabric_preflight": verdict}))
    assert returncode == 0, output[-3000:]
    assert summary["preflight"]["status"] == {"hgx": "pass", "broken": "pass", "plain": "pass"}
    assert summary["excluded_hosts"] == {} and sorted(summary["converged_hosts"]) == ["broken", "hgx", "plain"]


def test_validate_in_a_site_run_reads_the_facts_the_checkpoint_gathered(fleet):
    """RDMA pairs ask for the hosts' ConnectX facts: in a site run the checkpoint gathered them after the host phase,
    and the validation play does not probe again (the RDMA role then fails on the missing cluster, deferred)."""
    returncode, output, summary = run(fleet, "site-validate", "gpufabric.cluster.site", "--tags", "hosts,validate",
                                      "-e", '{"validate_rdma_pairs": [{"server": "hgx", "client": "broken"}]}',
                                      "-e", "gpufabric_validate_compute_domain=false")
    assert returncode == 2, output[-3000:]
    gather = re.search(r"TASK \[Gather the fabric facts\] \**(.*?)(?:TASK|PLAY) \[", output)
    assert gather, output[-3000:]
    assert "ok: [" not in gather.group(1) and "changed: [" not in gather.group(1), gather.group(1)
    assert "skipping: [hgx]" in gather.group(1) and "skipping: [broken]" in gather.group(1)
    # the facts it read are the checkpoint's: the RDMA validation ran and failed on the cluster, not on facts
    assert summary["validation_ran"] is True and summary["validation_failures"], summary
    assert "no gpufabric facts" not in " ".join(summary["validation_failures"])


def test_validate_alone_still_gathers_the_facts(fleet):
    returncode, output, _summary = run(fleet, "validate-alone", "gpufabric.cluster.validate",
                                       "--limit", "hgx,localhost",
                                       "-e", '{"validate_rdma_pairs": [{"server": "hgx", "client": "hgx"}]}',
                                       "-e", "gpufabric_validate_compute_domain=false")
    assert returncode == 2, output[-3000:]  # the RDMA validation fails on the missing cluster
    assert re.search(r"TASK \[Gather the fabric facts\] \** ok: \[hgx\]", output), output[-3000:]
