# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""meta/execution-environment.yml: `ansible-builder create` makes a build context that holds the collection's
dependencies, and `ansible-builder introspect` reads the collection's requirements.txt and bindep.txt.

No image is built (no registry here): the generated Containerfile and _build files are checked.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILDER = os.path.join(os.path.dirname(sys.executable), "ansible-builder")
SHIPPED = ("requirements.txt", "bindep.txt")


def _load(path: str) -> dict:
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def _requirement_lines(path: str) -> list[str]:
    with open(path, encoding="utf-8") as handle:
        return [line.split("#", 1)[0].strip() for line in handle if line.split("#", 1)[0].strip()]


def _builder(*args: str, cwd: str) -> str:
    if not os.path.exists(BUILDER):
        pytest.fail(f"{BUILDER} is missing: `make test-venv` installs ansible-builder (tests/requirements.txt)")
    completed = subprocess.run([BUILDER, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    """The guide's way: the definition and the files it names, from the collection root, into a context.

    As docs/docsite/rst/automation_platform.rst builds it. The file is named: ansible-builder writes a Containerfile
    where podman is on PATH and a Dockerfile where only docker is, as on a fresh machine before the molecule tier
    installs podman.
    """
    work = tmp_path_factory.mktemp("ee")
    shutil.copy(os.path.join(ROOT, "meta", "execution-environment.yml"), work / "execution-environment.yml")
    for name in SHIPPED:
        shutil.copy(os.path.join(ROOT, name), work / name)
    _builder("create", "--context", "context", "--output-filename", "Containerfile", cwd=str(work))
    return work / "context"


def test_definition_is_schema_3_and_names_the_root_files():
    definition = _load("meta/execution-environment.yml")
    assert definition["version"] == 3
    assert definition["dependencies"]["python"] == "requirements.txt"
    assert definition["dependencies"]["system"] == "bindep.txt"


def test_context_installs_the_controller_python_packages_and_not_the_host_ones(context):
    requirements = _requirement_lines(str(context / "_build" / "requirements.txt"))
    names = {re.split(r"[<>=!~ \[]", line, maxsplit=1)[0].lower() for line in requirements}
    assert "kubernetes" in names
    assert "nvidia-ml-py" not in names


def test_context_installs_the_system_packages(context):
    bindep = _requirement_lines(str(context / "_build" / "bindep.txt"))
    assert "openssh-clients [platform:rpm]" in bindep
    assert "tar [platform:rpm]" in bindep


def test_context_installs_every_collection_galaxy_yml_depends_on(context):
    with open(context / "_build" / "requirements.yml", encoding="utf-8") as handle:
        collections = {entry["name"]: entry["version"] for entry in yaml.safe_load(handle)["collections"]}
    assert collections == _load("galaxy.yml")["dependencies"]


def test_context_pins_the_ansible_core_the_tests_use(context):
    pins = _requirement_lines(os.path.join(ROOT, "tools", "requirements-run.txt"))
    core = next(line for line in pins if line.startswith("ansible-core=="))
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    assert core in containerfile


def test_context_downloads_a_pinned_helm_and_checks_its_sha256(context):
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    versions = os.path.join(ROOT, "tests", "cluster", "versions.env")
    with open(versions, encoding="utf-8") as handle:
        helm = re.search(r"^HELM_VERSION=(\S+)$", handle.read(), re.MULTILINE).group(1)
    final = containerfile.split("FROM base AS final", 1)[1]
    assert f"ARG HELM_VERSION={helm}" in final
    step = next(line for line in final.splitlines() if "get.helm.sh" in line)
    assert 'test -n "$HELM_SHA256"' in step
    assert "sha256sum -c -" in step
    assert "/usr/local/bin/helm" in step
    assert step.index("sha256sum -c") < step.index("tar -xzf")


def test_introspect_reads_the_dependencies_of_the_installed_collection(tmp_path):
    """What an EE that lists gpufabric.cluster among its collections gets: the built tarball, installed."""
    galaxy = os.path.join(os.path.dirname(sys.executable), "ansible-galaxy")
    env = {**os.environ, "ANSIBLE_HOME": str(tmp_path / "home")}
    for command in (
        [galaxy, "collection", "build", "--output-path", str(tmp_path), ROOT],
        [
            galaxy,
            "collection",
            "install",
            "--force",
            "--no-deps",
            "-p",
            str(tmp_path / "installed"),
            str(tmp_path / "gpufabric-cluster-{}.tar.gz".format(_load("galaxy.yml")["version"])),
        ],
    ):
        completed = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120, env=env)
        assert completed.returncode == 0, completed.stdout + completed.stderr
    data = yaml.safe_load(_builder("introspect", str(tmp_path / "installed"), cwd=str(tmp_path)))
    assert "kubernetes>=24.2.0  # from collection gpufabric.cluster" in data["python"]
    assert "openssh-clients [platform:rpm]  # from collection gpufabric.cluster" in data["system"]
    assert not any("nvidia-ml-py" in line for line in data["python"])


def test_the_files_ship_in_the_collection():
    ignored = _load("galaxy.yml")["build_ignore"]
    for name in (*SHIPPED, "meta/execution-environment.yml"):
        assert name not in ignored
