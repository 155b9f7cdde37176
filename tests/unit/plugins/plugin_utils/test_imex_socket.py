# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 9: the one check of the host-managed IMEX control socket path (absolute, normal form, no whitespace
or %, not under a directory every local user may write)."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.imex_socket import (
    WORLD_WRITABLE_DIRECTORIES,
    socket_path_problem,
)

EXPECTED = "nvidia_imex_socket_path must be the absolute path of the IMEX control socket"


@pytest.mark.parametrize("path", ["/etc/nvidia-imex/imex_ctrl.sock", "/run/nvidia-imex/ctl.sock", "/run/imex.sock",
                                  "/tmpfs/imex.sock", "/var/tmpx/imex.sock", "/srv/tmp/imex.sock"])
def test_a_path_only_root_writes_is_accepted(path):
    assert socket_path_problem("nvidia_imex_socket_path", path) is None


@pytest.mark.parametrize(("path", "directory"), [
    ("/tmp/imex.sock", "/tmp"), ("/tmp/nvidia-imex/ctl.sock", "/tmp"), ("/var/tmp/imex.sock", "/var/tmp"),
    ("/dev/shm/imex.sock", "/dev/shm"), ("/run/lock/imex.sock", "/run/lock"), ("/var/lock/imex.sock", "/var/lock"),
    ("/tmp", "/tmp"),
])
def test_a_path_under_a_world_writable_directory_is_refused(path, directory):
    assert socket_path_problem("nvidia_imex_socket_path", path) == (
        f"nvidia_imex_socket_path {path!r} lies under {directory}, which every local user may write: another user "
        "could create the socket before nvidia-imex does and answer the DRA driver in its place; choose a directory "
        "only root writes, such as /run/nvidia-imex or /etc/nvidia-imex")


@pytest.mark.parametrize("path", ["/etc/nvidia-imex/../../tmp/imex.sock", "/etc/../tmp/imex.sock",
                                  "/etc/nvidia-imex/./imex_ctrl.sock", "//tmp/imex.sock", "/etc//imex.sock", "/.."])
def test_a_path_not_in_its_normal_form_is_refused(path):
    assert socket_path_problem("nvidia_imex_socket_path", path) == (
        f"{EXPECTED} in its normal form, got {path!r}, which has a '.', '..' or empty component (the daemon's path "
        "and the DRA driver's must compare equal, and stay in the directory they name)")


@pytest.mark.parametrize(("path", "why"), [
    ("imex.sock", ""), ("run/imex.sock", ""), ("", ""), (None, ""), (["/run/imex.sock"], ""), (5, ""),
    ("/etc/nvidia-imex/", ", which names a directory"), ("/", ", which names a directory"),
    ("/run/imex ctl.sock", ", which holds whitespace, '%' or a control character (config.cfg and the nvidia-imex "
                           "unit cannot carry them)"),
    ("/run/%h.sock", ", which holds whitespace, '%' or a control character (config.cfg and the nvidia-imex unit "
                     "cannot carry them)"),
    ("/run/imex.sock\nIMEX_CMD_ENABLED=0", ", which holds whitespace, '%' or a control character (config.cfg and "
                                           "the nvidia-imex unit cannot carry them)"),
])
def test_a_path_that_is_not_an_absolute_socket_path_is_refused(path, why):
    assert socket_path_problem("nvidia_imex_socket_path", path) == f"{EXPECTED}, got {path!r}{why}"


@given(st.one_of(st.text(alphabet="/.abtmpvrshdelock-_ %\n", max_size=30),
                 st.builds(lambda directory, rest: directory + rest, st.sampled_from(WORLD_WRITABLE_DIRECTORIES),
                           st.text(alphabet="/.ab", max_size=12))))
def test_an_accepted_path_is_absolute_normal_and_owned_by_root_alone(path):
    problem = socket_path_problem("dra_driver_imex_socket_path", path)
    if problem is not None:
        assert problem.startswith("dra_driver_imex_socket_path ")
        return
    assert path.startswith("/") and posixpath.normpath(path) == path and path != "/"
    assert not any(char.isspace() or char == "%" for char in path)
    assert not any(path == directory or path.startswith(directory + "/") for directory in WORLD_WRITABLE_DIRECTORIES)
