# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixtures shared by every pytest tier: run a module through AnsibleModule, run host commands.

This conftest puts ``tests/`` on ``sys.path`` (pytest's rootdir-less conftest import), so every tier imports the
shared TEST FIXTURES package as ``fixtures`` (tests/fixtures).
"""

from __future__ import annotations

import contextlib
import io
import json
from unittest import mock

import pytest
from ansible.module_utils import _internal as ansible_internal
from ansible.module_utils.common import warnings as ansible_warnings
from ansible.module_utils.testing import patch_module_args
from fixtures.commands import run_command


@pytest.fixture(scope="session")
def command_runner():
    """A stand-in for ``AnsibleModule.run_command`` for calling collectors directly."""
    return run_command


def run_module(module, args: dict) -> dict:
    """Run a module's ``main()`` end to end through AnsibleModule; return its JSON result.

    ``result['failed']`` is set when the module called ``fail_json``. ``invocation`` (the module's arguments, which
    AnsibleModule adds to a result under ansible-core 2.19 and no longer under 2.21) is left out, so that the tests
    compare what the module returns under both.
    """
    stdout = io.StringIO()
    # A module on a host starts with no warnings and returns them in its result; in this process
    # warnings live in a process-wide dict, and once controller code (a filter) was imported,
    # module.warn() would print them instead.
    with patch_module_args(args), contextlib.redirect_stdout(stdout), pytest.raises(SystemExit), \
            mock.patch.object(ansible_internal, "is_controller", False), \
            mock.patch.object(ansible_warnings, "_global_warnings", {}):
        module.main()
    result = json.loads(stdout.getvalue())
    result.pop("invocation", None)
    return result


@pytest.fixture
def module_runner():
    """The :func:`run_module` helper, as a fixture."""
    return run_module
