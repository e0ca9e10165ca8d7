#!/usr/bin/env python3
"""Issue 32: the server survives PostgreSQL going away.

  1. Started while PostgreSQL is down, the server waits for it (saying so in
     its log) and comes up when it returns.
  2. With an agent running a job and 8 clients submitting, PostgreSQL is
     stopped for OUTAGE seconds (10 by default; 30 for the issue's run):
     the server never exits, refuses submits with 503 and a message that
     says why, still answers reads, and keeps the job running. When
     PostgreSQL is back, submits are taken again by themselves, and every
     job acknowledged before, during and after is there.

Every process is the test's own, stopped by PID; everything is on 127.0.0.1.

Usage: database_outage_test.py BERTH_BINARY SOURCE_DIR [--outage SECONDS]
"""
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
from berth_testlib import (Checks, PrivatePostgres, admin_token,  # noqa: E402
                           agent_with_long_job, berth_server, free_port, request, stop_all,
                           wait_until)
import berth  # noqa: E402

check = Checks()


def submit_status(url, token):
    """The status and body of one raw submit (no client retries)."""
    req = urllib.request.Request(url + "/api/v1/jobs", method="POST",
                                 data=b'{"command": ["true"], "hold": true}')
    req.add_header("Authorization", "Bearer " + token)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError as e:
        return None, str(e)


def storm(url, token, stop, acked, refused, index):
    client = berth.Client(url, token=token)
    n = 0
    while not stop.is_set():
        name = f"storm-{index}-{n}"
        n += 1
        try:
            acked.append((name, client.submit(["true"], name=name, hold=True)))
        except Exception as e:  # refused (503) while the database is away
            refused.append(str(e))
            time.sleep(0.2)


def main():
    binary, source = sys.argv[1], sys.argv[2]
    outage = float(sys.argv[sys.argv.index("--outage") + 1]) if "--outage" in sys.argv else 10
    pg = PrivatePostgres(source)
    processes = []
    root = tempfile.mkdtemp(prefix="berth-outage-")
    try:
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        # The node lease (heartbeat_timeout_s) outlasts the outage: agents'
        # reports cannot be written meanwhile.
        server = berth_server(binary, os.path.join(root, "server"), port, pg.url,
                              "[scheduler]", f"heartbeat_timeout_s = {int(outage) + 30}")

        # --- 1. started while PostgreSQL is down ---
        pg.stop()
        server.start()
        processes.append(server)
        wait_until(lambda: "waiting for the database" in server.log(), 20,
                   "the server saying it waits for the database")
        check(server.process.poll() is None, "the server waits rather than exits")
        pg.start()
        server.wait_http(url + "/readyz", timeout=30)
        token = admin_token(os.path.join(root, "server"))

        agent, job, starts = agent_with_long_job(binary, root, url, token, url)
        processes.append(agent)
        state = lambda: request(f"{url}/api/v1/jobs/{job['id']}", token)[1]["state"]  # noqa
        wait_until(lambda: state() == "running", 30, "the job running")

        # --- 2. PostgreSQL stops during a storm ---
        stop, acked, refused = threading.Event(), [], []
        clients = [threading.Thread(target=storm, args=(url, token, stop, acked, refused, i))
                   for i in range(8)]
        for c in clients:
            c.start()
        time.sleep(2)
        before = len(acked)
        pg.stop()
        stopped_at = time.monotonic()
        status, body = None, ""
        while time.monotonic() - stopped_at < outage:
            status, body = submit_status(url, token)
            if status == 503:
                break
            time.sleep(0.2)
        check(status == 503, f"a submit during the outage is refused with 503 (got {status})")
        check("unavailable" in body, f"the refusal says why: {body[:200]}")
        print("refused with:", body[:200])
        time.sleep(6)  # past the leader's lease (5 s), which cannot be renewed now
        try:
            read = request(f"{url}/api/v1/jobs/{job['id']}", token)[0]
            read = read if read != 200 else request(url + "/api/v1/nodes", token)[0]
        except urllib.error.HTTPError as e:
            read = f"{e.code} {e.read().decode()[:200]}"
        check(read == 200, f"reads are answered from memory during the outage ({read})")
        time.sleep(max(0.0, outage - (time.monotonic() - stopped_at)))
        check(server.process.poll() is None, "the server is still up at the outage's end")
        during = len(acked)
        pg.start()
        restarted_at = time.monotonic()
        wait_until(lambda: submit_status(url, token)[0] == 201, 30,
                   "submits taken again once PostgreSQL is back")
        print(f"submits taken again {time.monotonic() - restarted_at:.1f} s after PostgreSQL "
              "came back")
        time.sleep(2)
        stop.set()
        for c in clients:
            c.join(timeout=60)
        print(f"storm: {before} acknowledged before the outage, {during} by its end, "
              f"{len(acked)} in all; {len(refused)} refused")
        check(len(acked) > during, "submits were acknowledged after the outage")
        check(server.process.poll() is None, "the server never exited")
        missing = []
        for name, job_id in acked:
            _, found = request(f"{url}/api/v1/jobs/{job_id}", token)
            if found.get("name") != name:
                missing.append((name, job_id))
        check(not missing, f"every acknowledged job is there: {missing[:5]}")
        check(state() == "running", "the job still runs")
        check(len(starts()) == 1, f"the job's task started once ({starts()})")
    finally:
        stop_all(processes, pg)
    if check.failures:
        sys.exit(f"{len(check.failures)} check(s) failed")
    print("database outage: every check passed")


if __name__ == "__main__":
    main()
