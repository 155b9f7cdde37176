# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The preflight's readiness rules as it reads them, for the preflight and for the settings check of every playbook.

The rules are ``gpufabric_preflight_settings`` over its suboptions' defaults, and the site's minimum driver
(``gpufabric_min_driver_version``) where they name none. They are read more strictly than their argument spec says:
whole numbers of 1 or more, numbers above 0, no numeric strings, a minimum driver that is a version (text without
one would pass every driver). :mod:`.preflight` judges with what :func:`read_rules` returns; :mod:`.settings` calls
the same function, so that a playbook refuses before its first task what its preflight would refuse later.

The callers pass the defaults (from the argument spec of ``roles/gpufabric``, which :mod:`.settings` reads) and the
prefix their messages name a rule by (``settings.`` for the preflight's own input, ``gpufabric_preflight_settings.``
for the settings check); nothing here reads a file or imports either caller.
"""

from __future__ import annotations

import typing as t
from collections.abc import Mapping

from ansible_collections.gpufabric.cluster.plugins.module_utils.port_counters import COUNTERS
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.cluster_roles import ClusterRoleError, chosen_settings
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.versions import version_key

# The site setting that holds the minimum driver where the rules name none.
MINIMUM_DRIVER_SETTING = "gpufabric_min_driver_version"
# The longest text a message quotes; a longer value is named by its length.
SHOWN_TEXT = 60
# The longest name of a counter a message quotes (the probe's longest is 31 characters).
SHOWN_NAME = 40


class RuleError(ValueError):
    """A rule the preflight cannot judge with; the message names the rule as the caller's prefix spells it."""


def _refused(exc: Exception, value: t.Any) -> RuleError:
    """``exc``'s message, where a value written longer than :data:`SHOWN_TEXT` characters is never quoted."""
    message = str(exc)
    shown = repr(value)
    if len(shown) > SHOWN_TEXT:
        message = message.replace(shown, "a value too long to show")
    return RuleError(message)


def _members(name: str, value: t.Any) -> int:
    """A count of hosts: a whole number of 1 or more (a boolean, a fraction or a numeric string is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise arguments.ArgumentError(f"{name} must be a whole number of hosts, 1 or more, got {value!r}")
    return value


def read_min_driver(label: str, version: t.Any) -> str:
    """The minimum driver ``version`` (``label`` names where it was set): a version, as text."""
    try:
        if isinstance(version, (int, float)) and not isinstance(version, bool):
            version = str(version)
        version = arguments.text(label, version)
        if not version_key(version):  # else every driver would pass the minimum
            raise arguments.ArgumentError(f"{label} must be a driver version such as 580.95.05, got {version!r}")
    except arguments.ArgumentError as exc:
        raise _refused(exc, version) from None
    return version


def _read(checker: t.Callable[[str, t.Any], t.Any], name: str, value: t.Any) -> t.Any:
    try:
        return checker(name, value)
    except arguments.ArgumentError as exc:
        raise _refused(exc, value) from None


def read_rules(settings: t.Any, defaults: Mapping, min_driver_default: t.Any, prefix: str = "settings.") -> dict:
    """The rules ``settings`` set over ``defaults`` (the suboptions' defaults of ``gpufabric_preflight_settings``),
    each checked; the minimum driver is ``min_driver_default`` where ``settings`` names none (null).

    Raises :class:`RuleError` naming the rule with ``prefix`` (the minimum driver by :data:`MINIMUM_DRIVER_SETTING`
    when it comes from ``min_driver_default``).
    """
    settings = _read(lambda name, value: arguments.optional(arguments.mapping, name, value), prefix.rstrip("."),
                     settings)
    try:
        merged = chosen_settings(settings, defaults, {}, prefix, keep_none=True)
    except ClusterRoleError as exc:
        raise RuleError(str(exc)) from None
    if merged["min_driver_version"] is None:
        merged["min_driver_version"] = read_min_driver(MINIMUM_DRIVER_SETTING, min_driver_default)
    else:
        merged["min_driver_version"] = read_min_driver(f"{prefix}min_driver_version", merged["min_driver_version"])
    merged["rdma_min_rate_gbps"] = _read(lambda name, value: arguments.optional(arguments.positive, name, value),
                                         f"{prefix}rdma_min_rate_gbps", merged["rdma_min_rate_gbps"])
    mtus = _read(lambda name, value: arguments.optional(arguments.mapping, name, value), f"{prefix}rdma_mtu",
                 merged["rdma_mtu"]) or {}
    merged["rdma_mtu"] = {str(layer): _read(lambda name, value: arguments.optional(arguments.positive, name, value),
                                            f"{prefix}rdma_mtu.{layer}", mtu)
                          for layer, mtu in mtus.items()}
    merged["rdma_require_active"] = _read(arguments.boolean, f"{prefix}rdma_require_active",
                                          merged["rdma_require_active"])
    merged["imex_domain_members"] = _read(lambda name, value: arguments.optional(_members, name, value),
                                          f"{prefix}imex_domain_members", merged["imex_domain_members"])
    merged["imex_domain_single_chassis"] = _read(arguments.boolean, f"{prefix}imex_domain_single_chassis",
                                                 merged["imex_domain_single_chassis"])
    merged["port_counter_thresholds"] = read_counter_thresholds(
        merged["port_counter_thresholds"], defaults.get("port_counter_thresholds") or {},
        f"{prefix}port_counter_thresholds")
    merged["gpu_health_thresholds"] = read_gpu_health_thresholds(
        merged["gpu_health_thresholds"], defaults.get("gpu_health_thresholds") or {}, f"{prefix}gpu_health_thresholds")
    return merged


def _errors_allowed(name: str, value: t.Any) -> int:
    """A counter threshold: a whole number of 0 or more (a boolean, a fraction or a numeric string is refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise arguments.ArgumentError(f"{name} must be a whole number of errors, 0 or more, got {value!r}")
    return value


def read_counter_thresholds(thresholds: t.Any, defaults: Mapping, name: str) -> dict:
    """The port error counter thresholds: ``thresholds`` (null: none) over ``defaults``, one per counter of
    :data:`...module_utils.port_counters.COUNTERS`, each a whole number of 0 or more or null (the counter unjudged).

    A counter ``thresholds`` leaves out keeps its default; a name that is not a counter the probe reads is refused,
    naming ``name``. Null (the whole setting) judges no counter.
    """
    thresholds = _read(lambda label, value: arguments.optional(arguments.mapping, label, value), name, thresholds)
    if thresholds is None:
        return {}
    unknown = sorted(str(key) if len(str(key)) <= SHOWN_NAME else f"a name of {len(str(key))} characters"
                     for key in thresholds if key not in COUNTERS)
    if unknown:
        raise RuleError(f"{name} names no counter the probe reads: {', '.join(unknown[:4])}"
                        f"{f' and {len(unknown) - 4} more' if len(unknown) > 4 else ''}; known: {', '.join(COUNTERS)}")
    merged = {counter: defaults.get(counter) for counter in COUNTERS}
    merged.update(thresholds)
    return {counter: _read(lambda label, value: arguments.optional(_errors_allowed, label, value),
                           f"{name}.{counter}", limit)
            for counter, limit in merged.items()}


# The GPU health thresholds (``gpu_health_thresholds``): what warns rather than fails.  The failures (a pending row
# remap, a row-remap failure, a volatile uncorrectable ECC error, a reset or reboot the GPU's recovery action asks
# for) are not settings.
GPU_HEALTH_KEYS = ("ecc_aggregate_uncorrected", "nvlink_errors", "xids")
# The largest XID code accepted (the catalogue's codes are below 200; the driver prints them as decimal numbers).
XID_MAX = 65535


def _xid(name: str, value: t.Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= XID_MAX:
        raise arguments.ArgumentError(f"{name} must be an XID code, a whole number from 0 to {XID_MAX}, got {value!r}")
    return value


def read_gpu_health_thresholds(thresholds: t.Any, defaults: Mapping, name: str) -> dict:
    """The GPU health thresholds: ``thresholds`` (null: none) over ``defaults``, the keys :data:`GPU_HEALTH_KEYS`.

    ``ecc_aggregate_uncorrected`` and ``nvlink_errors`` are whole numbers of 0 or more or null (unjudged); ``xids``
    a list of XID codes or null (no XID judged), returned sorted without repeats. A key left out keeps its default;
    an unknown key is refused naming ``name``. Null (the whole setting) judges none of them.
    """
    thresholds = _read(lambda label, value: arguments.optional(arguments.mapping, label, value), name, thresholds)
    if thresholds is None:
        return dict.fromkeys(GPU_HEALTH_KEYS)
    unknown = sorted(str(key) if len(str(key)) <= SHOWN_NAME else f"a name of {len(str(key))} characters"
                     for key in thresholds if key not in GPU_HEALTH_KEYS)
    if unknown:
        raise RuleError(f"{name} has unknown keys: {', '.join(unknown[:4])}"
                        f"{f' and {len(unknown) - 4} more' if len(unknown) > 4 else ''}; "
                        f"known: {', '.join(GPU_HEALTH_KEYS)}")
    merged = {key: defaults.get(key) for key in GPU_HEALTH_KEYS}
    merged.update(thresholds)
    result = {key: _read(lambda label, value: arguments.optional(_errors_allowed, label, value), f"{name}.{key}",
                         merged[key])
              for key in ("ecc_aggregate_uncorrected", "nvlink_errors")}
    xids = _read(lambda label, value: arguments.optional(arguments.sequence, label, value), f"{name}.xids",
                 merged["xids"])
    result["xids"] = None if xids is None else sorted({_read(_xid, f"{name}.xids entry", xid) for xid in xids})
    return result
