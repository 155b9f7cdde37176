# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.domain_wave_verdict`` filter: may a changed wave return to service?

A thin wrapper over :func:`...plugin_utils.domain_verification.verify_wave`, which holds the logic.
"""

from __future__ import annotations

import typing as t

from ansible.errors import AnsibleFilterError

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import domain_verification as _logic


@arguments.filter_errors("domain_wave_verdict")
def domain_wave_verdict(wave: t.Any, answers: t.Any, wanted: t.Any, imex_mode: t.Any = "none",
                        socket_path: t.Any = "", before: t.Any = None, steps: t.Any = None) -> dict:
    """Return the verdict of the wave; see the filter documentation."""
    try:
        return _logic.verify_wave(wave, answers, wanted, imex_mode, socket_path, before, steps)
    except (arguments.ArgumentError, _logic.DomainVerificationError) as exc:
        raise AnsibleFilterError(f"domain_wave_verdict: {exc}") from None


class FilterModule:
    """The day-2 change verification filter."""

    def filters(self) -> dict[str, t.Callable]:
        """Return the filters of this file."""
        return {"domain_wave_verdict": domain_wave_verdict}
