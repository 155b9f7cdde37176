# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials out of everything the collection prints or writes: the one redaction of the collection.

Every message, report and summary the collection makes passes its text through :func:`redact` (the chart
source messages, the site summary, the Markdown and HTML reports, the ``gpufabric.cluster.change_summary``
callback), so a chart repository or registry URL written with credentials (``https://user:password@host/...``,
or a token as the user) is shown as ``https://***@host/...`` wherever it would appear.

:func:`redact` also takes data: strings inside lists and mappings are redacted, and the value of a mapping key
that names a secret (:data:`SECRET_KEYS`, e.g. ``password``, ``token``, ``client-key-data``) is replaced by
:data:`MASK`, so a structure that may hold a secret (a kubeconfig mapping, registry credentials) is never echoed.
"""

from __future__ import annotations

import re
import typing as t
from collections.abc import Mapping

MASK = "********"
# scheme://userinfo@ : the userinfo runs to the last "@" before the path, query, fragment, a space or a quote
# (a password with an unencoded "@" is still hidden whole); any userinfo is hidden, a bare token as the user too.
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s\"'<>`\\]*@")
# Keys whose value is a secret whatever its form; compared lower-case with "_" read as "-".
SECRET_KEYS = frozenset({
    "password", "passwd", "token", "secret", "auth", "authorization", "client-key-data", "client-key",
    "client-certificate-data", "id-token", "refresh-token", "access-token", "api-key", "apikey", "bearer",
    "private-key", "dockerconfigjson", ".dockerconfigjson", "credentials",
})


def redact_url(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***`` (``https://***@host/...``)."""
    return _URL_USERINFO.sub(r"\g<scheme>***@", text)


def is_secret_key(key: t.Any) -> bool:
    """Whether a mapping key names a value that is a secret."""
    return isinstance(key, str) and key.strip().lower().replace("_", "-") in SECRET_KEYS


def redact(value: t.Any) -> t.Any:
    """``value`` with every credential in it hidden: URLs' userinfo in strings, values under secret keys masked.

    Strings come back as strings, lists and tuples as lists, mappings as dicts (keys kept, their text redacted);
    any other value is returned as it is.
    """
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, Mapping):
        return {redact(key) if isinstance(key, str) else key: (MASK if is_secret_key(key) and item not in (None, "")
                                                               else redact(item))
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(item) for item in value]
    return value
