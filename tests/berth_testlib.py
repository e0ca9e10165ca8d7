"""Helpers the Python integration tests share: free loopback ports, JSON
requests with a bearer token, and a `berth` process they start and stop.

Every process here is started by the test and stopped by its PID; every
address is 127.0.0.1.
"""
import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, token, method="GET", body=None, timeout=10, context=None):
    """One JSON request; returns (status, decoded body). Raises on HTTP >= 400."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout, context=context) as response:
        return response.status, json.loads(response.read() or b"null")


def wait_until(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise SystemExit(f"timed out after {timeout} s waiting for {what}")


class Process:
    """A child process the test owns: started, probed for readiness, stopped by PID."""

    def __init__(self, argv, log_path, env=None):
        self.argv, self.log_path, self.env = argv, log_path, env
        self.process = None

    def start(self):
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(self.argv, stdout=log, stderr=subprocess.STDOUT,
                                        env=self.env)
        log.close()
        return self

    def wait_http(self, url, timeout=30, context=None):
        def answered():
            if self.process.poll() is not None:
                raise SystemExit(f"{self.argv[0]} exited with {self.process.returncode}; "
                                 f"log:\n{self.log()}")
            try:
                with urllib.request.urlopen(url, timeout=1, context=context) as r:
                    return r.status == 200
            except (urllib.error.URLError, ConnectionError, OSError):
                return False
        wait_until(answered, timeout, url)
        return self

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def kill(self):
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def berth_dev(binary, data_dir, port, *extra, env=None):
    """`berth dev` on 127.0.0.1:port with its state in data_dir (not yet started)."""
    return Process([binary, "dev", "--data-dir", data_dir, "--listen", f"127.0.0.1:{port}",
                    *extra], os.path.join(data_dir, "berth-dev.log"), env=env)


def admin_token(data_dir):
    with open(os.path.join(data_dir, "admin-token")) as f:
        return f.read().strip()


class Checks:
    """Collects failed checks, so that one run reports every one of them."""

    def __init__(self):
        self.failures = []

    def __call__(self, condition, what):
        if not condition:
            self.failures.append(what)
            print("FAIL:", what)


class CliSandbox:
    """A home and a working directory of their own under `root`, and the
    berth binary run there with none of the caller's BERTH_* settings."""

    def __init__(self, binary, root):
        self.binary = binary
        self.env = dict(os.environ, HOME=root, NO_COLOR="1")
        for key in ("BERTH_ADDR", "BERTH_TOKEN", "BERTH_CONFIG", "XDG_CONFIG_HOME"):
            self.env.pop(key, None)
        self.work = os.path.join(root, "work")
        os.makedirs(self.work)

    def __call__(self, *args, timeout=60, env=None):
        return subprocess.run([self.binary, *args], cwd=self.work, env=env or self.env,
                              capture_output=True, text=True, timeout=timeout)


class PrivatePostgres:
    """A PostgreSQL of the test's own (scripts/test-postgres.sh), which it
    may stop and start again on the same port to make a database outage."""

    BIN = os.environ.get("BERTH_PG_BIN", "/usr/lib/postgresql/15/bin")

    def __init__(self, source_dir):
        self.script = os.path.join(source_dir, "scripts", "test-postgres.sh")
        out = subprocess.run(["bash", self.script, "start"], check=True, capture_output=True,
                             text=True).stdout
        env = dict(line[len("export "):].split("=", 1) for line in out.splitlines()
                   if line.startswith("export "))
        self.url, self.dir = env["BERTH_TEST_PG_URL"], env["BERTH_TEST_PG_DIR"]
        self.port = self.url.rsplit(":", 1)[1].split("/")[0]

    def _pg_ctl(self, *args):
        argv = [os.path.join(self.BIN, "pg_ctl"), "-D", os.path.join(self.dir, "data"), *args]
        if os.getuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        subprocess.run(argv, check=True, capture_output=True, cwd=self.dir)

    def stop(self):
        """An outage: the server goes away, every session with it."""
        self._pg_ctl("stop", "-m", "immediate", "-w")

    def start(self):
        self._pg_ctl("start", "-w", "-t", "60", "-l", os.path.join(self.dir, "server.log"),
                     "-o", f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} "
                     "-c max_connections=300")

    def destroy(self):
        subprocess.run(["bash", self.script, "stop", self.dir], capture_output=True)


def berth_server(binary, data_dir, port, database, *extra_toml):
    """`berth server` on 127.0.0.1:port with PostgreSQL `database` (not yet
    started); its config and log live in data_dir."""
    os.makedirs(data_dir, exist_ok=True)
    config = os.path.join(data_dir, "berth.toml")
    with open(config, "w") as f:
        f.write(f'listen = "127.0.0.1:{port}"\ndata_dir = "{data_dir}"\n'
                f'database = "{database}"\n' + "".join(line + "\n" for line in extra_toml))
    return Process([binary, "server", "--config", config], os.path.join(data_dir, "server.log"))


def berth_agent(binary, root, node, servers, token):
    """`berth agent` for `node` with 8 fake GPUs, reporting to `servers`
    (a comma-separated list), its state under root/node (not yet started)."""
    state = os.path.join(root, node)
    os.makedirs(state, exist_ok=True)
    token_file = os.path.join(state, "token")
    with open(token_file, "w") as f:
        f.write(token + "\n")
    return Process([binary, "agent", "--server", servers, "--token-file", token_file, "--node",
                    node, "--listen", "127.0.0.1:0", "--state-dir", state, "--fake-gpus",
                    "8xH100-80GB", "--heartbeat-interval", "1s", "--allow-root-jobs",
                    "--stop-tasks-on-exit"],
                   os.path.join(root, node + ".log"))


def agent_with_long_job(binary, root, url, token, servers):
    """Through the server at `url` (admin `token`): an agent for node-1
    reporting to `servers` (started), and a job of root's submitted to run
    on it for 5 minutes, its task recording each of its starts. Returns
    (agent, job, starts), starts() listing the task's starts so far."""
    _, agent_token = request(url + "/api/v1/tokens", token, "POST",
                             {"user": "agent-node-1", "role": "agent", "node": "node-1"})
    _, user_token = request(url + "/api/v1/tokens", token, "POST",
                            {"user": "root", "role": "user"})
    agent = berth_agent(binary, root, "node-1", servers, agent_token["token"]).start()
    pid_file = os.path.join(root, "task-pids")
    _, job = request(url + "/api/v1/jobs", user_token["token"], "POST",
                     {"command": ["sh", "-c", f"echo $$ >> {pid_file}; exec sleep 300"],
                      "gpus": 1})

    def starts():
        with open(pid_file) as f:
            return f.read().split()
    return agent, job, starts


def stop_all(processes, pg):
    """Stops the test's processes, last started first (resumed first, in
    case one was paused), and its PostgreSQL."""
    for p in reversed(processes):
        if p.process and p.process.poll() is None:
            try:
                os.kill(p.process.pid, signal.SIGCONT)
            except OSError:
                pass
            p.stop()
    pg.destroy()
