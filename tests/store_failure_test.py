#!/usr/bin/env python3
"""A store write the server had already applied fails: the server stops.

The controller applies a heartbeat's or a cycle's changes in memory and
waits for the store's flush outside its lock (store/group_commit.h). If such
a write fails, memory is ahead of the store, so the server must not go on:
it exits with status 75, saying why, and a restart reloads from the store.

The failure is made real: while a job runs under `berth dev`, its row's
version is changed behind the server's back, so the write of its end fails
the store's version check.

Usage: store_failure_test.py BERTH_BINARY
"""
import os
import sqlite3
import sys
import tempfile

from berth_testlib import admin_token, berth_dev, free_port, request, wait_until

STORE_FAILED_EXIT = 75


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory() as data_dir:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = berth_dev(binary, data_dir, port, "--nodes", "1").start()
        try:
            server.wait_http(base + "/readyz")
            admin = admin_token(data_dir)
            # The job runs on the node as the dev admin's Unix account (the
            # user who started berth dev): a made-up user has none there.
            token = admin
            status, job = request(base + "/api/v1/jobs", token, "POST",
                                  {"command": ["sleep", "2"], "gpus": 1})
            assert status == 201, (status, job)
            job_id = job["id"]

            def running():
                _, view = request(f"{base}/api/v1/jobs/{job_id}", token)
                return view["state"] == "running"
            wait_until(running, 30, f"job {job_id} to run")

            store = sqlite3.connect(os.path.join(data_dir, "berth.sqlite"), timeout=10)
            with store:
                store.execute("UPDATE jobs SET version = version + 1000 WHERE id = ?", (job_id,))
            store.close()

            # The task ends; the agent's report is applied, its write fails.
            wait_until(lambda: server.process.poll() is not None, 60, "the server to stop")
            if server.process.returncode != STORE_FAILED_EXIT:
                raise SystemExit(f"exit status {server.process.returncode}, expected "
                                 f"{STORE_FAILED_EXIT}; log:\n{server.log()}")
            if "restart the server to reload from the store" not in server.log():
                raise SystemExit(f"the log does not say why it stopped:\n{server.log()}")
        finally:
            server.stop()

        # A new process reloads from the store: the job is still there.
        server = berth_dev(binary, data_dir, port, "--nodes", "1").start()
        try:
            server.wait_http(base + "/readyz")
            status, view = request(f"{base}/api/v1/jobs/{job_id}", token)
            assert status == 200 and view["id"] == job_id, (status, view)
        finally:
            server.stop()
    print("store failure: the server stopped with status 75 and restarted from the store")


if __name__ == "__main__":
    main()
