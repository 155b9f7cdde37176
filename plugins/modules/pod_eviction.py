#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pod_eviction
version_added: 1.0.0
short_description: Evict a set of Kubernetes pods all at once and wait until every one is gone
description:
  - Asks every pod of O(pods) to leave through the Eviction API (C(pods/eviction), which honours
    PodDisruptionBudgets), or deletes them with O(delete), before waiting for any; then waits until all are gone.
    The nvidia_driver role's drain uses it so that the pods of a multi-node ComputeDomain job leave together, before
    the nodes are drained one by one (M(kubernetes.core.k8s_drain) evicts the pods of one node).
  - An eviction refused for a PodDisruptionBudget (HTTP 429) is asked again every 2 seconds until O(wait_timeout), as
    C(kubectl drain) does. A pod is named by its UID too when given, so that a pod made again under the same name is
    not the one waited for.
  - The module fails after O(wait_timeout) seconds naming the pods still there and those a PodDisruptionBudget held.
  - Runs on the controller (delegate it to localhost); it needs the C(kubernetes) Python library, as kubernetes.core
    does.
author: gpufabric.cluster contributors (@gpufabric)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: Reads which of the pods are there and returns them in RV(asked) without asking any to leave.
  diff_mode:
    support: none
  platform:
    platforms: posix
options:
  pods:
    description:
      - The pods, each with C(namespace), C(name) and optionally C(uid) (the C(pods) of the
        P(gpufabric.cluster.compute_domain_workloads#filter) filter; other keys are ignored).
    type: list
    elements: dict
    required: true
  delete:
    description: Delete the pods instead of evicting them (no PodDisruptionBudget is honoured).
    type: bool
    default: false
  wait_timeout:
    description: Seconds to wait for all the pods to be gone, refused evictions asked again meanwhile.
    type: int
    default: 600
  kubeconfig:
    description:
      - Path of the kubeconfig; without it C(K8S_AUTH_KUBECONFIG), then C(KUBECONFIG) or C(~/.kube/config), then the
        service account of a pod (in-cluster).
    type: path
  context:
    description: The kubeconfig's context to use; without it its current context.
    type: str
requirements:
  - kubernetes (Python library)
seealso:
  - module: kubernetes.core.k8s_drain
  - name: API-initiated eviction
    description: The Eviction API and PodDisruptionBudgets.
    link: https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/
"""

EXAMPLES = r"""
- name: Evict the ComputeDomain workloads of the wave first
  gpufabric.cluster.pod_eviction:
    pods: "{{ workloads.pods }}"
    wait_timeout: 600
  delegate_to: localhost
"""

RETURN = r"""
asked:
  description: The pods asked to leave (evicted or deleted; in check mode, those that would be), as C(namespace/name).
  returned: always
  type: list
  elements: str
absent:
  description: The pods already gone before any was asked, as C(namespace/name).
  returned: always
  type: list
  elements: str
"""

import traceback

from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ansible_collections.gpufabric.cluster.plugins.module_utils import pod_eviction

try:
    import kubernetes
    from kubernetes import client as models
except ImportError:
    KUBERNETES_ERROR = traceback.format_exc()
else:
    KUBERNETES_ERROR = None


def _pods(module: AnsibleModule) -> list[dict]:
    pods, seen = [], set()
    for index, pod in enumerate(module.params["pods"]):
        namespace, name, uid = pod.get("namespace"), pod.get("name"), pod.get("uid") or ""
        if not (isinstance(namespace, str) and namespace and isinstance(name, str) and name
                and isinstance(uid, str)):
            module.fail_json(msg=f"pods[{index}] must have a namespace and a name (and a uid, a string)")
        if (namespace, name) not in seen:
            seen.add((namespace, name))
            pods.append({"namespace": namespace, "name": name, "uid": uid})
    return pods


def _api(module: AnsibleModule):
    """A CoreV1Api from the kubeconfig, else in-cluster. A kubeconfig holds credentials: an error names its path and
    the kind of error, never its text (a YAML error quotes the lines it could not read)."""
    source = module.params["kubeconfig"] or "KUBECONFIG or ~/.kube/config"
    try:
        try:
            api_client = kubernetes.config.new_client_from_config(config_file=module.params["kubeconfig"],
                                                                  context=module.params["context"])
        except kubernetes.config.ConfigException:
            if module.params["kubeconfig"]:
                raise
            source += ", then in-cluster"
            kubernetes.config.load_incluster_config()
            api_client = kubernetes.client.ApiClient()
    except Exception as error:  # any error of reading a kubeconfig, reported without its text
        module.fail_json(msg=f"no Kubernetes API client from {source}: {type(error).__name__}")
    return models.CoreV1Api(api_client)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "pods": {"type": "list", "elements": "dict", "required": True},
            "delete": {"type": "bool", "default": False},
            "wait_timeout": {"type": "int", "default": 600},
            "kubeconfig": {"type": "path", "fallback": (env_fallback, ["K8S_AUTH_KUBECONFIG"])},
            "context": {"type": "str", "fallback": (env_fallback, ["K8S_AUTH_CONTEXT"])},
        },
        supports_check_mode=True,
    )
    if KUBERNETES_ERROR:
        module.fail_json(msg=missing_required_lib("kubernetes"), exception=KUBERNETES_ERROR)
    if module.params["wait_timeout"] < 1:
        module.fail_json(msg=f"wait_timeout must be a positive number of seconds, got {module.params['wait_timeout']}")
    pods = _pods(module)
    if not pods:
        module.exit_json(changed=False, asked=[], absent=[])
    api = _api(module)
    try:
        if module.check_mode:
            there = [pod for pod in pods if pod_eviction.present(api, pod)]
            module.exit_json(changed=bool(there), asked=[pod_eviction.key(pod) for pod in there],
                             absent=[pod_eviction.key(pod) for pod in pods if pod not in there])
        result = pod_eviction.evict_and_wait(api, models, pods, module.params["delete"], module.params["wait_timeout"])
    except pod_eviction.EvictionError as error:
        module.fail_json(msg=str(error))
    except models.ApiException as error:
        module.fail_json(msg=f"the Kubernetes API answered {error.status} {error.reason}", status=error.status)
    module.exit_json(changed=bool(result["asked"]), **result)


if __name__ == "__main__":
    main()
