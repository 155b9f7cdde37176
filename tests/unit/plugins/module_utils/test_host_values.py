# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 1: the shapes a value read from a host file must have to be reported, the config.cfg settings the
IMEX probe reports (module_utils/host_values.py, module_utils/imex.py ``read_settings``/``report_settings``) and the
driver version (module_utils/nvidia_driver.py)."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ansible_collections.gpufabric.cluster.plugins.module_utils.host_values import (
    SAFE_PATH_CHARACTERS,
    canonical_ip,
    is_board_id,
    is_firmware_version,
    is_interface_name,
    is_pci_id,
    is_safe_path,
    is_version,
    path_problem,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.imex import (
    CONFIG_KEYS,
    CONFIG_SETTINGS,
    read_settings,
    report_settings,
)
from ansible_collections.gpufabric.cluster.plugins.module_utils.nvidia_driver import read_nvidia_driver
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file

PATH_ALPHABET = set(string.ascii_letters + string.digits + " ._+,:@=~/-")
# Every reason a setting's check can give: each is a fixed sentence, whatever the value.
REASONS = {check(value) for check in CONFIG_SETTINGS.values() for value in ("x%", "relative", "/a%")} - {None}


@pytest.mark.parametrize(("check", "good", "bad"), [
    (is_version, ["570.172.08", "570.172.08-1", "1:25.04-0.6.1.0", "OFED-internal-25.04-0.6.1", "2.5~rc1+b2"],
     ["", "abc", "570.172.08 ", "570 172", "-1.0", "1.0%", "1" * 65, "\uff15\uff17\uff10.\uff11"]),
    (is_firmware_version, ["28.39.1002", "0.0.0"], ["28.39", "28.39.1002.1", "28.39.x", " 28.39.1002", ""]),
    (is_board_id, ["MT_0000000838", "NVD0000000033", "a.b-c_d"], ["", "MT 0838", "MT/0838", "x" * 65, "MT_08%"]),
    (is_pci_id, ["0x1021", "0xa2dc"], ["0x102", "1021", "0xA2DC", "0x10211", "0xzzzz"]),
    (is_interface_name, ["ibp3s0", "enP6p1s0f0np0", "eth0.100", "a"],
     ["", ".", "..", "a/b", "a b", "x" * 16, "eth0:1", "ib%0"]),
    (is_safe_path, ["/", "/etc/nvidia-imex/nodes_config.cfg", "/run/imex control/ctl.sock", "/a/../b"],
     ["", "relative", "/a\nb", "/a$b", "/a%b", "/a'b", '/a"b', "/a\\b", "/é", "/" + "a" * 4096]),
])
def test_each_shape(check, good, bad):
    assert [value for value in good if not check(value)] == []
    assert [value for value in bad if check(value)] == []


@pytest.mark.parametrize(("value", "canonical"), [
    ("10.114.0.11", "10.114.0.11"),
    ("fd00:0:0::1", "fd00::1"),
    ("fe80::1%eth0", "fe80::1%eth0"),
    ("fe80::1%2", "fe80::1%2"),
    # ipaddress takes anything after % as the scope: such text is never reported
    ("fd00::1%root:$6$salt$hash:19876", None),
    ("fe80::1%a b", None),
    ("10.0.0.1%eth0", None),
    ("gpu-node-07", None),
    ("", None),
    (None, None),
])
def test_canonical_ip(value, canonical):
    assert canonical_ip(value) == canonical


@given(st.text())
def test_canonical_ip_is_an_address_without_other_text(value):
    found = canonical_ip(value)
    if found is not None:
        address, _percent, scope = found.partition("%")
        assert canonical_ip(address) == address
        assert not scope or is_interface_name(scope)


@given(st.text() | st.none() | st.integers())
def test_path_problem_is_none_only_for_a_safe_absolute_path_and_never_quotes(value):
    why = path_problem(value)
    safe = isinstance(value, str) and value.startswith("/") and len(value) <= 4096 and set(value) <= PATH_ALPHABET
    assert (why is None) == safe
    if why is not None:
        assert why in ("is not text", "is not an absolute path",
                       f"holds a character other than {SAFE_PATH_CHARACTERS} (or is longer than 4096 characters)")


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40), max_size=12))
def test_reported_settings_are_of_their_shape_or_null_and_errors_never_quote(lines):
    settings, line_of, bad_lines = read_settings(lines)
    reported, errors = report_settings(settings, line_of)
    assert set(reported) == set(settings) & set(CONFIG_KEYS)
    for key, value in reported.items():
        assert value is None or value == "" or CONFIG_SETTINGS[key](value) is None
        assert (value is None) == (CONFIG_SETTINGS[key](settings[key]) is not None if settings[key] else False)
    # one error per value not reported, naming its line and key and a reason that is not made of the value
    expected = [f"/etc/nvidia-imex/config.cfg: line {line_of[key]}: {key} {CONFIG_SETTINGS[key](settings[key])}"
                for key in CONFIG_KEYS if reported.get(key, "") is None]
    assert errors == expected
    assert {error.split(": ", 2)[2].split(" ", 1)[1] for error in errors} <= REASONS
    assert all(1 <= number <= len(lines) for number in bad_lines)


@pytest.mark.parametrize(("key", "value", "reported"), [
    ("SERVER_PORT", "50000", "50000"),
    ("SERVER_PORT", "fifty", None),
    ("IMEX_NODE_DISCONNECTED_GRACE_TIME", "-1", "-1"),
    ("BIND_INTERFACE_IP", "fd00::1", "fd00::1"),
    ("BIND_INTERFACE_IP", "gpu-node-01", None),
    ("IMEX_NODE_CONFIG_FILE", "/etc/nvidia-imex/nodes_config.cfg", "/etc/nvidia-imex/nodes_config.cfg"),
    ("IMEX_NODE_CONFIG_FILE", "nodes_config.cfg", None),
    ("IMEX_WAIT_FOR_QUORUM", "RECOVERY", "RECOVERY"),
    ("IMEX_WAIT_FOR_QUORUM", "recovery", None),
    ("IMEX_AUTH_SOURCE", "", ""),
    ("IMEX_SERVER_KEY", "IMEX_KEY_VARIABLE", "IMEX_KEY_VARIABLE"),
    ("IMEX_SERVER_KEY", "/etc/nvidia-imex/server.key", "/etc/nvidia-imex/server.key"),
    ("IMEX_SERVER_KEY", "-----BEGIN PRIVATE KEY-----", None),
    ("NETWORK_INTERFACE", "enP6p1s0f0np0", "enP6p1s0f0np0"),
    ("IMEX_SECURITY_TARGET_OVERRIDE", "localhost", "localhost"),
    ("IMEX_GSS_SERVICE_NAME", "host", "host"),
    ("IMEX_GSS_SERVICE_NAME", "host name", None),
])
def test_a_setting_is_reported_in_its_shape_only(key, value, reported):
    settings, line_of, _bad = read_settings(["# c", f"{key}={value}"])
    found, errors = report_settings(settings, line_of)
    assert found == {key: reported}
    assert errors == ([] if reported is not None else [errors[0]])
    if reported is None:
        assert errors[0].startswith(f"/etc/nvidia-imex/config.cfg: line 2: {key} ")
        assert value not in errors[0]


def test_keys_nvidia_imex_does_not_know_are_left_out():
    settings, line_of, bad = read_settings(["PASSWORD=hunter2", "LOG_LEVEL=4", "not a setting"])
    assert report_settings(settings, line_of) == ({"LOG_LEVEL": "4"}, [])
    assert bad == [3]


@pytest.mark.parametrize(("nvrm", "module", "version", "errors"), [
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build", "570.172.08",
     "570.172.08", []),
    (None, "570.172.08", "570.172.08", []),
    (None, "570.172.08 with a s3cret", None, ["/sys/module/nvidia/version: not a driver version"]),
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  \uff15\uff17\uff10.\uff11  Release Build", "s3cret",
     None, ["/sys/module/nvidia/version: not a driver version"]),
])
def test_the_driver_version_is_reported_only_as_a_driver_version(tmp_path, nvrm, module, version, errors):
    if nvrm is not None:
        write_host_file(str(tmp_path), "/proc/driver/nvidia/version", nvrm + "\n")
    write_host_file(str(tmp_path), "/sys/module/nvidia/version", module + "\n")
    found: list[str] = []
    driver = read_nvidia_driver(str(tmp_path), found)
    assert (driver.loaded, driver.version, found) == (True, version, errors)
