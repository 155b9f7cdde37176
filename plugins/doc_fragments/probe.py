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
        tools are then only run when the tree carries them, with a clean environment (nothing inherited from
        the caller, neither C(PATH) nor C(LD_*)).
      - "O(root) is a jail. Every path read, symlink targets included, resolves inside it as if it were C(/):
        an absolute symlink target starts again at O(root), a C(..) never climbs above it. A path that would
        lead outside is never read and is reported in C(errors) as C(<path>: outside root)."
      - A root that does not exist, cannot be read or has no C(sys/) directory fails the task with a message
        naming the root; the probe cannot answer anything there.
    type: path
    default: /
  command_timeout:
    description:
      - Seconds each helper tool (C(nvidia-imex-ctl), C(nvidia-imex), C(ofed_info), C(systemctl), C(rpm),
        C(ip)) may run. A tool that has not finished by then is killed and reported in C(errors) naming it.
      - Must be greater than 0.
    type: int
    default: 10
"""
