# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exceptions raised by the gpufabric.cluster module utilities.

Readers raise these; only a module's ``main()`` turns them into ``fail_json``
or, for probes, into ``warnings``/``errors`` entries.
"""

from __future__ import annotations


class GpuFabricError(Exception):
    """Base class of every error raised by this collection's module utilities."""


class ProbeRootError(GpuFabricError):
    """The filesystem root given to a probe is missing or unreadable."""


class ParseError(GpuFabricError):
    """A file or tool output did not have the expected format."""


class CommandError(GpuFabricError):
    """A read-only helper command could not be run or exited non-zero."""


class NvmlError(GpuFabricError):
    """NVML could not be initialised or a query failed."""


class CommandTimeout(CommandError):
    """A read-only helper command did not finish within the probe's ``command_timeout``; it was killed."""
