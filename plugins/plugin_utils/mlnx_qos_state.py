# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.mlnx_qos_state`` filter: trust mode and PFC priorities from ``mlnx_qos -i <netdev>``.

The logic of the ``gpufabric.cluster.mlnx_qos_state`` filter; errors are :class:`MlnxQosError`. The output is read
in time linear in its length (the patterns match within one line), and one longer than
:data:`...arguments.MAX_OUTPUT_CHARACTERS` is refused.
"""

from __future__ import annotations

import re
import typing as t

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments


class MlnxQosError(ValueError):
    """Input the ``mlnx_qos_state`` filter cannot use; the message says what is wrong."""


# Whitespace within a line only ([^\S\n], a carriage return included): a \s at the start of a line would run over every
# blank line after it, from every one of them (quadratic in the number of blank lines).
_TRUST_RE = re.compile(r"^[^\S\n]*Priority trust state:[^\S\n]*(?P<trust>\S+)[^\S\n]*$", re.MULTILINE)
_ENABLED_RE = re.compile(r"^[^\S\n]*enabled[^\S\n]+(?P<flags>[01](?:[^\S\n]+[01]){7})[^\S\n]*$", re.MULTILINE)


def mlnx_qos_state(text: t.Any) -> dict[str, str | None]:
    """Return ``{trust, pfc}``: the trust state and the PFC enabled flags as ``mlnx_qos --pfc`` takes them.

    ``pfc`` is read from the ``enabled`` row below ``PFC configuration:`` (``0,0,0,1,0,0,0,0``); a value the
    output does not show is None.
    """
    if not isinstance(text, str):
        raise MlnxQosError(f"expected the text of mlnx_qos -i, got {type(text).__name__}")
    text = arguments.bounded_output("_input", text)
    trust = _TRUST_RE.search(text)
    pfc_section = text.split("PFC configuration:", 1)
    enabled = _ENABLED_RE.search(pfc_section[1]) if len(pfc_section) == 2 else None
    return {
        "trust": trust.group("trust") if trust else None,
        "pfc": ",".join(enabled.group("flags").split()) if enabled else None,
    }
