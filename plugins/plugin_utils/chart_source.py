# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which Helm chart a cluster role installs, and is it there: the logic of the ``gpufabric.cluster.chart_source``
filter.

Called twice by a role: without ``shown`` it picks the source (local chart, OCI reference or Helm
repository) and returns the ``helm show chart`` arguments that prove it usable; with ``shown`` (the
registered result of that command) it checks the answer and returns what ``kubernetes.core.helm`` needs.
Errors are :class:`ChartSourceError` naming the role variable.

A repository URL may carry credentials (``https://user:password@host/charts``): they never leave this module in a
message or in the result. The result's ``chart_repo_url`` and ``show`` arguments hold the URL without them,
``location`` and every message show it as ``https://***@host/charts`` (:func:`...plugin_utils.redact.redact`), and
``credentials`` says that the caller must pass them to helm itself (``--username``/``--password``, read from the
role variable where they are written, so that no registered fact holds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

import yaml

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact


class ChartSourceError(ValueError):
    """No usable chart source; the message names the role variable and never holds a credential."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


def _without_credentials(url: str) -> tuple[str, bool]:
    """``url`` without its userinfo, and whether it had one."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url), "@" in url
    if "@" not in parts.netloc:
        return url, False
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2])), True


def _text(spec: Mapping, key: str) -> str:
    value = spec.get(key)
    return "" if value is None else str(value).strip()


def resolve(spec: Mapping, prefix: str) -> dict:
    """Pick the chart source of ``spec``; raise :class:`ChartSourceError` naming the variables when there is none."""
    path, oci, repo = _text(spec, "path"), _text(spec, "oci_ref"), _text(spec, "repo_url")
    name, version = _text(spec, "name"), _text(spec, "version")
    if path:
        return {"source": "local", "chart_ref": path, "chart_repo_url": None, "chart_version": None,
                "credentials": False, "variable": f"{prefix}_chart_path", "location": path, "name": name,
                "version": version, "show": ["show", "chart", path]}
    if oci:
        if not oci.startswith("oci://"):
            raise ChartSourceError(f"{prefix}_chart_oci_ref {oci!r} is not an oci:// reference")
        show = ["show", "chart", oci] + (["--version", version] if version else [])
        return {"source": "oci", "chart_ref": oci, "chart_repo_url": None, "chart_version": version or None,
                "credentials": False, "variable": f"{prefix}_chart_oci_ref", "location": redact(oci), "name": name,
                "version": version, "show": show}
    if repo:
        if not name:
            raise ChartSourceError(f"{prefix}_chart_name is empty: the chart to take from {prefix}_chart_repo_url "
                                   f"{repo}")
        url, credentials = _without_credentials(repo)
        show = ["show", "chart", name, "--repo", url] + (["--version", version] if version else [])
        return {"source": "repo", "chart_ref": name, "chart_repo_url": url, "chart_version": version or None,
                "credentials": credentials, "variable": f"{prefix}_chart_repo_url",
                "location": f"{redact(repo)} ({name})", "name": name, "version": version, "show": show}
    raise ChartSourceError(f"no chart source: {prefix}_chart_path, {prefix}_chart_oci_ref and {prefix}_chart_repo_url "
                           "are all empty; set one (a local chart directory or tarball for air-gapped sites)")


def _helm_missing(shown: Mapping, prefix: str) -> str | None:
    """Why helm itself could not be run, or None: ``ansible.builtin.command`` reports a program it cannot start with
    its ``OSError``'s errno as ``rc`` (2: not found, 13: not executable), no output and "Error executing command.".
    """
    if shown.get("msg") != "Error executing command." or shown.get("stdout") or shown.get("stderr"):
        return None
    command = shown.get("cmd")
    if isinstance(command, (list, tuple)) and command:
        program = command[0]
    else:
        program = str(command or "helm").split(" ", maxsplit=1)[0]
    why = {2: "not found", 13: "not executable"}.get(shown.get("rc"), "cannot be run")
    return (f"helm {why} on the controller: {redact(str(program))} ({prefix}_helm_binary, empty: helm on the PATH); "
            f"install helm 3 on the controller or set {prefix}_helm_binary to its path")


def check(chosen: Mapping, shown: Mapping, prefix: str) -> dict:
    """Check the ``helm show chart`` result of ``chosen``; raise :class:`ChartSourceError` naming the variable."""
    where = f"{chosen['variable']} {chosen['location']}"
    missing = _helm_missing(shown, prefix)
    if missing:
        raise ChartSourceError(missing)
    if shown.get("rc") != 0:
        error = " ".join(str(shown.get("stderr") or shown.get("msg") or "no output").split())
        hint = ""
        if chosen["source"] != "local":
            hint = f"; with no repository reachable set {prefix}_chart_path to a local chart"
        if chosen["version"] and "version" in error.lower():
            raise ChartSourceError(f"{prefix}_chart_version {chosen['version']} not found at {where}: {error}{hint}")
        raise ChartSourceError(f"chart source not usable: {where}: {error}{hint}")
    try:
        meta = yaml.safe_load(str(shown.get("stdout") or "")) or {}
    except yaml.YAMLError as exc:
        raise ChartSourceError(f"{where}: helm show chart printed no Chart.yaml ({exc})") from None
    if not isinstance(meta, Mapping):
        raise ChartSourceError(f"{where}: helm show chart printed no Chart.yaml")
    if chosen["name"] and meta.get("name") != chosen["name"]:
        raise ChartSourceError(f"{where} is chart {meta.get('name')!r}, not {chosen['name']!r} ({prefix}_chart_name)")
    found = str(meta.get("version") or "")
    if chosen["version"] and found.lstrip("v") != chosen["version"].lstrip("v"):
        raise ChartSourceError(f"{prefix}_chart_version {chosen['version']} does not exist at {where}: the chart "
                               f"there is version {found}")
    result = {key: chosen[key] for key in ("source", "chart_ref", "chart_repo_url", "chart_version", "credentials",
                                           "variable")}
    result.update(name=str(meta.get("name") or ""), version=found, app_version=str(meta.get("appVersion") or ""))
    return result


def chart_source(spec: Mapping, prefix: str, shown: Mapping | None = None) -> dict:
    """Resolve (and with ``shown``, check) a role's chart source."""
    chosen = resolve(spec, prefix)
    return chosen if shown is None else check(chosen, shown, prefix)
