# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The command line of ``python tests/cluster/harness.py``: up, down, status, serve-logs, unserve-logs,
complete-helm-hooks, compute-domain-kubelet-plugin, start-compute-domain-controller, stop-compute-domain-controller,
compute-domain-controller-once-installed, build, install-kubernetes-core."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from pathlib import Path

from cluster_harness.api import api_of
from cluster_harness.binaries import bin_dir, build
from cluster_harness.common import DEFAULT_RUN_DIR, PORTS, TRAYS_PER_RACK, Config, HarnessError, log
from cluster_harness.compute_domain_controller import (
    run_compute_domain_controller_once_installed,
    start_compute_domain_controller,
    stop_compute_domain_controller,
)
from cluster_harness.compute_domain_kubelet_plugin import run_compute_domain_kubelet_plugin
from cluster_harness.hooks import run_helm_hook_completer
from cluster_harness.kubernetes_core import install_kubernetes_core
from cluster_harness.lifecycle import down, status, up
from cluster_harness.pod_logs import serve_logs, unserve_logs

DESCRIPTION = "Start and stop the cluster test harness: etcd, a real Kubernetes control plane and kwok GPU nodes."


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the command; return the exit status."""
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument(
        "--run-dir", type=Path, default=Path(os.environ.get("GPUFABRIC_CLUSTER_RUN_DIR", DEFAULT_RUN_DIR))
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up", help="build if needed, start everything, wait until the nodes are Ready")
    up_parser.add_argument(
        # Defaults from the environment are strings: argparse converts them as it converts the option, so a bad
        # value ("false", "") is refused naming the option instead of a traceback.
        "--gpu-nodes", type=int, default=os.environ.get("GPUFABRIC_CLUSTER_GPU_NODES", str(TRAYS_PER_RACK)),
        help="kwok GB200 trays (default: GPUFABRIC_CLUSTER_GPU_NODES, else a rack)"
    )
    up_parser.add_argument(
        "--trays-per-clique",
        type=int,
        default=os.environ.get("GPUFABRIC_CLUSTER_TRAYS_PER_CLIQUE", str(TRAYS_PER_RACK)),
        help=f"trays of one NVLink clique, 1..{TRAYS_PER_RACK} (default: GPUFABRIC_CLUSTER_TRAYS_PER_CLIQUE, else a "
        f"rack, {TRAYS_PER_RACK})",
    )
    up_parser.add_argument("--control-plane-nodes", type=int, default=1)
    up_parser.add_argument("--timeout", type=float, default=os.environ.get("GPUFABRIC_CLUSTER_TIMEOUT", "180"),
                           help="seconds to wait for the control plane (default: GPUFABRIC_CLUSTER_TIMEOUT, else 180)")
    up_parser.add_argument("--no-build", action="store_true", help="fail instead of building missing binaries")
    up_parser.add_argument(
        "--complete-helm-hooks",
        action="store_true",
        help="also run the helm-hook-completer: Helm hook Jobs' pods finish, as their containers would",
    )
    up_parser.add_argument(
        "--compute-domain-controller",
        metavar="NAMESPACE",
        default=os.environ.get("GPUFABRIC_CLUSTER_COMPUTE_DOMAIN_CONTROLLER", ""),
        help="start the DRA driver's compute-domain controller once its chart is installed in NAMESPACE",
    )
    for name, (env, what) in PORTS.items():
        up_parser.add_argument(f"--{name.replace('_', '-')}-port", type=int, default=0, help=f"{what} port (or {env})")
    commands.add_parser("down", help="stop everything the harness started and remove its state")
    commands.add_parser("status", help="print the state as JSON")
    commands.add_parser(
        "complete-helm-hooks", help="finish Helm hook pods and served pods marked to complete until stopped (by up)"
    )
    commands.add_parser(
        "compute-domain-kubelet-plugin",
        help="TEST FIXTURE: prepare the trays' compute-domain claims as the DRA driver's kubelet plugin does (by up)",
    )
    serve_parser = commands.add_parser(
        "serve-logs", help="pods matching the selector log the content of FILE (a kwok ClusterLogs named NAME)"
    )
    serve_parser.add_argument("name")
    serve_parser.add_argument("--file", type=Path, required=True, help="the log, served as the container's output")
    serve_parser.add_argument("--namespace", action="append", default=[], help="pods of this namespace (repeatable)")
    serve_parser.add_argument("--pod", action="append", default=[], help="pods of this name (repeatable)")
    serve_parser.add_argument("--container", action="append", default=[], help="only this container (repeatable)")
    serve_parser.add_argument(
        "--complete", action="store_true", help="the pods also finish once Running (needs up --complete-helm-hooks)"
    )
    unserve_parser = commands.add_parser("unserve-logs", help="remove the ClusterLogs NAME")
    unserve_parser.add_argument("name")
    cdc_parser = commands.add_parser(
        "start-compute-domain-controller",
        help="run the DRA driver's real compute-domain controller as the installed chart configures it",
    )
    cdc_parser.add_argument("--namespace", default="nvidia-dra-driver-gpu", help="where the DRA driver chart is")
    cdc_parser.add_argument("--timeout", type=float, default=60.0, help="wait this long for the CRDs and the start")
    commands.add_parser("stop-compute-domain-controller", help="stop the compute-domain controller")
    once_parser = commands.add_parser(
        "compute-domain-controller-once-installed",
        help="wait for the DRA driver chart in NAMESPACE, then run its compute-domain controller (by up)",
    )
    once_parser.add_argument("--namespace", default="nvidia-dra-driver-gpu", help="where the DRA driver chart goes")
    commands.add_parser("build", help="build the binaries into the cache (build.sh)")
    core_parser = commands.add_parser("install-kubernetes-core", help="extract kubernetes.core from the ansible wheel")
    core_parser.add_argument("wheel_dir", type=Path)
    core_parser.add_argument("collections", type=Path)
    args = parser.parse_args(argv)

    def terminated(signum, _frame):
        raise SystemExit(128 + signum)

    # SIGTERM in the middle of `up` unwinds like Ctrl-C: what was started is stopped.
    signal.signal(signal.SIGTERM, terminated)
    try:
        if args.command == "up":
            directory = bin_dir() if args.no_build else build()
            ports = {name: getattr(args, f"{name}_port") for name in PORTS}
            state = up(
                Config(
                    run_dir=args.run_dir,
                    bin_dir=directory,
                    gpu_nodes=args.gpu_nodes,
                    trays_per_clique=args.trays_per_clique,
                    control_plane_nodes=args.control_plane_nodes,
                    ports=ports,
                    timeout=args.timeout,
                    complete_helm_hooks=args.complete_helm_hooks,
                    compute_domain_controller_namespace=args.compute_domain_controller,
                )
            )
            print(f"export KUBECONFIG={state['kubeconfig']} PATH={state['bin_dir']}:$PATH")
        elif args.command == "down":
            for process in down(args.run_dir):
                log(
                    f"stopped {process['name']} (pid {process['pid']})"
                    + ("" if process["was_running"] else ", had exited")
                )
        elif args.command == "status":
            print(json.dumps(status(args.run_dir), indent=2))
        elif args.command == "complete-helm-hooks":
            run_helm_hook_completer(args.run_dir)
        elif args.command == "compute-domain-kubelet-plugin":
            run_compute_domain_kubelet_plugin(args.run_dir)
        elif args.command == "serve-logs":
            served = serve_logs(
                api_of(args.run_dir),
                args.run_dir,
                args.name,
                args.file,
                namespaces=args.namespace,
                pods=args.pod,
                containers=args.container,
                complete=args.complete,
            )
            print(json.dumps({"name": served["metadata"]["name"], "spec": served["spec"]}))
        elif args.command == "unserve-logs":
            print(json.dumps({"name": args.name, "removed": unserve_logs(api_of(args.run_dir), args.name)}))
        elif args.command == "start-compute-domain-controller":
            process = start_compute_domain_controller(args.run_dir, args.namespace, args.timeout)
            print(json.dumps({"name": process.name, "pid": process.pid, "log": str(process.log)}))
        elif args.command == "compute-domain-controller-once-installed":
            run_compute_domain_controller_once_installed(args.run_dir, args.namespace)
        elif args.command == "stop-compute-domain-controller":
            print(json.dumps({"stopped": stop_compute_domain_controller(args.run_dir)}))
        elif args.command == "build":
            print(build())
        elif args.command == "install-kubernetes-core":
            log(f"kubernetes.core in {install_kubernetes_core(args.wheel_dir, args.collections)}")
    except HarnessError as error:
        print(f"cluster harness: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
