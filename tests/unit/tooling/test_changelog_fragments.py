# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The changelog fragments describe only what users of the collection see (issue 40, item 5).

The test tiers, the test harness, the molecule scenarios, the benchmarks, CI and the contributors' make targets are
not part of the built collection (galaxy.yml's ``build_ignore``), so a change to them gets no fragment entry, and an
entry about a user-visible change does not describe them too. An entry is refused when the name it starts with (the
text before its first `` - ``) is one of those areas, or when it names one: a path under ``bench/``, ``tests/``,
``molecule/`` or ``.ci/``, a molecule scenario, the test harness, a test tier, a TEST or BENCH FIXTURE, unit tests,
or a make target that runs tests, lint or the docs and changelog builds.
"""

from __future__ import annotations

import glob
import os
import re

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FRAGMENTS = sorted(glob.glob(os.path.join(ROOT, "changelogs", "fragments", "*.yml")))
SUBJECT = re.compile(r"^(.{1,120}?) - ")
LAB_SUBJECT = re.compile(
    r"^(bench\w*|tests?(/\S*)?|unit tests?|molecule\b.*|.*\bmolecule scenario|.*\bharness|.*\btier|docs|ci"
    r"|make (cluster|molecule|lint|unit|sanity|test|docs|changelog|install-check)\b.*)$", re.IGNORECASE)
LAB_TEXT = re.compile(
    r"(?<![\w/.-])(bench|tests|molecule|\.ci)/|molecule scenario|test harness"
    r"|\b(unit|lint|sanity|cluster|molecule|test) tiers?\b|\b(TEST|BENCH) FIXTURE|\bunit tests?\b|\bfor the tests?\b"
    r"|\bmake (cluster|molecule|lint|unit|sanity|test|test-venv|docs|docs-lint|changelog|install-check)\b",
    re.IGNORECASE)


def lab_reason(entry: str) -> str | None:
    """Why a fragment entry describes the lab rather than the product, or None when it does not."""
    text = " ".join(entry.split())
    subject = SUBJECT.match(text)
    if subject and LAB_SUBJECT.match(subject.group(1).strip("`")):
        return f"its subject is {subject.group(1)!r}"
    found = LAB_TEXT.search(text)
    if found:
        return f"it names {found.group(0)!r}"
    return None


def _entries(path: str) -> list[tuple[str, str]]:
    with open(path, encoding="utf-8") as handle:
        fragment = yaml.safe_load(handle)
    return [(section, entry) for section, entries in fragment.items() for entry in entries]


@pytest.mark.parametrize("entry", [
    "bench - ``bench/fleet_preflight.py --rounds N`` runs preflight and the floor N times per size",
    "tests - the cluster harness's client keeps one HTTPS connection alive",
    "molecule nvidia_imex - the host state after each drill of side_effect.yml is checked by testinfra",
    "network_operator molecule scenario - installs nv-ipam's real CRDs in prepare",
    "cluster test harness - ``up`` reads ``GPUFABRIC_CLUSTER_GPU_NODES``",
    "unit tier - the property tests draw the same examples on every run",
    "make lint / importer - ansible-lint runs with its cache inside ``.build``",
    "rdma_network - the molecule scenario runs four hosts, one per network stack",
    "Unit tests of the gpu_operator_values filter take the recorded hosts' facts from the fixtures package",
    "gpufabric - a wrong site setting stops the play, and a unit test keeps every role's argument specs",
    "galaxy.yml - declares ``ansible.posix``; ``make install-check`` installs the built tarball",
    "tools/bootstrap-debian.sh installs Debian's chromium for the test that renders the report headless",
])
def test_an_entry_about_the_lab_is_refused(entry):
    assert lab_reason(entry)


@pytest.mark.parametrize("entry", [
    "validate_rdma - a failed validation names each failed test's node pair, rail and memory mode",
    "gpu_operator_values - a boolean setting is refused naming the variable. Found by a property test.",
    "parse_nccl_tests filter - parse nccl-tests output (all_reduce_perf and the other nccl-tests binaries)",
    "Makefile - ``make venv`` refuses an interpreter that does not run as Python 3.11 or newer",
    "make demo - the validation of the simulated rack also runs nccl-tests all_reduce in a ComputeDomain",
    "fabric_facts - compiles the collection's module_utils once (``module_utils/zip_compile.py``)",
])
def test_an_entry_about_the_product_is_kept(entry):
    assert lab_reason(entry) is None


def test_no_fragment_entry_describes_the_lab():
    assert FRAGMENTS
    found = [f"{os.path.basename(path)} {section}: {reason}" for path in FRAGMENTS
             for section, entry in _entries(path) if (reason := lab_reason(entry))]
    assert not found, "\n".join(found)
