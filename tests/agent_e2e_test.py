#!/usr/bin/env python3
"""Issue 5: the node agent, end to end, with real processes on loopback.

Starts `berth dev --nodes 2 --fake-gpus 4xH100-80GB` (a server and two agents,
a short heartbeat timeout) in a temporary directory and checks the issue's
acceptance points:

  1. a 2-task x 4-GPU job starts on both nodes at once; each task sees the
     right CUDA_VISIBLE_DEVICES, RANK, WORLD_SIZE, MASTER_ADDR/MASTER_PORT
     (the job writes its environment to its log; the test reads the logs in
     the agents' state dirs);
  2. cancel kills a task and all its children; a preempted job gets SIGTERM,
     then SIGKILL after its grace period, and is requeued;
  3. SIGKILL an agent running a one-task job: its supervisor stops the task
     when the node's lease ends (issue 32), the node goes down after the
     lease and its margin, the job is requeued and runs on the other node,
     and the first agent, restarted, changes nothing;
  4. restart an agent while a task runs: the task is not disturbed; a task
     that exits with status 3 while its agent is down is reported as exit
     code 3 once the agent is back.

Every process is started by this test and stopped by its PID; every address
is 127.0.0.1. Usage: agent_e2e_test.py BERTH_BINARY
"""
import os
import re
import signal
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import (Process, admin_token, berth_dev, free_port,  # noqa: E402
                           request, wait_until)

HEARTBEAT = "200ms"
TIMEOUT = 30  # seconds any one wait may take


class Cluster:
    def __init__(self, binary, root):
        self.binary, self.root = binary, root
        self.data = os.path.join(root, "data")
        os.makedirs(self.data)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.dev = berth_dev(binary, self.data, self.port, "--nodes", "2",
                             "--fake-gpus", "4xH100-80GB",
                             "--agent-heartbeat-interval", HEARTBEAT,
                             "--heartbeat-timeout", "3s",
                             "--min-run-before-preemption", "1s")
        self.own_agents = {}  # node -> Process: agents this test restarted itself
        self.started = []  # every agent this test started, for the log files
        self.admin = None

    def start(self):
        self.dev.start().wait_http(self.base + "/readyz")
        self.admin = admin_token(self.data)
        wait_until(lambda: sorted(n["name"] for n in self.nodes() if n["state"] == "up")
                   == ["node-1", "node-2"], TIMEOUT, "both nodes up")

    # --- the API ---
    def get(self, path):
        return request(self.base + path, self.admin)[1]

    def submit(self, body):
        return request(self.base + "/api/v1/jobs", self.admin, "POST", body)[1]["id"]

    def cancel(self, job):
        request(f"{self.base}/api/v1/jobs/{job}/cancel", self.admin, "POST", {})

    def job(self, job):
        return self.get(f"/api/v1/jobs/{job}")

    def nodes(self):
        return self.get("/api/v1/nodes")["nodes"]

    def node_state(self, name):
        return next(n["state"] for n in self.nodes() if n["name"] == name)

    def wait_job(self, job, predicate, what):
        def check():
            state = self.job(job)
            return state if predicate(state) else None
        return wait_until(check, TIMEOUT, f"job {job}: {what}")

    # --- the agents' state dirs ---
    def agent_dir(self, node):
        return os.path.join(self.data, "agents", node)

    def task_dir(self, node, job, task, attempt):
        return os.path.join(self.agent_dir(node), "tasks", f"{job}-{task}-{attempt}")

    def read(self, path):
        try:
            with open(path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def agent_pid(self, node):
        return int(self.read(os.path.join(self.agent_dir(node), "agent.pid")))

    def start_agent(self, node):
        """Starts a replacement agent for `node` (the test's own child)."""
        agent = Process([self.binary, "agent", "--server", self.base,
                         "--token-file", os.path.join(self.agent_dir(node), "token"),
                         "--node", node, "--listen", "127.0.0.1:0",
                         "--state-dir", self.agent_dir(node), "--fake-gpus", "4xH100-80GB",
                         "--heartbeat-interval", HEARTBEAT,
                         # as berth dev's own agents: root's jobs run when root runs them
                         *(["--allow-root-jobs"] if os.geteuid() == 0 else [])],
                        os.path.join(self.root, f"agent-{node}-{len(self.started)}.log")).start()
        self.started.append(agent)
        self.own_agents[node] = agent
        wait_until(lambda: self.read(os.path.join(self.agent_dir(node), "agent.pid")).strip()
                   == str(agent.process.pid), TIMEOUT, f"agent for {node} to start")
        return agent

    def kill_agent(self, node, sig):
        """Stops `node`'s agent by its PID: one `berth dev` started (its child)
        or one this test started."""
        own = self.own_agents.pop(node, None)
        pid = own.process.pid if own else self.agent_pid(node)
        os.kill(pid, sig)
        if own:
            own.process.wait(timeout=TIMEOUT)
        else:
            wait_until(lambda: not alive(pid), TIMEOUT, f"agent {pid} to exit")

    def stop(self):
        for agent in self.own_agents.values():
            agent.stop()
        self.dev.stop()
        # Whatever a failed run left behind: supervisors and tasks of this
        # cluster, recognised by their identity files in our temp dir.
        for pid, start in leftover_processes(self.data):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            del start


def proc_stat(pid):
    """(state, start ticks) of a process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid):
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def leftover_processes(data):
    """Supervisors and tasks (from their pid files) that still run."""
    found = []
    agents = os.path.join(data, "agents")
    for node in os.listdir(agents) if os.path.isdir(agents) else []:
        tasks = os.path.join(agents, node, "tasks")
        for task in os.listdir(tasks) if os.path.isdir(tasks) else []:
            for name in ("supervisor.pid", "task.pid"):
                try:
                    with open(os.path.join(tasks, task, name)) as f:
                        pid, start = (int(x) for x in f.read().split()[:2])
                except (OSError, ValueError):
                    continue
                stat = proc_stat(pid)
                if stat and stat[1] == start and stat[0] not in ("Z", "X"):
                    found.append((pid, start))
    return found


def heartbeats_ok(agent):
    """Successful heartbeats so far, from the agent's /metrics."""
    match = re.search(r"serving on (127\.0\.0\.1:\d+)", agent.log())
    if not match:
        return 0
    try:
        with urllib.request.urlopen(f"http://{match.group(1)}/metrics", timeout=2) as reply:
            text = reply.read().decode()
    except OSError:
        return 0
    found = re.search(r'berth_agent_heartbeats_total\{[^}]*result="ok"\} (\d+)', text)
    return int(found.group(1)) if found else 0


def pids_in(log, label):
    return [int(line.split()[1]) for line in log.splitlines() if line.startswith(label + " ")]


def env_of(log):
    return dict(line.split("=", 1) for line in log.splitlines() if "=" in line)


def placed_node(job, task=0):
    return job["placement"][task]["node"] if job["placement"] else None


def check_gang(cluster):
    """1: a 2 x 4-GPU job on both nodes at once, with the PyTorch variables."""
    script = ("date +start=%s.%N; "
              "env | grep -E '^(CUDA_VISIBLE_DEVICES|NVIDIA_VISIBLE_DEVICES|RANK|WORLD_SIZE|"
              "MASTER_ADDR|MASTER_PORT|LOCAL_RANK|NODE_RANK|BERTH_JOB_ID)='; "
              "sleep 1; date +end=%s.%N")
    job = cluster.submit({"name": "gang", "command": ["sh", "-c", script],
                          "tasks": 2, "gpus": 4})
    running = cluster.wait_job(job, lambda j: j["state"] in ("running", "succeeded"), "running")
    nodes = [placed_node(running, 0), placed_node(running, 1)]
    assert sorted(nodes) == ["node-1", "node-2"], f"gang placed on {nodes}"
    cluster.wait_job(job, lambda j: j["state"] == "succeeded", "succeeded")
    envs = []
    for task, node in enumerate(nodes):
        log = cluster.read(cluster.task_dir(node, job, task, 1) + "/log")
        env = env_of(log)
        envs.append(env)
        expected = {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "NVIDIA_VISIBLE_DEVICES": "0,1,2,3",
                    "RANK": str(task), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                    "LOCAL_RANK": "0", "NODE_RANK": str(task), "BERTH_JOB_ID": str(job)}
        for name, value in expected.items():
            assert env.get(name) == value, f"task {task}: {name}={env.get(name)!r}, log:\n{log}"
        assert env.get("MASTER_PORT", "").isdigit(), f"task {task}: MASTER_PORT in\n{log}"
    assert envs[0]["MASTER_PORT"] == envs[1]["MASTER_PORT"], "tasks disagree on MASTER_PORT"
    # At once: each task started before the other ended.
    starts = [float(env["start"]) for env in envs]
    ends = [float(env["end"]) for env in envs]
    assert max(starts) < min(ends), f"tasks did not overlap: starts {starts}, ends {ends}"
    print(f"ok 1: gang job {job} ran on both nodes at once, MASTER_PORT {envs[0]['MASTER_PORT']}")


def check_cancel(cluster):
    """2a: cancel kills the task and all its children."""
    script = ("sleep 1000 & echo child $!; "
              "(sleep 1000 & echo grandchild $!; wait) & "
              "echo main $$; wait")
    job = cluster.submit({"name": "cancel-me", "command": ["sh", "-c", script], "gpus": 1})
    running = cluster.wait_job(job, lambda j: j["state"] == "running", "running")
    log_path = cluster.task_dir(placed_node(running), job, 0, 1) + "/log"
    wait_until(lambda: all(pids_in(cluster.read(log_path), label)
                           for label in ("main", "child", "grandchild")), TIMEOUT, "task pids")
    log = cluster.read(log_path)
    pids = [pids_in(log, label)[0] for label in ("main", "child", "grandchild")]
    assert all(alive(pid) for pid in pids), f"not all of {pids} run"
    # Its supervisor is the lean binary beside berth, not berth itself.
    supervisor = int(cluster.read(os.path.dirname(log_path) + "/supervisor.pid").split()[0])
    exe = os.readlink(f"/proc/{supervisor}/exe")
    assert os.path.basename(exe) == "berth-supervisor", f"supervisor runs {exe}"
    cluster.cancel(job)
    cluster.wait_job(job, lambda j: j["state"] == "cancelled", "cancelled")
    wait_until(lambda: not any(alive(pid) for pid in pids), TIMEOUT, f"{pids} to be gone")
    print(f"ok 2a: cancel stopped job {job} and its processes {pids}")


def check_preemption(cluster):
    """2b: preempted: SIGTERM, SIGKILL after the grace period, requeued."""
    # It ignores SIGTERM (says so and carries on): only SIGKILL ends it.
    script = "trap 'echo got SIGTERM' TERM; echo started; while true; do sleep 0.1; done"
    low = cluster.submit({"name": "low", "command": ["sh", "-c", script], "tasks": 2, "gpus": 4,
                          "priority": "low", "preemptible": True, "grace_s": 1})
    running = cluster.wait_job(low, lambda j: j["state"] == "running", "running")
    nodes = [placed_node(running, 0), placed_node(running, 1)]
    # Preempted once it has run the policy's minimum (1 s here).
    high = cluster.submit({"name": "high", "command": ["sh", "-c", "echo high"], "gpus": 4,
                           "priority": "high"})
    cluster.wait_job(high, lambda j: j["state"] == "succeeded", "succeeded")
    for task, node in enumerate(nodes):
        task_dir = cluster.task_dir(node, low, task, 1)
        log = cluster.read(task_dir + "/log")
        assert "got SIGTERM" in log, f"task {task} never saw SIGTERM:\n{log}"
        assert "SIGKILL after 1000 ms" in log, f"task {task}: no grace note:\n{log}"
        exit_status = cluster.read(task_dir + "/exit.json")
        assert '"signal":9' in exit_status, f"task {task} not killed: {exit_status}"
    # Requeued: it runs again as a new attempt once the GPUs are free.
    again = cluster.wait_job(low, lambda j: j["attempts"] >= 2 and j["state"] == "running",
                             "running again")
    assert again["preemptions"] == 1, f"preemptions counted: {again['preemptions']}"
    print(f"ok 2b: job {low} got SIGTERM then SIGKILL after 1 s, was requeued for job {high} "
          f"and runs again (attempt {again['attempts']})")
    cluster.cancel(low)
    cluster.wait_job(low, lambda j: j["state"] == "cancelled", "cancelled")


def check_node_loss(cluster):
    """3: SIGKILL an agent: task fenced by the lease, node down, job requeued elsewhere."""
    job = cluster.submit({"name": "survivor",
                          "command": ["sh", "-c", "echo pid $$; exec sleep 1000"], "gpus": 4})
    running = cluster.wait_job(job, lambda j: j["state"] == "running", "running")
    lost = placed_node(running)
    other = "node-2" if lost == "node-1" else "node-1"
    stale_dir = cluster.task_dir(lost, job, 0, 1)
    wait_until(lambda: pids_in(cluster.read(stale_dir + "/log"), "pid"), TIMEOUT, "task pid")
    stale_pid = pids_in(cluster.read(stale_dir + "/log"), "pid")[0]

    cluster.kill_agent(lost, signal.SIGKILL)
    # No agent on the lost node: its supervisor stops the task on its own
    # once the node's lease (the 3 s timeout) has ended, before the server
    # may start the job elsewhere (lease + margin).
    wait_until(lambda: not alive(stale_pid), TIMEOUT, "the stale task to be stopped")
    # The supervisor records the exit once it has settled the task's cgroup.
    exit_status = wait_until(lambda: cluster.read(stale_dir + "/exit.json"), TIMEOUT,
                             "the stale task's exit to be recorded")
    assert '"reason":"lease_expired"' in exit_status, exit_status
    wait_until(lambda: cluster.node_state(lost) == "down", TIMEOUT, f"{lost} down")
    moved = cluster.wait_job(job, lambda j: j["attempts"] >= 2 and j["state"] == "running"
                             and placed_node(j) == other, f"running on {other}")

    cluster.start_agent(lost)
    wait_until(lambda: cluster.node_state(lost) == "up", TIMEOUT, f"{lost} up again")
    still = cluster.job(job)
    assert still["state"] == "running" and placed_node(still) == other, still
    assert still["attempts"] == moved["attempts"], "the job ran again"
    print(f"ok 3: {lost} went down, job {job} moved to {other} (attempt {still['attempts']}), "
          f"stale task {stale_pid} stopped by {lost}'s lease before that")
    cluster.cancel(job)
    cluster.wait_job(job, lambda j: j["state"] == "cancelled", "cancelled")


def check_agent_restart(cluster):
    """4: an agent restart leaves the task alone; an exit while away is reported."""
    script = ("echo pid $$; "
              "while [ ! -e \"$BERTH_TASK_DIR/go\" ]; do sleep 0.05; done; exit 3")
    job = cluster.submit({"name": "patient", "command": ["sh", "-c", script], "gpus": 4})
    running = cluster.wait_job(job, lambda j: j["state"] == "running", "running")
    node = placed_node(running)
    task_dir = cluster.task_dir(node, job, 0, 1)
    wait_until(lambda: pids_in(cluster.read(task_dir + "/log"), "pid"), TIMEOUT, "task pid")
    pid = pids_in(cluster.read(task_dir + "/log"), "pid")[0]

    # A restart while it runs (SIGKILL: `berth dev`'s agents stop their tasks
    # on SIGTERM): same process, still running, job unchanged.
    cluster.kill_agent(node, signal.SIGKILL)
    assert alive(pid), "the task died with its agent"
    agent = cluster.start_agent(node)
    before = cluster.job(job)["attempts"]
    wait_until(lambda: "adopted job" in agent.log(), TIMEOUT, "the task to be adopted")
    wait_until(lambda: heartbeats_ok(agent) >= 3, TIMEOUT, "heartbeats with the adopted task")
    assert alive(pid), "the task died when its agent restarted"
    state = cluster.job(job)
    assert state["state"] == "running" and state["attempts"] == before, state

    # Away again (a graceful stop this time: tasks keep running); the task
    # exits 3 meanwhile; back: reported as exit code 3.
    cluster.kill_agent(node, signal.SIGTERM)
    assert alive(pid), "the task died with its agent"
    open(os.path.join(task_dir, "work", "go"), "w").close()  # $BERTH_TASK_DIR
    wait_until(lambda: os.path.exists(os.path.join(task_dir, "exit.json")), TIMEOUT,
               "the task to exit while its agent is away")
    cluster.start_agent(node)
    failed = cluster.wait_job(job, lambda j: j["state"] == "failed", "failed")
    assert failed["exit_code"] == 3, failed
    print(f"ok 4: task {pid} of job {job} survived an agent restart; its exit 3 while the "
          f"agent was away was reported (state failed, exit_code {failed['exit_code']})")


def main():
    binary = os.path.abspath(sys.argv[1])
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="berth-agent-e2e-") as root:
        cluster = Cluster(binary, root)
        try:
            cluster.start()
            check_gang(cluster)
            check_cancel(cluster)
            check_preemption(cluster)
            check_node_loss(cluster)
            check_agent_restart(cluster)
            left = leftover_processes(cluster.data)
            assert not left, f"processes left running: {left}"
        except BaseException:
            print("berth dev log (tail):\n" + cluster.dev.log())
            for node, agent in cluster.own_agents.items():
                print(f"agent {node} log (tail):\n" + agent.log())
            raise
        finally:
            cluster.stop()
    print(f"all agent acceptance checks passed in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
