#!/usr/bin/env python3
"""Issue 32: the CLI, the Python client and the agent follow the leader.

A real `berth dev` (the leader, no nodes of its own) and, on 127.0.0.1,
fakes in front of it:

  STANDBY  answers everything 503 with X-Berth-Leader: the real server
  BLIND    a standby that knows no leader (503 "standby: ...", no header)
  DEAD     a closed port (connection refused)
  DROPPER  forwards to the real server but drops the answer to the first
           submit (the job is queued, the client hears nothing)

and checks, for the CLI and the Python client:

  - STANDBY,REAL lists jobs and submits exactly once;
  - DEAD,REAL works; DEAD,STANDBY follows the leader the standby names,
    an address not in the list; BERTH_ADDR and a config file's TOML array
    take lists too;
  - a single dead server fails at once, as before; DEAD,BLIND fails within
    the 15 s, exit code 3 (unreachable), naming each address and its error;
  - DROPPER,REAL: the submit whose answer was lost is sent again (its
    idempotency key makes that safe) and the retry returns the same job id:
    one job, not two;

and that `berth agent --server DEAD,STANDBY,REAL` registers and heartbeats.

Usage: follow_leader_test.py BERTH_BINARY
"""
import http.client
import http.server
import json
import os
import re
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python"))
from berth_testlib import (Checks, CliSandbox, Process, admin_token, berth_dev,  # noqa: E402
                           free_port, request, wait_until)
import berth  # noqa: E402

check = Checks()


class Fake:
    """An HTTP server on a free loopback port, on a thread of its own."""

    def __init__(self, handle):
        fake = self
        self.calls = 0
        self.lock = threading.Lock()

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                with fake.lock:
                    fake.calls += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                handle(self, body)

            do_GET = do_POST = do_PUT = do_DELETE = answer

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def standby(leader):
    def handle(handler, _body):
        payload = json.dumps({"error": {"code": "unavailable",
                                        "message": f"standby: the leader is {leader or 'unknown'}"}})
        handler.send_response(503)
        if leader:
            handler.send_header("X-Berth-Leader", leader)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload.encode())
    return handle


class Dropper:
    """Forwards to `real`; the first POST /api/v1/jobs after arm() reaches
    the server, but its answer is dropped (the connection closed unanswered)."""

    def __init__(self, real):
        self.real = real.split("://", 1)[1]
        self.armed = False
        self.dropped = None  # the answer that never came back
        self.fake = Fake(self.handle)
        self.url = self.fake.url

    def arm(self):
        self.armed, self.dropped = True, None

    def handle(self, handler, body):
        connection = http.client.HTTPConnection(self.real, timeout=30)
        headers = {k: v for k, v in handler.headers.items() if k.lower() != "host"}
        connection.request(handler.command, handler.path, body=body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        if self.armed and handler.command == "POST" and handler.path == "/api/v1/jobs":
            self.armed = False
            self.dropped = json.loads(payload)
            handler.close_connection = True
            return  # nothing written: the client's connection closes unanswered
        handler.send_response(response.status)
        for key, value in response.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)


def job_count(real, token):
    return len(request(f"{real}/api/v1/jobs?limit=1000", token)[1]["jobs"])


def check_cli(cli, real, token, fakes):
    stand, blind, dead, dropper = fakes
    listed = cli("queue", "--server", f"{stand.url},{real}")
    check(listed.returncode == 0 and stand.calls >= 1,
          f"STANDBY,REAL lists jobs: {listed.returncode} {listed.stderr!r}")

    before = job_count(real, token)
    submitted = cli("submit", "--server", f"{stand.url},{real}", "--gpus", "0", "--", "true")
    check(submitted.returncode == 0 and submitted.stdout.strip().isdigit(),
          f"STANDBY,REAL submits: {submitted.returncode} {submitted.stderr!r}")
    check(job_count(real, token) == before + 1, "STANDBY,REAL submits exactly once")

    for servers, what in (((dead, real), "DEAD,REAL"),
                          ((dead, stand.url), "DEAD,STANDBY (a leader not in the list)")):
        run = cli("queue", "--server", ",".join(servers))
        check(run.returncode == 0, f"{what} lists jobs: {run.returncode} {run.stderr!r}")
    env = dict(cli.env, BERTH_ADDR=f"{dead},{stand.url}")
    run = cli("queue", env=env)
    check(run.returncode == 0, f"BERTH_ADDR=DEAD,STANDBY: {run.returncode} {run.stderr!r}")
    config = os.path.join(cli.work, "config.toml")
    with open(config, "w") as f:
        f.write(f'server = ["{dead}", "{real}"]\n')
    run = cli("queue", env=dict(cli.env, BERTH_CONFIG=config))
    check(run.returncode == 0, f"config server = [DEAD, REAL]: {run.returncode} {run.stderr!r}")

    started = time.monotonic()
    single = cli("queue", "--server", dead)
    check(single.returncode == 3 and f"cannot reach the server at {dead}" in single.stderr
          and time.monotonic() - started < 5,
          f"a single dead server fails at once, exit 3: {single.returncode} {single.stderr!r}")

    started = time.monotonic()
    nowhere = cli("queue", "--server", f"{dead},{blind.url}")
    took = time.monotonic() - started
    check(nowhere.returncode == 3 and "cannot reach any server" in nowhere.stderr
          and f"{dead} (connection refused" in nowhere.stderr
          and f"{blind.url} (standby; leader unknown)" in nowhere.stderr and 10 < took < 25,
          f"DEAD,BLIND: exit 3 after about 15 s naming each: {nowhere.returncode} "
          f"{took:.1f} s {nowhere.stderr!r}")

    before = job_count(real, token)
    dropper.arm()
    resent = cli("submit", "--server", f"{dropper.url},{real}", "--gpus", "0", "--", "true")
    first = (dropper.dropped or {}).get("id")
    check(resent.returncode == 0 and first is not None and resent.stdout.strip() == str(first),
          f"a submit whose answer was lost is resent and answers the same id: "
          f"{resent.returncode} {resent.stdout!r} dropped {dropper.dropped!r} {resent.stderr!r}")
    check(job_count(real, token) == before + 1, "the resent submit queued one job, not two")


def check_python(real, token, fakes):
    stand, blind, dead, dropper = fakes
    client = berth.Client([stand.url, real], token=token)
    client.list()
    before = job_count(real, token)
    client.submit(["true"], gpus=0)
    check(job_count(real, token) == before + 1, "python: STANDBY,REAL submits exactly once")
    check(client.addr == real, f"python: the leader kept: {client.addr}")
    client = berth.Client(f"{dead},{stand.url}", token=token)
    client.list()
    check(client.addr == real, f"python: DEAD,STANDBY follows to {real}: {client.addr}")

    try:
        berth.Client(dead, token=token).list()
        check(False, "python: a single dead server raises")
    except berth.ConnectionFailed as error:
        check(str(error).startswith(f"cannot reach {dead}"), f"python: as before: {error}")
    started = time.monotonic()
    try:
        berth.Client([dead, blind.url], token=token).list()
        check(False, "python: DEAD,BLIND raises")
    except berth.ConnectionFailed as error:
        took = time.monotonic() - started
        check("cannot reach any server" in str(error) and dead in str(error)
              and f"{blind.url} (standby; leader unknown)" in str(error) and 10 < took < 25,
              f"python: DEAD,BLIND names each after about 15 s: {took:.1f} s {error}")

    before = job_count(real, token)
    dropper.arm()
    resent = berth.Client([dropper.url, real], token=token).submit(["true"], gpus=0)
    first = (dropper.dropped or {}).get("id")
    check(first is not None and resent == first,
          f"python: a lost submit is resent, same id: {resent} vs {first}")
    check(job_count(real, token) == before + 1, "python: the resent submit queued one job")


def check_agent(binary, root, real, token, fakes):
    stand, _, dead, _ = fakes
    _, issued = request(f"{real}/api/v1/tokens", token, "POST",
                        {"user": "agent-n1", "role": "agent", "node": "n1"})
    port = free_port()
    agent = Process([binary, "agent", "--server", f"{dead},{stand.url},{real}",
                     "--token", issued["token"], "--node", "n1",
                     "--listen", f"127.0.0.1:{port}", "--state-dir", os.path.join(root, "n1"),
                     "--fake-gpus", "1xH100-80GB", "--cgroups", "off",
                     "--heartbeat-interval", "200ms"],
                    os.path.join(root, "agent.log")).start()
    try:
        def node_up():
            nodes = request(f"{real}/api/v1/nodes", token)[1]["nodes"]
            return any(n["name"] == "n1" and n["state"] == "up" for n in nodes)
        wait_until(node_up, 30, "the agent's node to come up")

        def heartbeats():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as r:
                    text = r.read().decode()
            except OSError:
                return 0
            found = re.search(r'berth_agent_heartbeats_total\{[^}]*result="ok"\} (\d+)', text)
            return int(found.group(1)) if found else 0
        wait_until(lambda: heartbeats() >= 5, 30, "the agent's heartbeats")
        check(f"registered with {real}" in agent.log(),
              f"the agent registered with the leader: {agent.log()[-800:]!r}")
    finally:
        agent.stop()


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        cli = CliSandbox(binary, root)
        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        real = f"http://127.0.0.1:{port}"
        dev = berth_dev(binary, data, port, "--nodes", "0", env=cli.env)
        fakes = []
        try:
            dev.start().wait_http(f"{real}/readyz")
            token = admin_token(data)
            cli.env["BERTH_TOKEN"] = token
            dead = f"http://127.0.0.1:{free_port()}"
            stand, blind, dropper = Fake(standby(real)), Fake(standby(None)), Dropper(real)
            fakes = [stand, blind, dropper.fake]
            check_cli(cli, real, token, (stand, blind, dead, dropper))
            check_python(real, token, (stand, blind, dead, dropper))
            check_agent(binary, root, real, token, (stand, blind, dead, dropper))
        finally:
            for fake in fakes:
                fake.stop()
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} checks failed")
        return 1
    print("follow_leader: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
