# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware tier's fixtures: the host's independent readings, the probe modules' results on it, and the gate.

Every test here either compares a probe module's answer on this host (root ``/``, the real driver and NVML) with an
independent reading (:mod:`hardware_readings`) or is skipped with the reason it does not apply: ``no NVIDIA GPU
here (...)`` for every test on a host where no reading shows one, or the reading the sandbox lacks.  Run by
``make hardware`` on a connected GPU host and by ``tools/hardware-run.sh`` on a lent one that reaches nothing.
"""

from __future__ import annotations

import importlib

import pytest
from hardware_readings import HostReadings, read_host

pytestmark = pytest.mark.hardware


@pytest.fixture(scope="session")
def host() -> HostReadings:
    """The independent readings of this host, taken once."""
    return read_host("/")


@pytest.fixture(autouse=True)
def _an_nvidia_gpu_is_here(host):
    """Skip every hardware test, saying what was looked at, where nothing shows an NVIDIA GPU."""
    if not host.evidence():
        pytest.skip(host.no_gpu_reason())


@pytest.fixture(scope="session")
def _module_results() -> dict:
    return {}


@pytest.fixture
def probe(module_runner, _module_results):
    """``probe(name)``: the result of the probe module ``name`` on this host (root ``/``), run once per session."""
    def run(name: str) -> dict:
        if name not in _module_results:
            module = importlib.import_module(f"ansible_collections.gpufabric.cluster.plugins.modules.{name}")
            _module_results[name] = module_runner(module, {"root": "/"})
        return _module_results[name]
    return run


def _require(reading, what: str):
    if not reading.present:
        pytest.skip(f"not applicable: {what} needs a reading this host does not give: {reading.reason}")
    return reading.value


@pytest.fixture(scope="session")
def needs():
    """``needs(reading, what)``: the reading's value; skips the test, naming ``what`` needed it and why the reading
    is missing, when there is none (never a silent pass)."""
    return _require
