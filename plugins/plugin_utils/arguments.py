# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the arguments of a filter once, the same way in every filter.

Every checker takes the argument's name (as the filter documentation spells it) and its value, and returns
the value in the type the logic works with, or raises :class:`ArgumentError` saying which argument is wrong
and what was expected. Filters catch :class:`ArgumentError` beside their own error class and prefix the
filter's name, so an operator reads ``rail_plan: prune must be a boolean ("true"/"false", yes/no, 1/0), got
'maybe'`` instead of a Python traceback.

Booleans go through Ansible's own conversion, so ``"false"``, ``"no"``, ``"0"`` and ``0`` mean false, as
they do in ``when:`` and in argument specs; a string Ansible does not know as a boolean is refused.
"""

from __future__ import annotations

import math
import typing as t
from collections.abc import Mapping, Sequence

from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE


class ArgumentError(ValueError):
    """A filter argument of the wrong type or out of its range."""


def _type_name(value: t.Any) -> str:
    """The name an operator knows for the type of ``value`` (YAML words, not Python's)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, Sequence):
        return "a list"
    return type(value).__name__


def boolean(name: str, value: t.Any) -> bool:
    """``value`` as a boolean, converted as Ansible converts booleans; anything else is refused."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        normalized = value.strip().lower() if isinstance(value, str) else value
        if normalized in BOOLEANS_TRUE:
            return True
        if normalized in BOOLEANS_FALSE:
            return False
    raise ArgumentError(f'{name} must be a boolean (true/false, "yes"/"no", 1/0), got {value!r}')


def mapping(name: str, value: t.Any) -> Mapping:
    """``value`` when it is a mapping."""
    if isinstance(value, Mapping):
        return value
    raise ArgumentError(f"{name} must be a mapping, got {_type_name(value)}")


def sequence(name: str, value: t.Any) -> list:
    """``value`` as a list when it is a list or tuple; a string is refused, never iterated by character."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise ArgumentError(f"{name} must be a list, got {_type_name(value)}")


def text(name: str, value: t.Any, allow_empty: bool = False) -> str:
    """``value`` when it is a string (and not empty, unless ``allow_empty``)."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string, got {_type_name(value)}")
    if not allow_empty and not value.strip():
        raise ArgumentError(f"{name} must not be empty")
    return value


def number(name: str, value: t.Any) -> float:
    """``value`` as a finite number; a boolean or a numeric string is refused (no silent conversion)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ArgumentError(f"{name} must be a number, got {value!r}")
    return value


def positive(name: str, value: t.Any) -> float:
    """``value`` as a number greater than 0 (a threshold, a rate, a count)."""
    value = number(name, value)
    if value <= 0:
        raise ArgumentError(f"{name} must be greater than 0, got {value!r}")
    return value


def fraction(name: str, value: t.Any) -> float:
    """``value`` as a fraction in (0, 1]."""
    value = number(name, value)
    if not 0 < value <= 1:
        raise ArgumentError(f"{name} must be greater than 0 and at most 1, got {value!r}")
    return value


def optional(checker: t.Callable[[str, t.Any], t.Any], name: str, value: t.Any) -> t.Any:
    """``None`` when ``value`` is ``None``, otherwise ``checker(name, value)``."""
    return None if value is None else checker(name, value)
