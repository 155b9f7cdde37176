# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BENCH FIXTURE of ``bench/fleet_preflight.py``: the CPU of every Ansible module process of a benchmark run.

With ``ansible_connection: local`` every module of the simulated fleet runs on this machine, so the run's CPU holds
what, on a real fleet, each host spends running its own module. ``fleet_preflight.py`` puts this directory first on
the ``PYTHONPATH`` of its ``ansible-playbook`` runs and names a file in ``GPUFABRIC_BENCH_MODULE_CPU``; Python's
``site`` imports this file in every interpreter the run starts. Only an absolute path records: a relative one
(``false`` from a shell, say) would be written wherever a module runs. In a module process (the AnsiballZ payload
read from stdin with pipelining, ``sys.argv == ['']``, or an ``AnsiballZ_*.py`` file without it) it appends, at
exit, one line ``<module name> <CPU seconds>`` to that file: user and system time of the process and of the children
it waited for (the tools a probe runs). ``ansible-playbook`` and its forks are not module processes and record
nothing. Nothing outside the benchmark puts this directory on a path.
"""

import os
import sys

_RECORD = os.environ.get("GPUFABRIC_BENCH_MODULE_CPU")
_RAN = []  # the module names runpy was asked to run in this process


def _remember_module(run_module):
    """``runpy.run_module``, remembering the name: AnsiballZ runs the module as ``__main__`` through it."""
    def remembering(mod_name, *args, **kwargs):
        _RAN.append(mod_name)
        return run_module(mod_name, *args, **kwargs)
    return remembering


def _record():
    import resource  # pylint: disable=import-outside-toplevel
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    seconds = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    name = (_RAN[0] if _RAN else "unknown").replace("ansible_collections.", "").replace(".plugins.modules.", ".")
    with open(_RECORD, "a", encoding="utf-8") as handle:  # one short line per write: appends do not interleave
        handle.write(f"{name} {seconds:.6f}\n")


_MODULE_PROCESS = bool(sys.argv) and (sys.argv[0] == "" or os.path.basename(sys.argv[0]).startswith("AnsiballZ_"))

if _RECORD and os.path.isabs(_RECORD) and _MODULE_PROCESS:
    import atexit  # pylint: disable=import-outside-toplevel
    import runpy  # pylint: disable=import-outside-toplevel

    runpy.run_module = _remember_module(runpy.run_module)
    atexit.register(_record)
