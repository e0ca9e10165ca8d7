#!/usr/bin/env python3
"""Issue 29: defects of the CLI found by trying it as a new user would, each
checked against a real `berth dev` (one node, four fake GPUs):

  - a repeatable option before `--` (`--env K=V -- sh -c CMD`) leaves the
    command alone;
  - a bad flag or value exits 2 naming the flag and what it wanted
    (`--gpus two`, `show abc`, an unknown flag);
  - `logs -f` of a job that does not exist says so and exits non-zero, and
    `logs -f` of a job that ends ends;
  - a wrong token is reported as refused, naming where it came from, not as
    an unreachable server;
  - `usage --from` takes dates, ISO date-times and unix seconds;
  - cancel: the task's SIGTERM handler runs once, and the job ends
    `cancelled` with the task's exit code and a final message;
  - a time-limit kill ends `timeout`, "time limit reached".

Usage: cli_defects_test.py BERTH_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        dev = berth_dev(binary, data, port, "--nodes", "1", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: os.path.exists(os.path.join(root, ".config/berth/dev.toml")), 10,
                       "berth dev to announce itself")
            wait_until(lambda: "up" in berth("nodes").stdout, 20, "the node to come up")

            def bounded(*args, timeout=30):
                """A command that must end: one that hangs is a failed check."""
                try:
                    return berth(*args, timeout=timeout)
                except subprocess.TimeoutExpired:
                    return subprocess.CompletedProcess(args, None, "", f"hung for {timeout} s")

            def show(job):
                return json.loads(berth("show", job, "--json").stdout)

            def ended(job):
                return wait_until(lambda: (lambda j: j if j["state"] in (
                    "succeeded", "failed", "cancelled", "timeout") else None)(show(job)),
                    60, f"job {job} to end")

            # A repeatable option, then `--` and a command with flags of its own.
            env_job = berth("submit", "--wait", "--gpus", "0", "--env", "K=V", "--env", "L=W",
                            "--", "sh", "-c", 'test "$K$L" = VW')
            check(env_job.returncode == 0,
                  f"--env K=V -- sh -c CMD runs CMD: {env_job.returncode} {env_job.stderr!r}")

            # Bad flags and values: exit 2, naming the flag and what it wanted.
            gpus = berth("submit", "--gpus", "two", "--", "true")
            check(gpus.returncode == 2 and "--gpus" in gpus.stderr and "integer" in gpus.stderr,
                  f"--gpus two: {gpus.returncode} {gpus.stderr!r}")
            show_abc = berth("show", "abc")
            check(show_abc.returncode == 2 and "id" in show_abc.stderr
                  and "abc" in show_abc.stderr,
                  f"show abc: {show_abc.returncode} {show_abc.stderr!r}")
            unknown = berth("queue", "--colour")
            check(unknown.returncode == 2 and "--colour" in unknown.stderr,
                  f"unknown flag: {unknown.returncode} {unknown.stderr!r}")

            # logs -f: a job that never was, and one that ends.
            nothing = bounded("logs", "-f", "999999")
            check(nothing.returncode not in (0, None) and "999999" in nothing.stderr
                  and "does not exist" in nothing.stderr,
                  f"logs -f of no job: {nothing.returncode} {nothing.stderr!r}")
            short = berth("submit", "--gpus", "0", "--", "sh", "-c",
                          "echo first; sleep 1; echo last").stdout.strip()
            followed = bounded("logs", "-f", short, timeout=60)
            check(followed.returncode == 0 and followed.stdout == "first\nlast\n",
                  f"logs -f ends with the job: {followed.returncode} {followed.stdout!r}")
            never = berth("submit", "--gpus", "0", "--hold", "--", "true").stdout.strip()
            berth("cancel", never)
            unrun = bounded("logs", "-f", never)
            check(unrun.returncode not in (0, None),
                  f"logs -f of a job cancelled before it ran ends: {unrun.returncode}")

            # A wrong token: refused, and from where, not "cannot reach".
            wrong = berth("queue", "--token", "not-a-token")
            check(wrong.returncode == 1 and "refused the token" in wrong.stderr
                  and "--token" in wrong.stderr and "cannot reach" not in wrong.stderr,
                  f"a wrong --token: {wrong.returncode} {wrong.stderr!r}")
            wrong_env = berth("queue", env=dict(berth.env, BERTH_TOKEN="not-a-token"))
            check(wrong_env.returncode == 1 and "BERTH_TOKEN" in wrong_env.stderr,
                  f"a wrong BERTH_TOKEN: {wrong_env.returncode} {wrong_env.stderr!r}")

            # usage --from: dates and date-times.
            for when in ("2026-12-03", "2026-12-03T10:00:00Z", "2026-12-03T12:00:00+02:00",
                         "1796256000"):
                usage = berth("usage", "--from", when, "--json")
                check(usage.returncode == 0 and "by_user" in usage.stdout,
                      f"usage --from {when}: {usage.returncode} {usage.stderr!r}")
            bad_from = berth("usage", "--from", "yesterday")
            check(bad_from.returncode == 2 and "--from" in bad_from.stderr,
                  f"usage --from yesterday: {bad_from.returncode} {bad_from.stderr!r}")

            # Cancel: the handler runs once; the job keeps its exit code.
            with open(os.path.join(berth.work, "term.py"), "w") as f:
                f.write("import signal, sys, time\n"
                        "got = []\n"
                        "def term(number, frame):\n"
                        "    got.append(time.monotonic())\n"
                        "    with open('terms', 'a') as out:\n"
                        "        out.write('TERM\\n')\n"
                        "signal.signal(signal.SIGTERM, term)\n"
                        "open('ready', 'w').write('ready\\n')\n"
                        "while not got or time.monotonic() < got[0] + 1.0:\n"
                        "    time.sleep(0.01)\n"
                        "sys.exit(7)\n")
            trapping = berth("submit", "--gpus", "0", "--", "python3", "term.py").stdout.strip()
            wait_until(lambda: os.path.exists(os.path.join(berth.work, "ready")), 30,
                       "the trapping task to start")
            check(berth("cancel", trapping).returncode == 0, "cancel the trapping job")
            cancelled = ended(trapping)
            with open(os.path.join(berth.work, "terms")) as f:
                terms = f.read()
            check(terms == "TERM\n", f"the task's SIGTERM handler ran once: {terms!r}")
            check(cancelled["state"] == "cancelled" and cancelled.get("exit_code") == 7
                  and "exited with code 7" in cancelled.get("message", "")
                  and "stopping" not in cancelled.get("message", ""),
                  f"a cancelled job keeps its exit code and a final message: {cancelled}")

            # A time limit: a state of its own.
            limited = berth("submit", "--gpus", "0", "--time", "2s", "--", "sleep", "60")
            timed_out = ended(limited.stdout.strip())
            check(timed_out["state"] == "timeout" and timed_out["reason"] == "time_limit"
                  and "time limit" in timed_out.get("message", ""),
                  f"a time-limit kill is a timeout: {timed_out}")
            listed = berth("queue", "--all").stdout
            check("timeout" in listed, f"queue --all shows the timeout: {listed!r}")
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} failure(s)")
        sys.exit(1)
    print("ok: the CLI defects of issue 29")


if __name__ == "__main__":
    main()
