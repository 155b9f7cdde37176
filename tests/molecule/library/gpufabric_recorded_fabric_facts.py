# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE module: the gpufabric facts of a recorded host tree, NVML answered from its recording.

NVML always describes the running host, so ``gpufabric.cluster.fabric_facts`` pointed at a fixture tree lists
the tree's GPUs from PCI and cannot know their NVLink fabric clique.  This module runs the same collectors
(``collect_fabric``) inside the test container on the tree, with NVML answered by the tree's recording
(``<root>.nvml.json``, written by tests/fixtures/build_trees.py) through the probe's one test seam,
``nvml.nvml_source`` - with the unit tests' double, tests/fixtures/recorded_nvml.py, which the scenarios'
``ANSIBLE_MODULE_UTILS`` makes ``ansible.module_utils.recorded_nvml`` - and returns ``ansible_facts['gpufabric']``.
"""

from __future__ import annotations

import json

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.recorded_nvml import recorded_nvml

from ansible_collections.gpufabric.cluster.plugins.module_utils.fabric import collect_fabric, select_subsets
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import DEFAULT_TIMEOUT, ToolRunner

DOCUMENTATION = r"""
---
module: gpufabric_recorded_fabric_facts
short_description: TEST FIXTURE - gpufabric facts of a recorded host tree with recorded NVML answers
description:
  - Test fixture of the molecule scenarios; not part of the collection.
options:
  root:
    description: The recorded host tree.
    type: path
    required: true
  recording:
    description: The recorded NVML answers; default C(<root>.nvml.json).
    type: path
  imex_root:
    description:
      - Root the imex subset reads; default O(root). C(/) reads the IMEX installation of the test host itself,
        the one M(gpufabric.cluster.nvidia_imex) manages there, with the GPUs and their clique from the tree.
    type: path
  gather_subset:
    description: Subsets as for M(gpufabric.cluster.fabric_facts).
    type: list
    elements: str
    default: [gpu, imex]
author: gpufabric.cluster contributors (@gpufabric)
"""


def main() -> None:
    """Module entry point."""
    module = AnsibleModule(
        argument_spec={
            "root": {"type": "path", "required": True},
            "recording": {"type": "path"},
            "imex_root": {"type": "path"},
            "gather_subset": {"type": "list", "elements": "str", "default": ["gpu", "imex"]},
        },
        supports_check_mode=True,
    )
    root = module.params["root"].rstrip("/")
    path = module.params["recording"] or root + ".nvml.json"
    try:
        with open(path, encoding="utf-8") as handle:
            recording = json.load(handle)
    except (OSError, ValueError) as exc:
        module.fail_json(msg=f"cannot read the NVML recording {path}: {exc}")
    subsets = select_subsets(module.params["gather_subset"])
    imex_root = module.params["imex_root"] or root
    with recorded_nvml(recording):
        facts = collect_fabric(root, ToolRunner(DEFAULT_TIMEOUT, root), [name for name in subsets if name != "imex"])
        if "imex" in subsets:
            imex_facts = collect_fabric(imex_root, ToolRunner(DEFAULT_TIMEOUT, imex_root), ["imex"])
            facts["imex"] = imex_facts["imex"]
            facts["warnings"].extend(imex_facts["warnings"])
            facts["gather_subset"] = subsets
    for warning in facts.pop("warnings"):
        module.warn(warning)
    module.exit_json(changed=False, ansible_facts={"gpufabric": facts})


if __name__ == "__main__":
    main()
