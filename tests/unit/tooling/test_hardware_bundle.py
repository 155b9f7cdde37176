# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""tools/hardware_bundle.py (``make hardware-bundle``): what the offline GPU machine is carried, and that it installs.

The pin comes from tools/requirements-run.txt and the requirements from ansible-core's own metadata, so the choice is
checked against the installed ansible-core; the download itself is ``pip download`` (the molecule tier's offline run
uses a real bundle), replaced here by wheels built in the test to check what the bundle keeps and refuses.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import zipfile
from importlib import metadata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_SPEC = importlib.util.spec_from_file_location("hardware_bundle", os.path.join(ROOT, "tools", "hardware_bundle.py"))
hardware_bundle = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(hardware_bundle)


def test_the_pin_is_the_ansible_core_the_tests_run():
    with open(os.path.join(ROOT, "tools", "requirements-run.txt"), encoding="utf-8") as handle:
        text = handle.read()
    assert hardware_bundle.read_pin(text) == metadata.version("ansible-core")


NAMES = st.sampled_from(["ansible", "kubernetes", "ansible-core", "ansible_core", "Ansible-Core", "jinja2"])
VERSIONS = st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}", fullmatch=True)


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.lists(st.tuples(NAMES, st.sampled_from(["==", ">=", "~="]), VERSIONS), max_size=4),
       st.sampled_from(["", "  # a comment"]))
def test_the_pin_is_read_only_from_one_exact_pin(lines, comment):
    text = "".join(f"{name}{operator}{version}{comment}\n" for name, operator, version in lines)
    core = [(operator, version) for name, operator, version in lines
            if hardware_bundle.canonical(name) == "ansible-core"]
    if len(core) == 1 and core[0][0] == "==":
        assert hardware_bundle.read_pin(text) == core[0][1]
    else:
        with pytest.raises(ValueError, match=r"^ansible-core (must be pinned|is not pinned)"):
            hardware_bundle.read_pin(text)


def test_the_bundle_is_ansible_core_s_requirements_the_machine_lacks_and_not_cryptography():
    requirements = metadata.requires("ansible-core")
    assert hardware_bundle.to_bundle(requirements) == ["resolvelib<2.0.0,>=0.5.3"]
    assert hardware_bundle.to_bundle(requirements, present=(), left_out=()) == [
        "cryptography", "jinja2>=3.1.0", "packaging", "pyyaml>=5.1", "resolvelib<2.0.0,>=0.5.3"]


@settings(deadline=None)  # no deadline: the CI machine runs tiers side by side
@given(st.lists(st.tuples(NAMES | st.sampled_from(["PyYAML", "cryptography", "resolvelib"]),
                          st.sampled_from(["", ">=1.0", "<2.0.0,>=0.5.3", " (>=3)"]),
                          st.sampled_from(["", "; python_version >= '3.8'", "; extra == 'docs'"])), max_size=5),
       st.sets(st.sampled_from(["pyyaml", "jinja2", "ansible"])))
def test_what_is_present_or_only_for_an_extra_is_never_downloaded(lines, present):
    chosen = hardware_bundle.to_bundle([name + spec + marker for name, spec, marker in lines], present=present,
                                       left_out=("cryptography",))
    names = [choice.split("<")[0].split(">")[0] for choice in chosen]
    assert names == sorted(set(names))
    assert not set(names) & (present | {"cryptography"})
    assert set(names) == {hardware_bundle.canonical(name) for name, _spec, marker in lines
                          if "extra" not in marker} - (present | {"cryptography"})


@pytest.mark.parametrize(("filename", "portable"), [
    ("ansible_core-2.19.14-py3-none-any.whl", True),
    ("resolvelib-1.2.1-py2.py3-none-any.whl", True),
    ("cryptography-46.0.3-cp311-abi3-manylinux_2_28_x86_64.whl", True),
    ("cffi-2.0.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", False),
    ("pyyaml-6.0.3-cp311-cp311-manylinux2014_x86_64.whl", False),
    ("legacy-1.0-py2-none-any.whl", False),
    ("not-a-wheel.tar.gz", False),
])
def test_only_pure_python_and_abi3_wheels_install_on_every_python(filename, portable):
    assert hardware_bundle.portable(filename) is portable


def _wheel(dest, name: str, version: str, tag: str, requires: tuple[str, ...] = ()) -> None:
    """A wheel file with a METADATA holding ``requires`` (what ``pip download`` leaves)."""
    distribution = name.replace("-", "_")
    with zipfile.ZipFile(dest / f"{distribution}-{version}-{tag}.whl", "w") as archive:
        archive.writestr(f"{distribution}-{version}.dist-info/METADATA", "Metadata-Version: 2.1\n"
                         f"Name: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires))


def _stand_in_pip(tags: dict):
    """A ``pip_download`` that writes the wheels pip would, with the tags given per package."""
    calls = []

    def download(dest, requirements, python_version, deps):
        calls.append((requirements, python_version, deps))
        for requirement in requirements:
            name = requirement.split("=")[0].split("<")[0].split(">")[0]
            version = requirement.split("==")[1] if "==" in requirement else "1.2.1"
            _wheel(dest, name, version, tags.get(name, "py3-none-any"),
                   tuple(metadata.requires("ansible-core")) if name == "ansible-core" else ())
    return download, calls


def test_the_bundle_is_downloaded_for_the_machine_s_python_without_dependencies(tmp_path, monkeypatch):
    download, calls = _stand_in_pip({})
    monkeypatch.setattr(hardware_bundle, "pip_download", download)
    (tmp_path / "old-1.0-py3-none-any.whl").write_text("")
    wheels = hardware_bundle.build_bundle(tmp_path)
    pin = metadata.version("ansible-core")
    assert [wheel.name for wheel in wheels] == [f"ansible_core-{pin}-py3-none-any.whl",
                                                "resolvelib-1.2.1-py3-none-any.whl"]
    assert calls == [([f"ansible-core=={pin}"], "3.12", False), (["resolvelib<2.0.0,>=0.5.3"], "3.12", False)]


def test_a_bundle_tied_to_one_python_is_refused(tmp_path, monkeypatch):
    download, _calls = _stand_in_pip({"resolvelib": "cp312-cp312-manylinux_2_17_x86_64"})
    monkeypatch.setattr(hardware_bundle, "pip_download", download)
    with pytest.raises(ValueError, match=r"not pure Python or abi3, so tied to one Python: resolvelib-1\.2\.1-cp312"):
        hardware_bundle.build_bundle(tmp_path)


def test_the_requirements_are_read_from_the_wheel(tmp_path):
    _wheel(tmp_path, "ansible-core", "2.19.14", "py3-none-any", ("jinja2>=3.1.0", "resolvelib<2.0.0,>=0.5.3"))
    requirements = hardware_bundle.requires_dist(next(tmp_path.glob("*.whl")))
    assert requirements == ["jinja2>=3.1.0", "resolvelib<2.0.0,>=0.5.3"]


def test_the_image_stand_in_takes_the_versions_the_tests_run(tmp_path, monkeypatch):
    download, calls = _stand_in_pip({})
    monkeypatch.setattr(hardware_bundle, "pip_download", download)
    hardware_bundle.build_image_standin(tmp_path, "3.11")
    [(requirements, python_version, deps)] = calls
    assert python_version == "3.11" and deps is True
    assert f"pytest=={metadata.version('pytest')}" in requirements
    assert f"nvidia-ml-py=={metadata.version('nvidia-ml-py')}" in requirements
    assert not any(requirement.startswith("ansible") for requirement in requirements)


def test_the_command_prints_the_size_and_the_path_to_carry(tmp_path, monkeypatch, capsys):
    download, _calls = _stand_in_pip({})
    monkeypatch.setattr(hardware_bundle, "pip_download", download)
    monkeypatch.setattr(hardware_bundle, "ROOT", tmp_path)
    assert hardware_bundle.main(["--dest", str(tmp_path / ".build" / "hardware-bundle")]) == 0
    out = capsys.readouterr().out
    assert f"in all, 2 wheels in {tmp_path / '.build' / 'hardware-bundle'}" in out
    assert 'carry [".build/hardware-bundle"]' in out


def test_a_bundle_outside_the_checkout_is_said_not_to_travel(tmp_path, monkeypatch, capsys):
    download, _calls = _stand_in_pip({})
    monkeypatch.setattr(hardware_bundle, "pip_download", download)
    monkeypatch.setattr(hardware_bundle, "ROOT", tmp_path / "checkout")
    assert hardware_bundle.main(["--dest", str(tmp_path / "elsewhere")]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'elsewhere'} is outside the checkout {tmp_path / 'checkout'}: the device tool carries" in out
    assert "carry [" not in out


def test_a_failed_download_is_one_line_naming_the_step(tmp_path, monkeypatch, capsys):
    def unreachable(*_args, **_kwargs):
        raise OSError("Network is unreachable")
    monkeypatch.setattr(hardware_bundle, "pip_download", unreachable)
    assert hardware_bundle.main(["--dest", str(tmp_path)]) == 1
    assert capsys.readouterr().err == "hardware-bundle: Network is unreachable\n"


def test_make_hardware_bundle_builds_no_venv():
    """A session in a checkout whose .venv is shared (or absent) runs the bundle step alone, with .venv's Python where
    there is one: never `python -m venv` or `pip install` into .venv."""
    done = subprocess.run(["make", "-n", "--no-print-directory", "hardware-bundle"], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    python = os.path.join(ROOT, ".venv", "bin", "python")
    if not os.path.exists(python):  # the interpreter `make venv` would take
        python = subprocess.run(["sh", os.path.join(ROOT, "tools", "venv-python.sh")], capture_output=True, text=True,
                                check=True, timeout=30).stdout.strip()
    assert done.stdout.splitlines() == [
        f"{python} tools/hardware_bundle.py --dest {os.path.join(ROOT, '.build', 'hardware-bundle')}"]
