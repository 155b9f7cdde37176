# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's sort keys, host and controller side alike: names, PCI addresses, IP addresses."""

from __future__ import annotations

import ipaddress
import re

_NATURAL_RE = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple:
    """Sort key that orders embedded numbers by value: ``mlx5_2`` before ``mlx5_10``."""
    return tuple(int(part) if part.isdigit() else part for part in _NATURAL_RE.split(name))


def pci_key(address: str) -> tuple:
    """Sort key of a PCI address ``dddd:bb:dd.f`` by its hexadecimal numbers (``0000:4f`` after ``0000:18``).

    Text that is not a PCI address sorts after every address, in natural order.
    """
    parts = re.split(r"[:.]", address.lower())
    try:
        return (0, *(int(part, 16) for part in parts))
    except ValueError:
        return (1, *natural_key(address))


def address_key(address: str) -> tuple[int, int]:
    """Sort key of an IP address: IPv4 before IPv6, then numerically."""
    parsed = ipaddress.ip_address(address)
    return parsed.version, int(parsed)
