# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Just enough of a Kubernetes client for the harness, and polling until something is ready."""

from __future__ import annotations

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
    """Just enough of a Kubernetes client for the harness (the tests use the real ones)."""

    def __init__(self, server: str, pki: Path):
        self.server = server
        self.context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        self.context.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))

    def request(
        self, method: str, path: str, body: dict | None = None, timeout: float = 10.0, content_type: str = ""
    ):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.server + path, data=data, method=method)
        request.add_header("Content-Type", content_type or "application/json")
        request.add_header("Accept", "application/json")
        with urllib.request.urlopen(request, context=self.context, timeout=timeout) as response:
            payload = response.read()
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
