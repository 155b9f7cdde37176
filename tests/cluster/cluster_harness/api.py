# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Just enough of a Kubernetes client for the harness, and polling until something is ready."""

from __future__ import annotations

import http.client
import io
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from cluster_harness.common import HarnessError
from cluster_harness.processes import read_state


class Api:
    """Just enough of a Kubernetes client for the harness (the tests use the real ones).

    One HTTPS connection, kept alive between requests: the harness's helper processes (the kubelet plugin
    stand-in, the hook completer) ask the API server every second or less for as long as the harness runs, and a
    new TLS connection for each request cost them and the API server more CPU than the requests themselves. Errors
    are urllib's, as callers expect: ``urllib.error.HTTPError`` for a status of 400 or more (its body readable), an
    ``OSError`` or ``urllib.error.URLError`` when the server cannot be reached.
    """

    def __init__(self, server: str, pki: Path):
        self.server = server
        self.context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        parsed = urllib.parse.urlsplit(server)
        if parsed.scheme != "https" or not parsed.hostname:
            raise HarnessError(f"API server {server!r}: not an https:// URL")
        self._host, self._port, self._prefix = parsed.hostname, parsed.port or 443, parsed.path.rstrip("/")
        self._connection: http.client.HTTPSConnection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def _exchange(self, method: str, path: str, data: bytes | None, headers: dict, timeout: float):
        if self._connection is None:
            self._connection = http.client.HTTPSConnection(self._host, self._port, context=self.context,
                                                           timeout=timeout)
        self._connection.timeout = timeout
        if self._connection.sock is not None:
            self._connection.sock.settimeout(timeout)
        self._connection.request(method, self._prefix + path, body=data, headers=headers)
        response = self._connection.getresponse()
        return response.status, response.reason, response.msg, response.read()

    def request(
        self, method: str, path: str, body: dict | None = None, timeout: float = 10.0, content_type: str = ""
    ):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type or "application/json", "Accept": "application/json"}
        reused = self._connection is not None and self._connection.sock is not None
        try:
            try:
                status, reason, response_headers, payload = self._exchange(method, path, data, headers, timeout)
            except TimeoutError:
                raise
            except (OSError, http.client.HTTPException):
                if not reused:
                    raise
                # the kept connection was closed (by the server, idle) between requests: once more on a new one
                self.close()
                status, reason, response_headers, payload = self._exchange(method, path, data, headers, timeout)
        except http.client.HTTPException as error:
            self.close()
            raise urllib.error.URLError(f"{method} {path}: {type(error).__name__}: {error}") from error
        except OSError:
            self.close()
            raise
        if status >= 400:
            raise urllib.error.HTTPError(self.server + path, status, reason, response_headers, io.BytesIO(payload))
        try:
            return json.loads(payload)
        except ValueError:
            return payload.decode()


def wait_for(what: str, check, timeout: float, process_checks=()) -> None:
    """Poll ``check()`` until it is true; fail early when a process we started has exited."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        for process in process_checks:
            process.assert_running()
        try:
            if check():
                return
        except (OSError, urllib.error.URLError, ssl.SSLError, ValueError) as error:
            last_error = error
        time.sleep(0.25)
    raise HarnessError(
        f"timed out after {timeout:.0f}s waiting for {what}" + (f" (last error: {last_error})" if last_error else "")
    )


def http_ok(url: str, timeout: float = 2.0) -> bool:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return response.status == 200


def https_ok(url: str, timeout: float = 2.0) -> bool:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False


def api_of(run_dir: Path) -> Api:
    """A client of the running harness in ``run_dir``."""
    state = read_state(run_dir.resolve())
    if not state:
        raise HarnessError(f"no harness state in {run_dir}; is it up?")
    return Api(state["server"], Path(state["run_dir"]) / "pki")
