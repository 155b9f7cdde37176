# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""``make hardware-bundle``: the wheels tools/hardware-run.sh installs on a lent GPU machine that reaches nothing.

The lent machines (CONTRIBUTING.md, "The hardware tier") have Python 3.12 with nvidia-ml-py, pytest, jinja2, PyYAML,
MarkupSafe and packaging (:data:`DEVICE_IMAGE`), but no ansible-core. The bundle is ansible-core at the pin of
tools/requirements-run.txt and each of its requirements the machine lacks, every one a pure-Python or abi3 wheel, so
that it installs with ``pip install --no-index --no-deps`` on any CPython 3.11+ on x86-64 (the lent machine's 3.12,
the test image's 3.11). cryptography is left out (:data:`LEFT_OUT`).

    python tools/hardware_bundle.py [--dest .build/hardware-bundle]
        the bundle, its size printed, and the path to name in the device tool's ``carry``
    python tools/hardware_bundle.py --image-standin --python-version 3.11 --dest .build/hardware-image-standin
        TEST FIXTURE for the offline container run (tests/molecule/hardware_offline.py): the packages of
        :data:`DEVICE_IMAGE` (and pip) at the versions this interpreter has, for the test image's Python, which
        has none of them; installed there first, they make the container what the lent machine's image is

Downloads go through this interpreter's pip (``python -m pip download``), from the index pip is configured with.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import typing as t
import zipfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS_RUN = ROOT / "tools" / "requirements-run.txt"
BUNDLE = ROOT / ".build" / "hardware-bundle"
PINNED = "ansible-core"
# What the lent machine's image already holds that the hardware run uses (the device tool's KINDS.md, "Python
# packages already there"); canonical names.
DEVICE_IMAGE = ("jinja2", "markupsafe", "pyyaml", "packaging", "pytest", "pluggy", "iniconfig", "nvidia-ml-py", "pip")
# Requirements of ansible-core that the bundle leaves out, and why.
LEFT_OUT = {
    "cryptography": "only ansible-vault and password hashing import it, neither of which the hardware run uses; "
                    "its own requirement, cffi, has no abi3 wheel, so it would tie the bundle to one Python",
}
# The manylinux tags of an x86-64 machine with glibc 2.28 or newer (pip matches each one exactly)
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "linux_x86_64")
DEVICE_PYTHON = "3.12"
CARRY_LIMIT_MIB = 64  # the device tool's limit on what one call carries, the working tree included
WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<python>[^-]+)-(?P<abi>[^-]+)-"
                        r"(?P<platform>[^-]+)\.whl$")


def canonical(name: str) -> str:
    """PEP 503's normalised name (``PyYAML`` -> ``pyyaml``, ``ansible_core`` -> ``ansible-core``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pin(text: str, name: str = PINNED) -> str:
    """The version ``name`` is pinned to (``name==VERSION``) in a requirements file's ``text``.

    Raises ``ValueError`` naming the package when it is not pinned there with ``==`` exactly once.
    """
    pins = []
    for line in text.splitlines():
        requirement = line.split("#", 1)[0].strip()
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([A-Za-z0-9.!+_-]+)", requirement)
        if match and canonical(match.group(1)) == canonical(name):
            pins.append(match.group(2))
        elif requirement and canonical(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]) == canonical(name):
            raise ValueError(f"{name} is not pinned with == in {REQUIREMENTS_RUN.name}: {requirement!r}")
    if len(pins) != 1:
        raise ValueError(f"{name} must be pinned (==) exactly once in {REQUIREMENTS_RUN.name}; found {len(pins)}")
    return pins[0]


def requires_dist(wheel: Path) -> list[str]:
    """The ``Requires-Dist`` lines of a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as archive:
        name = next((member for member in archive.namelist()
                     if member.endswith(".dist-info/METADATA") and member.count("/") == 1), None)
        if name is None:
            raise ValueError(f"{wheel.name}: no .dist-info/METADATA")
        text = archive.read(name).decode("utf-8", "replace")
    return [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]


def to_bundle(requirements: t.Iterable[str], present: t.Iterable[str] = DEVICE_IMAGE,
              left_out: t.Iterable[str] = tuple(LEFT_OUT)) -> list[str]:
    """The requirements (``Requires-Dist`` lines) to download: those without an ``extra`` marker whose package is
    neither ``present`` nor ``left_out``, as ``name<specifier>`` without the marker, sorted by name."""
    skip = {canonical(name) for name in (*present, *left_out)}
    chosen = {}
    for line in requirements:
        requirement, _semicolon, marker = line.partition(";")
        if "extra" in marker:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*\(?\s*([^)]*)\)?\s*$", requirement)
        if not match:
            raise ValueError(f"not a requirement: {line!r}")
        name = canonical(match.group(1))
        if name not in skip:
            chosen[name] = name + match.group(3).replace(" ", "")
    return [chosen[name] for name in sorted(chosen)]


def portable(filename: str) -> bool:
    """Whether a wheel installs on every CPython 3.11+: pure Python (``py3-none-any``) or the stable ABI
    (``abi3``); ``False`` also for a name that is not a wheel's."""
    match = WHEEL_NAME.match(filename)
    if not match:
        return False
    if match.group("abi") == "none" and match.group("platform") == "any":
        return any(tag.startswith("py3") for tag in match.group("python").split("."))
    return match.group("abi") == "abi3"


def wheel_name(filename: str) -> str:
    """The canonical package name of a wheel file; raises ``ValueError`` for a name that is not a wheel's."""
    match = WHEEL_NAME.match(filename)
    if not match:
        raise ValueError(f"{filename!r} is not a wheel's file name")
    return canonical(match.group("name"))


def pip_download(dest: Path, requirements: list[str], python_version: str, deps: bool) -> None:
    """``pip download`` binary wheels of ``requirements`` for CPython ``python_version`` on x86-64 Linux."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
               "--only-binary=:all:", "--implementation", "cp", "--python-version", python_version,
               "--dest", str(dest)]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    if not deps:
        command.append("--no-deps")
    subprocess.run(command + requirements, check=True)


def _fresh(dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("*.whl"):
        old.unlink()


def build_bundle(dest: Path, python_version: str = DEVICE_PYTHON) -> list[Path]:
    """Download the bundle into ``dest`` (its old wheels removed first); return its wheels."""
    _fresh(dest)
    pin = read_pin(REQUIREMENTS_RUN.read_text(encoding="utf-8"))
    pip_download(dest, [f"{PINNED}=={pin}"], python_version, deps=False)
    core = next(dest.glob("ansible_core-*.whl"))
    more = to_bundle(requires_dist(core))
    if more:
        pip_download(dest, more, python_version, deps=False)
    wheels = sorted(dest.glob("*.whl"))
    names = [wheel_name(wheel.name) for wheel in wheels]
    expected = sorted([PINNED] + [re.split(r"[<>=!~]", spec, maxsplit=1)[0] for spec in more])
    if sorted(names) != expected:
        raise ValueError(f"{dest}: the bundle holds {sorted(names)}, expected {expected}")
    not_portable = [wheel.name for wheel in wheels if not portable(wheel.name)]
    if not_portable:
        raise ValueError(f"{dest}: not pure Python or abi3, so tied to one Python: {', '.join(not_portable)}")
    return wheels


def build_image_standin(dest: Path, python_version: str) -> list[Path]:
    """TEST FIXTURE: download :data:`DEVICE_IMAGE` at this interpreter's versions, with what they need, into
    ``dest`` (its old wheels removed first); return its wheels."""
    _fresh(dest)
    pins = []
    for name in DEVICE_IMAGE:
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            raise ValueError(f"{name} is not installed in {sys.prefix}; the stand-in takes its versions from there "
                             "(make test-venv)") from None
    pip_download(dest, pins, python_version, deps=True)
    return sorted(dest.glob("*.whl"))


def mib(size: int) -> str:
    """A size in bytes as MiB with two decimals."""
    return f"{size / 1024 / 1024:.2f} MiB"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dest", type=Path, default=BUNDLE)
    parser.add_argument("--python-version", default=DEVICE_PYTHON)
    parser.add_argument("--image-standin", action="store_true")
    args = parser.parse_args(argv)
    try:
        wheels = (build_image_standin(args.dest, args.python_version) if args.image_standin
                  else build_bundle(args.dest, args.python_version))
    except (ValueError, OSError, subprocess.CalledProcessError) as exc:
        print(f"hardware-bundle: {exc}", file=sys.stderr)
        return 1
    size = sum(wheel.stat().st_size for wheel in wheels)
    for wheel in wheels:
        print(f"{mib(wheel.stat().st_size):>10}  {wheel.name}")
    print(f"{mib(size):>10}  in all, {len(wheels)} wheels in {args.dest}")
    if not args.image_standin:
        carry = os.path.relpath(args.dest, ROOT)
        if carry.startswith(".."):
            print(f"{args.dest} is outside the checkout {ROOT}: the device tool carries only paths inside it")
        else:
            print(f"device tool: carry [\"{carry}\"] (within the {CARRY_LIMIT_MIB} MiB a call carries with the "
                  f"working tree); command: bash tools/hardware-run.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
