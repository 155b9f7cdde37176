# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.redact`` filter: a text or data with its credentials hidden.

A thin wrapper over :func:`...plugin_utils.redact.redact`, the collection's one redaction.
"""

from __future__ import annotations

import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils.redact import redact


class FilterModule:
    """The redact filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"redact": arguments.filter_errors("redact")(redact)}
