#!/usr/bin/env python3
"""Issue 28: jobs in container images, end to end with real processes and a
real podman (rootful, as CI runs), never a registry.

A test image is made here: a rootfs of Debian's static busybox and a marker
file, `podman import`ed as localhost/berth-e2e-<random>:1 (removed at the
end). A `berth server` (SQLite, node lease 10 s, container_mount_allow = one
directory of this test's) and two `berth agent`s of one simulated GPU each;
a Unix user made with useradd submits the jobs through the HTTP API:

  1. the nodes report podman as their container runtime;
  2. a job in the image runs inside it (the image's marker is there, the
     host's /etc/debian_version is not) as the job's user, with its GPU in
     CUDA_VISIBLE_DEVICES, its output file the user's, and a mount of the
     allowed directory writable;
  3. a 2-task gang spans both nodes and each task sees the gang's variables;
  4. --mem 32 MiB enforced inside: the job fails as out_of_memory;
  5. cancel stops a running container and removes it;
  6. kill -9 of the agent and a restart: the running container job is
     re-adopted and finishes;
  7. node loss (the agent killed and not restarted): the supervisor fences
     the container when the lease ends and removes it;
  8. a container no supervisor owns is removed when its agent starts;
  9. a missing image fails the job with the image's name;
 10. a mount outside the allow-list is refused at submit with HTTP 400;
 11. no berth container is left behind.

Needs root, podman and busybox-static (scripts/install-deps.sh); elsewhere
it exits 77 (skipped). Usage: containers_e2e_test.py BERTH_BINARY
"""
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import (Checks, Process, admin_token, free_port, request,  # noqa: E402
                           wait_until)

SKIP = 77
TIMEOUT = 60
USER = "berth-test-ct"
BUSYBOX = "/bin/busybox"
TOOLS = ["sh", "cat", "id", "env", "sleep", "test", "echo", "dd", "true", "ls", "touch"]
check = Checks()


def podman(*args, check_rc=True):
    done = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=120)
    if check_rc and done.returncode != 0:
        raise SystemExit(f"podman {' '.join(args)}: {done.stderr}")
    return done


def account():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER],
                       capture_output=True)
        return pwd.getpwnam(USER)


def make_image(root, name):
    rootfs = os.path.join(root, "rootfs")
    for sub in ("bin", "etc", "tmp"):
        os.makedirs(os.path.join(rootfs, sub))
    os.chmod(os.path.join(rootfs, "tmp"), 0o1777)
    shutil.copy2(BUSYBOX, os.path.join(rootfs, "bin", "busybox"))
    for tool in TOOLS:
        os.symlink("busybox", os.path.join(rootfs, "bin", tool))
    with open(os.path.join(rootfs, "etc", "berth-image-marker"), "w") as f:
        f.write("in-the-image\n")
    tar = subprocess.Popen(["tar", "-C", rootfs, "-c", "."], stdout=subprocess.PIPE)
    subprocess.run(["podman", "import", "-", name], stdin=tar.stdout, check=True,
                   capture_output=True, timeout=120)
    tar.wait()


def berth_containers():
    return [line for line in podman("ps", "--all", "--filter", "label=berth.job",
                                    "--format", "{{.Names}}").stdout.split() if line]


class Cluster:
    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.data = os.path.join(root, "data")
        self.allowed = os.path.join(root, "allowed")
        os.makedirs(self.data)
        os.makedirs(self.allowed)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = os.path.join(self.data, "berth.toml")
        with open(config, "w") as f:
            f.write(f'listen = "127.0.0.1:{self.port}"\ndata_dir = "{self.data}"\n'
                    f'container_mount_allow = ["{self.allowed}"]\n'
                    "[scheduler]\nheartbeat_timeout_s = 10\n")
        self.server = Process([binary, "server", "--config", config],
                              os.path.join(root, "server.log"))
        self.agents = {}
        self.tokens = {}

    def start(self, user):
        self.server.start().wait_http(self.base + "/readyz")
        self.admin = admin_token(self.data)
        self.user = request(self.base + "/api/v1/tokens", self.admin, "POST",
                            {"user": user, "role": "user"})[1]["token"]
        for node in ("node-1", "node-2"):
            self.tokens[node] = request(self.base + "/api/v1/tokens", self.admin, "POST",
                                        {"user": "agent-" + node, "role": "agent",
                                         "node": node})[1]["token"]
            self.start_agent(node)
        wait_until(lambda: len(self.nodes()) == 2 and
                   all(n["state"] == "up" for n in self.nodes()), TIMEOUT, "two nodes up")
        return self

    def start_agent(self, node):
        state = os.path.join(self.root, node)
        os.makedirs(state, exist_ok=True)
        token_file = os.path.join(self.root, node + ".token")
        with open(token_file, "w") as f:
            f.write(self.tokens[node] + "\n")
        log_path = os.path.join(self.root, node + ".log")
        served = read(log_path).count("serving on") if os.path.exists(log_path) else 0
        agent = Process([self.binary, "agent", "--server", self.base, "--token-file", token_file,
                         "--node", node, "--listen", "127.0.0.1:0", "--state-dir", state,
                         "--fake-gpus", "1xH100-80GB", "--heartbeat-interval", "200ms",
                         "--stop-tasks-on-exit"],
                        os.path.join(self.root, node + ".log"))
        self.agents[node] = agent.start()
        # A restarted agent appends to the same log: wait for its own line.
        wait_until(lambda: read(log_path).count("serving on") > served or
                   agent.process.poll() is not None, TIMEOUT, f"agent {node} to start")
        return agent

    def nodes(self):
        return request(self.base + "/api/v1/nodes", self.admin)[1]["nodes"]

    def submit(self, body):
        return request(self.base + "/api/v1/jobs", self.user, "POST", body)[1]["id"]

    def job(self, job_id):
        return request(self.base + f"/api/v1/jobs/{job_id}", self.user)[1]

    def wait_state(self, job_id, states, what):
        return wait_until(lambda: (lambda j: j if j["state"] in states else None)(
            self.job(job_id)), TIMEOUT, what)

    def stop(self):
        for agent in self.agents.values():
            agent.stop()
        self.server.stop()


def container_job(cluster, image, command, **fields):
    body = {"command": ["sh", "-c", command], "gpus": 1, "grace_s": 2,
            "container": {"image": image,
                          "mounts": [{"source": cluster.allowed, "target": "/shared"}]}}
    body.update(fields)
    return cluster.submit(body)


def read(path):
    with open(path) as f:
        return f.read()


def run_checks(cluster, image, user):
    allowed = cluster.allowed
    runtimes = [n.get("container_runtime") or "" for n in cluster.nodes()]
    check(all(r.startswith("podman ") for r in runtimes), f"nodes report podman: {runtimes}")

    # 2. Inside the image, as the user, with its GPU.
    out = os.path.join(allowed, "inside.out")
    job = container_job(cluster, image,
                        "cat /etc/berth-image-marker; test -e /etc/debian_version || "
                        "echo no-host-file; echo uid=$(id -u) gid=$(id -g); "
                        "echo CVD=$CUDA_VISIBLE_DEVICES; echo made > /shared/made-inside",
                        output=out)
    done = cluster.wait_state(job, ("succeeded", "failed"), "the container job to end")
    check(done["state"] == "succeeded", f"the container job succeeded: {done}")
    text = read(out) if os.path.exists(out) else ""
    check("in-the-image" in text, f"the image's file is there: {text!r}")
    check("no-host-file" in text, f"the host's file is not: {text!r}")
    check(f"uid={user.pw_uid} gid={user.pw_gid}" in text, f"it ran as {USER}: {text!r}")
    check("CVD=0" in text, f"its GPU in CUDA_VISIBLE_DEVICES: {text!r}")
    check(os.stat(out).st_uid == user.pw_uid, "its output file is the user's")
    check(os.stat(os.path.join(allowed, "made-inside")).st_uid == user.pw_uid,
          "a file it made in its mount is the user's")
    check(done["container"]["image"] == image, "the job shows its image")

    # 3. A gang over both nodes.
    job = container_job(cluster, image,
                        "echo $MASTER_ADDR $MASTER_PORT $WORLD_SIZE $RANK $NODE_RANK "
                        "> /shared/rank-$RANK", tasks=2)
    done = cluster.wait_state(job, ("succeeded", "failed"), "the gang to end")
    check(done["state"] == "succeeded", f"the gang succeeded: {done}")
    nodes = sorted(p["node"] for p in done.get("placement") or []) or ["?"]
    ranks = [read(os.path.join(allowed, f"rank-{r}")).split()
             for r in (0, 1) if os.path.exists(os.path.join(allowed, f"rank-{r}"))]
    check(len(ranks) == 2 and ranks[0][0] == ranks[1][0] and ranks[0][1] == ranks[1][1] and
          ranks[0][2] == ranks[1][2] == "2" and {ranks[0][3], ranks[1][3]} == {"0", "1"},
          f"each rank sees the gang's variables: {ranks} (nodes {nodes})")

    # 4. Out of memory inside.
    job = container_job(cluster, image, "exec dd if=/dev/zero of=/dev/null bs=100M count=1",
                        memory_mib=32)
    done = cluster.wait_state(job, ("succeeded", "failed"), "the memory hog to end")
    check(done["state"] == "failed" and done["reason"] == "out_of_memory",
          f"--mem 32M: out_of_memory: {done['state']} {done['reason']} {done['message']}")

    # 5. Cancel stops it and removes it.
    job = container_job(cluster, image, "touch /shared/cancel-started; exec sleep 300")
    cluster.wait_state(job, ("running",), "the job to run")
    wait_until(lambda: os.path.exists(os.path.join(allowed, "cancel-started")), TIMEOUT,
               "the container to start")
    check(any(f"-{job}-0-1-" in name for name in berth_containers()), "its container exists")
    request(cluster.base + f"/api/v1/jobs/{job}/cancel", cluster.user, "POST", {})
    done = cluster.wait_state(job, ("cancelled",), "the cancelled job to end")
    check(not any(f"-{job}-0-1-" in name for name in berth_containers()),
          "the cancelled job's container is gone")

    # 6. kill -9 of the agent, a restart: re-adopted, and it finishes.
    go = os.path.join(allowed, "go")
    job = container_job(cluster, image,
                        "touch /shared/adopt-started; "
                        "while [ ! -e /shared/go ]; do sleep 0.2; done; echo finished")
    cluster.wait_state(job, ("running",), "the job to run")
    wait_until(lambda: os.path.exists(os.path.join(allowed, "adopt-started")), TIMEOUT,
               "the container to start")
    node = cluster.job(job)["placement"][0]["node"]
    cluster.agents[node].process.send_signal(signal.SIGKILL)
    cluster.agents[node].process.wait()
    cluster.start_agent(node)
    with open(go, "w"):
        pass
    done = cluster.wait_state(job, ("succeeded", "failed"), "the adopted job to end")
    check(done["state"] == "succeeded" and done["attempts"] == 1,
          f"the re-adopted job finished in its first run: {done['state']} "
          f"attempts {done['attempts']} {done['message']}")
    check(not any(f"-{job}-0-" in name for name in berth_containers()),
          "the adopted job's container is gone")

    # 7. Node loss: the supervisor fences the container when the lease ends.
    job = container_job(cluster, image, "touch /shared/fence-started; exec sleep 300",
                        grace_s=30)
    cluster.wait_state(job, ("running",), "the job to run")
    wait_until(lambda: os.path.exists(os.path.join(allowed, "fence-started")), TIMEOUT,
               "the container to start")
    node = cluster.job(job)["placement"][0]["node"]
    cluster.agents[node].process.send_signal(signal.SIGKILL)
    cluster.agents[node].process.wait()
    exit_file = os.path.join(cluster.root, node, "tasks", f"{job}-0-1", "exit.json")
    wait_until(lambda: os.path.exists(exit_file), TIMEOUT, "the lease to fence the task")
    check(json.loads(read(exit_file))["reason"] == "lease_expired",
          f"it was fenced: {read(exit_file)}")
    check(not any(f"-{job}-0-1-" in name for name in berth_containers()),
          "the fenced container is gone")
    cluster.start_agent(node)

    # 8. A leftover no supervisor owns (its task dir gone with the agent and
    # the supervisor killed) is removed by label when the agent starts.
    job = container_job(cluster, image, "touch /shared/leftover-started; exec sleep 300",
                        requeue=False)
    cluster.wait_state(job, ("running",), "the job to run")
    wait_until(lambda: os.path.exists(os.path.join(allowed, "leftover-started")), TIMEOUT,
               "the container to start")
    node = cluster.job(job)["placement"][0]["node"]
    task_dir = os.path.join(cluster.root, node, "tasks", f"{job}-0-1")
    supervisor = int(read(os.path.join(task_dir, "supervisor.pid")).split()[0])
    cluster.agents[node].process.send_signal(signal.SIGKILL)
    cluster.agents[node].process.wait()
    os.kill(supervisor, signal.SIGKILL)
    shutil.rmtree(task_dir)
    check(any(f"-{job}-0-1-" in name for name in berth_containers()),
          "the container outlived its supervisor")
    cluster.start_agent(node)
    check(not any(f"-{job}-0-1-" in name for name in berth_containers()),
          "the restarted agent removed the leftover container")
    cluster.wait_state(job, ("failed",), "the job whose task vanished to fail")

    # 9. A missing image fails with its name.
    missing = "localhost/berth-missing-" + secrets.token_hex(4) + ":1"
    job = cluster.submit({"command": ["true"], "gpus": 0, "container": {"image": missing}})
    done = cluster.wait_state(job, ("failed",), "the missing image's job to fail")
    check(done["reason"] == "start_failed" and missing in done["message"],
          f"it names the image: {done['reason']} {done['message']}")

    # 10. A mount outside the allow-list is refused at submit.
    try:
        request(cluster.base + "/api/v1/jobs", cluster.user, "POST",
                {"command": ["true"], "container": {
                    "image": image, "mounts": [{"source": "/etc", "target": "/etc"}]}})
        check(False, "a mount of /etc was accepted")
    except urllib.error.HTTPError as error:
        body = error.read().decode()
        check(error.code == 400 and "container.mounts[0].source" in body,
              f"a mount of /etc is refused: {error.code} {body}")


def main():
    if os.geteuid() != 0 or shutil.which("podman") is None or not os.path.exists(BUSYBOX):
        print("skipped: needs root, podman and busybox-static")
        return SKIP
    binary = os.path.abspath(sys.argv[1])
    user = account()
    image = "localhost/berth-e2e-" + secrets.token_hex(4) + ":1"
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="berth-containers-e2e-") as root:
        os.chmod(root, 0o755)  # the user's output files are opened through it
        make_image(root, image)
        cluster = Cluster(binary, root)
        try:
            os.chown(cluster.allowed, user.pw_uid, user.pw_gid)
            cluster.start(USER)
            run_checks(cluster, image, user)
        finally:
            cluster.stop()
            left = berth_containers()
            check(not left, f"no berth container left behind: {left}")
            for name in left:
                podman("rm", "--force", name, check_rc=False)
            podman("rmi", "--force", image, check_rc=False)
            for node in ("node-1", "node-2"):
                if os.path.exists(os.path.join(root, node + ".log")):
                    print(f"--- {node} log (tail) ---\n" +
                          read(os.path.join(root, node + ".log"))[-1500:])
    if check.failures:
        return 1
    print(f"container checks passed in {time.time() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
