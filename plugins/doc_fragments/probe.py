# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options and attributes shared by the probe modules."""

from __future__ import annotations


class ModuleDocFragment:
    """Documentation fragments for the gpufabric.cluster probe modules."""

    DOCUMENTATION = r"""
options:
  root:
    description:
      - Filesystem root under which C(/sys), C(/proc), C(/etc), C(/dev) and C(/var/lib) are read and
        under which helper tools (C(nvidia-imex-ctl), C(ofed_info), C(systemctl)) are looked up.
      - Leave at C(/) on a live host. Point it at a recorded tree to inspect a copy of another host;
        tools are then only run when the tree carries them.
      - A missing or unreadable root is reported in the C(errors) list of the result; the task does not fail.
    type: path
    default: /
"""
