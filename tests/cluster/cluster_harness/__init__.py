# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The cluster test harness: etcd, a real Kubernetes control plane and kwok GPU nodes, one module per concern.

Everything listens on 127.0.0.1; certificates and service-account keys are generated at start; the state (pids,
ports, kubeconfig, logs) lives in the run directory, by default ``.build/cluster/run`` under the repository root
(ignored by git). ``down`` ends the process group of every process ``up`` started and removes the state. The
binaries come from ``build.sh`` (a cache outside the repository); the fake nodes look like GB200 compute trays
labelled by Node Feature Discovery and GPU Feature Discovery.

- :mod:`~cluster_harness.common`: paths, pinned names and ports, :class:`Config`, :class:`HarnessError`, ``log``
- :mod:`~cluster_harness.binaries`: versions.env and the binaries build.sh builds
- :mod:`~cluster_harness.ports`: free or requested ports
- :mod:`~cluster_harness.pki`: the CA, certificates and kubeconfigs
- :mod:`~cluster_harness.api`: a small Kubernetes client and ``wait_for``
- :mod:`~cluster_harness.processes`: process supervision and the state file
- :mod:`~cluster_harness.kwok`: the fake nodes, kwok's stages and CRDs
- :mod:`~cluster_harness.hooks`: the helm-hook-completer
- :mod:`~cluster_harness.pod_logs`: pod logs served from files (kwok ClusterLogs)
- :mod:`~cluster_harness.mpi_operator`: the Kubeflow MPI operator's CRD and controller arguments
- :mod:`~cluster_harness.resource_slices`: the trays' compute-domain ResourceSlices (published at ``up``)
- :mod:`~cluster_harness.compute_domain_kubelet_plugin`: TEST FIXTURE, the kubelet plugin's prepare-time decisions
- :mod:`~cluster_harness.compute_domain_controller`: the DRA driver's compute-domain controller as a process
- :mod:`~cluster_harness.kubernetes_core`: kubernetes.core from the pinned ``ansible`` wheel
- :mod:`~cluster_harness.lifecycle`: ``up`` (in named steps), ``down``, ``status``
- :mod:`~cluster_harness.cli`: the command line of ``tests/cluster/harness.py``

The names the tests use are importable from the package itself (``import cluster_harness as harness``).
"""

from __future__ import annotations

from cluster_harness.api import Api, api_of, wait_for
from cluster_harness.binaries import bin_dir, build, check_binaries, versions
from cluster_harness.common import (
    BINARIES,
    BUILD_SCRIPT,
    CLUSTER_UUID,
    COMPLETE_ANNOTATION,
    DEFAULT_RUN_DIR,
    EXIT_CODE_ANNOTATION,
    FIELD_MANAGER,
    GPUS_PER_TRAY,
    HERE,
    KWOK_API,
    PORTS,
    ROOT,
    TRAYS_PER_RACK,
    Config,
    HarnessError,
    log,
)
from cluster_harness.compute_domain_controller import start_compute_domain_controller, stop_compute_domain_controller
from cluster_harness.compute_domain_kubelet_plugin import set_namespace_assertion
from cluster_harness.hooks import complete_helm_hook_pods, complete_served_pods, run_helm_hook_completer
from cluster_harness.kubernetes_core import install_kubernetes_core
from cluster_harness.kwok import node_manifest, node_names
from cluster_harness.lifecycle import down, status, up
from cluster_harness.pod_logs import cri_log, serve_logs, unserve_logs
from cluster_harness.ports import port_in_use
from cluster_harness.processes import Process, read_state
from cluster_harness.resource_slices import (
    COMPUTE_DOMAIN_DRIVER,
    compute_domain_slices,
    publish_compute_domain_slices,
    remove_compute_domain_slices,
)

__all__ = [
    "BINARIES",
    "BUILD_SCRIPT",
    "CLUSTER_UUID",
    "COMPLETE_ANNOTATION",
    "COMPUTE_DOMAIN_DRIVER",
    "DEFAULT_RUN_DIR",
    "EXIT_CODE_ANNOTATION",
    "FIELD_MANAGER",
    "GPUS_PER_TRAY",
    "HERE",
    "KWOK_API",
    "PORTS",
    "ROOT",
    "TRAYS_PER_RACK",
    "Api",
    "Config",
    "HarnessError",
    "Process",
    "api_of",
    "bin_dir",
    "build",
    "check_binaries",
    "complete_helm_hook_pods",
    "complete_served_pods",
    "compute_domain_slices",
    "cri_log",
    "down",
    "install_kubernetes_core",
    "log",
    "node_manifest",
    "node_names",
    "port_in_use",
    "publish_compute_domain_slices",
    "read_state",
    "remove_compute_domain_slices",
    "run_helm_hook_completer",
    "serve_logs",
    "set_namespace_assertion",
    "start_compute_domain_controller",
    "status",
    "stop_compute_domain_controller",
    "unserve_logs",
    "up",
    "versions",
    "wait_for",
]
