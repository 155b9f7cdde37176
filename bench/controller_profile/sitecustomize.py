# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""BENCH FIXTURE of ``bench/fleet_preflight.py --profile``: cProfile of the controller, in CPU time.

The controller's own share of a run is ``ansible-playbook`` and its workers (processes it forks, one per host and
task); the modules they start are other programs. ``fleet_preflight.py --profile DIR`` puts this directory first on
the ``PYTHONPATH`` of an extra, profiled run and names a directory in ``GPUFABRIC_BENCH_PROFILE``; Python's ``site``
imports this file in every interpreter the run starts. In the ``ansible-playbook`` process only (``sys.argv[0]``
named ``ansible-playbook``) it profiles with ``cProfile`` on CPU time (``time.process_time``, so a busy machine's
waits count nothing) and writes ``main-<pid>.prof`` at exit; every process multiprocessing forks from it (a worker)
stops the profile it inherited, profiles itself afresh and writes ``worker-<pid>.prof`` when it ends (multiprocessing
runs its finalizers before the worker exits). Only an absolute directory is written to. Module processes and the
tools they run are not profiled. Nothing outside the benchmark puts this directory on a path.
"""

import os
import sys

_DIRECTORY = os.environ.get("GPUFABRIC_BENCH_PROFILE")


def _start():
    import cProfile  # pylint: disable=import-outside-toplevel
    import time  # pylint: disable=import-outside-toplevel
    profile = cProfile.Profile(time.process_time)
    profile.enable()
    return profile


def _dump(profile, kind):
    profile.disable()
    profile.dump_stats(os.path.join(_DIRECTORY, f"{kind}-{os.getpid()}.prof"))


class _Inherited:
    """The playbook's profile, as multiprocessing hands it to each process it forks (it keeps a weak reference)."""

    def __init__(self, profile):
        self.profile = profile


def _profile_the_worker(inherited):
    """In a process multiprocessing forked: the parent's profile stops here, the worker's starts, and is written when
    multiprocessing ends the process (a finalizer registered after the fork: multiprocessing clears earlier ones)."""
    import multiprocessing.util  # pylint: disable=import-outside-toplevel
    inherited.profile.disable()
    multiprocessing.util.Finalize(None, _dump, args=(_start(), "worker"), exitpriority=100)


_PLAYBOOK = bool(sys.argv) and os.path.basename(sys.argv[0]) == "ansible-playbook"

if _DIRECTORY and os.path.isabs(_DIRECTORY) and _PLAYBOOK:
    import atexit  # pylint: disable=import-outside-toplevel
    import multiprocessing.util  # pylint: disable=import-outside-toplevel

    _MAIN = _Inherited(_start())
    atexit.register(_dump, _MAIN.profile, "main")
    multiprocessing.util.register_after_fork(_MAIN, _profile_the_worker)
