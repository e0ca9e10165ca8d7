#!/usr/bin/env python3
"""Issue 4: nothing acknowledged is lost or duplicated, even after kill -9.

Starts the real `berth dev` on a loopback port, submits 1,000 jobs from 16
concurrent clients (each submit carries an idempotency key, and a client whose
request failed retries the same key), kills the server with SIGKILL in the
middle, starts it again on the same data dir, and checks that every
acknowledged job is present exactly once and every key names one job.

Usage: server_crash_test.py BERTH_BINARY
"""
import http.client
import sys
import tempfile
import threading
import time
import urllib.error

from berth_testlib import admin_token, berth_dev, free_port, request

CLIENTS = 16
JOBS = 1000


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = berth_dev(binary, data_dir, port, "--nodes", "0").start().wait_http(base + "/readyz")
        admin = admin_token(data_dir)
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
                    # HTTPException: killed while sending an answer (a
                    # truncated body); the job may be stored, so the same
                    # key is retried like any lost answer.
                    except (urllib.error.URLError, http.client.HTTPException, ConnectionError,
                            OSError, ValueError):
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
        server.start().wait_http(base + "/readyz")
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
