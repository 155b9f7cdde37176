"""Every role of the collection depends on gpufabric.cluster.gpufabric, the role that holds the site-wide settings.

ansible-core 2.19 gives a role applied with ``include_role`` the defaults of its own dependencies only: a role that
includes another (an internal ``_*`` role, with ``tasks_from``) and hands it a value derived from a ``gpufabric_*``
setting (``_helm_release_kubeconfig: "{{ dra_driver_kubeconfig }}"``, whose default is ``"{{ gpufabric_kubeconfig }}"``)
failed with "'gpufabric_kubeconfig' is undefined" unless the included role depends on gpufabric too. With every role
depending on it, the settings resolve however a role is applied; the dependency's argument validation still runs once
per play (a dependency runs once unless it allows duplicates).
"""

from __future__ import annotations

import pathlib

import pytest
import yaml

ROLES = pathlib.Path(__file__).resolve().parents[3] / "roles"
SETTINGS_ROLE = "gpufabric.cluster.gpufabric"


def _roles() -> list[pathlib.Path]:
    return sorted(path for path in ROLES.iterdir() if (path / "meta" / "main.yml").is_file())


def _dependencies(role: pathlib.Path) -> list:
    meta = yaml.safe_load((role / "meta" / "main.yml").read_text(encoding="utf-8")) or {}
    return [item.get("role") if isinstance(item, dict) else item for item in meta.get("dependencies") or []]


@pytest.mark.parametrize("role", [path for path in _roles() if path.name != "gpufabric"], ids=lambda path: path.name)
def test_every_role_depends_on_the_settings_role(role):
    assert SETTINGS_ROLE in _dependencies(role), f"{role.name}: meta/main.yml does not depend on {SETTINGS_ROLE}"


def test_the_settings_role_depends_on_nothing():
    assert _dependencies(ROLES / "gpufabric") == []


def test_the_settings_role_allows_no_duplicates():
    """Its defaults and its argument validation are applied once per play, however many roles depend on it."""
    meta = yaml.safe_load((ROLES / "gpufabric" / "meta" / "main.yml").read_text(encoding="utf-8"))
    assert not meta.get("allow_duplicates", False)
