# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small helpers the unit tests share: alter a host tree, read a module result's warnings."""

from __future__ import annotations

import os


def write_host_file(root: str, path: str, content: str, mode: int = 0o644) -> None:
    """Write a host-absolute ``path`` below ``root`` (parents created), then set its mode."""
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.chmod(full, mode)


def warning_messages(result: dict) -> list[str]:
    """The warning texts of a module result (ansible-core 2.19 returns each as a WarningSummary event)."""
    return [warning["event"]["msg"] for warning in result.get("warnings", [])]
