"""One settings layer (issue 40 item 1): the site-wide and playbook settings are defaulted in roles/gpufabric only.

A ``| default(...)`` of a ``gpufabric_*`` variable anywhere else is a second default: it can disagree with the one in
roles/gpufabric (``gpufabric_report_dir`` was defaulted five ways, one of them ``default(..., true)``, so an empty
value behaved differently per playbook), and it hides a variable the argument spec never checks. The playbooks read
the settings through the role's entry point ``settings`` and check them with gpufabric.cluster.settings_problems.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[3]
# A setting's name; a playbook's internal variable (__gpufabric_site_defers, which only site.yml sets) is none.
SECOND_DEFAULT = re.compile(r"(?<![\w])gpufabric_[a-z_]+ *\| *default")


def _files() -> list[pathlib.Path]:
    found = sorted((ROOT / "playbooks").rglob("*.yml"))
    found += sorted(path for path in (ROOT / "roles").rglob("*") if path.is_file() and path.suffix in (".yml", ".j2")
                    and "gpufabric" not in path.relative_to(ROOT / "roles").parts[:1])
    return found


@pytest.mark.parametrize("path", _files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_second_default_of_a_site_setting(path):
    lines = [f"{number}: {line.strip()}" for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if SECOND_DEFAULT.search(line)]
    assert lines == [], f"{path.relative_to(ROOT)}: a default of a gpufabric_* variable outside roles/gpufabric"


def test_every_gpufabric_variable_the_playbooks_read_is_a_setting_or_a_result():
    """What the playbooks read under the site prefix is defined: a setting of roles/gpufabric (it has its default
    there), a fact a playbook sets, or a group a playbook makes."""
    options = set(yaml.safe_load((ROOT / "roles" / "gpufabric" / "meta" / "argument_specs.yml").read_text())
                  ["argument_specs"]["main"]["options"])
    texts = "\n".join(path.read_text(encoding="utf-8") for path in sorted((ROOT / "playbooks").rglob("*.yml")))
    read = set(re.findall(r"(?<![\w.'\"/-])(gpufabric_[a-z_]+)\b", texts))
    set_here = set(re.findall(r"^\s+(gpufabric_[a-z_]+):", texts, re.M))  # set_fact keys
    groups = set(re.findall(r"['\"](gpufabric_[a-z_]+)['\"]", texts))
    groups |= set(re.findall(r"key: (gpufabric_[a-z_]+)", texts))
    groups |= set(re.findall(r"&(gpufabric_[a-z_]+)", texts))
    groups |= set(re.findall(r"groups: \[(gpufabric_[a-z_]+)\]", texts))
    assert sorted(read - options - set_here - groups) == []


def test_no_playbook_reads_an_argument_spec_by_path():
    """The settings check reads the specs from the collection (plugin_utils/settings.py), not a playbook-relative
    lookup of roles/*/meta/argument_specs.yml."""
    for path in sorted((ROOT / "playbooks").rglob("*.yml")):
        assert "argument_specs.yml" not in path.read_text(encoding="utf-8"), path.relative_to(ROOT)


SITE_OPTIONS = yaml.safe_load((ROOT / "roles" / "gpufabric" / "meta" / "argument_specs.yml").read_text())[
    "argument_specs"]["main"]["options"]
# The role variables whose values are a site setting's: the same choices, nvidia_driver's also none.
MODE_VARIABLES = {("nvidia_imex", "nvidia_imex_mode"): [], ("dra_driver", "dra_driver_imex_mode"): [],
                  ("nvidia_driver", "nvidia_driver_imex_mode"): ["none"]}


@pytest.mark.parametrize(("role", "name"), list(MODE_VARIABLES), ids=str)
def test_the_role_imex_modes_are_the_site_settings_choices(role, name):
    """Each role keeps choices in its spec (ansible-doc, and its own check when a role is applied alone); they are
    the site setting's, which the one Python constant is read from (plugin_utils/imex_config.py MODES)."""
    spec = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())
    choices = spec["argument_specs"]["main"]["options"][name]["choices"]
    assert choices == MODE_VARIABLES[(role, name)] + SITE_OPTIONS["gpufabric_imex_mode"]["choices"]


def _controller_files() -> list[pathlib.Path]:
    filters = [path for path in (ROOT / "plugins" / "filter").glob("*") if path.is_file()]  # not a __pycache__
    return sorted([*(ROOT / "plugins" / "plugin_utils").glob("*.py"), *filters, *(ROOT / "playbooks").rglob("*.yml")])


@pytest.mark.parametrize("path", _controller_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_no_copy_of_a_site_default_on_the_controller_side(path):
    """The minimum driver, the IMEX socket and the IMEX modes are written in roles/gpufabric only: the plugin_utils,
    the filters (and their docs) and the playbooks read or name the setting instead."""
    modes = SITE_OPTIONS["gpufabric_imex_mode"]["choices"]
    copies = [SITE_OPTIONS[name]["default"] for name in ("gpufabric_min_driver_version", "gpufabric_imex_socket_path")]
    mode_list = re.compile(r"['\"]?,? (or )?['\"]?".join(map(re.escape, modes)))
    text = path.read_text(encoding="utf-8")
    assert [copy for copy in copies if copy in text] == []
    assert not mode_list.search(text), mode_list.search(text)
