"""Every role documents exactly the variables its defaults define, with the same defaults.

The house rule (DESIGN.md): each public role variable lives in defaults/main.yml AND meta/argument_specs.yml;
internal roles that define variables do too. A variable added to one file and not the other, or a default
changed in one place only, fails here with the role and the variable named.
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[3] / "roles"


def _roles() -> list[pathlib.Path]:
    return sorted(path for path in ROLES.iterdir() if (path / "meta" / "main.yml").is_file())


def _defaults(role: pathlib.Path) -> dict:
    path = role / "defaults" / "main.yml"
    return (yaml.safe_load(path.read_text(encoding="utf-8")) or {}) if path.is_file() else {}


def _options(role: pathlib.Path) -> dict:
    """The options of every entry point (internal roles have several, named for their task files)."""
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    options: dict = {}
    for entry_point in specs["argument_specs"].values():
        options.update(entry_point.get("options") or {})
    return options


@pytest.mark.parametrize("role", [path for path in _roles() if _defaults(path)], ids=lambda path: path.name)
def test_role_with_defaults_has_argument_specs(role):
    assert (role / "meta" / "argument_specs.yml").is_file(), f"{role.name}: defaults/main.yml but no argument_specs"


@pytest.mark.parametrize("role", [path for path in _roles() if (path / "meta" / "argument_specs.yml").is_file()],
                         ids=lambda path: path.name)
def test_argument_specs_name_every_default_and_no_other_public_variable(role):
    defaults, options = _defaults(role), _options(role)
    public_defaults = {name for name in defaults if not name.startswith("__")}
    assert sorted(public_defaults - set(options)) == [], f"{role.name}: in defaults/main.yml, not in argument_specs"
    # Internal roles take parameters without defaults; a public role's every option has its default in defaults/.
    if not role.name.startswith("_"):
        assert sorted(set(options) - public_defaults) == [], f"{role.name}: in argument_specs, not in defaults/main.yml"


@pytest.mark.parametrize("role", [path for path in _roles() if (path / "meta" / "argument_specs.yml").is_file()],
                         ids=lambda path: path.name)
def test_argument_specs_defaults_equal_the_role_defaults(role):
    defaults, options = _defaults(role), _options(role)
    differing = {name: (spec.get("default"), defaults[name]) for name, spec in options.items()
                 if name in defaults and "default" in spec and spec["default"] != defaults[name]}
    assert differing == {}, f"{role.name}: argument_specs default != defaults/main.yml (spec, defaults)"
