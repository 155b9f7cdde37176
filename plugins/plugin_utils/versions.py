# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one version comparison of the controller side: driver, Kubernetes and chart versions."""

from __future__ import annotations

import re
import typing as t


def version_key(version: t.Any) -> tuple[int, ...]:
    """Numeric sort key of a version such as ``570.172.08``, ``v1.35.4`` or ``1.34.2-gke.1``."""
    text = str(version or "").strip().lstrip("vV")
    numbers = re.match(r"[0-9]+(?:\.[0-9]+)*", text)
    if not numbers:
        return ()
    return tuple(int(part) for part in numbers.group(0).split("."))


def at_least(version: t.Any, minimum: t.Any) -> bool:
    """Whether ``version`` is a version and not older than ``minimum``."""
    have, need = version_key(version), version_key(minimum)
    if not have:
        return False
    width = max(len(have), len(need))
    return have + (0,) * (width - len(have)) >= need + (0,) * (width - len(need))
