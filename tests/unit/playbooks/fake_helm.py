# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A fixture helm for the playbook tests of the cluster roles' Helm steps (the unit tier has no helm, no cluster).

``helm`` here is a TEST FIXTURE script standing in for the helm binary: it records each call's arguments (and the
content of the values file a release is installed with) and answers as helm does for the calls the roles and
``kubernetes.core.helm``/``helm_info`` make: ``show chart`` (a Chart.yaml of the chart and version asked for),
``list`` (the installed release, if
any), ``get values|manifest|notes|hooks``, ``upgrade -i`` and ``version``; a failure is helm's own error, which
quotes the chart repository URL. The cluster tier runs the real helm against a real API server.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import textwrap
from pathlib import Path

_SCRIPT = """\
#!{python}
# TEST FIXTURE: stands in for helm; records its arguments and answers as helm does.
import json, os, sys
here = {here!r}
state = json.load(open(os.path.join(here, "helm-state.json")))
args = sys.argv[1:]
with open(os.path.join(here, "helm-calls.jsonl"), "a") as handle:
    handle.write(json.dumps(args) + "\\n")
def fail(what):
    url = state.get("error_url") or ""
    sys.stderr.write('Error: ' + what + ': looks like "' + url + '" is not a valid chart repository or cannot be '
                     'reached\\n')
    sys.exit(1)
command = [arg for arg in args if not arg.startswith("-")]
def option(name):
    for index, arg in enumerate(args):
        if arg == name and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(name + "="):
            return arg[len(name) + 1:]
    return None
if command[:2] == ["show", "chart"]:
    if state.get("fail_show"):
        fail("show chart")
    # the chart asked for: its name from the reference, its version from --version
    name = command[2].rstrip("/").rsplit("/", 1)[-1] if len(command) > 2 else state["chart"]["name"]
    version = option("--version") or state["chart"]["version"]
    print("apiVersion: v2\\nname: " + name + "\\nversion: " + version + "\\nappVersion: v1")
elif command[:2] == ["show", "crds"]:
    print("")
elif command[:1] == ["list"]:
    release = state.get("release")
    print(json.dumps([release] if release else []))
elif command[:2] == ["get", "values"]:
    print(json.dumps((state.get("release") or {{}}).get("values") or {{}}))
elif command[:2] == ["get", "manifest"]:
    print((state.get("release") or {{}}).get("manifest") or "")
elif command[:1] == ["get"]:
    print("")
elif command[:1] == ["upgrade"]:
    for arg in args:
        if arg.startswith("-f="):
            with open(arg[3:]) as source, open(os.path.join(here, "helm-values.yaml"), "w") as copy:
                copy.write(source.read())
    if state.get("fail_upgrade"):
        fail("upgrade")
    print("Release has been upgraded. Happy Helming!")
elif command[:1] == ["version"]:
    print("v3.17.0+g0000000")
"""


@dataclasses.dataclass
class FakeHelm:
    """The fixture helm: ``path`` to pass as the roles' helm binary; ``state`` decides its answers."""

    path: Path
    here: Path

    def configure(self, chart: dict, release: dict | None = None, **flags) -> None:
        """Answer with ``chart`` (``name``, ``version``), ``release`` (installed: ``chart``, ``values``, ``manifest``)
        and ``flags`` (``fail_show``, ``fail_upgrade``, ``error_url``: the repository URL helm's error quotes)."""
        if release is not None:
            release = {"name": release.get("name", "nvidia-dra-driver-gpu"), "namespace": "nvidia-dra-driver-gpu",
                       "revision": "1", "updated": "2026-05-13 05:30:39 +0000 UTC", "status": "deployed",
                       "app_version": "v1", **release}
        (self.here / "helm-state.json").write_text(json.dumps({"chart": chart, "release": release, **flags}))

    def calls(self) -> list[list[str]]:
        """The arguments of every call so far."""
        path = self.here / "helm-calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def installed_values(self) -> str:
        """The values file the last ``upgrade -i`` got, as helm read it ("" without one)."""
        path = self.here / "helm-values.yaml"
        return path.read_text() if path.exists() else ""


def make_fake_helm(here: Path) -> FakeHelm:
    """A fixture helm in the new directory ``here``, answering for gpu-operator v26.7.0 until configured."""
    here.mkdir()
    script = here / "helm"
    script.write_text(textwrap.dedent(_SCRIPT.format(python=sys.executable, here=str(here))))
    script.chmod(0o755)
    helm = FakeHelm(script, here)
    helm.configure({"name": "gpu-operator", "version": "v26.7.0"})
    return helm
