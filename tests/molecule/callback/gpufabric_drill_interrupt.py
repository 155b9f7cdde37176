# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST FIXTURE callback: kill the run the moment a named task starts (the failure drills of the molecule tests).

A drill needs the run to die at one exact point, for instance after a role wrote its files and before it restarted
the daemon that reads them; waiting for a line in the log and then killing the process cannot hit that point every
time. This callback kills its own ansible-playbook process with SIGKILL when the task whose name contains
GPUFABRIC_DRILL_INTERRUPT_AT starts, before any host runs it: what a controller that dies mid-run leaves behind.
Not part of the collection; enabled only by the drills (ANSIBLE_CALLBACK_PLUGINS, ANSIBLE_CALLBACKS_ENABLED).
"""

from __future__ import annotations

import os
import signal

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = r"""
name: gpufabric_drill_interrupt
type: aggregate
short_description: TEST FIXTURE - kill the run when a named task starts
description:
  - Test fixture of the molecule failure drills; not part of the collection.
requirements:
  - GPUFABRIC_DRILL_INTERRUPT_AT set to (part of) the name of the task to interrupt at.
author: gpufabric.cluster contributors (@gpufabric)
"""


class CallbackModule(CallbackBase):
    """Kill the run when the named task starts."""

    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "gpufabric_drill_interrupt"
    CALLBACK_NEEDS_ENABLED = True

    def v2_playbook_on_task_start(self, task, is_conditional):
        target = os.environ.get("GPUFABRIC_DRILL_INTERRUPT_AT")
        if target and target in task.get_name():
            self._display.display(f"DRILL: run killed as task {task.get_name()!r} starts", stderr=True)
            os.kill(os.getpid(), signal.SIGKILL)
