# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""bench/README.md says what each benchmark measures and how to run it; the measurements are in bench/results/.

Every script of bench/ has a section of the README whose heading starts with its name (a benchmark's with the command
that runs it); the README holds no measurement (no dated section, no recorded output) and ends with an index of
bench/results/.
Every results file is named ``<YYYY-MM-DD>-<topic>.md`` and starts with its title and the machine, the date, the
command and the tree it measured, its date that of the name or "not recorded". Every link into bench/README.md
(``bench/README.md#<anchor>``) and every path under ``bench/results/`` named anywhere in the repository resolves.
"""

from __future__ import annotations

import datetime
import glob
import os
import re

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BENCH = os.path.join(ROOT, "bench")
README = os.path.join(BENCH, "README.md")
RESULT_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-[a-z0-9]+(-[a-z0-9]+)*\.md$")
HEADER = ("Machine", "Date", "Command", "Tree")
SKIP_DIRS = {".git", ".venv", ".build", "__pycache__", ".pytest_cache", ".ruff_cache", "output"}
ANCHOR_LINK = re.compile(r"bench/README\.md#([\w-]+)")
RESULTS_PATH = re.compile(r"bench/results/([\w.-]+\.md)")
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def sections(text: str, level: str = "## ") -> list[tuple[str, str]]:
    """(heading, body) of every heading of the given level, outside code blocks, in order."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith(level):
            found.append([line[len(level):], ""])
        elif found:
            found[-1][1] += line + "\n"
    return [tuple(item) for item in found]


def scripts() -> list[str]:
    """Every Python file of bench/, relative to it."""
    paths = glob.glob(os.path.join(BENCH, "**", "*.py"), recursive=True)
    return sorted(os.path.relpath(path, BENCH) for path in paths)


def results() -> list[str]:
    return sorted(os.path.basename(path) for path in glob.glob(os.path.join(BENCH, "results", "*")))


def test_every_script_has_its_section_and_every_benchmark_its_command():
    readme = sections(_read(README))
    for script in scripts():
        own = [body for heading, body in readme if heading.startswith(f"`{script}`")]
        assert len(own) == 1, f"bench/README.md has {len(own)} sections for {script}"
        if "/" not in script and script != "fixture_tools.py":
            commands = re.findall(r"```bash\n(.*?)```", own[0], re.DOTALL)
            assert any(f"bench/{script}" in command for command in commands), f"no command runs bench/{script}"


def test_the_readme_holds_no_measurement():
    text = _read(README)
    for heading, _body in sections(text, "## ") + sections(text, "### "):
        assert not re.search(r"\d{4}-\d{2}-\d{2}", heading), heading
        assert heading != "Measured", heading
    assert "```text" not in text


def test_every_results_file_names_its_machine_date_command_and_tree():
    names = results()
    assert names
    for name in names:
        match = RESULT_NAME.match(name)
        assert match, f"bench/results/{name} is not named <YYYY-MM-DD>-<topic>.md"
        datetime.date.fromisoformat(match.group(1))
        lines = _read(os.path.join(BENCH, "results", name)).splitlines()
        assert lines[0].startswith("# ") and lines[1] == "", name
        facts = {}
        for line in lines[2:]:
            if not line:
                break
            if line.startswith("- "):
                key, _separator, value = line[2:].partition(": ")
                facts[key] = value
        assert list(facts)[:len(HEADER)] == list(HEADER), (name, list(facts))
        assert all(facts[key] for key in HEADER), name
        assert facts["Date"].startswith((match.group(1), "not recorded")), (name, facts["Date"])


def test_the_readme_ends_with_the_index_of_the_results():
    heading, body = sections(_read(README))[-1]
    assert heading == "Results"
    linked = re.findall(r"\]\(results/([^)]+)\)", body)
    assert sorted(linked) == results()
    assert len(set(linked)) == len(linked)


def test_every_link_into_bench_resolves():
    anchors = {slug(heading) for level in ("# ", "## ", "### ") for heading, _body in sections(_read(README), level)}
    broken = []
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [name for name in subdirectories if name not in SKIP_DIRS]
        for name in files:
            if not name.endswith((".md", ".py", ".yml", ".yaml", ".sh", ".cfg", ".txt", ".j2", "Makefile")):
                continue
            path = os.path.join(directory, name)
            text = _read(path)
            where = os.path.relpath(path, ROOT)
            broken += [f"{where}: bench/README.md#{anchor}" for anchor in ANCHOR_LINK.findall(text)
                       if anchor not in anchors]
            broken += [f"{where}: bench/results/{result}" for result in RESULTS_PATH.findall(text)
                       if not os.path.isfile(os.path.join(BENCH, "results", result))]
    for path in [README] + [os.path.join(BENCH, "results", name) for name in results()]:
        for target, _anchor in MARKDOWN_LINK.findall(_read(path)):
            if "://" not in target and not os.path.exists(os.path.join(os.path.dirname(path), target)):
                broken.append(f"{os.path.relpath(path, ROOT)}: {target}")
    assert not broken, "\n".join(broken)
