#!/usr/bin/env python3
"""Issue 32, items 2 and 3: node leases that fence, and monotonic time, end to
end with real processes on loopback (`berth dev`: a server and its agents).

  1. kill -9 of the agent running a job: its supervisor stops the task when
     the node's lease ends (3 s here), the server moves the job to the other
     node only after the lease and its margin, and the first copy ended
     before the second started, by the times the two copies wrote (each
     writes its start, and its end from a SIGTERM trap).
  2. A wall-clock step of +1 h and back, for the server and its agents
     (libfaketime, package `faketime`: FAKETIME_TIMESTAMP_FILE re-read at every
     call, FAKETIME_NO_CACHE=1; the monotonic clock is left alone,
     FAKETIME_DONT_FAKE_MONOTONIC=1): no node goes down, the job is neither
     stopped nor requeued, its time limit is unchanged, and its usage is the
     time it ran, not an hour. Skipped (with a note) where libfaketime is not
     installed.

Every process is started by this test and stopped by its PID; every address
is 127.0.0.1. Usage: node_lease_e2e_test.py BERTH_BINARY [kill|step] (default:
both)
"""
import datetime
import json
import os
import re
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import admin_token, berth_dev, free_port, request, wait_until  # noqa: E402

HEARTBEAT = "200ms"
LEASE = "3s"  # --heartbeat-timeout: the node lease
TIMEOUT = 40  # seconds any one wait may take (lease 3 s + margin 10 s, on a loaded machine)
FAKETIME_LIBS = ["/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
                 "/usr/lib/faketime/libfaketimeMT.so.1"]

# Writes when it starts, and when SIGTERM stops it (then exits).
STAMPED = ("echo start $(date +%s.%N); "
           "trap 'echo end $(date +%s.%N); exit 143' TERM; "
           "while true; do sleep 0.1; done")


class Cluster:
    def __init__(self, binary, root, nodes, env=None, gpus=1, lease=LEASE):
        self.data = os.path.join(root, "data")
        os.makedirs(self.data)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.dev = berth_dev(binary, self.data, self.port, "--nodes", str(nodes),
                             "--fake-gpus", f"{gpus}xH100-80GB",
                             "--agent-heartbeat-interval", HEARTBEAT,
                             "--heartbeat-timeout", lease, env=env)
        self.names = [f"node-{i}" for i in range(1, nodes + 1)]
        self.admin = None

    def start(self):
        self.dev.start().wait_http(self.base + "/readyz")
        self.admin = admin_token(self.data)
        wait_until(lambda: sorted(self.up()) == self.names, TIMEOUT, "every node up")
        return self

    def stop(self):
        self.dev.stop()

    def call(self, path, method="GET", body=None):
        return request(self.base + path, self.admin, method, body)[1]

    def job(self, job):
        return self.call(f"/api/v1/jobs/{job}")

    def nodes(self):
        return self.call("/api/v1/nodes")["nodes"]

    def up(self):
        return [n["name"] for n in self.nodes() if n["state"] == "up"]

    def wait_job(self, job, predicate, what):
        def check():
            state = self.job(job)
            return state if predicate(state) else None
        return wait_until(check, TIMEOUT, f"job {job}: {what}")

    def task_dir(self, node, job, attempt):
        return os.path.join(self.data, "agents", node, "tasks", f"{job}-0-{attempt}")

    def agent_pid(self, node):
        return int(read(os.path.join(self.data, "agents", node, "agent.pid")))


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def stamp(log, label):
    found = re.findall(rf"^{label} (\d+\.\d+)$", log, re.M)
    return float(found[0]) if found else None


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def rfc3339(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def check_kill_agent(binary, root):
    """1: kill -9 of an agent: the first copy stops before the second starts."""
    cluster = Cluster(binary, os.path.join(root, "kill"), 2).start()
    try:
        job = cluster.call("/api/v1/jobs", "POST",
                           {"name": "once", "command": ["sh", "-c", STAMPED],
                            "grace_s": 5})["id"]
        running = cluster.wait_job(job, lambda j: j["state"] == "running", "running")
        lost = running["placement"][0]["node"]
        other = next(n for n in cluster.names if n != lost)
        first_log = os.path.join(cluster.task_dir(lost, job, 1), "log")
        wait_until(lambda: stamp(read(first_log), "start"), TIMEOUT, "the first copy's start")

        agent = cluster.agent_pid(lost)
        killed_at = time.time()
        os.kill(agent, signal.SIGKILL)  # berth dev's child: it does not restart it
        wait_until(lambda: not alive(agent), TIMEOUT, f"agent {agent} to exit")

        # The supervisor alone stops the task when the lease ends (no agent).
        first_exit = wait_until(
            lambda: read(os.path.join(cluster.task_dir(lost, job, 1), "exit.json")),
            TIMEOUT, "the first copy to be stopped by its node's lease")
        assert '"reason":"lease_expired"' in first_exit.replace(" ", ""), first_exit
        moved = cluster.wait_job(job, lambda j: j["attempts"] >= 2 and j["state"] == "running",
                                 f"running on {other}")
        assert moved["placement"][0]["node"] == other, moved
        second_log = os.path.join(cluster.task_dir(other, job, moved["attempts"]), "log")
        wait_until(lambda: stamp(read(second_log), "start"), TIMEOUT, "the second copy's start")

        first_end = stamp(read(first_log), "end")
        second_start = stamp(read(second_log), "start")
        assert first_end is not None, "the first copy got no SIGTERM:\n" + read(first_log)
        assert first_end < second_start, (first_end, second_start)
        print(f"ok 1: agent of {lost} killed; its task stopped {first_end - killed_at:.1f} s "
              f"later (lease {LEASE}), the job started on {other} "
              f"{second_start - first_end:.1f} s after that (attempt {moved['attempts']})")
        cluster.call(f"/api/v1/jobs/{job}/cancel", "POST", {})
        cluster.wait_job(job, lambda j: j["state"] == "cancelled", "cancelled")
    except BaseException:
        print("berth dev log (tail):\n" + cluster.dev.log())
        raise
    finally:
        cluster.stop()


def check_clock_step(binary, root):
    """2: the wall clock steps +1 h and back: nothing changes."""
    library = next((path for path in FAKETIME_LIBS if os.path.exists(path)), None)
    if library is None:
        print("skip 2: libfaketime is not installed (scripts/install-deps.sh installs it)")
        return
    os.makedirs(os.path.join(root, "step"))
    offset = os.path.join(root, "step", "faketime")

    def step_to(seconds):
        with open(offset + ".new", "w") as f:
            f.write(f"{seconds:+d}\n")
        os.rename(offset + ".new", offset)
    step_to(0)
    env = dict(os.environ, LD_PRELOAD=library, FAKETIME_TIMESTAMP_FILE=offset,
               FAKETIME_NO_CACHE="1", FAKETIME_DONT_FAKE_MONOTONIC="1")
    cluster = Cluster(binary, os.path.join(root, "step"), 1, env=env, gpus=2,
                      lease="5s").start()
    agent = None
    try:
        def submit(name):
            job = cluster.call("/api/v1/jobs", "POST",
                               {"name": name, "command": ["sh", "-c", "exec sleep 1000"],
                                "time_limit_s": 600})["id"]
            cluster.wait_job(job, lambda j: j["state"] == "running", "running")
            return job, time.time()

        def check_running(job):
            assert cluster.up() == ["node-1"], cluster.nodes()
            state = cluster.job(job)
            assert state["state"] == "running" and state["attempts"] == 1, state
            assert state["time_limit_s"] == 600, state

        def cancel(job, began):
            cluster.call(f"/api/v1/jobs/{job}/cancel", "POST", {})
            ended = cluster.wait_job(job, lambda j: j["state"] == "cancelled", "cancelled")
            start, end = rfc3339(ended["start_time"]), rfc3339(ended["end_time"])
            assert start <= end, f"job {job} ended before it started: {ended}"
            return time.time() - began

        def token_created():
            # A token's creation time is a wall-clock label: it shows the step.
            body = {"user": "probe", "role": "user"}
            return rfc3339(cluster.call("/api/v1/tokens", "POST", body)["created"])

        before, began_before = submit("before")  # runs across the step
        # The step lands while the agent is between two heartbeats (paused for
        # 2 s, within its 5 s lease), as it may with any step: a server that
        # timed silence by the wall clock would find it silent for an hour.
        agent = cluster.agent_pid("node-1")
        os.kill(agent, signal.SIGSTOP)
        step_to(3600)
        created = token_created()
        assert created - time.time() > 3000, f"libfaketime did not step berthd: {created}"
        time.sleep(2)
        os.kill(agent, signal.SIGCONT)
        time.sleep(1)
        check_running(before)
        during, began_during = submit("during")  # starts at +1 h, ends after the step back
        time.sleep(1)
        ran = cancel(before, began_before)  # ends at +1 h
        step_to(0)
        time.sleep(3)
        check_running(during)
        ran += cancel(during, began_during)

        hours = 0
        for _ in range(100):
            usage = cluster.call("/api/v1/usage")
            hours = sum(row["gpu_hours"] for row in usage["by_user"])
            if hours * 3600 >= ran - 5:
                break
            time.sleep(0.1)
        # One GPU each for the time they ran, not an hour.
        assert ran - 5 <= hours * 3600 <= ran + 10, (hours * 3600, ran, json.dumps(usage))
        print(f"ok 2: wall clock +1 h and back: node up, jobs ran on (attempt 1, time limit "
              f"600 s), charged {hours * 3600:.1f} GPU-s for {ran:.1f} s of use")
    except BaseException:
        print("berth dev log (tail):\n" + cluster.dev.log())
        raise
    finally:
        if agent:
            os.kill(agent, signal.SIGCONT)
        step_to(0)
        cluster.stop()


def main():
    binary = os.path.abspath(sys.argv[1])
    only = sys.argv[2] if len(sys.argv) > 2 else None
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="berth-lease-e2e-") as root:
        if only in (None, "kill"):
            check_kill_agent(binary, root)
        if only in (None, "step"):
            check_clock_step(binary, root)
    print(f"node lease checks passed in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
