#!/usr/bin/env bash
# The hardware tier on a lent GPU machine that reaches nothing, in one command (CONTRIBUTING.md, "The hardware tier").
#
#   bash tools/hardware-run.sh [OUTDIR]
#
# On that machine: installs the carried bundle (`make hardware-bundle`, made where PyPI is reachable: ansible-core and
# what else the machine's image lacks) with `pip install --no-index --no-deps --target` into a temp dir, makes this
# checkout importable as gpufabric.cluster, records the host (tools/hardware_run.py record: NVML's answers to the
# probe's queries, nvidia-smi -q -x, the files a sandbox may lack), runs the five probe modules through Ansible
# (one play, local connection, root /) and prints each one's JSON, runs tests/hardware (NVML against independent readings),
# and prints a table of the tests (passed, failed, not applicable and why) and the verdict. It writes nothing in the
# checkout (it may be read-only).
#
# Results go to $OUT (the device tool's folder that comes back), else OUTDIR, else a new temp dir (printed), as six flat
# files at most: hardware-run.log (all the output), recording.json, nvidia-smi.xml (where nvidia-smi ran),
# modules.json, hardware-tests.xml, summary.json. `python tools/hardware_fixture.py OUTDIR` then turns them into a fixture.
#
# Exit status: 0 when no test and no module failed, including on a host with no NVIDIA GPU ("no NVIDIA GPU here":
# every test says so); 1 when one failed; 2 when the run could not start (no bundle, no pip, Python older than 3.11).
#
# Environment: PYTHON (the interpreter, default python3: the machine's, with its nvidia-ml-py, pytest, jinja2, PyYAML
# and packaging), HARDWARE_BUNDLE (default .build/hardware-bundle), HARDWARE_WHERE (which machine this is, in words,
# recorded with the results), HARDWARE_STEP_TIMEOUT (seconds each step may take, default 120).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
BUNDLE="${HARDWARE_BUNDLE:-$ROOT/.build/hardware-bundle}"
STEP_TIMEOUT="${HARDWARE_STEP_TIMEOUT:-120}"
START="$EPOCHREALTIME"

if [ -n "${OUT:-}" ]; then
  OUTDIR="$OUT"
elif [ "$#" -gt 0 ]; then
  OUTDIR="$1"
else
  OUTDIR="$(mktemp -d /tmp/gpufabric-hardware-out.XXXXXX)"
fi
mkdir -p "$OUTDIR" || { echo "hardware-run: cannot create the results folder $OUTDIR" >&2; exit 2; }
OUTDIR="$(cd "$OUTDIR" && pwd)"
WORK="$(mktemp -d /tmp/gpufabric-hardware.XXXXXX)"
exec > >(tee "$OUTDIR/hardware-run.log") 2>&1
TEE_PID=$!
# at the end: the temp dir removed, and the log whole before the script's exit status is seen
trap 'rm -rf "$WORK"; exec >&- 2>&-; wait "$TEE_PID"' EXIT

step() { printf '\n=== %s\n' "$*"; }
seconds_since() { awk -v start="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", now - start }'; }
refuse() { echo "hardware-run: $*"; exit 2; }

step "hardware run of $ROOT, results in $OUTDIR"
PYTHON="$(command -v "$PYTHON")" || refuse "PYTHON: no interpreter '${PYTHON}' on PATH"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || refuse "PYTHON: $PYTHON is older than Python 3.11, which ansible-core 2.19 needs"
"$PYTHON" -c 'import sys, platform; print(f"python {platform.python_version()} at {sys.executable}")'
"$PYTHON" -m pip --version >/dev/null 2>&1 || refuse "PYTHON: $PYTHON has no pip to install the bundle with"

step "install the bundle $BUNDLE (offline)"
shopt -s nullglob
wheels=("$BUNDLE"/*.whl)
shopt -u nullglob
[ "${#wheels[@]}" -gt 0 ] || refuse "HARDWARE_BUNDLE: no wheels in $BUNDLE; run 'make hardware-bundle' where PyPI is \
reachable and carry .build/hardware-bundle"
t0="$EPOCHREALTIME"
"$PYTHON" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-index --no-deps \
  --no-compile --no-cache-dir --target "$WORK/site" "${wheels[@]}" \
  || refuse "pip could not install the bundle $BUNDLE into $WORK/site"
install_seconds="$(seconds_since "$t0")"
printf '%s\n' "${wheels[@]##*/}"
echo "installed in ${install_seconds} s"

# The bundle first, then the collection (this checkout, linked as ansible_collections/gpufabric/cluster), then what
# the interpreter already had. Nothing is written in the checkout: the bytecode goes to the temp dir (compiled once for
# every step), pytest keeps no cache.
mkdir -p "$WORK/collections/ansible_collections/gpufabric" "$WORK/ansible-home" "$WORK/tmp"
ln -s "$ROOT" "$WORK/collections/ansible_collections/gpufabric/cluster"
export PYTHONPATH="$WORK/site:$WORK/collections${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPYCACHEPREFIX="$WORK/pycache" PYTHONUTF8=1 LC_ALL=C.UTF-8 TMPDIR="$WORK/tmp"
export ANSIBLE_HOME="$WORK/ansible-home" ANSIBLE_LOCAL_TEMP="$WORK/ansible-home/tmp"
export ANSIBLE_COLLECTIONS_PATH="$WORK/collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=false
export ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0 ANSIBLE_RETRY_FILES_ENABLED=false
# the TEST FIXTURE callback that keeps each module's result with its warnings (the stdout callback shows them apart)
export ANSIBLE_LOAD_CALLBACK_PLUGINS=1 ANSIBLE_CALLBACK_PLUGINS="$ROOT/tests/hardware/callback"
export ANSIBLE_CALLBACKS_ENABLED=gpufabric_hardware_result
"$PYTHON" - <<'PY'
from importlib import metadata
for name in ("ansible-core", "resolvelib", "jinja2", "PyYAML", "packaging", "cryptography", "nvidia-ml-py", "pytest"):
    try:
        print(f"{name} {metadata.version(name)}")
    except metadata.PackageNotFoundError:
        print(f"{name}: not installed" + (" (only ansible-vault and password hashing need it)"
                                          if name == "cryptography" else ""))
PY

step "record the host"
t0="$EPOCHREALTIME"
timeout "$STEP_TIMEOUT" "$PYTHON" "$ROOT/tools/hardware_run.py" record "$OUTDIR" --where "${HARDWARE_WHERE:-}"
record_status=$?
record_seconds="$(seconds_since "$t0")"
[ "$record_status" = 0 ] || echo "hardware-run: recording the host failed (exit status $record_status)"

step "the probe modules through Ansible (one play, local connection, root /)"
t0="$EPOCHREALTIME"
# each module a task named after it, every one run whatever the others did
cat >"$WORK/probe.yml" <<'YAML'
- name: The probe modules on this host
  hosts: localhost
  gather_facts: false
  ignore_errors: true
  tasks:
    - {name: gpu_info, gpufabric.cluster.gpu_info: {}}
    - {name: connectx_info, gpufabric.cluster.connectx_info: {}}
    - {name: imex_info, gpufabric.cluster.imex_info: {}}
    - {name: peermem_info, gpufabric.cluster.peermem_info: {}}
    - {name: fabric_facts, gpufabric.cluster.fabric_facts: {}}
YAML
GPUFABRIC_HARDWARE_RESULT="$WORK/modules.json" timeout "$STEP_TIMEOUT" "$PYTHON" -m ansible.cli.playbook \
  -i localhost, -c local -e "ansible_python_interpreter=$PYTHON" "$WORK/probe.yml" >"$WORK/probe.out"
playbook_status=$?
echo "ansible-playbook exit status $playbook_status"
[ "$playbook_status" = 0 ] || cat "$WORK/probe.out"
"$PYTHON" "$ROOT/tools/hardware_run.py" modules "$OUTDIR" "$WORK/modules.json"
modules_seconds="$(seconds_since "$t0")"

step "tests/hardware"
t0="$EPOCHREALTIME"
(cd "$ROOT" && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 timeout "$STEP_TIMEOUT" "$PYTHON" -m pytest -q -rfE -p no:cacheprovider \
  -o junit_family=xunit2 --junitxml="$OUTDIR/hardware-tests.xml" tests/hardware)
echo "pytest exit status $?"
tests_seconds="$(seconds_since "$t0")"

step "summary"
"$PYTHON" "$ROOT/tools/hardware_run.py" summary "$OUTDIR" --timing "install=$install_seconds" \
  --timing "record=$record_seconds" --timing "modules=$modules_seconds" --timing "tests=$tests_seconds" \
  --timing "total=$(seconds_since "$START")"
status=$?
echo "hardware run: $(seconds_since "$START") s in all; results in $OUTDIR"
exit "$status"
