# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpufabric.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet benchmark: preflight over N simulated hosts, and three ways of probing one fleet.

Every simulated host is its own copy of a recorded fixture tree (tests/fixtures/build_trees.py,
the GB200 compute tray by default) in a temp directory, reached with ``ansible_connection: local``
and probed through ``root`` / ``gpufabric_probe_root``.  This machine has no NVML, so the probes
fall back to PCI for the GPU list (as on a host whose driver is not loaded); the rest is read from
the tree as on a real host.

1. Sweep: the real ``gpufabric.cluster.preflight`` playbook for each N in ``--sizes``; per N the
   wall time, the peak RSS of the ansible-playbook process and of its whole process tree (its
   forks and the module processes), the controller CPU seconds and the cost per host.  In the same
   run, for every N, the floor: a generated playbook of one ``ansible.builtin.ping`` task
   (``gather_facts: false``) over the same inventory with the same settings (one module execution
   per host), and preflight / floor in CPU and in wall per host.  Each run's CPU is then split into the
   module each host runs (``fabric_facts``, ``ping``: on a real fleet it runs on the host, here on this
   machine; BENCH FIXTURE bench/module_cpu) and the rest, the controller's own share; the verdict is
   preflight's controller CPU per host against the floor's (at most 1.5x).
2. Three ways, one fleet of ``--ways-size`` hosts, same forks: ``fabric_facts`` once, the four
   ``_info`` modules as separate tasks, and deepops / Cloud Native Stack style shell probing
   (``lspci | grep``, ``ibdev2netdev``, ``lsmod | grep``, ``nvidia-smi --query-gpu`` as separate
   ``shell`` tasks, each parsed with ``set_fact``), answered from the trees by the BENCH FIXTURE
   tools of bench/fixture_tools.py.  Every way ends with the same summary (GPUs, RDMA ports,
   peermem per host) written once on the controller, and the summaries must agree.

Usage (from the repository root, after ``make test-venv collection``):
  PYTHONPATH=.build/collections .venv/bin/python bench/fleet_preflight.py --sizes 18 72 288 --forks 25
  PYTHONPATH=.build/collections .venv/bin/python bench/fleet_preflight.py --sizes 18 72 288 --forks 25 --rounds 3
  PYTHONPATH=.build/collections .venv/bin/python bench/fleet_preflight.py --quick     # 2 hosts, smoke run
  PYTHONPATH=.build/collections .venv/bin/python bench/fleet_preflight.py --sizes 18 --ways-size 0 --profile /tmp/prof
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(REPO, "tests")]
from fixture_tools import write_ip_passthrough, write_tools  # noqa: E402
from fixtures import build_trees  # noqa: E402  (the shared TEST FIXTURES package, tests/fixtures)

MODULE_CPU_FIXTURE = os.path.join(HERE, "module_cpu")  # BENCH FIXTURE: sitecustomize.py, see there
PROFILE_FIXTURE = os.path.join(HERE, "controller_profile")  # BENCH FIXTURE of --profile: sitecustomize.py, see there
PAGE = os.sysconf("SC_PAGE_SIZE")
MIB = 1024 * 1024


# --- controller memory ---------------------------------------------------------------------------

def _stat(pid: str) -> tuple[int, int] | None:
    """(ppid, rss bytes) of a process from /proc/<pid>/stat, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()  # fields from 3 (state) on; comm may hold spaces
    return int(fields[1]), int(fields[21]) * PAGE


class MemorySampler(threading.Thread):
    """Samples the RSS of one process and the summed RSS of its process tree every ``interval`` s."""

    def __init__(self, pid: int, interval: float):
        super().__init__(daemon=True)
        self.pid = pid
        self.interval = interval
        self.peak_main = 0
        self.peak_tree = 0
        self.peak_procs = 0
        self.samples = 0
        self._halt = threading.Event()

    def sample(self) -> None:
        """Take one sample: scan /proc for the parent links, walk down from ``pid``."""
        children: dict[int, list[int]] = {}
        rss: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            info = _stat(entry)
            if info is None:
                continue
            pid = int(entry)
            children.setdefault(info[0], []).append(pid)
            rss[pid] = info[1]
        if self.pid not in rss:
            return
        tree, todo = 0, [self.pid]
        count = 0
        while todo:
            pid = todo.pop()
            tree += rss.get(pid, 0)
            count += 1
            todo.extend(children.get(pid, ()))
        self.peak_main = max(self.peak_main, rss[self.pid])
        self.peak_tree = max(self.peak_tree, tree)
        self.peak_procs = max(self.peak_procs, count)
        self.samples += 1

    def run(self) -> None:
        while not self._halt.is_set():
            self.sample()
            self._halt.wait(self.interval)

    def stop(self) -> None:
        """Stop sampling and wait for the thread."""
        self._halt.set()
        self.join()


# --- one measured ansible-playbook run ----------------------------------------------------------

@dataclass
class Run:
    """What one ansible-playbook run cost on the controller."""

    label: str
    hosts: int
    wall: float
    cpu: float
    peak_main: int
    peak_tree: int
    peak_procs: int
    samples: int
    log: str
    load: float  # 1-minute load average at the end of the run (the machine is shared)
    modules: dict[str, tuple[int, float]]  # module name -> (processes, CPU seconds), bench/module_cpu


@dataclass
class Settings:
    """The Ansible settings every run uses (environment variables, printed with the results)."""

    forks: int
    pipelining: bool
    fact_cache: str
    fact_cache_timeout: int
    callback: str
    workdir: str

    def environment(self, strategy: str) -> dict[str, str]:
        """The ANSIBLE_* variables for one run."""
        env = {
            "ANSIBLE_FORKS": str(self.forks),
            "ANSIBLE_PIPELINING": str(self.pipelining),
            "ANSIBLE_STRATEGY": strategy,
            "ANSIBLE_STDOUT_CALLBACK": self.callback,
            "ANSIBLE_HOST_KEY_CHECKING": "False",
            "ANSIBLE_RETRY_FILES_ENABLED": "False",
            "ANSIBLE_NOCOLOR": "True",
            "ANSIBLE_LOCAL_TEMP": os.path.join(self.workdir, "ansible-local"),
            "ANSIBLE_REMOTE_TEMP": os.path.join(self.workdir, "ansible-remote"),
            "ANSIBLE_CACHE_PLUGIN": self.fact_cache,
        }
        if self.fact_cache == "jsonfile":
            env["ANSIBLE_CACHE_PLUGIN_CONNECTION"] = os.path.join(self.workdir, "facts")
            env["ANSIBLE_CACHE_PLUGIN_TIMEOUT"] = str(self.fact_cache_timeout)
        return env


def run_playbook(label: str, playbook: str, inventory: str, hosts: int, settings: Settings, strategy: str,
                 interval: float, extra_args: list[str], profile: str | None = None) -> Run:
    """Run ansible-playbook once, sampling its memory; fail loudly if the run fails.

    ``profile``: a directory for the cProfile files of ``ansible-playbook`` and its workers (bench/controller_profile);
    such a run records no module CPU (the profile's fixture takes the place of bench/module_cpu's on the path) and its
    CPU holds the profiler's overhead.
    """
    binary = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    env = dict(os.environ)
    env.setdefault("ANSIBLE_COLLECTIONS_PATH", os.path.join(REPO, ".build", "collections"))
    env.setdefault("ANSIBLE_COLLECTIONS_SCAN_SYS_PATH", "true")
    env.update(settings.environment(strategy))
    # BENCH FIXTURE (bench/module_cpu): every module process appends its name and CPU seconds to this file.
    module_record = os.path.join(settings.workdir, f"{label}.module-cpu")
    with open(module_record, "w", encoding="utf-8"):
        pass  # afresh: a run of a label used before (--sizes 18 18) counts its own modules only
    env["GPUFABRIC_BENCH_MODULE_CPU"] = module_record
    fixture = MODULE_CPU_FIXTURE
    if profile is not None:
        os.makedirs(profile, exist_ok=True)
        env["GPUFABRIC_BENCH_PROFILE"] = profile
        fixture = PROFILE_FIXTURE
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [fixture, env.get("PYTHONPATH")]))
    log = os.path.join(settings.workdir, f"{label}.log")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(log, "w", encoding="utf-8") as output:
        start = time.perf_counter()
        process = subprocess.Popen([binary, "-i", inventory, playbook, *extra_args], stdout=output,
                                   stderr=subprocess.STDOUT, env=env, cwd=settings.workdir)
        sampler = MemorySampler(process.pid, interval)
        sampler.start()
        returncode = process.wait()
        wall = time.perf_counter() - start
        sampler.stop()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if returncode != 0:
        with open(log, encoding="utf-8") as handle:
            tail = handle.read()[-4000:]
        raise SystemExit(f"{label}: ansible-playbook exited {returncode}, log {log}:\n{tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(label, hosts, wall, cpu, sampler.peak_main, sampler.peak_tree, sampler.peak_procs,
               sampler.samples, log, os.getloadavg()[0], read_module_cpu(module_record))


def read_module_cpu(path: str) -> dict[str, tuple[int, float]]:
    """module name -> (processes, CPU seconds) from the lines ``<name> <seconds>`` of bench/module_cpu.

    No file (no module ran) or an empty one is no module; a line of another shape fails the benchmark, naming it.
    """
    modules: dict[str, tuple[int, float]] = {}
    if not os.path.exists(path):
        return modules
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            name, _separator, seconds = line.strip().rpartition(" ")
            try:
                cpu = float(seconds)
            except ValueError:
                cpu = -1.0
            if not name or not math.isfinite(cpu) or cpu < 0:
                raise SystemExit(f"{path}: line {number} is not '<module> <CPU seconds>': {line.rstrip()!r}")
            count, total = modules.get(name, (0, 0.0))
            modules[name] = (count + 1, total + cpu)
    return modules


def merge_profiles(directory: str) -> tuple[pstats.Stats, int, int]:
    """All cProfile files of one profiled run (bench/controller_profile) merged, written as ``<directory>.prof``;
    return the merged statistics and how many main and worker files were read. A run that wrote no profile of
    ``ansible-playbook`` fails the benchmark, naming the directory. A worker's file that cannot be read (empty or cut
    short: a worker ended while it wrote its profile) is left out with one line naming it."""
    names = sorted(os.listdir(directory))
    mains = [name for name in names if name.startswith("main-") and name.endswith(".prof")]
    workers = [name for name in names if name.startswith("worker-") and name.endswith(".prof")]
    if not mains:
        raise SystemExit(f"{directory}: no profile of ansible-playbook (main-<pid>.prof) was written")
    stats = pstats.Stats(*(os.path.join(directory, name) for name in mains))
    read = 0
    for name in workers:
        try:
            stats.add(os.path.join(directory, name))
        except (EOFError, ValueError, TypeError) as exc:  # marshal's errors for an empty or truncated file
            print(f"  {directory}/{name}: left out, not a complete profile ({type(exc).__name__}: {exc})")
        else:
            read += 1
    stats.dump_stats(directory + ".prof")
    return stats, len(mains), read


def print_profile(label: str, stats: pstats.Stats, mains: int, workers: int, top: int) -> None:
    """The ``top`` functions of a merged controller profile by their own CPU, with their cumulative CPU and calls."""
    entries = stats.stats  # type: ignore[attr-defined]  # {(file, line, function): (primitive, calls, own, cum, _)}
    print(f"{label}: {mains} ansible-playbook and {workers} worker profile(s), {stats.total_tt:.2f} CPU s profiled "
          f"(the profiler's overhead included)")
    print(f"{'own s':>8} {'cumulative s':>12} {'calls':>9}  function")
    for (path, line, function), (_primitive, calls, own, cumulative, _callers) in sorted(
            entries.items(), key=lambda item: item[1][2], reverse=True)[:top]:
        where = f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}:{line}" if line else path
        print(f"{own:>8.3f} {cumulative:>12.3f} {calls:>9}  {function} ({where})")


# --- the fleet ----------------------------------------------------------------------------------

def build_fleet(workdir: str, tree: str, count: int) -> list[tuple[str, str]]:
    """Build the recorded tree once and copy it per host; return [(host name, root)]."""
    source = os.path.join(workdir, "source")
    root = build_trees.build_tree(tree, source)
    write_ip_passthrough(root)
    hosts_dir = os.path.join(workdir, "hosts")
    os.makedirs(hosts_dir, exist_ok=True)
    fleet = []
    for index in range(1, count + 1):
        name = f"tray{index:03d}"
        dest = os.path.join(hosts_dir, name)
        shutil.copytree(root, dest, symlinks=True)
        shutil.copyfile(root + ".nvml.json", dest + ".nvml.json")
        fleet.append((name, dest))
    return fleet


def write_inventory(path: str, fleet: list[tuple[str, str]], tools: str, facts_parallel: bool) -> str:
    """A YAML inventory (JSON is YAML) of the fleet: local connection, the venv's python.

    ``ansible_facts_parallel``: preflight gathers with two facts modules (setup, fabric_facts); in
    parallel mode gather_facts starts both through async_wrapper and polls async_status, and with no
    play ``gather_timeout`` ansible-core 2.19 kills a facts module still running after about 5 s
    (ansible/ansible#87223), which a loaded controller hits at 18 hosts.  Serial is also cheaper.
    """
    inventory = {"all": {
        "hosts": {name: {"gpufabric_probe_root": root} for name, root in fleet},
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                 "ansible_facts_parallel": facts_parallel, "bench_tools": tools},
    }}
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(inventory, handle, indent=1)
    return path


# --- the three ways -----------------------------------------------------------------------------

def _summary_task(summary: str) -> dict:
    """The task every way ends with on every host: the same small summary as a fact."""
    return {"name": "Summarise what was found", "ansible.builtin.set_fact": {"bench_summary": summary}}


def _summary_play(dest: str) -> dict:
    """A second play (so that it also works under the free strategy): write every host's summary once."""
    return {"name": "Bench - write the summaries on the controller", "hosts": "localhost", "gather_facts": False,
            "tasks": [{"name": "Write the summary of every host", "ansible.builtin.copy": {
                "content": "{{ dict(groups['all'] | zip(groups['all'] | map('extract', hostvars, 'bench_summary')))"
                           " | to_nice_json }}\n",
                "dest": dest, "mode": "0644"}}]}


def _quiet(task: dict) -> dict:
    return {**task, "changed_when": False}


def ways(workdir: str) -> dict[str, tuple[list[dict], int, dict, str]]:
    """name -> (tasks, probe tasks per host, play keywords, summary file) for the three ways."""
    root = "{{ gpufabric_probe_root }}"
    fabric = [{"name": "Gather the GPU fabric facts", "gpufabric.cluster.fabric_facts": {"root": root}}]
    fabric_summary = ("{{ {'gpus': ansible_facts['gpufabric']['gpu']['count'], "
                      "'ports': ansible_facts['gpufabric']['connectx']['ports'] | map(attribute='netdev') | list, "
                      "'peermem': ansible_facts['gpufabric']['peermem']['nvidia_peermem']['loaded']} }}")
    info = [
        {"name": "Probe the GPUs", "gpufabric.cluster.gpu_info": {"root": root}, "register": "bench_gpu"},
        {"name": "Probe the ConnectX ports", "gpufabric.cluster.connectx_info": {"root": root},
         "register": "bench_connectx"},
        {"name": "Probe IMEX", "gpufabric.cluster.imex_info": {"root": root}, "register": "bench_imex"},
        {"name": "Probe peermem", "gpufabric.cluster.peermem_info": {"root": root}, "register": "bench_peermem"},
    ]
    info_summary = ("{{ {'gpus': bench_gpu['count'], "
                    "'ports': bench_connectx['ports'] | map(attribute='netdev') | list, "
                    "'peermem': bench_peermem['nvidia_peermem']['loaded']} }}")

    def shell(name: str, command: str, register: str) -> dict:
        return _quiet({"name": name, "ansible.builtin.shell": {"cmd": command, "executable": "/bin/bash"},
                       "register": register, "failed_when": False})

    shell_tasks = [
        shell("List the NVIDIA GPUs", "set -o pipefail; lspci | grep -i nvidia | grep -Ei '3D controller|VGA'",
              "__lspci_gpu"),
        {"name": "Record the GPUs",
         "ansible.builtin.set_fact": {
             "bench_pci_gpus": "{{ __lspci_gpu.stdout_lines | map('split', ' ') | map('first') | list }}"}},
        shell("List the Mellanox adapters", "set -o pipefail; lspci -D | grep -i mellanox", "__lspci_nic"),
        shell("Map the RDMA devices to netdevs", "ibdev2netdev", "__ibdev2netdev"),
        {"name": "Record the RDMA ports",
         "ansible.builtin.set_fact": {
             "bench_rdma_ports": "{{ __ibdev2netdev.stdout_lines "
                                 "| map('regex_replace', '^(\\S+) port (\\d+) ==> (\\S+) \\((\\w+)\\)$', "
                                 "'\\1 \\2 \\3 \\4') | map('split', ' ') | list }}",
             "bench_mlx_functions": "{{ __lspci_nic.stdout_lines | map('split', ' ') | map('first') | list }}"}},
        shell("Check nvidia_peermem", "set -o pipefail; lsmod | grep -E '^(nvidia_peermem|nv_peer_mem) '",
              "__lsmod_peermem"),
        shell("Query the GPUs with nvidia-smi",
              "nvidia-smi --query-gpu=index,name,pci.bus_id,uuid,memory.total,fabric.state,fabric.cliqueId,"
              "fabric.clusterUuid --format=csv,noheader,nounits", "__nvidia_smi"),
        {"name": "Record the GPU details",
         "ansible.builtin.set_fact": {
             "bench_smi_gpus": "{{ __nvidia_smi.stdout_lines | map('split', ', ') | list }}",
             "bench_peermem_loaded": "{{ __lsmod_peermem.rc == 0 }}"}},
    ]
    shell_summary = ("{{ {'gpus': bench_smi_gpus | length if __nvidia_smi.rc == 0 else bench_pci_gpus | length, "
                     "'ports': bench_rdma_ports | map(attribute=2) | list, "
                     "'peermem': bench_peermem_loaded} }}")
    shell_play = {"environment": {"PATH": "{{ bench_tools }}:/usr/local/bin:/usr/bin:/bin",
                                  "BENCH_FIXTURE_ROOT": root}}
    out = os.path.join(workdir, "ways")
    return {
        "fabric_facts": ([*fabric, _summary_task(fabric_summary)], len(fabric), {}, f"{out}/fabric_facts.json"),
        "four _info": ([*info, _summary_task(info_summary)], len(info), {}, f"{out}/info.json"),
        "shell (deepops/CNS)": ([*shell_tasks, _summary_task(shell_summary)], len(shell_tasks), shell_play,
                                f"{out}/shell.json"),
    }


def write_way_playbook(path: str, name: str, tasks: list[dict], play: dict, summary: str | None) -> str:
    """One play over the whole fleet (no fact gathering, the way's tasks), then the summary play."""
    playbook = [{"name": f"Bench - probe the fleet: {name}", "hosts": "all", "gather_facts": False, **play,
                 "tasks": tasks}]
    if summary:
        playbook.append(_summary_play(summary))
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(playbook, handle, indent=1)
    return path


FLOOR_LIMIT = 1.5  # issues 16 and 40: preflight's controller CPU per host within 1.5x the floor's
PREFLIGHT_HOST_MODULE = "gpufabric.cluster.fabric_facts"  # the one module preflight runs on each host
FLOOR_HOST_MODULE = "ansible.modules.ping"  # the floor's one module per host


def write_floor_playbook(path: str) -> str:
    """The floor: one ``ansible.builtin.ping`` per host, no fact gathering (one module execution per host)."""
    playbook = [{"name": "Bench - the floor: one module execution per host", "hosts": "all", "gather_facts": False,
                 "tasks": [{"name": "Ping", "ansible.builtin.ping": {}}]}]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(playbook, handle, indent=1)
    return path


# --- reporting ----------------------------------------------------------------------------------

def _mib(value: int) -> str:
    return f"{value / MIB:.0f}"


def print_sweep(runs: list[Run]) -> None:
    """The N sweep table; the marginal columns are the slope from the previous N (fixed start-up cost removed)."""
    print(f"{'N':>5} {'wall s':>8} {'CPU s':>7} {'peak RSS main MiB':>17} {'peak RSS tree MiB':>17}"
          f" {'procs':>5} {'wall/host ms':>12} {'CPU/host ms':>11} {'marginal wall/host ms':>21}"
          f" {'marginal CPU/host ms':>20} {'load':>5}")
    previous: Run | None = None
    for run in runs:
        marginal_wall = marginal_cpu = "-"
        if previous is not None and run.hosts > previous.hosts:
            extra = run.hosts - previous.hosts
            marginal_wall = f"{(run.wall - previous.wall) / extra * 1000:.0f}"
            marginal_cpu = f"{(run.cpu - previous.cpu) / extra * 1000:.0f}"
        print(f"{run.hosts:>5} {run.wall:>8.1f} {run.cpu:>7.1f} {_mib(run.peak_main):>17} {_mib(run.peak_tree):>17}"
              f" {run.peak_procs:>5} {run.wall / run.hosts * 1000:>12.0f} {run.cpu / run.hosts * 1000:>11.0f}"
              f" {marginal_wall:>21} {marginal_cpu:>20} {run.load:>5.1f}")
        previous = run


def print_floor(pairs: list[tuple[Run, Run]]) -> None:
    """Per N: the whole of preflight's run and the floor's (one ping per host) side by side, preflight / floor per host.

    On this machine a run's CPU and wall hold every host's module too (``ansible_connection: local``); the verdict is
    the controller's own share (:func:`print_controller`), not these ratios.
    """
    print(f"{'N':>5} {'preflight CPU/host ms':>21} {'floor CPU/host ms':>17} {'ratio CPU':>9}"
          f" {'preflight wall/host ms':>22} {'floor wall/host ms':>18} {'ratio wall':>10} {'load pre/floor':>14}")
    for preflight, floor in pairs:
        ratio_cpu = preflight.cpu / max(floor.cpu, 1e-9)
        ratio_wall = preflight.wall / max(floor.wall, 1e-9)
        print(f"{preflight.hosts:>5} {preflight.cpu / preflight.hosts * 1000:>21.0f}"
              f" {floor.cpu / floor.hosts * 1000:>17.0f} {ratio_cpu:>8.2f}x"
              f" {preflight.wall / preflight.hosts * 1000:>22.0f} {floor.wall / floor.hosts * 1000:>18.0f}"
              f" {ratio_wall:>9.2f}x {preflight.load:>6.1f}/{floor.load:<7.1f}")


@dataclass(frozen=True)
class Split:
    """Where one run's CPU is: the one module every host runs, and the controller's own share (all the rest)."""

    module_runs: int  # processes that ran the host's module (N when every host ran it once)
    module: float  # CPU seconds of those processes and the tools they ran: on a real fleet, spent on the hosts
    controller: float  # CPU seconds of the rest: ansible-playbook, its forks, any other module (on the controller)


def split(run: Run, host_module: str) -> Split:
    """The run's CPU less the CPU of every process that ran ``host_module`` (bench/module_cpu) is the controller's."""
    runs, module = run.modules.get(host_module, (0, 0.0))
    return Split(runs, module, run.cpu - module)


def controller_ratio(preflight: Run, floor: Run) -> float:
    """Preflight's controller share over the floor's, per host (the two runs cover the same N hosts)."""
    pre = split(preflight, PREFLIGHT_HOST_MODULE).controller / preflight.hosts
    base = split(floor, FLOOR_HOST_MODULE).controller / floor.hosts
    return pre / max(base, 1e-9)


def within(ratio: float) -> str:
    """The verdict of one ratio against the goal: ``yes`` when the ratio as printed (two decimals) is at most
    FLOOR_LIMIT, so that a printed ``1.50x`` never reads ``no`` for a float's last digit."""
    return "yes" if round(ratio, 2) <= FLOOR_LIMIT else "no"


def print_controller(pairs: list[tuple[Run, Run]]) -> None:
    """Per N: the controller's own CPU per host of preflight and of the floor, the ratio and the verdict.

    What a real fleet's controller spends: the run's CPU less the module each host runs (which on a real fleet runs on
    the host, here on this machine).
    """
    print(f"{'N':>5} {'preflight controller/host ms':>28} {'floor controller/host ms':>24} {'ratio controller':>16}"
          f" {'within ' + format(FLOOR_LIMIT, 'g') + 'x':>11} {'load pre/floor':>14}")
    for preflight, floor in pairs:
        pre = split(preflight, PREFLIGHT_HOST_MODULE).controller
        base = split(floor, FLOOR_HOST_MODULE).controller
        ratio = controller_ratio(preflight, floor)
        print(f"{preflight.hosts:>5} {pre / preflight.hosts * 1000:>28.0f} {base / floor.hosts * 1000:>24.0f}"
              f" {ratio:>15.2f}x {within(ratio):>11} {preflight.load:>6.1f}/{floor.load:<7.1f}")


def print_modules(pairs: list[tuple[Run, Run]]) -> None:
    """Per N: the CPU of the one module per host (fabric_facts, ping), per host: what each GPU host pays in a real
    fleet; no verdict."""
    print(f"{'N':>5} {'preflight module/host ms':>24} {'floor module/host ms':>20} {'ratio module':>12}"
          f" {'module runs pre/floor':>21}")
    for preflight, floor in pairs:
        pre, base = split(preflight, PREFLIGHT_HOST_MODULE), split(floor, FLOOR_HOST_MODULE)
        print(f"{preflight.hosts:>5} {pre.module / preflight.hosts * 1000:>24.0f}"
              f" {base.module / floor.hosts * 1000:>20.0f} {pre.module / max(base.module, 1e-9):>11.2f}x"
              f" {f'{pre.module_runs}/{base.module_runs}':>21}")


def print_floor_rounds(pairs: list[tuple[Run, Run]]) -> None:
    """Per N over its rounds: the median (range) of the controller's ratio, the verdict from that median, and for
    comparison the medians of the module's ratio and of the whole run's CPU and wall ratios."""
    within_header = f"within {FLOOR_LIMIT:g}x"
    print(f"{'N':>5} {'rounds':>6} {'ratio controller':>21} {within_header:>11} {'ratio module':>21}"
          f" {'ratio CPU':>21} {'ratio wall':>21}")
    for count in dict.fromkeys(preflight.hosts for preflight, _floor in pairs):
        of_size = [(preflight, floor) for preflight, floor in pairs if preflight.hosts == count]
        controller = sorted(controller_ratio(preflight, floor) for preflight, floor in of_size)
        module = sorted(split(preflight, PREFLIGHT_HOST_MODULE).module
                        / max(split(floor, FLOOR_HOST_MODULE).module, 1e-9) for preflight, floor in of_size)
        cpu = sorted(preflight.cpu / max(floor.cpu, 1e-9) for preflight, floor in of_size)
        wall = sorted(preflight.wall / max(floor.wall, 1e-9) for preflight, floor in of_size)
        print(f"{count:>5} {len(of_size):>6} {_spread(controller):>21} {within(statistics.median(controller)):>11}"
              f" {_spread(module):>21} {_spread(cpu):>21} {_spread(wall):>21}")


def _spread(values: list[float]) -> str:
    """``1.42x (1.30-1.55)``: the median and the range of sorted ``values``."""
    return f"{statistics.median(values):.2f}x ({values[0]:.2f}-{values[-1]:.2f})"


def print_ways(runs: list[tuple[str, str, int, Run]], startup: Run | None) -> None:
    """The three-ways table, ratios to fabric_facts under the same strategy, raw and net of start-up."""
    base = {strategy: run for name, strategy, _tasks, run in runs if name == "fabric_facts"}
    fixed_wall = startup.wall if startup else 0.0
    fixed_cpu = startup.cpu if startup else 0.0
    print(f"{'way':<20} {'strategy':<8} {'wall s':>7} {'tasks/host':>10} {'wall/host ms':>12} {'CPU/host ms':>11}"
          f" {'peak RSS tree MiB':>17} {'ratio wall':>10} {'ratio CPU':>9} {'net ratio wall':>14}"
          f" {'net ratio CPU':>13} {'load':>5}")
    if startup:
        print(f"{'(empty play)':<20} {'linear':<8} {startup.wall:>7.1f} {0:>10} {'-':>12} {'-':>11}"
              f" {_mib(startup.peak_tree):>17} {'':>10} {'':>9} {'':>14} {'':>13} {startup.load:>5.1f}")
    for name, strategy, tasks, run in runs:
        ref = base[strategy]
        net_wall = (run.wall - fixed_wall) / max(ref.wall - fixed_wall, 1e-9)
        net_cpu = (run.cpu - fixed_cpu) / max(ref.cpu - fixed_cpu, 1e-9)
        print(f"{name:<20} {strategy:<8} {run.wall:>7.1f} {tasks:>10} {run.wall / run.hosts * 1000:>12.0f}"
              f" {run.cpu / run.hosts * 1000:>11.0f} {_mib(run.peak_tree):>17} {run.wall / ref.wall:>9.2f}x"
              f" {run.cpu / ref.cpu:>8.2f}x {net_wall:>13.2f}x {net_cpu:>12.2f}x {run.load:>5.1f}")


def check_sweep_report(report_dir: str, count: int) -> str:
    """The preflight report must name every host; return its summary line."""
    with open(os.path.join(report_dir, "preflight.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    if len(report["hosts"]) != count:
        raise SystemExit(f"preflight report in {report_dir} has {len(report['hosts'])} hosts, expected {count}")
    summary = report["summary"]
    return ", ".join(f"{key}={summary[key]}" for key in ("ready", "pass", "warn", "fail") if key in summary)


def check_way_summaries(workdir: str, count: int) -> str:
    """Every way must have found the same GPUs, ports and peermem state on every host."""
    found = {}
    for way in ("fabric_facts", "info", "shell"):
        path = os.path.join(workdir, "ways", f"{way}.json")
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as handle:
            found[way] = json.load(handle)
        if len(found[way]) != count:
            raise SystemExit(f"{way}: summary of {len(found[way])} hosts, expected {count}")
    first = next(iter(found.values()))
    for way, summary in found.items():
        if summary != first:
            host = next(h for h in first if first[h] != summary.get(h))
            raise SystemExit(f"ways disagree on {host}: {way} {summary.get(host)} vs {first[host]}")
    sample = first[sorted(first)[0]]
    return f"all ways agree on every host: {sample['gpus']} GPUs, ports {', '.join(sample['ports'])}, " \
           f"nvidia_peermem loaded={sample['peermem']}"


# --- main ---------------------------------------------------------------------------------------

def main() -> None:
    """Build the fleet, run the sweep and the three ways, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[18, 72, 288], help="fleet sizes for preflight")
    parser.add_argument("--ways-size", type=int, default=72, help="fleet size for the three ways (0: skip)")
    parser.add_argument("--forks", type=int, default=25)
    parser.add_argument("--strategies", nargs="+", choices=["linear", "free"], default=["linear"],
                        help="strategies for the three ways (preflight is always linear: its report needs "
                             "every host's facts)")
    parser.add_argument("--facts-parallel", action="store_true",
                        help="gather setup and fabric_facts in parallel (async; see write_inventory)")
    parser.add_argument("--no-pipelining", dest="pipelining", action="store_false")
    parser.add_argument("--fact-cache", choices=["memory", "jsonfile"], default="jsonfile")
    parser.add_argument("--fact-cache-timeout", type=int, default=7200, help="seconds (jsonfile)")
    parser.add_argument("--callback", default="ansible.builtin.default",
                        help="stdout callback; its output goes to a log file in the work directory")
    parser.add_argument("--tree", default="gb200_tray", help="recorded host tree each host gets a copy of")
    parser.add_argument("--interval", type=float, default=0.1, help="memory sampling interval, seconds")
    parser.add_argument("--rounds", type=int, default=1,
                        help="preflight and floor runs per size, alternating which goes first; the ratios are "
                             "then printed per round and as the median of the rounds")
    parser.add_argument("--profile", metavar="DIR",
                        help="after the measured rounds of each size, one more preflight and floor run each with "
                             "cProfile on the controller (ansible-playbook and its workers, CPU time; "
                             "bench/controller_profile): the files in DIR/<run>/, merged in DIR/<run>.prof, and the "
                             "functions with the most own CPU printed; the profiled runs are in no table")
    parser.add_argument("--profile-top", type=int, default=25, help="functions printed per profiled run")
    parser.add_argument("--quick", action="store_true", help="smoke run: --sizes 2 --ways-size 2")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (logs, reports, trees)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    if args.quick:
        args.sizes, args.ways_size = [2], 2
    if args.profile is not None:
        args.profile = os.path.abspath(args.profile)  # the fixture writes to an absolute directory only
        if os.path.exists(args.profile) and (not os.path.isdir(args.profile) or os.listdir(args.profile)):
            parser.error(f"--profile {args.profile} is not an empty directory: the profiles of two runs would mix")

    workdir = tempfile.mkdtemp(prefix="gpufabric-fleet-")
    started = time.perf_counter()
    try:
        largest = max([*args.sizes, args.ways_size])
        fleet = build_fleet(workdir, args.tree, largest)
        tools = write_tools(os.path.join(workdir, "fixture-tools"), sys.executable)
        os.makedirs(os.path.join(workdir, "ways"), exist_ok=True)
        settings = Settings(forks=args.forks, pipelining=args.pipelining, fact_cache=args.fact_cache,
                            fact_cache_timeout=args.fact_cache_timeout, callback=args.callback, workdir=workdir)
        # the interpreter the venv links to (os.path.realpath): a distribution's and a pyenv build of one version
        # differ in the controller's CPU (bench/results/2026-11-27-venv-interpreter.md)
        print(f"gpufabric.cluster fleet benchmark: python {sys.version.split()[0]} "
              f"({os.path.realpath(sys.executable)}), {os.cpu_count()} cpus, "
              f"load average {os.getloadavg()[0]:.2f} at start")
        print(f"hosts: copies of the recorded '{args.tree}' tree, ansible_connection=local; no NVML on this "
              "machine, so the GPU probe falls back to PCI")
        env = settings.environment("linear")
        shown = ("ANSIBLE_FORKS", "ANSIBLE_PIPELINING", "ANSIBLE_CACHE_PLUGIN", "ANSIBLE_CACHE_PLUGIN_TIMEOUT",
                 "ANSIBLE_STDOUT_CALLBACK")
        print("settings: " + " ".join(f"{key}={env[key]}" for key in shown if key in env)
              + f" ansible_facts_parallel={args.facts_parallel}; strategy: preflight linear, three ways "
              f"{'/'.join(args.strategies)}; memory sampled every "
              f"{args.interval}s")
        print(f"work directory: {workdir}")

        if args.sizes:
            print("\n== preflight (the gpufabric.cluster.preflight playbook: facts, judgement, report) ==")
            sweep = []
            pairs = []
            floor_playbook = write_floor_playbook(os.path.join(workdir, "floor.json"))
            for count in args.sizes:
                inventory = write_inventory(os.path.join(workdir, f"fleet-{count}.json"), fleet[:count], tools,
                                            args.facts_parallel)
                for round_number in range(1, args.rounds + 1):
                    # every second round the floor goes first: the machine's load when each run starts differs less
                    order = ("preflight", "floor") if round_number % 2 else ("floor", "preflight")
                    runs = {}
                    for which in order:
                        if which == "preflight":
                            report_dir = os.path.join(workdir, f"report-{count}-{round_number}")
                            runs[which] = run_playbook(f"preflight-{count}-{round_number}",
                                                       "gpufabric.cluster.preflight", inventory, count, settings,
                                                       "linear", args.interval,
                                                       ["-e", f"gpufabric_report_dir={report_dir}"])
                            print(f"  N={count} round {round_number}: {check_sweep_report(report_dir, count)}",
                                  flush=True)
                        else:
                            runs[which] = run_playbook(f"floor-{count}-{round_number}", floor_playbook, inventory,
                                                       count, settings, "linear", args.interval, [])
                    if round_number == 1:
                        sweep.append(runs["preflight"])
                    pairs.append((runs["preflight"], runs["floor"]))
                if args.profile is not None and not os.path.exists(os.path.join(args.profile, f"floor-{count}")):
                    report_dir = os.path.join(workdir, f"report-{count}-profile")
                    run_playbook(f"preflight-{count}-profile", "gpufabric.cluster.preflight", inventory, count,
                                 settings, "linear", args.interval, ["-e", f"gpufabric_report_dir={report_dir}"],
                                 profile=os.path.join(args.profile, f"preflight-{count}"))
                    check_sweep_report(report_dir, count)
                    run_playbook(f"floor-{count}-profile", floor_playbook, inventory, count, settings, "linear",
                                 args.interval, [], profile=os.path.join(args.profile, f"floor-{count}"))
                    print(f"  N={count}: profiled preflight and floor runs in {args.profile}", flush=True)
            print_sweep(sweep)
            print("\n== preflight against the floor, whole runs (one ansible.builtin.ping task per host, gather_facts "
                  "false, same inventory, forks and pipelining; every host's module runs on this machine) ==")
            print_floor(pairs)
            print("ratio: preflight / floor, total CPU and total wall of the two runs over the same N hosts (the "
                  "per-host figures divided by the same N); both hold every host's module, so no verdict here")
            print(f"\n== the controller's own share (the verdict): each run's CPU less the module each host runs "
                  f"({PREFLIGHT_HOST_MODULE}, {FLOOR_HOST_MODULE}) ==")
            print_controller(pairs)
            print(f"controller: ansible-playbook, its forks and any other module the run started, what a real fleet's "
                  f"controller spends; goal: preflight at most {FLOOR_LIMIT:g}x the floor")
            print("\n== the module each host runs: what each GPU host pays in a real fleet (here on this machine) ==")
            print_modules(pairs)
            print("module: CPU of the module processes and the tools they ran (bench/module_cpu)")
            if args.rounds > 1:
                print(f"\n== the ratios over {args.rounds} rounds per size: median (lowest-highest); the verdict from "
                      f"the controller's median ==")
                print_floor_rounds(pairs)
            if args.profile is not None:
                print(f"\n== the controller's profile of one more run each (cProfile, CPU time; "
                      f"python -m pstats {args.profile}/<run>.prof to read further) ==")
                for count in dict.fromkeys(args.sizes):  # a size given twice was profiled once
                    for which in ("preflight", "floor"):
                        directory = os.path.join(args.profile, f"{which}-{count}")
                        print_profile(f"{which}-{count}", *merge_profiles(directory), args.profile_top)

        if args.ways_size:
            count = args.ways_size
            print(f"\n== three ways of probing the same fleet of {count} hosts (forks {args.forks}) ==")
            inventory = write_inventory(os.path.join(workdir, f"fleet-{count}.json"), fleet[:count], tools,
                                        args.facts_parallel)
            empty = write_way_playbook(os.path.join(workdir, "way-empty.json"), "empty play (start-up cost)", [], {},
                                       None)
            startup = run_playbook("way-empty", empty, inventory, count, settings, "linear", args.interval, [])
            results = []
            for strategy in args.strategies:
                for index, (name, (tasks, probe_tasks, play, summary)) in enumerate(ways(workdir).items()):
                    if os.path.exists(summary):
                        os.unlink(summary)
                    playbook = write_way_playbook(os.path.join(workdir, f"way-{index}.json"), name, tasks, play,
                                                  summary)
                    run = run_playbook(f"way-{index}-{strategy}", playbook, inventory, count, settings, strategy,
                                       args.interval, [])
                    results.append((name, strategy, probe_tasks, run))
                print(f"  {strategy}: {check_way_summaries(workdir, count)}", flush=True)
            print_ways(results, startup)
            print("tasks/host: probe tasks; every way also runs the same summary set_fact per host and then one "
                  "copy on the controller.\nnet ratio: (run - empty play) / (fabric_facts - empty play), "
                  "i.e. with ansible-playbook's fixed start-up (the empty play over the same inventory) removed")
        print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s (fleet build included); load average "
              f"{os.getloadavg()[0]:.2f} at the end; load: the 1-minute load average at the end of each run, on "
              f"{os.cpu_count()} cpus")
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
