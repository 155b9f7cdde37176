# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The DRA driver's real compute-domain controller as a supervised harness process.

Under kwok the chart's controller Deployment gets a pod that runs nothing. ``start_compute_domain_controller``
runs the real binary instead (sigs.k8s.io/dra-driver-nvidia-gpu/cmd/compute-domain-controller, built by build.sh),
configured as the installed chart configures its controller container: the container's command arguments and
environment (``$(VAR)`` expanded, ``POD_NAME`` / ``NAMESPACE`` from the downward API filled in) with the admin
kubeconfig of the harness. ``HTTP_ENDPOINT`` is left out (no metrics port on 127.0.0.1). It is started after the
chart is installed: it needs the ComputeDomain CRDs, which come with the chart, and the chart's Deployment says how
to run it; it is stopped by ``stop_compute_domain_controller`` or with everything else at ``down``. Where no test
drives it (the molecule scenarios that install the chart with the dra_driver role), ``up --compute-domain-controller
NAMESPACE`` starts the process ``compute-domain-controller`` at once: it waits until the chart is installed in
NAMESPACE, then becomes the controller (``run_compute_domain_controller_once_installed``).

The controller reads its object templates from ``/templates`` (the image's path); build.sh compiles it with that
path made relative (``templates/``, the two constants changed in a copy of the module) and copies the module's
templates beside the binary; this module puts them in the run directory, the process's working directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import ssl
import time
import urllib.error
from pathlib import Path

from cluster_harness.api import Api, wait_for
from cluster_harness.common import HarnessError, log
from cluster_harness.processes import Process, processes_of, read_state, start

NAME = "compute-domain-controller"
TEMPLATES = "compute-domain-controller-templates"
CRD = "computedomains.resource.nvidia.com"
# What the chart's container sets that the harness process must not take over.
LEFT_OUT = {"HTTP_ENDPOINT", "METRICS_PATH", "PPROF_PATH"}


def controller_container(api: Api, namespace: str) -> tuple[str, dict]:
    """The installed chart's compute-domain-controller Deployment in ``namespace``: (its name, its container)."""
    for deployment in api.request("GET", f"/apis/apps/v1/namespaces/{namespace}/deployments", timeout=30)["items"]:
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            if (container.get("command") or [""])[0] == NAME:
                return deployment["metadata"]["name"], container
    raise HarnessError(
        f"no Deployment in namespace {namespace} runs {NAME}: install the DRA driver chart"
        " (resources.computeDomains.enabled) before starting the controller"
    )


def controller_invocation(deployment: str, container: dict, namespace: str, kubeconfig: Path) -> tuple[list, dict]:
    """The command arguments and environment of the chart's container, for a process of the harness."""
    env: dict[str, str] = {}
    pod_name = f"{deployment}-harness"
    for entry in container.get("env") or []:
        name = entry["name"]
        if name in LEFT_OUT:
            continue
        if "value" in entry:
            env[name] = str(entry["value"])
            continue
        field = ((entry.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath")
        if field == "metadata.name":
            env[name] = pod_name
        elif field == "metadata.namespace":
            env[name] = namespace
        else:
            raise HarnessError(f"{NAME}: the chart sets {name} from {entry.get('valueFrom')}, which the harness lacks")
    args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), arg) for arg in container["command"][1:]]
    env["KUBECONFIG"] = str(kubeconfig)
    return args, env


def _binary_and_templates(state: dict) -> tuple[Path, Path]:
    binary = Path(state["bin_dir"]) / NAME
    templates = Path(state["bin_dir"]) / TEMPLATES
    if not os.access(binary, os.X_OK) or not templates.is_dir():
        raise HarnessError(f"{binary} or {templates} is missing; run `make cluster-build`")
    return binary, templates


def crd_established(api: Api) -> bool:
    try:
        item = api.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD}")
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return False
        raise
    conditions = (item.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _save(run_dir: Path, state: dict) -> None:
    (run_dir / "state.json").write_text(json.dumps(state, indent=2) + "\n")


def start_compute_domain_controller(run_dir: Path, namespace: str = "nvidia-dra-driver-gpu",
                                    timeout: float = 60.0) -> Process:
    """Start the real compute-domain controller against the harness in ``run_dir``, as the chart installed in
    ``namespace`` configures it; record it in the state (``down`` stops it). Raises HarnessError."""
    run_dir = run_dir.resolve()
    state = read_state(run_dir)
    if not state:
        raise HarnessError(f"no harness state in {run_dir}; is it up?")
    running = [p for p in processes_of(state) if p.name == NAME and p.alive()]
    if running:
        raise HarnessError(f"{NAME} already runs (pid {running[0].pid}); stop it first")
    binary, templates = _binary_and_templates(state)
    api = Api(state["server"], run_dir / "pki")
    wait_for(f"the ComputeDomain CRD {CRD} (installed with the DRA driver chart)", lambda: crd_established(api),
             timeout)
    deployment, container = controller_container(api, namespace)
    args, env = controller_invocation(deployment, container, namespace, run_dir / "kubeconfig")
    shutil.rmtree(run_dir / "templates", ignore_errors=True)
    shutil.copytree(templates, run_dir / "templates")
    process = start(NAME, binary, args, run_dir, env=env)
    state["processes"] = [p for p in state["processes"] if p["name"] != NAME] + [
        {"name": process.name, "pid": process.pid, "log": str(process.log), "binary": process.binary}
    ]
    state["compute_domain_controller"] = {"namespace": namespace, "deployment": deployment, "args": args}
    _save(run_dir, state)
    # No health endpoint here (HTTP_ENDPOINT is left out): it logs its configuration once it runs (controller.go).
    wait_for(f"{NAME} to log its configuration",
             lambda: "controller manager config" in process.log.read_text(errors="replace"), timeout, [process])
    return process


def stop_compute_domain_controller(run_dir: Path) -> bool:
    """Stop the compute-domain controller of the harness in ``run_dir``; True when one was running."""
    run_dir = run_dir.resolve()
    state = read_state(run_dir)
    if not state:
        return False
    was_running = False
    for process in processes_of(state):
        if process.name == NAME:
            was_running = was_running or process.alive()
            process.stop()
            if process.alive():
                raise HarnessError(f"could not stop {NAME} (pid {process.pid})")
    state["processes"] = [p for p in state["processes"] if p["name"] != NAME]
    state.pop("compute_domain_controller", None)
    _save(run_dir, state)
    return was_running


def run_compute_domain_controller_once_installed(run_dir: Path, namespace: str, interval: float = 1.0) -> None:
    """The process ``compute-domain-controller`` of ``up --compute-domain-controller NAMESPACE``: wait as long as it
    takes (until stopped) for the DRA driver chart in ``namespace`` (the ComputeDomain CRD established and the
    controller Deployment there), then become the controller: same process, so ``down`` stops it."""
    run_dir = run_dir.resolve()
    state = read_state(run_dir)
    if not state:
        raise HarnessError(f"no harness state in {run_dir}; is it up?")
    binary, templates = _binary_and_templates(state)
    api = Api(state["server"], run_dir / "pki")
    log(f"{NAME}: waiting for the DRA driver chart in namespace {namespace}")
    while True:
        try:
            if crd_established(api):
                deployment, container = controller_container(api, namespace)
                break
        except HarnessError:
            pass  # the CRDs come first, the Deployment with the chart's templates
        except (OSError, urllib.error.URLError, ssl.SSLError, ValueError) as error:
            log(f"{NAME}: {error}")
        time.sleep(interval)
    args, env = controller_invocation(deployment, container, namespace, run_dir / "kubeconfig")
    shutil.rmtree(run_dir / "templates", ignore_errors=True)
    shutil.copytree(templates, run_dir / "templates")
    # The same pid runs the controller from now on: record its program, which alive() checks the pid against, and
    # what it was started with, as start_compute_domain_controller does.
    state = read_state(run_dir) or state
    for entry in state["processes"]:
        if entry["name"] == NAME and entry["pid"] == os.getpid():
            entry["binary"] = str(binary)
    state["compute_domain_controller"] = {"namespace": namespace, "deployment": deployment, "args": args}
    _save(run_dir, state)
    os.chdir(run_dir)
    log(f"{NAME}: the chart's Deployment {namespace}/{deployment} is there; starting {binary} {' '.join(args)}")
    os.execve(binary, [str(binary), *args], dict(os.environ, **env))
