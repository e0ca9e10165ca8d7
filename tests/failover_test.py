#!/usr/bin/env python3
"""Issue 32: two servers on one PostgreSQL, one leading, one standing by.

  1. A leads, B stands by (answers 503 naming A). An agent knows both
     (--server A,B) and runs a job. 16 clients submit through the Python
     client, given both addresses, and A is killed (-9) during the storm:
     B leads within 10 s, every acknowledged job is there exactly once,
     the running job was never disturbed (its task started once and still
     runs), the agent reports to B, and the CLI given A,B reaches B.
  2. A comes back and stands by. B is paused (SIGSTOP) past its lease: A
     takes over within 10 s. B, resumed (SIGCONT), answers nothing more
     and stops (exit 75, "stepping down"); the job still runs, now under A.

Every process is the test's own, stopped by PID; everything is on 127.0.0.1.

Usage: failover_test.py BERTH_BINARY SOURCE_DIR
"""
import os
import signal
import subprocess
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

LEASE_S = 2
STEPPED_DOWN_EXIT = 75
check = Checks()


def answer(url, token=None):
    """(status, headers, body) of a GET, without raising on 4xx/5xx."""
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=2) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()
    except OSError:
        return None, None, ""


def leads(url):
    return answer(url + "/readyz")[0] == 200


def storm(addrs, token, stop, acked, errors, client_index):
    client = berth.Client(addrs, token=token)
    n = 0
    while not stop.is_set():
        name = f"storm-{client_index}-{n}"
        n += 1
        try:
            job_id = client.submit(["true"], name=name, hold=True)
            acked.append((name, job_id if isinstance(job_id, int) else job_id.id))
        except Exception as e:  # not acknowledged: may or may not exist
            errors.append(f"{name}: {e}")


def all_jobs(url, token):
    jobs, after = [], 0
    while True:
        _, page = request(f"{url}/api/v1/jobs?limit=1000&after={after}", token)
        items = page["jobs"] if isinstance(page, dict) else page
        if not items:
            return jobs
        jobs.extend(items)
        after = items[-1]["id"]


def main():
    binary, source = sys.argv[1], sys.argv[2]
    pg = PrivatePostgres(source)
    processes = []
    root = tempfile.mkdtemp(prefix="berth-failover-")
    try:
        ports = {"a": free_port(), "b": free_port()}
        urls = {k: f"http://127.0.0.1:{p}" for k, p in ports.items()}
        servers = {k: berth_server(binary, os.path.join(root, k), ports[k], pg.url,
                                   f"leader_lease_s = {LEASE_S}") for k in ports}
        a = servers["a"].start()
        processes.append(a)
        a.wait_http(urls["a"] + "/readyz")
        b = servers["b"].start()
        processes.append(b)
        token = admin_token(os.path.join(root, "a"))

        def standby_names_a():
            status, headers, _ = answer(urls["b"] + "/api/v1/jobs", token)
            return status == 503 and headers.get("X-Berth-Leader") == urls["a"]
        wait_until(standby_names_a, 20, "B standing by, naming A")

        agent, job, starts = agent_with_long_job(binary, root, urls["a"], token,
                                                 f"{urls['a']},{urls['b']}")
        processes.append(agent)
        running = lambda url: request(f"{url}/api/v1/jobs/{job['id']}", token)[1]  # noqa: E731
        wait_until(lambda: running(urls["a"])["state"] == "running", 30, "the job running")

        # --- 1. kill -9 of the leader during a 16-client storm ---
        stop, acked, errors = threading.Event(), [], []
        clients = [threading.Thread(target=storm, args=([urls["a"], urls["b"]], token, stop,
                                                         acked, errors, i)) for i in range(16)]
        for c in clients:
            c.start()
        time.sleep(3)
        before_kill = len(acked)
        a.kill()
        killed_at = time.monotonic()
        wait_until(lambda: leads(urls["b"]), 15, "B leading")
        took = time.monotonic() - killed_at
        print(f"B leads {took:.1f} s after A was killed (lease {LEASE_S} s)")
        check(took <= 10, f"B took over within 10 s (took {took:.1f} s)")
        time.sleep(4)  # the storm goes on against B
        stop.set()
        for c in clients:
            c.join(timeout=60)
        print(f"storm: {len(acked)} acknowledged ({before_kill} before the kill), "
              f"{len(errors)} not acknowledged")
        check(len(acked) > before_kill, "submits were acknowledged after the failover")
        jobs = all_jobs(urls["b"], token)
        by_name = {}
        for j in jobs:
            by_name.setdefault(j.get("name"), []).append(j["id"])
        lost = [(n, i) for n, i in acked if by_name.get(n) != [i]]
        check(not lost, f"every acknowledged job is there once, with its id: {lost[:5]}")
        duplicated = [n for n, ids in by_name.items() if n and len(ids) > 1]
        check(not duplicated, f"no job submitted twice: {duplicated[:5]}")
        wait_until(lambda: running(urls["b"])["state"] == "running", 15,
                   "the job running under B")
        check(agent.process.poll() is None, "the agent is still up")
        # The CLI, given both, passes the dead one and reaches B.
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        env["HOME"] = root
        cli = subprocess.run([binary, "queue", "--server", f"{urls['a']},{urls['b']}",
                              "--token", token], capture_output=True, text=True, timeout=60,
                             env=env)
        check(cli.returncode == 0 and f"{job['id']}" in cli.stdout,
              f"the CLI follows to B: {cli.returncode} {cli.stdout[:200]} {cli.stderr[:200]}")

        # --- 2. the new leader paused past its lease, then resumed ---
        a = servers["a"].start()
        processes.append(a)
        wait_until(lambda: answer(urls["a"] + "/healthz")[2] == "standby\n", 20,
                   "A standing by")
        os.kill(b.process.pid, signal.SIGSTOP)
        paused_at = time.monotonic()
        wait_until(lambda: leads(urls["a"]), 15, "A leading while B is paused")
        took = time.monotonic() - paused_at
        print(f"A leads {took:.1f} s after B was paused")
        check(took <= 10, f"A took over within 10 s (took {took:.1f} s)")
        os.kill(b.process.pid, signal.SIGCONT)
        status, _, body = answer(urls["b"] + "/api/v1/jobs", token)
        check(status in (None, 503), f"B, resumed, serves nothing (got {status} {body[:100]})")
        try:
            code = b.process.wait(timeout=15)
        except Exception:
            code = None
        check(code == STEPPED_DOWN_EXIT, f"B stepped down (exit {code}; log:\n{b.log()[-1500:]})")
        check("stepping down" in b.log(), "B said why it stopped")
        wait_until(lambda: running(urls["a"])["state"] == "running", 15,
                   "the job running under A")
        check(len(starts()) == 1, f"the job's task started once, never again ({starts()})")
    finally:
        stop_all(processes, pg)
    if check.failures:
        sys.exit(f"{len(check.failures)} check(s) failed")
    print("failover: every check passed")


if __name__ == "__main__":
    main()
