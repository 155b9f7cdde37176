# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials out of everything the collection prints or writes: the one redaction of the collection.

Every message, report and summary the collection makes passes its text through :func:`redact` (the chart
source messages, the site summary, the Markdown and HTML reports, the ``gpufabric.cluster.change_summary``
callback, the roles' failure messages and their redacted views of chart values).

**Data.** Strings inside lists and mappings are redacted as text, and the value of a mapping key of a secret
family (:func:`is_secret_key`: ``password``, ``registry_password``, ``ngcApiKey``, ``secretKey``,
``client_secret``, ``X-Auth-Token``, ``client-key-data``, ``.dockerconfigjson``, ...) becomes :data:`MASK`; so does
every scalar below such a key (``credentials: {username, password}``), and the ``value`` of an environment
variable whose ``name`` is of a secret family (``{name: NGC_API_KEY, value: ...}``). A masked value that is null,
empty or a boolean stays as it is: it holds no secret and says whether one is set.

**Text.** Secrets are found by their shape wherever they stand:

- URL user information, ``scheme://user:password@host`` (a token as the user too) becomes
  ``scheme://***@host``; it runs to the last ``@`` of the URL (an unencoded ``/``, ``@``, ``?`` or ``#`` in a
  password is hidden whole), so a URL whose path holds an ``@`` loses its host and path too: hiding more is the
  safe side. An image digest (``@sha256:...``) is not user information.
- ``user:password@host`` without a scheme becomes ``***@host`` (``git@host:org/repo`` has no password and stays).
- Assignments to a key of a secret family: ``password=...``, ``NGC_API_KEY=...``, ``password: ...`` (to the end of
  the line, as in YAML and kubeconfig text: ``token:``, ``client-key-data:``), ``"password": "..."`` (JSON and
  Python reprs, escaped quotes too), ``--password x`` and ``--password=x``; ``-p x`` only in a text that holds a
  ``login`` command (elsewhere ``-p`` is a port or a parents flag). An environment ``name: NGC_API_KEY`` followed by
  its ``value:`` hides the value.
- ``Bearer <token>``, ``Basic <base64 of user:password>``, JSON web tokens (``eyJ...``), NGC (``nvapi-``), GitHub
  and GitLab tokens.
- PEM private key blocks (``-----BEGIN ... PRIVATE KEY----- ... -----END ...-----``; a block cut off before its
  end is hidden to the end of the text); certificates are public and stay.
- Base64 of any of the above (a base64 run that decodes to text with a secret in it, e.g. a docker config or a
  kubeconfig), and base64 of a PEM private key.

Keys of a secret family are matched on their words (split at ``_``, ``-``, ``.``, spaces and camelCase, compared
lower-case): ``password``/``passwd``/``passphrase``/``secret``/``credential``/``apikey``/``privatekey`` anywhere in
a word, the words ``token`` (and any word ending in it: ``accessToken``, ``authtoken``), ``auth``, ``auths``,
``authorization``, ``bearer``, and the pairs ``api key``, ``private key``, ``client key``. ``auth`` is a word, not a
part of one: ``author``, ``authority``, ``oauth_url`` and ``tokenizer`` are not secrets. A key whose last word says
it names or points at a secret rather than holding it (``secretName``, ``imagePullSecrets``, ``passwordFile``,
``tokenPath``, ``secretKeyRef``, ``--password-stdin``, ``secretEnv``) is not a secret key either: the name of a
Secret is useful to see.

:func:`redact` runs in time linear in the size of its input (no pattern can backtrack over more than a bounded
span) and is idempotent: ``redact(redact(x)) == redact(x)``.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import re
import typing as t
from collections.abc import Mapping

MASK = "********"
URL_MASK = "***"

# --- keys -----------------------------------------------------------------------------------------------------
# Words of a key: runs of capitals (an acronym), capitalised or lower-case words, digits.
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A word that holds one of these is of a secret family wherever it stands in the word (mypassword, clientsecret).
_SECRET_PARTS = ("password", "passwd", "passphrase", "secret", "credential", "apikey", "privatekey")
# Words that are of a secret family as whole words; a word ending in "token" too.
_SECRET_WORDS = frozenset({"token", "tokens", "auth", "auths", "authorization", "bearer", "dockerconfigjson",
                           "dockercfg", "kubetoken"})
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("client", "key")})
# Whole keys (their words joined) that are secrets though no word says so: a kubeconfig's client certificate, hidden
# beside its key.
_SECRET_JOINED = frozenset({"clientcertificatedata"})
# A last word that makes the key name or point at a secret, not hold it.
_REFERENCE_WORDS = frozenset({"name", "names", "ref", "refs", "file", "files", "path", "paths", "dir", "type", "kind",
                              "enabled", "env", "stdin", "namespace", "url", "uri", "endpoint", "length", "id"})
# Needles of a quick test before a key is split into words.
_NEEDLES = ("pass", "secret", "token", "auth", "credential", "key", "bearer", "docker", "certificate")


def key_words(key: str) -> list[str]:
    """The words of ``key``, lower-case: ``ngcApiKey`` is ``[ngc, api, key]``, ``X-Auth-Token`` ``[x, auth, token]``."""
    return [word.lower() for word in _WORD.findall(key)]


def is_secret_key(key: t.Any) -> bool:
    """Whether a mapping key (or an assignment's key in text) names a value that is a secret."""
    if not isinstance(key, str):
        return False
    lowered = key.lower()
    if not any(needle in lowered for needle in _NEEDLES):
        return False
    words = key_words(key)
    if not words or (len(words) > 1 and words[-1] in _REFERENCE_WORDS) or words[-2:] == ["pull", "secrets"]:
        return False
    if any(part in word for word in words for part in _SECRET_PARTS):
        return True
    if any(word in _SECRET_WORDS or word.endswith("token") for word in words) or "".join(words) in _SECRET_JOINED:
        return True
    return any(pair in _SECRET_PAIRS for pair in itertools.pairwise(words))


# --- text -----------------------------------------------------------------------------------------------------
# Where a key, a token or a base64 run may start: not inside a word, or right after an escaped newline or tab
# (``\\n`` in JSON-escaped text such as a module's message).
_AFTER_ESCAPE = r"(?<=\\[nrt])"
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = "-----END"
# An assignment: a key (optionally quoted, the quote optionally escaped), then ":" or "=" or, for a flag, spaces.
_ASSIGNMENT = re.compile(
    r"(?:(?<![A-Za-z0-9_.\-\\])|" + _AFTER_ESCAPE + r")(?P<open>\\{0,3}[\"'])?"
    r"(?P<key>-{0,2}[A-Za-z0-9][A-Za-z0-9_.\-]{0,127})(?P<close>\\{0,3}[\"'])?"
    r"(?P<sep>[ \t]{0,4}[:=][ \t]{0,8}|[ \t]{1,8})")
_QUOTE = re.compile(r"\\{0,3}[\"']")
_LOGIN = re.compile(r"(?<![A-Za-z0-9_-])login(?![A-Za-z0-9_-])")
# Authorization schemes, whose credentials follow them as the next word.
_AUTH_SCHEMES = frozenset({"basic", "bearer", "digest", "token", "negotiate"})
# A value that holds no secret and stays visible.
_VISIBLE = frozenset({"", MASK, "null", "none", "true", "false", "~", "{}", "[]"})
# What ends an unquoted value: of a quoted key (JSON, a repr), of "key: value" (the line, an escaped newline too),
# of "key=value" and of a flag (a word).
_ITEM_END = re.compile(r"[,}\]\r\n]|\\[nr]")
_LINE_END = re.compile(r"[\r\n]|\\[nr]")
_LINE_END_IN = {mark: re.compile(r"[\r\n" + mark + r"]|\\[nr]") for mark in "\"'"}
_WORD_END = re.compile(r"[\s\"'<>`]")
# Single words that, followed by ":" inside a sentence, introduce prose ("no credentials: <url>"): their values are
# hidden only where they start a line (YAML, kubeconfig), are quoted keys (JSON) or are assigned with "=".
_PROSE_KEYS = frozenset({"credential", "credentials", "auth", "secret", "secrets"})
_INDENT_SPAN = 64
# How much of an environment variable's name is read, and how far after it its value may stand.
_NAME_SPAN = 256
_PAIR_SPAN = 256

_TOKEN = re.compile(r"[^\s\"'<>`]+")
_DIGESTS = ("sha256:", "sha384:", "sha512:")
_USERINFO_START = "=,;([{|"
_AUTH_SCHEME = re.compile(r"(?:(?<![A-Za-z0-9_\\-])|" + _AFTER_ESCAPE + r")(?:[Bb]earer|BEARER)[ \t]{1,8}"
                          r"(?P<token>[A-Za-z0-9\-._~+/]+=*)")
_BASIC = re.compile(r"(?:(?<![A-Za-z0-9_\\-])|" + _AFTER_ESCAPE + r")(?:Basic|BASIC|basic)[ \t]{1,8}"
                    r"(?P<token>[A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])")
# Tokens whose shape says what they are: JSON web tokens, NGC keys, GitHub and GitLab tokens.
_TOKEN_SHAPES = re.compile(
    r"(?:(?<![A-Za-z0-9_\\-])|" + _AFTER_ESCAPE + r")(?:eyJ[A-Za-z0-9_-]*\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"
    r"|nvapi-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_-]{16,})")
# A base64 (or base64url) run long enough to hold a secret.
_BASE64_RUN = re.compile(r"(?:(?<![A-Za-z0-9+/=_\\-])|" + _AFTER_ESCAPE + r")[A-Za-z0-9+/_-]{16,}={0,2}"
                         r"(?![A-Za-z0-9+/=_-])")
# How deep base64 inside base64 is decoded.
_BASE64_DEPTH = 3


def _mask_pem(text: str) -> str:
    """``text`` with the body of every PEM private key block replaced by :data:`MASK` (to the end of the text when
    the block has no end)."""
    parts, position = [], 0
    while (found := _PEM_BEGIN.search(text, position)) is not None:
        parts += [text[position:found.end()], MASK]
        end = text.find(_PEM_END, found.end())
        if end < 0:
            return "".join(parts)
        close = text.find("-----", end + len(_PEM_END))
        position = close + 5 if close >= 0 else len(text)
        parts.append(text[end:position])
    parts.append(text[position:])
    return "".join(parts)


def _quoted_end(text: str, begin: int, mark: str, escaped: bool, limit: int) -> int:
    """Where a quoted value that starts at ``begin`` ends: its closing ``mark`` (escaped as its opening one when
    ``escaped``), else the end of the line."""
    index = begin
    while index < limit:
        char = text[index]
        if char in "\r\n":
            return index
        if char == mark:
            end = index
            while escaped and end > begin and text[end - 1] == "\\":
                end -= 1
            return end
        index += 2 if char == "\\" and not escaped else 1
    return min(index, limit)


def _closing_bracket(text: str, start: int, limit: int) -> int:
    """Where the flow mapping or list that opens at ``start`` ends (after its closing bracket; ``limit`` when it
    does not end): a structure under a secret key is hidden whole."""
    depth = 0
    for index in range(start, limit):
        char = text[index]
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return limit


def _value_span(text: str, start: int, key_quotes: tuple[str | None, str | None], separator: str,
                limit: int) -> tuple[int, int]:
    """Where the value of an assignment that starts at ``start`` is, (begin, end), read up to ``limit``.

    ``key_quotes`` are the quotes around the key: both for a JSON key or a repr's, the opening one only for a
    ``key: value`` inside a quoted string (``-H 'Authorization: Bearer x'``), whose value ends with the string.
    """
    quote = _QUOTE.match(text, start, limit)
    if quote:
        return quote.end(), _quoted_end(text, quote.end(), quote.group()[-1], len(quote.group()) > 1, limit)
    opening, closing = key_quotes
    if opening and closing:
        stop = _ITEM_END
    elif ":" in separator:
        stop = _LINE_END_IN[opening[-1]] if opening else _LINE_END
    else:
        stop = _WORD_END
    # a JSON key's flow mapping or list: to its closing bracket, not its first comma
    after = _closing_bracket(text, start, limit) if stop is _ITEM_END and text.startswith(("{", "["), start) else start
    found = stop.search(text, after, limit)
    end = found.start() if found else limit
    while end > start and text[end - 1] in " \t\\":
        end -= 1
    return start, end


def _starts_line(text: str, index: int) -> bool:
    """Whether ``index`` starts a line of ``text`` but for indentation and a list's dash (YAML, kubeconfig)."""
    begin = max(0, index - _INDENT_SPAN)
    head = text[begin:index].rstrip(" \t")
    head = head[:-1].rstrip(" \t") if head.endswith("-") else head
    return (not head and begin == 0) or head.endswith(("\n", "\r", "\\n", "\\r", "{", ","))


def _mask_assignments(text: str) -> str:
    """``text`` with the values assigned to keys of a secret family replaced by :data:`MASK`."""
    login = _LOGIN.search(text) is not None
    parts, position, search, pair_until = [], 0, 0, -1
    while (found := _ASSIGNMENT.search(text, search)) is not None:
        key, separator = found.group("key"), found.group("sep")
        search = found.end()
        flag = key.startswith("-")
        if not separator.strip() and not flag:
            continue
        key_quotes = (found.group("open"), found.group("close"))
        if key.lower() in ("name", "key"):
            begin, end = _value_span(text, found.end(), key_quotes, separator, min(len(text), found.end() + _NAME_SPAN))
            pair_until = end + _PAIR_SPAN if is_secret_key(text[begin:end].strip()) else -1
            continue
        if not (is_secret_key(key.lstrip("-")) or (key == "-p" and login)
                or (key.lower() == "value" and found.start() <= pair_until)):
            continue
        if (key.lower() in _PROSE_KEYS and ":" in separator and not all(key_quotes)
                and not _starts_line(text, found.start())):
            continue
        begin, end = _value_span(text, found.end(), key_quotes, separator, len(text))
        if text[begin:end].lower() in _AUTH_SCHEMES:
            # Authorization=Basic <credentials>: the credentials are the next word
            following = _WORD_END.search(text, end + 1) if end < len(text) and text[end] in " \t" else None
            end = following.start() if following else (len(text) if end < len(text) and text[end] in " \t" else end)
        value = text[begin:end]
        if value.strip().lower() in _VISIBLE or (flag and not separator.strip() and value.startswith("-")):
            continue
        parts += [text[position:begin], MASK]
        position = search = max(end, found.end())
    parts.append(text[position:])
    return "".join(parts)


def _last_userinfo_at(token: str, start: int) -> int:
    """Index of the last ``@`` of ``token`` after ``start`` that is not an image digest's; -1 without one."""
    index = len(token)
    while (index := token.rfind("@", start, index)) >= 0:
        if not token.startswith(_DIGESTS, index + 1):
            return index
    return -1


def _redact_token_userinfo(token: str) -> str:
    """``token`` with the user information of its URL, or a ``user:password@`` before a host, replaced by ``***``."""
    scheme = token.find("://")
    if scheme >= 0:
        at = _last_userinfo_at(token, scheme + 3)
        return token if at < 0 else token[:scheme + 3] + URL_MASK + token[at:]
    at = _last_userinfo_at(token, 0)
    colon = token.find(":", 0, at) if at > 0 else -1
    if colon < 0:
        return token
    # the user starts after the last separator before the password's colon (key=user:pass@host): the password
    # may hold any of them itself
    begin = max(token.rfind(char, 0, colon) for char in _USERINFO_START) + 1
    if begin == colon:
        return token
    return token[:begin] + URL_MASK + token[at:]


def redact_url(text: str) -> str:
    """``text`` with the user information of every URL in it replaced by ``***`` (``https://***@host/...``), and of
    every ``user:password@host`` without a scheme (``***@host``)."""
    return _TOKEN.sub(lambda found: _redact_token_userinfo(found.group()) if "@" in found.group() else found.group(),
                      text)


def _mask_token(found: re.Match) -> str:
    """The match with its ``token`` group replaced by :data:`MASK`."""
    return found.group()[:found.start("token") - found.start()] + MASK


def _mask_basic(found: re.Match) -> str:
    """A ``Basic`` credential masked when it is base64 of ``user:password``."""
    token = found.group("token")
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return found.group()
    return _mask_token(found) if b":" in decoded else found.group()


def _decoded_text(run: str) -> str | None:
    """The text a base64 (or base64url) run decodes to; None when it is not base64 of UTF-8 text."""
    body = run.rstrip("=")
    url_safe = "-" in body or "_" in body
    if url_safe and ("+" in body or "/" in body):
        return None
    try:
        decoded = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_" if url_safe else None,
                                   validate=True)
        return decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _mask_base64(text: str, depth: int) -> str:
    """``text`` with every base64 run that decodes to text holding a secret replaced by :data:`MASK`."""
    def replace(found: re.Match) -> str:
        decoded = _decoded_text(found.group())
        if decoded is not None and ("PRIVATE KEY" in decoded[:64] or _redact_text(decoded, depth + 1) != decoded):
            return MASK
        return found.group()

    return _BASE64_RUN.sub(replace, text) if depth < _BASE64_DEPTH else text


def _redact_text(text: str, depth: int) -> str:
    """``text`` with every secret of a known shape hidden; base64 is decoded ``depth`` levels deep already."""
    text = _mask_pem(text)
    text = _mask_assignments(text)
    text = redact_url(text)
    text = _AUTH_SCHEME.sub(_mask_token, text)
    text = _BASIC.sub(_mask_basic, text)
    text = _TOKEN_SHAPES.sub(MASK, text)
    return _mask_base64(text, depth)


def redact_text(text: str) -> str:
    """``text`` with every credential in it hidden (the shapes are in the module documentation)."""
    return _redact_text(text, 0)


# --- data -----------------------------------------------------------------------------------------------------
def _names_a_secret(item: Mapping) -> bool:
    """Whether a mapping is an environment variable (``name``/``key`` and ``value``) whose name is a secret's."""
    return "value" in item and any(isinstance(item.get(key), str) and is_secret_key(item.get(key))
                                   for key in ("name", "key"))


def _redact(value: t.Any, secret: bool) -> t.Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return (MASK if value else value) if secret else redact_text(value)
    if isinstance(value, (int, float)):
        return MASK if secret else value
    if isinstance(value, Mapping):
        pair = _names_a_secret(value)
        return {(redact_text(key) if isinstance(key, str) else key):
                _redact(item, secret or is_secret_key(key) or (pair and key == "value"))
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redact(item, secret) for item in value]
    return value


def redact(value: t.Any) -> t.Any:
    """``value`` with every credential in it hidden: secrets' shapes in strings, values of secret keys masked.

    Strings come back as strings, lists and tuples as lists, mappings as dicts (keys kept, their text redacted);
    a number under a secret key becomes :data:`MASK`; any other value is returned as it is.
    """
    return _redact(value, False)
