#!/usr/bin/env python3
"""Issue 4: nothing acknowledged is lost or duplicated, even after kill -9.

Starts the real `berth dev` on a loopback port, submits 1,000 jobs from 16
concurrent clients (each submit carries an idempotency key, and a client whose
request failed retries the same key), kills the server with SIGKILL in the
middle, starts it again on the same data dir, and checks that every
acknowledged job is present exactly once and every key names one job.

Usage: server_crash_test.py BERTH_BINARY
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

CLIENTS = 16
JOBS = 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url, token, method="GET", body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return response.status, json.loads(response.read() or b"null")


class Server:
    def __init__(self, binary, data_dir, port):
        self.binary, self.data_dir, self.port = binary, data_dir, port
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [self.binary, "dev", "--data-dir", self.data_dir, "--listen", f"127.0.0.1:{self.port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.05)
        raise SystemExit("server did not become ready")

    def kill(self):
        os.kill(self.process.pid, signal.SIGKILL)  # only the process we started
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=30)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as data_dir:
        server = Server(binary, data_dir, free_port())
        server.start()
        base = f"http://127.0.0.1:{server.port}"
        with open(os.path.join(data_dir, "admin-token")) as f:
            admin = f.read().strip()
        _, reply = request(base + "/api/v1/tokens", admin, "POST", {"user": "alice", "role": "user"})
        token = reply["token"]

        acked = {}  # key -> id
        lock = threading.Lock()
        restarted = threading.Event()

        def client(number):
            for i in range(number, JOBS, CLIENTS):
                key = f"crash-{i}"
                body = {"command": ["true"], "gpus": 0, "idempotency_key": key}
                while True:
                    try:
                        status, reply = request(base + "/api/v1/jobs", token, "POST", body)
                        if status == 201:
                            with lock:
                                if key in acked and acked[key] != reply["id"]:
                                    raise SystemExit(f"{key} acknowledged as two jobs")
                                acked[key] = reply["id"]
                            break
                    except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                        restarted.wait(timeout=0.2)  # the server is down: retry the same key

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for thread in threads:
            thread.start()
        while True:
            with lock:
                if len(acked) >= JOBS * 2 // 5:
                    break
            time.sleep(0.005)
        server.kill()
        with lock:
            acked_before_kill = dict(acked)
        server.start()
        restarted.set()
        for thread in threads:
            thread.join()

        jobs, after = [], 0
        while True:
            _, page = request(f"{base}/api/v1/jobs?limit=1000&after={after}", admin)
            jobs += page["jobs"]
            if "next_after" not in page:
                break
            after = page["next_after"]
        server.stop()

    ids = [job["id"] for job in jobs]
    failures = []
    if len(ids) != len(set(ids)):
        failures.append("a job id is listed twice")
    if len(jobs) != JOBS:
        failures.append(f"{len(jobs)} jobs stored for {JOBS} distinct keys")
    present = set(ids)
    lost = [key for key, job in acked_before_kill.items() if job not in present]
    if lost:
        failures.append(f"{len(lost)} jobs acknowledged before the kill are gone, e.g. {lost[:3]}")
    if len(acked) != JOBS or set(acked.values()) != present:
        failures.append("acknowledged ids and stored ids differ")
    print(f"{len(acked_before_kill)} acknowledged before SIGKILL, {len(acked)} in all, "
          f"{len(jobs)} stored")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok: every acknowledged job present exactly once")


if __name__ == "__main__":
    main()
