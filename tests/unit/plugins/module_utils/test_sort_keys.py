# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's one natural, PCI and IP address sort key."""

from __future__ import annotations

from ansible_collections.gpufabric.cluster.plugins.module_utils.sort_keys import address_key, natural_key, pci_key


def test_natural_key_orders_numbers_by_value():
    names = ["mlx5_10", "mlx5_2", "mlx5_bond_0", "mlx5_0", "mlx5_1"]
    assert sorted(names, key=natural_key) == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_10", "mlx5_bond_0"]


def test_pci_order_is_numeric():
    assert sorted(["0000:4f:00.0", "0000:9a:00.0", "0000:18:00.0", "0002:03:00.0", "0000:aa:00.1"], key=pci_key) == [
        "0000:18:00.0", "0000:4f:00.0", "0000:9a:00.0", "0000:aa:00.1", "0002:03:00.0"]


def test_text_that_is_no_pci_address_sorts_last():
    assert sorted(["bogus-2", "0000:18:00.0", "bogus-10", ""], key=pci_key) == [
        "0000:18:00.0", "", "bogus-2", "bogus-10"]


def test_address_order_is_ipv4_first_then_numeric():
    assert sorted(["fd00::1", "10.0.0.10", "10.0.0.9", "::1"], key=address_key) == [
        "10.0.0.9", "10.0.0.10", "::1", "fd00::1"]
