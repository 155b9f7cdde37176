# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one check of the IMEX control socket path of the host-managed IMEX mode (``dra_host_managed``).

In that mode the host's nvidia-imex daemon opens its command service on a Unix socket
(``IMEX_CMD_UNIX_DOMAIN_PATH`` in ``config.cfg``, from ``nvidia_imex_socket_path``) and the DRA driver, running as
root, queries it there before it hands out IMEX channel 0 (``hostSocketPath``, from
``dra_driver_imex_socket_path``); both default to the site's ``gpufabric_imex_socket_path``. The path must be one
the daemon, the unit's drop-in and the DRA driver all read the same way, and one no other local user can take:

- absolute, without whitespace, ``%`` (a systemd specifier) or a control character, and not a directory (no
  trailing ``/``);
- in its normal form: no ``.``, ``..`` or empty component, so that the daemon's path and the driver's compare
  equal and the path cannot climb out of the directory it names;
- not under a directory every local user may write (:data:`WORLD_WRITABLE_DIRECTORIES`): there another user
  can create the socket before the daemon does, or replace it, and answer the DRA driver's readiness query.

:func:`socket_path_problem` is called by the ``nvidia_imex`` role's input check
(:func:`.imex_config.imex_config_problems`), by ``dra_driver_values`` and by ``dra_driver_prerequisites``.
"""

from __future__ import annotations

import re
import typing as t

# Directories every local user may write (mode 1777): the temporary directories, the POSIX shared memory mount,
# and the lock directory (/run/lock, and /var/lock that links to it, are 1777 on Debian and Ubuntu).
WORLD_WRITABLE_DIRECTORIES: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/var/lock")
# What config.cfg, the unit's drop-in or a reader of lines cannot carry: whitespace, a systemd specifier, control
# characters (NUL, newlines, NEL, LS, PS).
_UNSAFE = re.compile("[\\s%\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _shown(value: t.Any) -> str:
    """``value`` for a message: short, one line."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def socket_path_problem(variable: str, value: t.Any) -> str | None:
    """What is wrong with ``value`` as the IMEX control socket path set by ``variable``, or ``None``.

    One sentence naming the variable, for the caller to prefix with the host or the role.
    """
    expected = f"{variable} must be the absolute path of the IMEX control socket"
    if not isinstance(value, str) or not value:
        return f"{expected}, got {_shown(value)}"
    if _UNSAFE.search(value):
        return (f"{expected}, got {_shown(value)}, which holds whitespace, '%' or a control character (config.cfg and "
                "the nvidia-imex unit cannot carry them)")
    if not value.startswith("/"):
        return f"{expected}, got {_shown(value)}"
    if value.endswith("/"):
        return f"{expected}, got {_shown(value)}, which names a directory"
    components = value[1:].split("/")
    if any(component in ("", ".", "..") for component in components):
        return (f"{expected} in its normal form, got {_shown(value)}, which has a '.', '..' or empty component (the "
                "daemon's path and the DRA driver's must compare equal, and stay in the directory they name)")
    for directory in WORLD_WRITABLE_DIRECTORIES:
        if value == directory or value.startswith(directory + "/"):
            return (f"{variable} {_shown(value)} lies under {directory}, which every local user may write: another "
                    "user could create the socket before nvidia-imex does and answer the DRA driver in its place; "
                    "choose a directory only root writes, such as /run/nvidia-imex or /etc/nvidia-imex")
    return None
