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

:func:`filter_errors` makes a filter function one whose every failure is an ``AnsibleFilterError`` that starts
with the filter's name: the checkers' :class:`ArgumentError` and the logic's own error classes keep their message,
and a value of a shape the logic did not expect (a ``TypeError``, ``KeyError``, ``AttributeError``,
``IndexError`` or ``ValueError`` from deep inside, a ``RecursionError`` from nesting deeper than Python follows)
is reported naming the arguments, never as a Python traceback. Every filter of the collection is decorated with it.

:func:`bounded_output` refuses a tool's output (a pod's log) larger than :data:`MAX_OUTPUT_CHARACTERS` before a
parser reads it, so one runaway log cannot hold the controller.
"""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing as t
from collections.abc import Mapping, Sequence, Set
from urllib.parse import urlsplit

from ansible.errors import AnsibleError, AnsibleFilterError
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

# The most text a parser of tool output reads: 64 MiB of a pod's log (67,108,864 characters). The logs the
# validation roles read are far smaller (nccl-tests prints one row per message size, nvbandwidth one matrix per
# testcase, perftest one row per size; NCCL_DEBUG=INFO adds lines per rank and channel, not per byte moved);
# a log beyond this is not one run of one tool, and reading it would hold the controller.
MAX_OUTPUT_CHARACTERS = 64 * 1024 * 1024

# How deep filter_errors looks into the arguments of a filter that hit Python's recursion limit, to name the
# one nested too deeply, and how many values it looks at in all: enough to find the culprit, bounded so that the
# error path stays cheap on hostvars of a large fleet.
_DEPTH_SEARCH_LIMIT = 10_000
_DEPTH_SEARCH_VALUES = 1_000_000

# The schemes a link of a report may have: web pages, or none (a path relative to the page).
LINK_SCHEMES = ("http", "https")
# Whitespace and control characters, which a browser drops from a link before it reads the scheme
# ("java\tscript:" is "javascript:"), so a link holding one is refused whole.
_LINK_UNSAFE = re.compile("[\\s\x00-\x1f\x7f-\x9f]")

# What a value of an unexpected shape raised, in an operator's words.
_SHAPE_ERRORS: tuple[tuple[type[Exception], str], ...] = (
    (KeyError, "a mapping without a key the filter needs"),
    (IndexError, "a list shorter than the filter needs"),
    (TypeError, "a value of another type than documented"),
    (AttributeError, "a value of another type than documented"),
    (ValueError, "a value the filter cannot read"),
)


class ArgumentError(ValueError):
    """A filter argument of the wrong type or out of its range."""


def type_name(value: t.Any) -> str:
    """The name an operator knows for the type of ``value`` (YAML words, not Python's): ``a mapping``, ``null``."""
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
    if isinstance(value, (Sequence, Set)):
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
    raise ArgumentError(f"{name} must be a mapping, got {type_name(value)}")


def sequence(name: str, value: t.Any) -> list:
    """``value`` as a list when it is a list or tuple; a string is refused, never iterated by character."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise ArgumentError(f"{name} must be a list, got {type_name(value)}")


def text(name: str, value: t.Any, allow_empty: bool = False) -> str:
    """``value`` when it is a string (and not empty, unless ``allow_empty``)."""
    if not isinstance(value, str):
        raise ArgumentError(f"{name} must be a string, got {type_name(value)}")
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


def link(name: str, value: t.Any) -> str:
    """``value`` as a link a report may hold: ``http``/``https``, or a path relative to the page (``validation.html``,
    ``../run-2/validation.html``); a ``javascript:``, ``data:`` or other scheme, and whitespace or a control
    character anywhere in it, are refused."""
    value = text(name, value)
    if _LINK_UNSAFE.search(value):
        raise ArgumentError(f"{name} must be an http(s) link or a relative path without whitespace or control "
                            "characters")
    try:
        scheme = urlsplit(value).scheme
    except ValueError:
        raise ArgumentError(f"{name} must be an http(s) link or a relative path, got an address that cannot be "
                            "read") from None
    if scheme and scheme not in LINK_SCHEMES:
        raise ArgumentError(f"{name} must be an http(s) link or a relative path, not a {scheme}: link")
    return value


def optional(checker: t.Callable[[str, t.Any], t.Any], name: str, value: t.Any) -> t.Any:
    """``None`` when ``value`` is ``None``, otherwise ``checker(name, value)``."""
    return None if value is None else checker(name, value)


def bounded_output(name: str, value: t.Any) -> t.Any:
    """``value`` unchanged when a tool's output of that size may be parsed: a string or bytes of at most
    :data:`MAX_OUTPUT_CHARACTERS`, or a list of lines that joined would be no longer; other types are left to the
    parser to refuse."""
    if isinstance(value, (str, bytes, bytearray)):
        size = len(value)
    elif isinstance(value, (list, tuple)):
        size = 0
        for line in value:
            size += (len(line) if isinstance(line, (str, bytes, bytearray)) else 0) + 1
            if size > MAX_OUTPUT_CHARACTERS:
                break
    else:
        return value
    if size > MAX_OUTPUT_CHARACTERS:
        raise ArgumentError(f"{name} holds more than {MAX_OUTPUT_CHARACTERS:,} characters (64 MiB), more than one "
                            "run of the tool prints; give the log of the one run to read")
    return value


def nesting_depth(value: t.Any, limit: int = _DEPTH_SEARCH_LIMIT, budget: int = _DEPTH_SEARCH_VALUES) -> int:
    """How many levels of lists and mappings ``value`` nests (0 for a scalar), counted without recursion.

    The count stops at ``limit`` levels and after ``budget`` values; a value whose items cannot be read counts
    as what was read of it.
    """
    deepest = 0
    stack: list[tuple[t.Any, int]] = [(value, 0)]
    while stack and budget > 0:
        item, depth = stack.pop()
        budget -= 1
        if isinstance(item, Mapping):
            children: t.Iterable = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest >= limit:
            return limit
        try:
            stack.extend((child, depth + 1) for child in children)
        except Exception:  # a lazy value that cannot be read here is not the one to name
            continue
    return deepest


def _given(signature: inspect.Signature, args: tuple, kwargs: dict) -> list[tuple[str, t.Any]]:
    """The arguments a filter was called with, named as its documentation names them (``_input`` first)."""
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return [("_input", args[0])] if args else []
    first = next(iter(signature.parameters), None)
    given: list[tuple[str, t.Any]] = []
    for name, value in bound.arguments.items():
        parameter = signature.parameters[name]
        if parameter.kind is parameter.VAR_KEYWORD:
            given.extend(value.items())
        elif parameter.kind is parameter.VAR_POSITIONAL:
            given.extend((f"{name}[{position}]", item) for position, item in enumerate(value))
        else:
            given.append(("_input" if name == first else name, value))
    return given


def _too_deep(given: list[tuple[str, t.Any]]) -> str:
    depths = [(nesting_depth(value), name) for name, value in given]
    depth, name = max(depths, default=(0, ""))
    if depth > 1:
        shown = f"more than {depth:,}" if depth >= _DEPTH_SEARCH_LIMIT else f"{depth:,}"
        return f"{name} nests lists and mappings {shown} levels deep, deeper than the filter can read"
    return f"{_names(given)} holds data nested deeper than the filter can read"


def _names(given: list[tuple[str, t.Any]]) -> str:
    """``_input``, or ``one of _input, hosts and settings``: the arguments a message is about."""
    names = [name for name, _value in given] or ["_input"]
    return names[0] if len(names) == 1 else f"one of {', '.join(names[:-1])} and {names[-1]}"


def _wrong_shape(filter_name: str, given: list[tuple[str, t.Any]], error: Exception) -> str:
    what = next(words for kind, words in _SHAPE_ERRORS if isinstance(error, kind))
    return (f"{_names(given)} does not have the shape the filter documents ({what}); see "
            f"ansible-doc -t filter gpufabric.cluster.{filter_name}")


def filter_errors(name: str, *errors: type[Exception]) -> t.Callable[[t.Callable], t.Callable]:
    """Decorate the function of filter ``name`` so that every failure is one ``AnsibleFilterError`` "<name>: ...".

    An ``AnsibleError`` (the filter's own ``AnsibleFilterError``, an undefined variable) goes through as it is;
    :class:`ArgumentError` and ``errors`` (the logic's error classes) keep their message after the filter's
    name; a ``RecursionError`` names the argument nested too deeply; any other ``TypeError``, ``KeyError``,
    ``AttributeError``, ``IndexError`` or ``ValueError`` - a value of a shape the logic did not expect - names
    the arguments the filter was given and where their shapes are documented. The message never quotes a value.
    """
    def decorate(function: t.Callable) -> t.Callable:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def guarded(*args: t.Any, **kwargs: t.Any) -> t.Any:
            try:
                return function(*args, **kwargs)
            except AnsibleError:
                raise
            except (ArgumentError, *errors) as exc:
                raise AnsibleFilterError(f"{name}: {exc}") from None
            except RecursionError:
                raise AnsibleFilterError(f"{name}: {_too_deep(_given(signature, args, kwargs))}") from None
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                raise AnsibleFilterError(f"{name}: {_wrong_shape(name, _given(signature, args, kwargs), exc)}") \
                    from None
        return guarded
    return decorate
