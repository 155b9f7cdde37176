# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The shapes a value read from a host file must have before a probe reports it.

A probe reports no text it read from a host file, only values parsed into one of these documented shapes (or
numbers, IP addresses in :mod:`ipaddress`'s canonical form, and members of an enumeration the collector names).
A value of another shape is reported as ``None`` with an error naming the path and, for a file of lines, the line
number: never its text.  Each predicate is a pure function of a string; anything that is not a string fails.

* version: a package, driver or tool version, :data:`VERSION_RE` (``570.172.08``, ``570.172.08-1``,
  ``1:25.04-0.6.1.0``, ``OFED-internal-25.04-0.6.1``): a letter or digit, then letters, digits and ``.+~:_-``,
  at most 64 characters, at least one of them a digit;
* firmware version: ``<major>.<minor>.<build>``, :data:`FIRMWARE_RE` (``28.39.1002``);
* board id: :data:`BOARD_ID_RE` (``MT_0000000838``), 1 to 64 letters, digits and ``_.-``;
* PCI device id: ``0x`` and four hex digits, :data:`PCI_ID_RE` (``0x1021``, lower case);
* interface name: :data:`INTERFACE_RE` (``ibp3s0``, ``enP6p1s0f0np0``), 1 to 15 letters, digits and ``_.-``,
  not ``.`` or ``..``;
* IP address: what :mod:`ipaddress` parses, in its canonical form; an IPv6 scope (``fe80::1%eth0``, which
  :mod:`ipaddress` takes whatever it holds) only when it is an interface name;
* path: an absolute path of safe characters, :data:`SAFE_PATH_RE`: ``/`` then letters, digits, space and
  ``._+,:@=~/-``, at most 4096 characters (``PATH_MAX``); no control character, quote, ``$``, ``%`` or ``\\``.
"""

from __future__ import annotations

import ipaddress
import re
import typing as t

VERSION_RE = re.compile(r"(?=[^0-9]*[0-9])[A-Za-z0-9][A-Za-z0-9.+~:_-]{0,63}\Z")
FIRMWARE_RE = re.compile(r"[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}\Z")
BOARD_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")
PCI_ID_RE = re.compile(r"0x[0-9a-f]{4}\Z")
INTERFACE_RE = re.compile(r"(?!\.{1,2}\Z)[A-Za-z0-9_.-]{1,15}\Z")
SAFE_PATH_RE = re.compile(r"/[A-Za-z0-9 ._+,:@=~/-]{0,4095}\Z")
# The characters of a reported path, for messages that say why a path is not reported.
SAFE_PATH_CHARACTERS = "letters, digits, space and ._+,:@=~/-"


def _matches(pattern: re.Pattern[str], value: t.Any) -> bool:
    return isinstance(value, str) and pattern.match(value) is not None


def is_version(value: t.Any) -> bool:
    """Whether ``value`` is a version string (:data:`VERSION_RE`)."""
    return _matches(VERSION_RE, value)


def is_firmware_version(value: t.Any) -> bool:
    """Whether ``value`` is a firmware version ``<major>.<minor>.<build>`` (:data:`FIRMWARE_RE`)."""
    return _matches(FIRMWARE_RE, value)


def is_board_id(value: t.Any) -> bool:
    """Whether ``value`` is a board id (:data:`BOARD_ID_RE`)."""
    return _matches(BOARD_ID_RE, value)


def is_pci_id(value: t.Any) -> bool:
    """Whether ``value`` is a PCI vendor or device id as sysfs writes it, ``0x`` and four lower-case hex digits."""
    return _matches(PCI_ID_RE, value)


def is_interface_name(value: t.Any) -> bool:
    """Whether ``value`` is a network interface name (:data:`INTERFACE_RE`)."""
    return _matches(INTERFACE_RE, value)


def canonical_ip(value: t.Any) -> str | None:
    """The canonical text of ``value`` when it is an IP address, else ``None``.

    :mod:`ipaddress` takes any text after ``%`` as an IPv6 scope: a scope that is not an interface name
    (:func:`is_interface_name`) makes ``value`` no address.
    """
    if not isinstance(value, str):
        return None
    try:
        address = ipaddress.ip_address(value)
    except ValueError:
        return None
    scope = getattr(address, "scope_id", None)
    if scope is not None and not is_interface_name(scope):
        return None
    return str(address)


def path_problem(value: t.Any) -> str | None:
    """Why ``value`` is not an absolute path of safe characters (:data:`SAFE_PATH_RE`); ``None`` when it is one.

    The reason never quotes the value: ``is not text``, ``is not an absolute path`` or ``holds a character other
    than letters, digits, space and ._+,:@=~/-``.
    """
    if not isinstance(value, str):
        return "is not text"
    if not value.startswith("/"):
        return "is not an absolute path"
    if SAFE_PATH_RE.match(value) is None:
        return f"holds a character other than {SAFE_PATH_CHARACTERS} (or is longer than 4096 characters)"
    return None


def is_safe_path(value: t.Any) -> bool:
    """Whether ``value`` is an absolute path of safe characters (:data:`SAFE_PATH_RE`)."""
    return path_problem(value) is None
