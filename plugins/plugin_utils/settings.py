# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's settings: its roles' argument specs, read from the collection, and one check of every host's values.

The argument specs (``roles/*/meta/argument_specs.yml``) are the one place where a setting's type, allowed values and
default are written: the site-wide and playbook settings in ``roles/gpufabric``, every role's own in its own. They are
read here relative to this file (the collection's own roles, wherever the collection is installed and whatever
playbook imports it), once per process.

:func:`settings_problems` checks what the hosts set (``hostvars``: inventory and extra vars; a variable a host does not
set has its default, which the spec holds and which is not checked again) against the ``main`` entry points of the
roles a playbook runs, with ansible-core's :class:`ArgumentSpecValidator` and the collection's own rules for the
site-wide settings (null and empty are refused where the default is neither). Hosts that give a variable the same
value are checked once. It also names every variable with a prefix of the collection (``gpufabric_``, ``<role>_``)
that no argument spec knows: a likely typo, which would otherwise leave its default in place without a word.
Each problem is one line naming the variable, what it must be (its type or allowed values, never a spec dump) and the
hosts; a value is shown only when it is a short scalar (never a mapping or a list, which may hold credentials).
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
import os
import typing as t
from collections.abc import Mapping

import yaml
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.errors import ArgumentValueError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import node_verdict, preflight_rules
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import type_name
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.report_dir import ReportDirError, report_dir

# The collection's roles/, beside plugins/ (this file is plugins/plugin_utils/settings.py).
ROLES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "roles")
# The role of the site-wide and playbook settings, and their prefix.
SITE_ROLE = "gpufabric"
SITE_PREFIX = "gpufabric_"
# Facts the collection's roles and playbooks set under a prefix of the collection: their results, not settings (a
# fact cache or an earlier play may hold them, and a workflow hands the next job gpufabric_stats, the set_stats data,
# as extra vars). tests/unit/tooling/test_settings_results.py keeps this list whole.
RESULTS = frozenset({
    "gpufabric_cluster_failure", "gpufabric_host_failure", "gpufabric_imex_membership", "gpufabric_preflight",
    "gpufabric_site", "gpufabric_stats", "gpufabric_validation",
    "nvidia_driver_change", "nvidia_driver_plan", "nvidia_driver_reboot_required", "rdma_network_rail_plan",
    "validate_compute_domain_result", "validate_dcgm_results", "validate_nccl_result", "validate_rdma_results",
})
# Settings with a resolution of their own, whose refusal every playbook and role shares.
_RESOLVED = {"gpufabric_report_dir": report_dir}


def _preflight_rules(name: str, value: t.Any) -> None:
    """The preflight's own reading of its rules ``name`` (:func:`.preflight_rules.read_rules`)."""
    minimum = option(SITE_ROLE, preflight_rules.MINIMUM_DRIVER_SETTING).get("default")
    preflight_rules.read_rules(value, suboption_defaults(SITE_ROLE, name), minimum, prefix=f"{name}.")


def _minimum_driver(name: str, value: t.Any) -> None:
    """The site's minimum driver ``name`` as the preflight reads it (a version)."""
    preflight_rules.read_min_driver(name, value)


def _label_key(name: str, value: t.Any) -> None:
    """A key of the node verdict ``name`` as Kubernetes reads it (:func:`.node_verdict.check_key`)."""
    node_verdict.check_key(name, value)


# Settings whose consumer reads them more strictly than their argument spec: checked by it too once the spec's check
# finds nothing, so that the settings check refuses what the playbook would refuse later, naming the variable.
_CONSUMED = {"gpufabric_preflight_settings": _preflight_rules, "gpufabric_min_driver_version": _minimum_driver,
             **dict.fromkeys(node_verdict.DEFAULT_NAMES, _label_key),
             **dict.fromkeys(node_verdict.VALIDATION_NAMES, _label_key)}
# What those consumers raise: a refusal, one line naming the variable.
_CONSUMED_ERRORS = (preflight_rules.RuleError, node_verdict.NodeVerdictError)
# How many hosts a line names before it counts the rest.
_SHOWN_HOSTS = 10
_SHOWN_TEXT = 60
_WORDS = {"str": "a string", "path": "a path (a string)", "bool": "a boolean (true or false)",
          "int": "a whole number", "float": "a number", "dict": "a mapping", "list": "a list", "raw": "any value"}


class SettingsError(ValueError):
    """Input from which no check can be made (a caller's mistake); the message names the argument."""


# LibYAML's loader where PyYAML has it (its wheels do): every worker process of a run whose filters read the settings
# loads the argument specs of all roles once, which the pure-Python loader made the largest part of the preflight's
# controller CPU (bench/results/2026-11-29-settings-specs-loader.md).
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@functools.cache
def _load(roles_dir: str) -> dict[str, dict[str, dict]]:
    specs: dict[str, dict[str, dict]] = {}
    for role in sorted(os.listdir(roles_dir)):
        path = os.path.join(roles_dir, role, "meta", "argument_specs.yml")
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as handle:
            # a safe loader either way: CSafeLoader or SafeLoader
            document = yaml.load(handle, Loader=_YAML_LOADER) or {}
        specs[role] = {str(entry): dict(spec.get("options") or {})
                       for entry, spec in (document.get("argument_specs") or {}).items()}
    return specs


def argument_specs() -> dict[str, dict[str, dict]]:
    """Every role's argument specs, ``{role: {entry point: options}}``, read from the collection once per process."""
    return _load(ROLES_DIR)


def options(role: str) -> dict[str, dict]:
    """The options of ``role``'s entry point ``main``; a role without one is a :class:`SettingsError`."""
    specs = argument_specs()
    if not isinstance(role, str) or "main" not in specs.get(role, {}):
        known = ", ".join(name for name, entries in specs.items() if "main" in entries)
        raise SettingsError(f"roles must name roles of gpufabric.cluster with an argument spec (one of {known}), "
                            f"got {_shown(role)}")
    return specs[role]["main"]


def option(role: str, name: str) -> dict:
    """The argument spec of the variable ``name`` of ``role``."""
    found = options(role)
    if name not in found:
        raise SettingsError(f"{role} has no variable {name}")
    return found[name]


def choices(role: str, name: str) -> tuple:
    """The values the variable ``name`` of ``role`` allows (its ``choices``)."""
    allowed = option(role, name).get("choices")
    if not allowed:
        raise SettingsError(f"{role}'s {name} has no choices")
    return tuple(allowed)


def site_defaults(names: Mapping[str, str]) -> dict:
    """``{key: default}`` of the site settings ``names`` maps each key to (``{'imex_mode': 'gpufabric_imex_mode'}``).

    For the plugin_utils whose settings default to a site setting: they read its default here, from the argument
    spec of roles/gpufabric, and keep no copy.
    """
    return {key: copy.deepcopy(option(SITE_ROLE, name).get("default")) for key, name in names.items()}


def role_defaults(role: str, prefix: str, keys: t.Iterable[str]) -> dict:
    """``{key: default}`` of ``role``'s variables ``prefix`` + ``key``, from its argument spec.

    For the plugin_utils that judge with a role's settings: the role passes every one of them, and a caller that
    leaves one out gets the default the role has, from the one place it is written; they keep no copy.
    """
    return {key: copy.deepcopy(option(role, f"{prefix}{key}").get("default")) for key in keys}


def suboption_defaults(role: str, name: str) -> dict:
    """``{key: default}`` of the suboptions of the mapping variable ``name`` of ``role`` (null where none is given)."""
    return {key: copy.deepcopy(spec.get("default")) for key, spec in (option(role, name).get("options") or {}).items()}


def _shown(value: t.Any) -> str:
    """``value`` for a message: a short scalar as written, anything else by its kind (its content is never shown)."""
    if value is None or isinstance(value, (bool, int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return repr(value) if len(value) <= _SHOWN_TEXT else f"a string of {len(value)} characters"
    return type_name(value)


def _hosts(names: t.Sequence[str]) -> str:
    shown = ", ".join(names[:_SHOWN_HOSTS])
    more = f" and {len(names) - _SHOWN_HOSTS} more" if len(names) > _SHOWN_HOSTS else ""
    return f"{'host' if len(names) == 1 else 'hosts'} {shown}{more}"


def _wanted(spec: Mapping) -> str:
    """What a value of ``spec`` must be, in words."""
    kind = str(spec.get("type") or "str")
    word = _WORDS.get(kind, kind)
    if kind == "list" and spec.get("elements"):
        element = str(spec["elements"])
        word = f"a list of {_WORDS.get(element, element)[2:]}s" if element in _WORDS else f"a list of {element}"
    return word


def _site_refusal(name: str, spec: Mapping, value: t.Any) -> str | None:
    """Null or empty where the site-wide setting's default is neither: refused the same in every playbook."""
    default = spec.get("default")
    if name in _RESOLVED:
        try:
            _RESOLVED[name](value, name)
        except (ReportDirError, ValueError) as exc:
            return str(exc)
        return None
    if value is None and default is not None:
        return f"{name} is null: leave it unset for its default ({_shown(default)}) or set a value"
    if isinstance(value, str) and not value.strip() and isinstance(default, str) and default.strip():
        return f"{name} is empty: leave it unset for its default ({_shown(default)}) or set a value"
    return None


def value_problems(name: str, spec: Mapping, value: t.Any, site: bool = False) -> list[str]:
    """Why ``value`` is no value of the variable ``name`` whose argument spec is ``spec``: one line per problem.

    ``site``: ``name`` is a site-wide setting, where null and empty are refused unless its default is null or empty.
    A mapping with ``options`` is checked key by key (``name.key``); an unknown key is named with the nearest known.
    """
    if site:
        refusal = _site_refusal(name, spec, value)
        if refusal or name in _RESOLVED:
            return [refusal] if refusal else []
    kind = str(spec.get("type") or "str")
    if kind in ("str", "path") and isinstance(value, (bool, Mapping, list, tuple, set, frozenset)):
        return [f"{name} must be {_wanted(spec)}, got {type_name(value)}"]
    suboptions = spec.get("options")
    if kind == "dict" and suboptions and value is not None:
        if not isinstance(value, Mapping):
            return [f"{name} must be a mapping of {', '.join(suboptions)}, got {type_name(value)}"]
        problems = []
        for key, item in value.items():
            if key not in suboptions:
                near = difflib.get_close_matches(str(key), list(suboptions), n=1, cutoff=0.6)
                hint = f" (did you mean {name}.{near[0]}?)" if near else f" (known: {', '.join(suboptions)})"
                problems.append(f"{name} has no key {_shown(key)}{hint}")
                continue
            problems.extend(value_problems(f"{name}.{key}", suboptions[key], item))
        if not problems and name in _CONSUMED:
            try:
                _CONSUMED[name](name, value)
            except _CONSUMED_ERRORS as exc:
                problems.append(str(exc))
        return problems
    checked = {key: spec[key] for key in ("type", "elements", "choices") if key in spec}
    try:
        result = ArgumentSpecValidator({"value": checked}).validate({"value": value})
    except Exception as exc:  # whatever the validator cannot take is no value of the variable
        return [f"{name} must be {_wanted(spec)}, got {type_name(value)} ({type(exc).__name__})"]
    errors = list(result.errors.errors)
    if not errors and name in _CONSUMED and value is not None:
        try:
            _CONSUMED[name](name, value)
        except _CONSUMED_ERRORS as exc:
            return [str(exc)]
    if not errors:
        return []
    allowed = spec.get("choices")
    if allowed and any(isinstance(error, ArgumentValueError) for error in errors):
        converted = result.validated_parameters.get("value")
        if kind == "list":
            outside = [item for item in converted or [] if item not in allowed]
            return [f"{name} must list only {', '.join(map(str, allowed))}, got {', '.join(map(_shown, outside))}"]
        return [f"{name} must be one of: {', '.join(map(str, allowed))}, got {_shown(value)}"]
    return [f"{name} must be {_wanted(spec)}, got {_shown(value) if isinstance(value, str) else type_name(value)}"]


def _known() -> tuple[dict[str, str], set[str]]:
    """``({prefix: role}, known names)``: the prefixes of the collection and every variable its argument specs know."""
    specs = argument_specs()
    prefixes = {SITE_PREFIX: SITE_ROLE}
    prefixes.update({f"{role}_": role for role in specs if not role.startswith("_") and role != SITE_ROLE})
    known = set(RESULTS)
    for entries in specs.values():
        for found in entries.values():
            known.update(found)
    return prefixes, known


def _key(value: t.Any) -> str:
    """A key under which equal values of one variable meet (a boolean, a number and its text stay apart)."""
    try:
        return json.dumps(value, sort_keys=True, default=lambda item: f"<{type(item).__name__}>{item!r}")
    except (TypeError, ValueError):  # keys of several types, a circular structure
        return f"<{type(value).__name__}>{value!r}"


def _names(value: t.Any, what: str) -> list[str]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
        raise SettingsError(f"{what} must be a list of names, got {type_name(value)}")
    names: list[str] = []
    for item in value:
        if not isinstance(item, str) or not item:
            raise SettingsError(f"{what} must hold non-empty strings, got {_shown(item)}")
        if item not in names:
            names.append(item)
    return names


def settings_problems(hostvars: Mapping, hosts: t.Sequence[str], roles: t.Sequence[str]) -> list[str]:
    """Every problem of the settings ``hosts`` give, one line each, naming the hosts; empty when there is none.

    ``hostvars`` is Ansible's ``hostvars`` (each host's inventory variables, facts and extra vars); ``roles`` the
    roles whose ``main`` options are checked (``gpufabric`` for the site-wide and playbook settings). A variable with
    a prefix of the collection that no argument spec of the collection knows is reported as unknown, with the nearest
    known name. Raises :class:`SettingsError` when the arguments are not hostvars and lists of names.
    """
    if not isinstance(hostvars, Mapping):
        raise SettingsError(f"the input must be hostvars, got {type_name(hostvars)}")
    host_names = _names(hosts, "hosts")
    checked: dict[str, tuple[dict, bool]] = {}
    for role in _names(roles, "roles"):
        for name, spec in options(role).items():
            checked[name] = (spec, role == SITE_ROLE)
    prefixes, known = _known()
    # variable -> value key -> (value, hosts); variable -> hosts, for the unknown ones
    values: dict[str, dict[str, tuple[t.Any, list[str]]]] = {}
    unknown: dict[str, list[str]] = {}
    for host in host_names:
        host_vars = hostvars.get(host)
        if not isinstance(host_vars, Mapping):
            continue
        for name in list(host_vars):
            if not isinstance(name, str) or name.startswith("_") or not name.startswith(tuple(prefixes)):
                continue
            if name not in known:
                unknown.setdefault(name, []).append(host)
                continue
            if name not in checked:
                continue
            try:
                value = host_vars[name]
                key = _key(value)  # reads the whole value, so that what cannot be templated here raises here
            except Exception:  # templated from what this host's variables do not hold (a role default, or
                # inventory_dir for the implicit localhost): judged where a play applies the role, not here
                continue
            seen = values.setdefault(name, {}).setdefault(key, (value, []))
            seen[1].append(host)
    problems: list[tuple[str, int, str]] = []
    order = {host: index for index, host in enumerate(host_names)}
    for name, found in values.items():
        spec, site = checked[name]
        for value, named in found.values():
            for problem in value_problems(name, spec, value, site):
                problems.append((name, order[named[0]], f"{_hosts(named)}: {problem}"))
    for name, named in unknown.items():
        prefix, role = next((prefix, role) for prefix, role in prefixes.items() if name.startswith(prefix))
        # compared without the prefix, which every candidate shares
        near = difflib.get_close_matches(name[len(prefix):], sorted(item[len(prefix):] for item in known
                                                                    if item.startswith(prefix)), n=1, cutoff=0.75)
        hint = f" (did you mean {prefix}{near[0]}?)" if near else \
            f": no argument spec of gpufabric.cluster.{role} knows it"
        problems.append((name, order[named[0]], f"{_hosts(named)}: unknown variable {name}{hint}"))
    return [line for _name, _first, line in sorted(problems)]
