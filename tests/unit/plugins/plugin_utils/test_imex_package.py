# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""imex_package (issue 42 item 4): the nvidia-imex package per distribution family, package source and branch.

The expected names are the ones read from the public sources the table's comment cites (packages.ubuntu.com,
NVIDIA's repository as Amazon Linux lists it, NVIDIA's Driver Installation Guide), written out here, not computed
from the table.
"""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.filter.imex_package import imex_package
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_package import (
    PACKAGES,
    ImexPackageError,
    decide,
)

HOST = "gb200-tray-01"


def package_of(os_family, distribution, source, branch, **kwargs):
    decision = decide(os_family, distribution, source, branch, host=HOST, **kwargs)
    assert decision["problem"] == "", decision
    return decision["package"]


@pytest.mark.parametrize(("branch", "name"), [
    ("590", "nvidia-imex-590"), ("595", "nvidia-imex-595"), ("580", "nvidia-imex-580"), ("575", "nvidia-imex-575"),
    ("570", "nvidia-imex-570"), ("565", "nvidia-imex-565"), ("550", "nvidia-imex-550"),
])
@pytest.mark.parametrize("release", ["Ubuntu"])
def test_ubuntus_archive_names_every_branch(release, branch, name):
    # the issue: Ubuntu's archive ships nvidia-imex-590 / -595, branch-suffixed again after 580
    assert package_of("Debian", release, "ubuntu", branch) == name


@pytest.mark.parametrize("os_family", ["Debian", "RedHat"])
@pytest.mark.parametrize(("branch", "name"), [
    ("570", "nvidia-imex-570"), ("575", "nvidia-imex-575"), ("580", "nvidia-imex"), ("590", "nvidia-imex"),
    ("595", "nvidia-imex"), ("610", "nvidia-imex"), ("620", "nvidia-imex"),
])
def test_nvidias_repository_drops_the_branch_from_580_on(os_family, branch, name):
    distribution = {"Debian": "Ubuntu", "RedHat": "Rocky"}[os_family]
    assert package_of(os_family, distribution, "cuda", branch) == name


@pytest.mark.parametrize(("os_family", "distribution", "source", "branch"), [
    ("Debian", "Ubuntu", "cuda", "550"),     # no confirmed name in NVIDIA's repository
    ("Debian", "Debian", "cuda", "565"),
    ("RedHat", "RedHat", "cuda", "535"),
    ("Debian", "Ubuntu", "cuda", "630"),     # a branch newer than the table: never guessed
    ("Debian", "Ubuntu", "ubuntu", "610"),   # not found in Ubuntu's archive
    ("Debian", "Ubuntu", "ubuntu", "620"),
])
def test_a_branch_without_a_known_name_is_refused_naming_the_variable_and_the_host(os_family, distribution, source,
                                                                                   branch):
    decision = decide(os_family, distribution, source, branch, host=HOST)
    assert decision["package"] == "" and decision["install"] == ""
    problem = decision["problem"]
    assert problem.startswith(f"host {HOST}: no known nvidia-imex package for driver branch {branch} "
                              f"(nvidia_imex_driver_branch")
    assert "set nvidia_imex_package to the package name" in problem and "\n" not in problem


@pytest.mark.parametrize("branch", ["550", "630", "", "latest"])
def test_a_package_the_user_names_is_installed_whatever_the_branch(branch):
    decision = decide("Debian", "Ubuntu", "cuda", branch, package="nvidia-imex-630", host=HOST)
    assert decision == {"package": "nvidia-imex-630", "install": "nvidia-imex-630", "problem": ""}


@pytest.mark.parametrize(("os_family", "distribution", "source", "branch", "version", "install"), [
    ("Debian", "Ubuntu", "cuda", "570", "570.172.08-1", "nvidia-imex-570=570.172.08-1"),
    ("Debian", "Debian", "cuda", "580", "580.95.05-1", "nvidia-imex=580.95.05-1"),
    ("Debian", "Ubuntu", "ubuntu", "590", "590.48.01-0ubuntu0.24.04.2", "nvidia-imex-590=590.48.01-0ubuntu0.24.04.2"),
    ("RedHat", "Rocky", "cuda", "595", "595.71.05-1", "nvidia-imex-595.71.05-1"),
    ("RedHat", "RedHat", "cuda", "570", "570.172.08-1", "nvidia-imex-570-570.172.08-1"),
])
def test_the_version_is_pinned_as_the_package_manager_reads_it(os_family, distribution, source, branch, version,
                                                               install):
    decision = decide(os_family, distribution, source, branch, version=version, host=HOST)
    assert decision["install"] == install and decision["problem"] == ""


@pytest.mark.parametrize(("os_family", "distribution"),
                         [("Debian", "Debian"), ("RedHat", "Rocky"), ("RedHat", "Ubuntu")])
def test_ubuntus_archive_is_refused_on_a_host_that_is_not_ubuntu(os_family, distribution):
    decision = decide(os_family, distribution, "ubuntu", "590", host=HOST)
    assert decision["problem"] == (f"host {HOST}: nvidia_imex_package_source is ubuntu (Ubuntu's own archive) but "
                                   f"this host runs {distribution}; use cuda (NVIDIA's CUDA repository)")


def test_no_branch_and_no_package_is_refused():
    decision = decide("Debian", "Ubuntu", "cuda", "", host=HOST)
    assert decision["problem"].startswith(f"host {HOST}: no NVIDIA driver found in ")
    assert "nvidia_imex_driver_branch is not set" in decision["problem"]


@pytest.mark.parametrize("branch", ["R580", "580.95.05", "58", "abc", "0580"])
def test_a_branch_that_is_no_branch_number_is_refused(branch):
    decision = decide("Debian", "Ubuntu", "cuda", branch, host=HOST)
    assert decision["problem"].startswith(f"host {HOST}: nvidia_imex_driver_branch must be a driver branch such as "
                                          "580")


def test_an_unknown_source_is_refused():
    assert "nvidia_imex_package_source must be one of cuda, ubuntu" in decide("Debian", "Ubuntu", "ppa", "580",
                                                                              host=HOST)["problem"]


@pytest.mark.parametrize(("arguments", "message"), [
    (("Suse", "SLES", "cuda", "580"), "os_family must be Debian or RedHat"),
    (("Debian", "Ubuntu", "cuda", True), "nvidia_imex_driver_branch must be a string, got bool"),
    (("Debian", "Ubuntu", ["cuda"], "580"), "nvidia_imex_package_source must be a string, got list"),
])
def test_arguments_the_role_never_passes_are_errors(arguments, message):
    with pytest.raises(ImexPackageError, match=message):
        decide(*arguments)


def test_the_filter_returns_the_decision_and_names_itself_in_errors():
    assert imex_package("590", "Debian", "Ubuntu", "ubuntu", "", "", HOST)["package"] == "nvidia-imex-590"
    assert imex_package(580, "RedHat", "Rocky")["install"] == "nvidia-imex"
    with pytest.raises(AnsibleFilterError, match=r"^imex_package: os_family must be Debian or RedHat"):
        imex_package("580", "Gentoo", "Gentoo")


def test_every_name_of_the_table_is_nvidia_imex_or_its_branch():
    for (_family, source), rows in PACKAGES.items():
        for branch, name in rows.items():
            assert name in ("nvidia-imex", f"nvidia-imex-{branch}")
            if source == "ubuntu":
                assert name == f"nvidia-imex-{branch}"


@given(os_family=st.sampled_from(["Debian", "RedHat", "debian", "REDHAT"]),
       distribution=st.sampled_from(["Ubuntu", "Debian", "Rocky", "RedHat", ""]),
       source=st.one_of(st.sampled_from(["cuda", "ubuntu"]), st.text(max_size=10)),
       branch=st.one_of(st.text(max_size=12), st.integers(min_value=0, max_value=2000).map(str)),
       package=st.sampled_from(["", "nvidia-imex-999"]),
       version=st.sampled_from(["", "580.95.05-1"]))
def test_any_input_gives_a_known_name_or_one_line_naming_the_host(os_family, distribution, source, branch, package,
                                                                  version):
    decision = decide(os_family, distribution, source, branch, package=package, version=version, host=HOST)
    if decision["problem"]:
        assert decision["package"] == "" and decision["install"] == ""
        assert decision["problem"].startswith(f"host {HOST}: ") and "\n" not in decision["problem"]
        return
    family = os_family.lower()
    if package:
        assert decision["package"] == package
    else:
        assert decision["package"] == PACKAGES[(family, source)][int(branch)]
    assert decision["install"].startswith(decision["package"])
    assert decision["install"] == decision["package"] if not version else decision["install"].endswith(version)
