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
