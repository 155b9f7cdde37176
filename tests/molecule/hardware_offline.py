# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The hardware tier's offline path, proven where no GPU is: tools/hardware-run.sh in a container with no network.

``make hardware-offline`` (the molecule tier) runs the test image with ``--network=none``, this checkout mounted
read-only at /src (the bundle of ``make hardware-bundle`` in it, at .build/hardware-bundle, where the device tool's
``carry`` puts it) and a results folder as $OUT. In the container, the stand-in of the lent machine's image (TEST
FIXTURE: the packages that image has, nvidia-ml-py, pytest, jinja2, PyYAML, packaging and pip, as wheels for the test
image's Python, ``tools/hardware_bundle.py --image-standin``) is installed first, offline; then tools/hardware-run.sh
runs as it does on the lent machine. The run must: see no network interface but ``lo``; install the bundle with no
index; run the five probe modules, which report no GPU; have every hardware test say "no NVIDIA GPU here" (not fail,
not pass); end with that verdict and status 0, within three minutes.

    python tests/molecule/hardware_offline.py --out DIR [--image IMAGE] [--podman podman]

Prints the bundle's size, the run's time and what was wrong, if anything; exit status 0 when nothing was.
``tools/hardware_fixture.py DIR`` makes the run's results a fixture (tests/fixtures/hardware).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGE = os.environ.get("GPUFABRIC_IMAGE", "localhost/gpufabric/debian12-systemd:latest")
BUNDLE = ROOT / ".build" / "hardware-bundle"
STANDIN = ROOT / ".build" / "hardware-image-standin"
PROBE_MODULES = ("gpu_info", "connectx_info", "imex_info", "peermem_info", "fabric_facts")
NO_GPU = "no NVIDIA GPU here"
RUN_LIMIT_S = 180
# In the container: the stand-in of the lent machine's image, then the run as it is done there.
CONTAINER_SCRIPT = """set -eu
echo "network interfaces: $(ls /sys/class/net | tr '\\n' ' ')"
pip_wheel=$(ls /standin/pip-*.whl)
python3 "$pip_wheel/pip" install --quiet --disable-pip-version-check --root-user-action=ignore --no-index \\
  --no-deps --no-compile --target /opt/device-image /standin/*.whl
export PYTHONPATH=/opt/device-image
exec bash /src/tools/hardware-run.sh
"""


def container_python(podman: str, image: str) -> str:
    """The test image's ``python3`` version, ``major.minor``."""
    done = subprocess.run([podman, "run", "--rm", "--network=none", image, "python3", "-c",
                           "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"],
                          capture_output=True, text=True, check=True, timeout=120)
    return done.stdout.strip()


def judge(outdir: Path, log: str, seconds: float) -> list[str]:
    """What is wrong with an offline run's results in ``outdir`` (empty when nothing), one line each."""
    problems = []
    interfaces = next((line.split(":", 1)[1].split() for line in log.splitlines()
                       if line.startswith("network interfaces:")), None)
    if interfaces != ["lo"]:
        problems.append(f"the container had the network interfaces {interfaces}, not only lo")
    for text in ("Looking in indexes", "Downloading", "Collecting"):
        if text in log:
            problems.append(f"pip reached for an index ('{text}' in the log)")
    if "installed in" not in log:
        problems.append("the bundle was not installed")
    try:
        modules = json.loads((outdir / "modules.json").read_text(encoding="utf-8"))
        summary = json.loads((outdir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return [*problems, f"the run left no results: {exc}"]
    for name in PROBE_MODULES:
        result = modules.get(name, {"failed": True, "msg": "not run"})
        if result.get("failed"):
            problems.append(f"{name} failed: {result.get('msg')}")
    gpu = modules.get("gpu_info", {})
    if (gpu.get("count"), gpu.get("driver_loaded")) != (0, False):
        problems.append(f"gpu_info reported {gpu.get('count')} GPU(s), driver loaded {gpu.get('driver_loaded')}")
    if summary.get("verdict") != NO_GPU or summary.get("status") != 0:
        problems.append(f"the verdict is {summary.get('verdict')!r} (status {summary.get('status')}), not {NO_GPU!r}")
    tests = summary.get("tests") or []
    if not tests:
        problems.append("no hardware test ran")
    for test in tests:
        if test["outcome"] != "not applicable" or not test["reason"].startswith(NO_GPU):
            problems.append(f"{test['test']}: {test['outcome']} {test['reason']}".rstrip())
    if seconds > RUN_LIMIT_S:
        problems.append(f"the run took {seconds:.0f} s, over {RUN_LIMIT_S} s")
    return problems


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.glob("*.whl"))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the run's results folder (emptied first)")
    parser.add_argument("--image", default=IMAGE)
    parser.add_argument("--podman", default="podman")
    args = parser.parse_args(argv)
    if not list(BUNDLE.glob("*.whl")):
        print(f"hardware-offline: no bundle in {BUNDLE}; run make hardware-bundle", file=sys.stderr)
        return 1
    python = container_python(args.podman, args.image)
    subprocess.run([sys.executable, str(ROOT / "tools" / "hardware_bundle.py"), "--image-standin",
                    "--python-version", python, "--dest", str(STANDIN)], check=True, stdout=subprocess.DEVNULL)
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.iterdir():
        old.unlink()
    command = [args.podman, "run", "--rm", "--network=none", "--name", f"gpufabric-hardware-offline-{os.getpid()}",
               "-v", f"{ROOT}:/src:ro", "-v", f"{STANDIN}:/standin:ro", "-v", f"{args.out.resolve()}:/out",
               "-e", "OUT=/out", "-e", f"HARDWARE_WHERE=podman container of {args.image}, --network=none, "
               f"Python {python} (tests/molecule/hardware_offline.py)", args.image, "bash", "-c", CONTAINER_SCRIPT]
    print("+ " + shlex.join(command[:-1]) + " '<script>'", flush=True)
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=RUN_LIMIT_S + 120)
    seconds = time.monotonic() - start
    print(done.stdout + done.stderr, end="")
    problems = judge(args.out, done.stdout, seconds)
    if done.returncode != 0:
        problems.insert(0, f"the run exited {done.returncode}")
    print(f"hardware-offline: bundle {_size(BUNDLE) / 1024 / 1024:.2f} MiB, image stand-in "
          f"{_size(STANDIN) / 1024 / 1024:.2f} MiB; the container ran {seconds:.1f} s")
    for problem in problems:
        print(f"hardware-offline: FAILED: {problem}")
    if not problems:
        print(f"hardware-offline: passed: offline install, five modules ran, every hardware test: {NO_GPU}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
