# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The steps of tools/hardware-run.sh that are Python: record the host, gather the modules' JSON, judge the run.

Runs on the lent GPU machine with its own interpreter (Python 3.11+, standard library, the carried ansible-core and
the machine's nvidia-ml-py), with the collection importable (the run script sets ``PYTHONPATH``):

    python tools/hardware_run.py record OUTDIR [--where TEXT]
        OUTDIR/recording.json: when and where, which of the files a sandbox may lack are there, the files the GPU
        probe reads (the driver's version files, the NVIDIA PCI functions), NVML's answers to every query the probe
        makes in the recorded double's format (tests/fixtures/recorded_nvml.py), and nvidia-smi -q -x as parsed by
        tests/hardware/hardware_readings.py (its text beside it, OUTDIR/nvidia-smi.xml, where it ran)
    python tools/hardware_run.py modules OUTDIR RESULTS_JSON
        OUTDIR/modules.json: each probe module's result as the play returned it (RESULTS_JSON, written by the run's
        TEST FIXTURE callback), printed
    python tools/hardware_run.py summary OUTDIR [--timing STEP=SECONDS ...]
        a table of the hardware tests (passed, failed, not applicable and why) from OUTDIR/hardware-tests.xml, the
        verdict, OUTDIR/summary.json; exit status 0 when nothing failed (also when there is no NVIDIA GPU here:
        every test then says so), 1 when a test or a module failed or no test ran

``tools/hardware_fixture.py`` turns OUTDIR into a fixture under tests/fixtures/hardware/.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import platform
import sys
import typing as t
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parent.parent
READINGS_PATH = ROOT / "tests" / "hardware" / "hardware_readings.py"
PROBE_MODULES = ("gpu_info", "connectx_info", "imex_info", "peermem_info", "fabric_facts")
# What recording.json says is there or not: the files a sandboxed kernel may lack or hide.
PRESENCE_PATHS = ("/sys/bus/pci/devices", "/proc/modules", "/proc/driver/nvidia/version", "/sys/module/nvidia/version",
                  "/sys/class/infiniband", "/dev/nvidiactl")
PCI_ATTRIBUTES = ("vendor", "class", "device", "numa_node")
# The names of the run's files under OUTDIR (flat: the device tool brings back 8 files, two folders deep at most).
RECORDING = "recording.json"
NVIDIA_SMI_XML = "nvidia-smi.xml"
MODULES = "modules.json"
TESTS_XML = "hardware-tests.xml"
SUMMARY = "summary.json"

PASSED, FAILED, NOT_APPLICABLE = "passed", "failed", "not applicable"
# What nvidia-ml-py's NVMLError_NotSupported reads as, through the collection's adapter
NOT_SUPPORTED_TEXT = "NVMLError_NotSupported: Not Supported"


def load_readings() -> t.Any:
    """tests/hardware/hardware_readings.py, the hardware tier's independent readings (loaded by path)."""
    spec = importlib.util.spec_from_file_location("hardware_readings", READINGS_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("hardware_readings", module)
    spec.loader.exec_module(module)
    return module


# --- record --------------------------------------------------------------------------------------


class _Recorder:
    """Asks an ``NvmlSource`` and keeps each answer, or NVML's error text, in the recorded double's format."""

    def __init__(self, source: t.Any, nvml_error: type, not_supported: type):
        self.source, self.nvml_error, self.not_supported = source, nvml_error, not_supported

    def ask(self, query: str, errors: dict, *args: t.Any) -> t.Any:
        """The answer to ``query``; on an NVML error ``None``, with the error's text in ``errors[query]``.

        The text is kept such that the double raises the same kind of error: a NOT_SUPPORTED whose text does not say
        so (nvidia-ml-py without the function) is prefixed ``NotSupported:``.
        """
        try:
            return getattr(self.source, query)(*args)
        except self.not_supported as exc:
            text = str(exc)
            errors[query] = text if ("NotSupported" in text or "Not Supported" in text) else f"NotSupported: {text}"
        except self.nvml_error as exc:
            errors[query] = str(exc)
        return None

    @staticmethod
    def fabric(fabric: t.Any) -> dict:
        """The fields of the fabric struct NVML answered (``FabricInfo``), under its ``info_version``."""
        recorded: dict[str, t.Any] = {"info_version": fabric.info_version, "state": fabric.state,
                                      "status": fabric.status, "cluster_uuid": fabric.cluster_uuid}
        if fabric.clique_id is not None:
            recorded["clique_id"] = fabric.clique_id
        if fabric.health_mask is not None:
            recorded["health_mask"] = fabric.health_mask
        if fabric.health_summary is not None:
            recorded["health_summary"] = fabric.health_summary
        if fabric.cliques is not None:
            recorded["cliques"] = [list(entry) for entry in fabric.cliques]
        return recorded

    def device(self, index: int) -> dict:
        """One GPU's answers."""
        device: dict[str, t.Any] = {"index": index}
        errors: dict[str, str] = {}
        for query in ("uuid", "name", "pci_bus_id", "memory_total", "mig_mode", "persistence_mode"):
            value = self.ask(query, errors, index)
            if value is not None:
                device[query] = list(value) if isinstance(value, tuple) else value
        fabric = self.ask("fabric_info", errors, index)
        if errors.get("fabric_info") == NOT_SUPPORTED_TEXT:
            del errors["fabric_info"]
            device["fabric"] = None  # the double's own form of NVML's NOT_SUPPORTED
        elif fabric is not None:
            device["fabric"] = self.fabric(fabric)
        platform_info = self.ask("platform_info", errors, index)
        if errors.get("platform_info") == NOT_SUPPORTED_TEXT:
            del errors["platform_info"]
            device["platform"] = None
        elif platform_info is not None:
            device["platform"] = {
                "info_version": platform_info.info_version, "ib_guid": platform_info.ib_guid.hex(),
                "chassis_serial_number": platform_info.chassis_serial.hex(), "slot_number": platform_info.slot_number,
                "tray_index": platform_info.tray_index, "host_id": platform_info.host_id,
                "peer_type": platform_info.peer_type, "module_id": platform_info.module_id}
        states = self.ask("nvlink_states", errors, index)
        device["nvlink"] = {"states": list(states or []), "speed_mbps": self.ask("nvlink_speed_mbps", errors, index)}
        # the health queries (issue 43); the NVLink error counters of the active links, as the probe asks them
        active = [link for link, state in enumerate(states or []) if state == 1]
        for query, args in (("remapped_rows", ()), ("ecc_uncorrected", ()), ("recovery_action", ()),
                            ("nvlink_errors", (active,))):
            if query == "nvlink_errors" and not active:
                continue
            value = self.ask(query, errors, index, *args)
            if errors.get(query) == NOT_SUPPORTED_TEXT:
                del errors[query]
                device[query] = None  # the double's own form of NVML's NOT_SUPPORTED
            elif isinstance(value, dict):
                device[query] = {str(link): dict(counters) for link, counters in value.items()}
            elif value is not None:
                device[query] = list(value) if isinstance(value, tuple) else value
        if errors:
            device["errors"] = errors
        return device


def record_nvml(source: t.Any, nvml_error: type, not_supported: type) -> dict:
    """NVML's answer to every query the GPU probe makes, in the recorded double's format (``RecordedSource``).

    ``source`` is an ``NvmlSource`` (the real one, ``PynvmlSource``, on the lent machine); ``nvml_error`` and
    ``not_supported`` are the collection's ``NvmlError`` and ``NvmlNotSupported``.  A query that fails is kept as an
    ``errors`` entry with NVML's text; a fabric NVML does not support is ``fabric: null``.  Replayed by
    ``RecordedSource``, the recording answers each query as ``source`` did.
    """
    try:
        source.init()
    except nvml_error as exc:
        return {"init_error": str(exc)}
    recorder = _Recorder(source, nvml_error, not_supported)
    recording: dict[str, t.Any] = {}
    errors: dict[str, str] = {}
    try:
        for query in ("driver_version", "cuda_driver_version", "nvml_version"):
            value = recorder.ask(query, errors)
            if value is not None:
                recording[query] = value
        count = recorder.ask("device_count", errors) or 0
        recording["devices"] = [recorder.device(index) for index in range(count)]
    finally:
        with contextlib.suppress(nvml_error):
            source.shutdown()
    if errors:
        recording["errors"] = errors
    return recording


def _read_file(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def capture_tree(root: str = "/") -> dict:
    """The files below ``root`` the GPU probe reads, to rebuild as a tree: the driver's version files and, for every
    NVIDIA PCI function, its attributes and the name of its bound driver.

    ``{"dirs": [...], "files": {path: text}, "drivers": {function path: driver name}}``, paths absolute as on the
    host; ``dirs`` holds ``/sys`` and ``/sys/bus/pci/devices`` where they exist.
    """
    tree: dict[str, t.Any] = {"dirs": [], "files": {}, "drivers": {}}

    def below(path: str) -> str:
        return os.path.join(root, path.lstrip("/"))

    for directory in ("/sys", "/sys/bus/pci/devices"):
        if os.path.isdir(below(directory)):
            tree["dirs"].append(directory)
    for path in ("/proc/driver/nvidia/version", "/sys/module/nvidia/version"):
        text = _read_file(below(path))
        if text is not None:
            tree["files"][path] = text
    try:
        names = sorted(os.listdir(below("/sys/bus/pci/devices")))
    except OSError:  # absent, or a sandbox refuses to list it
        names = []
    for name in names:
        base = f"/sys/bus/pci/devices/{name}"
        if (_read_file(below(f"{base}/vendor")) or "").strip().lower() != "0x10de":
            continue
        for attribute in PCI_ATTRIBUTES:
            text = _read_file(below(f"{base}/{attribute}"))
            if text is not None:
                tree["files"][f"{base}/{attribute}"] = text
        with contextlib.suppress(OSError):  # no driver bound
            tree["drivers"][base] = os.path.basename(os.readlink(below(f"{base}/driver")))
    return tree


def _version(distribution: str) -> str | None:
    from importlib import metadata
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def record(outdir: Path, where: str) -> dict:
    """Write ``outdir/recording.json`` (and ``outdir/nvidia-smi.xml`` where nvidia-smi ran); return the recording."""
    from ansible_collections.gpufabric.cluster.plugins.module_utils import nvml

    readings = load_readings()
    xml_text, smi_reason = readings.run_nvidia_smi()
    if xml_text is not None:
        (outdir / NVIDIA_SMI_XML).write_text(xml_text, encoding="utf-8")
    smi = readings.read_nvidia_smi(xml_text, smi_reason)
    try:
        source = nvml.nvml_source("/")
    except nvml.NvmlError as exc:  # nvidia-ml-py missing
        answers = {"init_error": str(exc).splitlines()[0]}
    else:
        answers = record_nvml(source, nvml.NvmlError, nvml.NvmlNotSupported)
    uname = os.uname()
    recording = {
        "recorded": {
            "when": datetime.datetime.now(datetime.UTC).replace(microsecond=0).isoformat(),
            "where": where,
            "by": "tools/hardware-run.sh",
            "kernel": uname.release,
            "kernel_build": uname.version,
            "machine": uname.machine,
            "python": platform.python_version(),
            "nvidia_ml_py": _version("nvidia-ml-py"),
            "ansible_core": _version("ansible-core"),
        },
        "present": {path: os.path.exists(path) for path in PRESENCE_PATHS},
        "tree": capture_tree("/"),
        "nvml": answers,
        "nvidia_smi": smi.value if smi.present else {"reason": smi.reason},
    }
    (outdir / RECORDING).write_text(json.dumps(recording, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return recording


# --- modules -------------------------------------------------------------------------------------


def module_results(text: str) -> dict:
    """Each task's result from what the run's TEST FIXTURE callback wrote (``{task name: result}``, JSON;
    tests/hardware/callback/gpufabric_hardware_result.py).

    Raises ``ValueError`` (one line) when ``text`` is not a JSON object of result objects.
    """
    try:
        results = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(results, dict) or not all(isinstance(result, dict) for result in results.values()):
        raise ValueError("not an object of task results")
    return results


def gather_modules(outdir: Path, path: Path) -> dict:
    """Write ``outdir/modules.json`` with each probe module's result from the play's results file; print each one.

    A module with no result (the play stopped, the file is missing or broken) is ``failed`` with the reason.
    """
    try:
        played = module_results(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        played, reason = {}, f"no results from ansible-playbook ({exc})"
    else:
        reason = "not run"
    results = {}
    for name in PROBE_MODULES:
        results[name] = played.get(name, {"failed": True, "msg": f"{name}: {reason}"})
        print(f"--- {name}")
        print(json.dumps(results[name], indent=1, sort_keys=True))
    (outdir / MODULES).write_text(json.dumps(results, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return results


# --- summary -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestOutcome:
    """One hardware test: ``passed``, ``failed`` or ``not applicable``, with the reason or the failure's message."""

    test: str
    outcome: str
    reason: str = ""


def parse_junit(text: str) -> list[TestOutcome]:
    """The outcome of every test case in pytest's ``--junitxml`` report.

    Raises ``ValueError`` (one line) when ``text`` is not a JUnit XML document.
    """
    try:
        document = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        raise ValueError(f"the JUnit report is not XML ({exc})") from None
    if document.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the JUnit report's root is <{document.tag}>, not <testsuites> or <testsuite>")
    outcomes = []
    for case in document.iter("testcase"):
        module = (case.get("classname") or "").rpartition(".")[2]
        name = f"{module}::{case.get('name', '')}" if module else case.get("name", "")
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        skipped = case.find("skipped")
        if failure is not None:
            message = (failure.get("message") or failure.text or "").strip()
            outcomes.append(TestOutcome(name, FAILED, message.splitlines()[0] if message else ""))
        elif skipped is not None:
            outcomes.append(TestOutcome(name, NOT_APPLICABLE, (skipped.get("message") or "").strip()))
        else:
            outcomes.append(TestOutcome(name, PASSED))
    return outcomes


def verdict(outcomes: list[TestOutcome], modules: dict, no_gpu: str) -> tuple[str, int]:
    """The run's one-line verdict and exit status from the tests' outcomes and the modules' results.

    ``no_gpu`` (``hardware_readings.NO_GPU``) is the verdict, with status 0, when every test was not applicable
    because of it and no module failed.
    """
    failed_modules = sorted(name for name, result in modules.items() if result.get("failed"))
    failed = [outcome for outcome in outcomes if outcome.outcome == FAILED]
    if failed_modules:
        return f"FAILED: module(s) {', '.join(failed_modules)} failed", 1
    if not outcomes:
        return "FAILED: no hardware test ran", 1
    if failed:
        return f"FAILED: {len(failed)} of {len(outcomes)} hardware test(s) failed", 1
    if all(o.outcome == NOT_APPLICABLE and o.reason.startswith(no_gpu) for o in outcomes):
        return no_gpu, 0
    passed = sum(1 for outcome in outcomes if outcome.outcome == PASSED)
    if not passed:
        return f"FAILED: none of {len(outcomes)} hardware test(s) applied", 1
    return f"passed: {passed} hardware test(s), {len(outcomes) - passed} not applicable", 0


def table(outcomes: list[TestOutcome], no_gpu: str) -> str:
    """The outcomes as a plain-text table, one test a line.

    A reason that starts with ``no_gpu`` is shown as ``no_gpu`` alone in the table and whole once below it (it is the
    same for every test: what was looked at).
    """
    width = max([len(outcome.test) for outcome in outcomes] + [4])
    lines = [f"{'test':<{width}}  result"]
    no_gpu_reasons = []
    for outcome in outcomes:
        reason = outcome.reason
        if reason.startswith(no_gpu):
            no_gpu_reasons.append(reason)
            reason = no_gpu
        lines.append(f"{outcome.test:<{width}}  {outcome.outcome}: {reason}" if reason
                     else f"{outcome.test:<{width}}  {outcome.outcome}")
    lines.extend(dict.fromkeys(no_gpu_reasons))
    return "\n".join(lines)


def summarize(outdir: Path, timings: dict[str, float]) -> int:
    """Print the tests' table and the verdict, write ``outdir/summary.json``; return the exit status."""
    no_gpu = load_readings().NO_GPU
    try:
        outcomes = parse_junit((outdir / TESTS_XML).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"{TESTS_XML}: {exc}")
        outcomes = []
    try:
        modules = json.loads((outdir / MODULES).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        modules = {name: {"failed": True, "msg": f"{MODULES}: {exc}"} for name in PROBE_MODULES}
    text, status = verdict(outcomes, modules, no_gpu)
    print(table(outcomes, no_gpu))
    for name in PROBE_MODULES:
        result = modules.get(name, {"failed": True, "msg": "not run"})
        state = f"FAILED: {result.get('msg', '')}" if result.get("failed") else "ran"
        print(f"module {name}: {state}")
    print(f"verdict: {text}")
    summary = {"verdict": text, "status": status, "tests": [asdict(outcome) for outcome in outcomes],
               "modules": {name: not modules.get(name, {"failed": True}).get("failed") for name in PROBE_MODULES},
               "seconds": timings}
    (outdir / SUMMARY).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return status


# --- command line --------------------------------------------------------------------------------


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=VALUE")
    return name, value


def _timing(text: str) -> tuple[str, float]:
    name, value = _pair(text)
    try:
        return name, round(float(value), 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: {value!r} is not a number of seconds") from None


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    record_step = steps.add_parser("record", help="record the host and its NVML answers")
    record_step.add_argument("outdir", type=Path)
    record_step.add_argument("--where", default="", help="which machine this is, in words")
    modules_step = steps.add_parser("modules", help="gather the probe modules' results")
    modules_step.add_argument("outdir", type=Path)
    modules_step.add_argument("results", type=Path, help="what the run's callback wrote")
    summary_step = steps.add_parser("summary", help="judge the run")
    summary_step.add_argument("outdir", type=Path)
    summary_step.add_argument("--timing", action="append", type=_timing, default=[], metavar="STEP=SECONDS")
    args = parser.parse_args(argv)
    if args.step == "record":
        recording = record(args.outdir, args.where)
        for path, there in recording["present"].items():
            print(f"{path}: {'present' if there else 'ABSENT'}")
        nvml_answers = recording["nvml"]
        print(f"NVML: {nvml_answers['init_error']}" if "init_error" in nvml_answers
              else f"NVML: {len(nvml_answers['devices'])} GPU(s), driver {nvml_answers.get('driver_version')}")
        smi = recording["nvidia_smi"]
        print(f"nvidia-smi: {smi['reason']}" if "reason" in smi else f"nvidia-smi: {len(smi['gpus'])} GPU(s)")
        return 0
    if args.step == "modules":
        gather_modules(args.outdir, args.results)
        return 0
    return summarize(args.outdir, dict(args.timing))


if __name__ == "__main__":
    sys.exit(main())
