# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The documents for the two audiences (issue 45, item 7).

README.md is for operators and short, with the repository's two quick-start commands; CONTRIBUTING.md is for
contributors; the guides of the docs site are docs/docsite/rst/*.rst, each listed once in docs/docsite/extra-docs.yml
(``make docs-lint`` checks their markup and references to plugins and roles). None of them holds a measurement:
measurements live in bench/results/ (tests/unit/tooling/test_bench_readme.py). Every relative link of README.md and
CONTRIBUTING.md resolves, and every variable of the collection that README.md or a guide names is one that an argument
spec of the collection knows, so a renamed or removed variable cannot stay documented.
"""

from __future__ import annotations

import glob
import os
import re

import yaml

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import settings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
README = os.path.join(ROOT, "README.md")
CONTRIBUTING = os.path.join(ROOT, "CONTRIBUTING.md")
DOCSITE = os.path.join(ROOT, "docs", "docsite")
GUIDES = sorted(glob.glob(os.path.join(DOCSITE, "rst", "*.rst")))
README_MAX_LINES = 150
QUICK_START = "sh tools/bootstrap-debian.sh && make preflight\nmake test\n"
MARKDOWN_LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")
# What a measurement looks like: a duration with its unit abbreviated (186 s, 4 min, 132 ms), a load average, a count
# of packages, a size in MB, a relative percentage (19 % more, 11-13 % slower).
MEASUREMENT = re.compile(
    r"\b\d+(\.\d+)? ?(ms|s|min)\b(?!-)|\bload average\b|\bload \d|\b\d+ (Python )?packages\b|\b\d+(\.\d+)? ?(MB|MiB)\b"
    r"|\b\d+(-\d+)? ?% (slower|faster|more|less)\b", re.IGNORECASE)


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _known_variables() -> set[str]:
    """Every option of every entry point of every role's argument spec, and the results the collection sets."""
    known: set[str] = set(settings.RESULTS)
    for path in glob.glob(os.path.join(ROOT, "roles", "*", "meta", "argument_specs.yml")):
        for entry in (yaml.safe_load(_read(path)).get("argument_specs") or {}).values():
            known.update((entry or {}).get("options") or {})
    return known


def _prefixes() -> tuple[str, ...]:
    """The variable prefixes of the collection: gpufabric_ and every public role's name."""
    roles = [os.path.basename(path) for path in glob.glob(os.path.join(ROOT, "roles", "*"))]
    return ("gpufabric_", *(f"{role}_" for role in roles if not role.startswith("_") and role != "gpufabric"))


def test_the_readme_is_short_and_keeps_the_quick_start_commands():
    text = _read(README)
    assert len(text.splitlines()) <= README_MAX_LINES, f"README.md has {len(text.splitlines())} lines"
    assert f"```bash\n{QUICK_START}```" in text


def test_no_measurement_in_the_readme_contributing_or_the_guides():
    found = []
    for path in [README, CONTRIBUTING, *GUIDES]:
        for number, line in enumerate(_read(path).splitlines(), start=1):
            found += [f"{os.path.relpath(path, ROOT)}:{number}: {match.group(0)!r}"
                      for match in MEASUREMENT.finditer(line)]
    assert not found, "\n".join(found)


def test_every_guide_is_listed_once_and_every_listed_guide_exists():
    index = yaml.safe_load(_read(os.path.join(DOCSITE, "extra-docs.yml")))
    listed = [entry if isinstance(entry, str) else entry["ref"]
              for section in index["sections"] for entry in section["toctree"]]
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(os.path.basename(path)[:-len(".rst")] for path in GUIDES)


def test_every_guide_has_its_label():
    for path in GUIDES:
        name = os.path.basename(path)[:-len(".rst")]
        first = _read(path).splitlines()[0]
        assert first == f".. _ansible_collections.gpufabric.cluster.docsite.{name}:", path


def test_every_relative_link_resolves():
    broken = []
    for path in [README, CONTRIBUTING]:
        for target, _anchor in MARKDOWN_LINK.findall(_read(path)):
            if "://" not in target and not os.path.exists(os.path.join(ROOT, target)):
                broken.append(f"{os.path.relpath(path, ROOT)}: {target}")
    assert not broken, "\n".join(broken)


def test_every_variable_named_for_operators_exists():
    known, prefixes = _known_variables(), _prefixes()
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, prefixes)) + r")\w+")
    unknown = []
    for path in [README, *GUIDES]:
        unknown += [f"{os.path.relpath(path, ROOT)}: {name}" for name in sorted(set(pattern.findall(_read(path))))
                    if name not in known]
    assert not unknown, "\n".join(unknown)
