# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``gpufabric.cluster.write_files`` action: write a list of files on the controller in one task.

A thin wrapper over :func:`...plugin_utils.write_files.write_files`; the documentation is in
``plugins/modules/write_files.py``. It runs in the controller's process: no connection, no module process.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.gpufabric.cluster.plugins.plugin_utils import arguments
from ansible_collections.gpufabric.cluster.plugins.plugin_utils import write_files as logic


class ActionModule(ActionBase):
    """Write files on the controller."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _VALID_ARGS = frozenset(("files", "directory_mode", "follow_directory_links"))

    def run(self, tmp=None, task_vars=None):
        """Check the arguments, write the files that differ, and say what changed."""
        result = super().run(tmp, task_vars)
        del tmp  # no effect since ansible-core 2.7
        args = self._task.args
        if "files" not in args:
            raise AnsibleActionFail("write_files: files is required")
        try:
            outcome = logic.write_files(args["files"], args.get("directory_mode"),
                                        check_mode=bool(self._task.check_mode), diff=bool(self._task.diff),
                                        follow_directory_links=args.get("follow_directory_links", False))
        except (arguments.ArgumentError, logic.WriteFilesError) as exc:
            raise AnsibleActionFail(f"write_files: {exc}") from None
        except OSError as exc:
            raise AnsibleActionFail(f"write_files: {exc.filename or ''}: {exc.strerror or exc}") from None
        result.update(outcome)
        return result
