# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Small helpers the unit tests share: alter a host tree, read a module result's warnings, render a page headless."""

from __future__ import annotations

import dataclasses
import html.parser
import os
import shutil
import struct
import subprocess
from pathlib import Path

from fixtures.recorded_nvml import recorded_facts


def write_host_file(root: str, path: str, content: str, mode: int = 0o644) -> None:
    """Write a host-absolute ``path`` below ``root`` (parents created), then set its mode."""
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.chmod(full, mode)


def gathered_trees(tree_builder, command_runner, dest: str, names) -> dict[str, dict]:
    """``ansible_facts['gpufabric']`` of each recorded tree in ``names``, built under ``dest`` and gathered by the real
    probe with its recorded NVML answers, without the probe's warnings."""
    gathered = {}
    for name in names:
        payload = recorded_facts(tree_builder.build_tree(name, dest), command_runner)
        payload.pop("warnings")
        gathered[name] = payload
    return gathered


def warning_messages(result: dict) -> list[str]:
    """The warning texts of a module result (ansible-core 2.19 returns each as a WarningSummary event)."""
    return [warning["event"]["msg"] for warning in result.get("warnings", [])]


@dataclasses.dataclass
class HeadlessPage:
    """What headless Chromium made of a page: its screenshot's size, the DOM after load, and the console errors."""

    screenshot_size: tuple[int, int]
    screenshot_bytes: int
    dom: str
    errors: list[str]


def render_headless(page: Path, workdir: Path, width: int = 1400, height: int = 1200) -> HeadlessPage:
    """Render ``page`` with the machine's headless Chromium (``make unit`` installs it), as a screenshot and a DOM."""
    chromium = shutil.which("chromium")
    assert chromium, "chromium is missing: `make unit` installs it (tools/bootstrap-debian.sh chromium)"
    common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
              f"--user-data-dir={workdir / 'profile'}", "--enable-logging=stderr", "--v=0"]
    screenshot = workdir / f"{page.stem}.png"
    shot = subprocess.run([*common, f"--screenshot={screenshot}", f"--window-size={width},{height}", page.as_uri()],
                          capture_output=True, text=True, timeout=120, check=False)
    assert shot.returncode == 0, shot.stderr[-2000:]
    with open(screenshot, "rb") as handle:
        header = handle.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    dom = subprocess.run([*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=False)
    assert dom.returncode == 0, dom.stderr[-2000:]
    errors = [line for line in (shot.stderr + dom.stderr).splitlines()
              if "CONSOLE" in line or "Failed to load" in line or "net::ERR" in line]
    return HeadlessPage(struct.unpack(">II", header[16:24]), screenshot.stat().st_size, dom.stdout, errors)


# The elements HTML writes without an end tag.
VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                           "track", "wbr"})


class _TagBalance(html.parser.HTMLParser):
    """Every start tag closed by its end tag in order; the problems found, in page order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in VOID_ELEMENTS:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        if tag not in VOID_ELEMENTS:
            self.problems.append(f"<{tag}/> is not a void element")

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1] if self.open else 'nothing'}")
        else:
            self.open.pop()


def assert_balanced(page: str) -> None:
    """``page`` parsed by html.parser: every element closed, in order, and nothing left open."""
    parser = _TagBalance()
    parser.feed(page)
    parser.close()
    assert parser.problems == [] and parser.open == [], (parser.problems[:5], parser.open[:5])
