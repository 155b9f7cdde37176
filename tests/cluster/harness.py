# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start and stop the cluster test harness: etcd, a real Kubernetes control plane and kwok GPU nodes.

``python tests/cluster/harness.py up|down|status`` (``make cluster-up`` / ``make cluster-down``);
``serve-logs`` makes pods log the content of a file (kwok's server is the nodes' kubelet endpoint);
``install-kubernetes-core`` extracts kubernetes.core from the pinned ``ansible`` wheel. The harness itself is
the package beside this file, ``cluster_harness`` (one module per concern); this file is its command line.
"""

from __future__ import annotations

import sys

from cluster_harness.cli import main

if __name__ == "__main__":
    sys.exit(main())
