#!/usr/bin/env python3
"""Issue 27, item 3 ("Fenced in: cgroups"), end to end with the real binaries.

`berth dev --nodes 1` in a temporary directory; its agent is replaced by one
with stand-in GPU device files (`--fake-gpu-devices`, nodes made with mknod
with the numbers of /dev/full and /dev/random) and `--cgroups required`.
Through the `berth` CLI:

  1. `berth submit --mem 64M -- python3 -c <allocate 200 MiB>` fails with
     reason out_of_memory and "out of memory: limit 64 MiB" in `berth show`,
     its peak memory recorded;
  2. a busy loop with `--cpus 0.5` and a 3 s time limit used at most about
     half a CPU over its run, as its cgroup measured it (cpu_time_s);
  3. each of two 1-GPU jobs opens its own stand-in GPU device and is refused
     the other's;
  4. the agent says on /metrics that tasks run in cgroups.

Needs root and writable cgroups (CI runs as root); elsewhere it exits 77,
which CTest reports as skipped. Usage: cgroups_e2e_test.py BERTH_BINARY
"""
import json
import os
import re
import signal
import stat
import sys
import tempfile
import urllib.request
from datetime import datetime

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import (Checks, CliSandbox, Process, berth_dev, free_port,  # noqa: E402
                           wait_until)

SKIP = 77
TIMEOUT = 30


def main():
    if os.geteuid() != 0:
        print("skipped: needs root to create cgroups")
        return SKIP
    binary = os.path.abspath(sys.argv[1])
    check = Checks()
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        data = os.path.join(root, "data")
        os.makedirs(data)
        devices = os.path.join(root, "dev")
        os.makedirs(devices)
        os.mknod(os.path.join(devices, "gpu0"), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        os.mknod(os.path.join(devices, "gpu1"), 0o666 | stat.S_IFCHR, os.makedev(1, 8))
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        dev = berth_dev(binary, data, port, "--nodes", "1", "--fake-gpus", "2xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        agent = None
        try:
            dev.start().wait_http(base + "/readyz")
            wait_until(lambda: "up" in berth("nodes").stdout, TIMEOUT, "the node to come up")
            # The dev cluster's agent makes way for one with GPU device files.
            node_dir = os.path.join(data, "agents", "node-1")
            with open(os.path.join(node_dir, "agent.pid")) as f:
                os.kill(int(f.read()), signal.SIGTERM)
            agent = Process([binary, "agent", "--server", base,
                             "--token-file", os.path.join(node_dir, "token"), "--node", "node-1",
                             "--listen", "127.0.0.1:0", "--state-dir", node_dir,
                             "--fake-gpus", "2xH100-80GB", "--heartbeat-interval", "200ms",
                             "--fake-gpu-devices",
                             f"{devices}/gpu0,{devices}/gpu1", "--cgroups", "required",
                             "--allow-root-jobs", "--stop-tasks-on-exit"],
                            os.path.join(root, "agent.log")).start()
            try:
                wait_until(lambda: "serving on" in agent.log() or agent.process.poll() is not None,
                           TIMEOUT, "the agent to start")
            finally:
                if agent.process.poll() is not None:
                    if "--cgroups required" in agent.log():
                        print("skipped: no cgroups here:", agent.log().strip())
                        return SKIP
                    raise AssertionError("the agent did not start:\n" + agent.log())
            check_memory(berth, check)
            check_cpu(berth, check)
            check_devices(berth, check, devices)
            check_metrics(agent, check)
        finally:
            if agent:
                agent.stop()
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} failure(s)")
        return 1
    return 0


def show(berth, job):
    return json.loads(berth("show", job, "--json").stdout)


def wait_ended(berth, job):
    ended = ("succeeded", "failed", "timeout")
    return wait_until(lambda: (lambda j: j if j["state"] in ended else None)(
        show(berth, job)), TIMEOUT, f"job {job} to end")


def check_memory(berth, check):
    """1: over its --mem: out_of_memory, the limit in the message."""
    failures = len(check.failures)
    job = berth("submit", "--gpus", "0", "--mem", "64M", "--", "python3", "-c",
                "b = bytearray(200 * 2**20); print('survived')").stdout.strip()
    ended = wait_ended(berth, job)
    check(ended["state"] == "failed" and ended["reason"] == "out_of_memory",
          f"1: job {job} ended {ended['state']} ({ended['reason']})")
    shown = berth("show", job).stdout
    check("out of memory: limit 64 MiB" in shown, f"1: berth show says why:\n{shown}")
    check(ended["peak_memory_mib"] is not None and 0 < ended["peak_memory_mib"] <= 64,
          f"1: peak memory recorded: {ended['peak_memory_mib']}")
    check("survived" not in berth("logs", job).stdout, "1: the allocation did not succeed")
    if len(check.failures) == failures:
        print(f"ok 1: job {job} out of memory at 64 MiB, peak {ended['peak_memory_mib']} MiB")


def check_cpu(berth, check):
    """2: --cpus 0.5 holds a busy loop to half a CPU (its cgroup's count)."""
    failures = len(check.failures)
    job = berth("submit", "--gpus", "0", "--cpus", "0.5", "--time", "3s", "--grace", "0",
                "--", "sh", "-c", "while :; do :; done").stdout.strip()
    ended = wait_ended(berth, job)
    check(ended["state"] == "timeout" and ended["reason"] == "time_limit",
          f"2: job {job} ended by its time limit: {ended}")
    # The run: from its start to its end as the server saw them (the
    # reports may be late, which only lowers the ratio below).
    start = datetime.fromisoformat(ended["start_time"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(ended["end_time"].replace("Z", "+00:00"))
    ran = (end - start).total_seconds()
    cpu = ended["cpu_time_s"]
    check(cpu is not None and ran > 2 and 0.1 * ran <= cpu <= 0.6 * ran,
          f"2: {cpu} s of CPU over {ran:.2f} s with --cpus 0.5")
    if len(check.failures) == failures:
        print(f"ok 2: job {job} used {cpu} s of CPU in {ran:.2f} s with --cpus 0.5")


def check_devices(berth, check, devices):
    """3: a task opens its own stand-in GPU device, not the other task's."""
    failures = len(check.failures)
    probe = (f"for g in 0 1; do if (: < {devices}/gpu$g) 2>/dev/null; then echo gpu$g=opened; "
             f"else echo gpu$g=refused; fi; done; echo visible=$CUDA_VISIBLE_DEVICES; sleep 1")
    jobs = [berth("submit", "--gpus", "1", "--", "sh", "-c", probe).stdout.strip()
            for _ in range(2)]
    for job in jobs:
        ended = wait_ended(berth, job)
        check(ended["state"] == "succeeded", f"3: job {job} {ended['state']}")
        log = berth("logs", job).stdout
        mine = re.search(r"visible=(\d)", log)
        if not mine:
            check(False, f"3: job {job} log: {log!r}")
            continue
        own, other = mine.group(1), "1" if mine.group(1) == "0" else "0"
        check(f"gpu{own}=opened" in log and f"gpu{other}=refused" in log,
              f"3: job {job} on GPU {own}: {log!r}")
    if len(check.failures) == failures:
        print(f"ok 3: jobs {jobs} opened only their own GPU device")


def check_metrics(agent, check):
    """4: the agent's /metrics says tasks get cgroups."""
    address = re.search(r"serving on (127\.0\.0\.1:\d+)", agent.log()).group(1)
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    found = re.search(r'berth_agent_task_cgroups\{[^}]*version="v[12]"\} 1', text)
    check(found, f"4: metrics: {[line for line in text.splitlines() if 'cgroups' in line]}")
    if found:
        print("ok 4: /metrics says tasks run in cgroups")


if __name__ == "__main__":
    sys.exit(main())
