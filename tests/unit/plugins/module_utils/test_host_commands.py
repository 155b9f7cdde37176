# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Issue 39 item 7, the tools: what a probe keeps of a tool's output is bounded; a tool that prints more is killed.

On the starting commit :class:`ToolRunner` read a tool's whole output into memory, however much it printed.
"""

from __future__ import annotations

import os
import time
import tracemalloc

import pytest

from ansible_collections.gpufabric.cluster.plugins.module_utils.errors import CommandError, CommandTimeout
from ansible_collections.gpufabric.cluster.plugins.module_utils.host_commands import (
    ERROR_OUTPUT_LIMIT,
    OUTPUT_LIMIT,
    ToolRunner,
)
from ansible_collections.gpufabric.cluster.plugins.modules import peermem_info
from ansible_collections.gpufabric.cluster.tests.unit.helpers import write_host_file


def _tool(root, name: str, body: str) -> str:
    """Write a stand-in tool below ``root`` (TEST FIXTURE); return its real path."""
    write_host_file(str(root), f"/usr/bin/{name}", "#!/bin/sh\n# TEST FIXTURE: stand-in.\n" + body, 0o755)
    return os.path.join(str(root), "usr/bin", name)


def test_output_within_the_limits_and_stdin_data_pass_through(tmp_path):
    tool = _tool(tmp_path, "echoer", "cat\necho done >&2\nexit 3\n")
    rc, out, err = ToolRunner(5, str(tmp_path))([tool], data="route get 8.8.8.8\n")
    assert (rc, out, err) == (3, "route get 8.8.8.8\n", "done\n")


def test_exactly_the_limit_is_kept(tmp_path):
    tool = _tool(tmp_path, "full", f"head -c {OUTPUT_LIMIT} /dev/zero\n")
    rc, out, _err = ToolRunner(20, str(tmp_path))([tool])
    assert (rc, len(out)) == (0, OUTPUT_LIMIT)


@pytest.mark.parametrize(("redirect", "limit", "stream"), [("", OUTPUT_LIMIT, "standard output"),
                                                           (" >&2", ERROR_OUTPUT_LIMIT, "standard error")])
def test_a_tool_printing_more_than_its_limit_is_killed_and_named(tmp_path, redirect, limit, stream):
    tool = _tool(tmp_path, "chatty", f"head -c {limit + 1} /dev/zero{redirect}\necho the end\n")
    tracemalloc.start()
    try:
        with pytest.raises(CommandError) as raised:
            ToolRunner(20, str(tmp_path))([tool])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(raised.value) == f"chatty: printed more than {limit} bytes on its {stream} (killed)"
    assert not isinstance(raised.value, CommandTimeout)
    assert peak < 3 * limit + (4 << 20)


def test_an_endless_tool_is_killed_at_the_limit_not_at_the_timeout(tmp_path):
    tool = _tool(tmp_path, "endless", "exec cat /dev/zero\n")
    started = time.monotonic()
    with pytest.raises(CommandError, match=r"^endless: printed more than \d+ bytes on its standard output \(killed\)$"):
        ToolRunner(30, str(tmp_path))([tool])
    assert time.monotonic() - started < 20


def test_a_hanging_tool_still_times_out(tmp_path):
    tool = _tool(tmp_path, "hung", "echo started\nexec sleep 60\n")
    with pytest.raises(CommandTimeout, match=r"^hung: no answer within 1 s \(killed\)$"):
        ToolRunner(1, str(tmp_path))([tool])


def test_the_probe_names_a_tool_that_printed_too_much(module_runner, fresh_tree):
    root = fresh_tree("hgx_h100")
    _tool(root, "ofed_info", f"head -c {OUTPUT_LIMIT + 1} /dev/zero\n")
    result = module_runner(peermem_info, {"root": root})
    assert "failed" not in result
    assert result["errors"] == [f"ofed_info: printed more than {OUTPUT_LIMIT} bytes on its standard output (killed)"]
    assert result["ofed"] == {"installed": True, "version": None}
