# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Where the reports are written on the controller: the one resolution of ``gpufabric_report_dir``.

The site-wide setting ``gpufabric_report_dir`` (a default of the ``gpufabric.cluster.gpufabric`` role, ``reports``)
and the validation roles' ``<role>_report_dir`` (which default to it) go through :func:`report_dir` wherever a
playbook or role writes a report, so they are checked and resolved the same way everywhere:

- a relative path is relative to the controller's working directory (the process's, not the ``PWD`` environment
  variable, which may be missing or stale: an empty ``PWD`` made ``$PWD/reports`` the directory ``/reports``),
  ``~`` is expanded, and the result is absolute and normalised;
- null, an empty or blank string, a value that is not a string and a NUL character are refused, naming the
  variable; joined with ``/preflight.json`` such a value used to write the report into ``/``.
"""

from __future__ import annotations

import os
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils.arguments import type_name


class ReportDirError(ValueError):
    """A report directory setting that names no directory; the message names the variable."""


def report_dir(value: t.Any, name: str = "gpufabric_report_dir") -> str:
    """The absolute, normalised report directory that ``value`` (the variable ``name``) names on the controller."""
    if value is None:
        raise ReportDirError(f"{name} is null: set it to a directory on the controller, or leave it unset for "
                             "reports in the working directory")
    if not isinstance(value, str):
        raise ReportDirError(f"{name} must be the path of a directory on the controller, got {type_name(value)}")
    if not value.strip():
        raise ReportDirError(f"{name} is empty: set it to a directory on the controller, or leave it unset for "
                             "reports in the working directory")
    if "\x00" in value:
        raise ReportDirError(f"{name} must not contain a NUL character")
    return os.path.normpath(os.path.abspath(os.path.expanduser(value)))
