#!/usr/bin/env python3
"""Issue 6: the Slurm-familiar CLI against a real `berth dev`.

Starts `berth dev --nodes 1 --fake-gpus 4xH100-80GB` with HOME and the working
directory in a temporary directory (so the CLI finds the cluster only through
what `berth dev` wrote there), then runs the real `berth` commands:

  - submit prints only the id; a 2-GPU job's log shows two GPU indices;
  - submit --wait exits with the job's exit code;
  - a #SBATCH script with --gres=gpu:4 --time=00:10:00 --job-name=x submits
    with the same meaning;
  - with the node full, `berth why` on a blocked job names what blocks it and
    an ETA; `queue` and `nodes` show both jobs;
  - once the blocked job ran, `show` says its first ETA and how it turned
    out;
  - cancel, release and the exit codes of bad flags, unknown jobs and an
    unreachable server;
  - `berth dev` runs as the berthd beside berth under the same pid, --help
    lists both sides' commands, `token create` issues a working token, and a
    berth without its berthd names the path it tried.

Usage: cli_test.py BERTH_BINARY
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()
failures = check.failures


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        env, work = berth.env, berth.work

        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        dev = berth_dev(binary, data, port, "--nodes", "1", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: os.path.exists(os.path.join(root, ".config/berth/dev.toml")), 10,
                       "berth dev to announce itself")
            wait_until(lambda: "up" in berth("nodes").stdout, 20, "the node to come up")

            # `berth dev` runs in berthd, exec'd in place: same pid, so whoever
            # started it can stop it by that pid.
            pid = dev.process.pid
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            check(comm == "berthd" and os.readlink(f"/proc/{pid}/exe")
                  == os.path.join(os.path.dirname(binary), "berthd"),
                  f"berth dev runs as berthd beside berth, same pid: {comm!r}")
            # Issue 31: the store (every job's environment) and the admin
            # token are the server's alone; the data dir only lets other
            # users' tasks through to their dirs below (0711), not list it.
            modes = {name: os.stat(os.path.join(data, name)).st_mode & 0o7777
                     for name in ("", "berth.sqlite", "berth.sqlite-wal", "admin-token")}
            check(modes == {"": 0o711, "berth.sqlite": 0o600, "berth.sqlite-wal": 0o600,
                            "admin-token": 0o600},
                  f"berth dev's data dir 0711, its store and token 0600: "
                  f"{ {k: oct(v) for k, v in modes.items()} }")
            listed = berth("--help").stdout
            check(all(f"\n  {name} " in listed for name in
                      ("server", "dev", "agent", "sim", "submit", "queue", "token")),
                  f"--help lists the daemon and client commands: {listed!r}")
            server_help = berth("server", "--help")
            check(server_help.returncode == 0 and "--config" in server_help.stdout,
                  f"berth server --help is berthd's: {server_help.stdout!r}")
            # A token issued by the client side, then used.
            issued = berth("token", "create", "--user", "bob", "--role", "user")
            check(issued.returncode == 0 and issued.stdout.strip(),
                  f"token create: {issued.returncode} {issued.stderr!r}")
            as_bob = berth("queue", "--server", f"http://127.0.0.1:{port}", "--token",
                           issued.stdout.strip())
            check(as_bob.returncode == 0, f"the new token works: {as_bob.stderr!r}")

            # The README's acceptance: two GPU indices in the log.
            done = berth("submit", "--gpus", "2", "--", "python3", "-c",
                         "import os; print(os.environ['CUDA_VISIBLE_DEVICES'])")
            check(done.returncode == 0 and done.stdout.strip().isdigit(),
                  f"submit prints only the id: {done.stdout!r} {done.stderr!r}")
            job = done.stdout.strip()
            wait_until(lambda: json.loads(berth("show", job, "--json").stdout)["state"]
                       == "succeeded", 30, "the GPU job to succeed")
            log = berth("logs", job).stdout.strip()
            check(len(log.split(",")) == 2 and all(x.isdigit() for x in log.split(",")),
                  f"logs show two GPU indices: {log!r}")

            waited = berth("submit", "--wait", "--gpus", "0", "--", "sh", "-c", "exit 3")
            check(waited.returncode == 3, f"--wait exits with the job's code: {waited.returncode}")
            check("succeeded" not in waited.stderr and "failed" in waited.stderr,
                  f"--wait reports progress on stderr: {waited.stderr!r}")

            script = os.path.join(work, "job.sh")
            with open(script, "w") as f:
                f.write("#!/bin/bash\n#SBATCH --gres=gpu:4 --time=00:10:00 --job-name=x\n"
                        "#SBATCH --hold\nsleep 1\n")
            held = berth("submit", script)
            check(held.returncode == 0, f"script submit: {held.stderr!r}")
            shown = json.loads(berth("show", held.stdout.strip(), "--json").stdout)
            check((shown["gpus"], shown["time_limit_s"], shown["name"], shown["state"])
                  == (4, 600, "x", "held"), f"#SBATCH meaning: {shown}")
            # #SBATCH --export: what it names of the shell's environment, as
            # sbatch's; without it berth submit sends none of the shell's.
            exporting = os.path.join(work, "export.sh")
            with open(exporting, "w") as f:
                f.write("#!/bin/bash\n#SBATCH --export=LR,EPOCHS=3\necho $LR\n")
            shell = dict(berth.env, LR="0.5", SECRET="x")
            body = json.loads(berth("submit", "--dry-run", exporting, env=shell).stdout)
            check({k: body.get("env", {}).get(k) for k in ("LR", "EPOCHS", "SECRET")}
                  == {"LR": "0.5", "EPOCHS": "3", "SECRET": None},
                  f"#SBATCH --export=LR,EPOCHS=3 in berth submit: {body.get('env')}")
            body = json.loads(berth("submit", "--dry-run", script, env=shell).stdout)
            check("LR" not in body.get("env", {}), f"no --export, no shell variable: {body}")
            check(berth("release", held.stdout.strip()).returncode == 0, "release")
            wait_until(lambda: json.loads(berth("show", held.stdout.strip(), "--json").stdout)
                       ["state"] == "succeeded", 30, "the script job to succeed")

            # A full node: the second job is blocked, with a reason and an ETA.
            running = berth("submit", "--gpus", "4", "--estimate", "10m", "--name", "big",
                            "--", "sleep", "300").stdout.strip()
            wait_until(lambda: json.loads(berth("show", running, "--json").stdout)["state"]
                       == "running", 30, "the big job to run")
            blocked = berth("submit", "--gpus", "2", "--name", "waiting", "--", "true").stdout.strip()
            why = wait_until(lambda: (lambda out: out if "eta:" in out and "unknown" not in out
                                      else None)(berth("why", blocked).stdout), 30,
                             "an ETA for the blocked job")
            check("resources" in why or "reserved" in why, f"why names what blocks it: {why!r}")
            queue = berth("queue")
            check(running in queue.stdout and blocked in queue.stdout and
                  "expected " in queue.stdout and "80%: " in queue.stdout,
                  f"queue lists both, the blocked one with its ETA: {queue.stdout!r}")
            # One ETA format (issue 30): the why's own line as the queue's.
            check(re.search(r"eta: +expected \S+, 80%: \S+-\S+", why) is not None,
                  f"why's ETA line: {why!r}")
            # The running job reports a checkpoint (issue 30); show has it.
            saved = berth("checkpoint", running)
            check(saved.returncode == 0 and "checkpoint recorded at" in saved.stdout,
                  f"checkpoint: {saved.returncode} {saved.stdout!r} {saved.stderr!r}")
            check(json.loads(berth("show", running, "--json").stdout)["last_checkpoint"]
                  is not None, "show has the checkpoint")
            not_running = berth("checkpoint", blocked)
            check(not_running.returncode == 1 and "is not running" in not_running.stderr,
                  f"checkpoint of a pending job: {not_running.returncode} {not_running.stderr!r}")
            nodes = berth("nodes").stdout
            check(f"[{running}]" in nodes, f"nodes shows the running job's GPUs: {nodes!r}")

            later = berth("submit", "--gpus", "4", "--", "true").stdout.strip()
            check(berth("cancel", later, running).returncode == 0, "cancel two jobs")
            # The blocked job runs now; show says what it was told and how
            # that turned out (issue 30).
            wait_until(lambda: json.loads(berth("show", blocked, "--json").stdout)["state"]
                       == "succeeded", 30, "the blocked job to run")
            shown = berth("show", blocked).stdout
            check(re.search(r"first_eta: +expected \S+, 80%: \S+-\S+ \S+; started \S+: "
                            r"(right|not within a quarter of the wait), (inside|outside) the 80%",
                            shown) is not None, f"show's first ETA: {shown!r}")
            again = berth("cancel", blocked)
            check(again.returncode == 1 and "already ended" in again.stderr,
                  f"cancel an ended job: {again.returncode} {again.stderr!r}")

            bad = berth("submit", "--gpus", "many", "--", "true")
            check(bad.returncode != 0 and "--gpus" in bad.stderr, f"bad flag: {bad.stderr!r}")
            bad_time = berth("submit", "--time", "soon", "--", "true")
            check(bad_time.returncode == 2 and "--time" in bad_time.stderr,
                  f"bad --time: {bad_time.returncode} {bad_time.stderr!r}")
            missing = berth("show", "999999")
            check(missing.returncode == 1 and "999999" in missing.stderr,
                  f"unknown job: {missing.returncode} {missing.stderr!r}")
            nowhere = berth("queue", "--server", f"http://127.0.0.1:{free_port()}", "--token", "t")
            check(nowhere.returncode == 3 and "cannot reach" in nowhere.stderr,
                  f"unreachable server: {nowhere.returncode} {nowhere.stderr!r}")
        finally:
            dev.stop()

        # A berth without its berthd says where it looked.
        alone = os.path.join(root, "alone")
        os.makedirs(alone)
        shutil.copy(binary, alone)
        lost = subprocess.run([os.path.join(alone, os.path.basename(binary)), "server", "--help"],
                              env=env, capture_output=True, text=True, timeout=60)
        check(lost.returncode == 127 and os.path.join(alone, "berthd") in lost.stderr
              and "beside" in lost.stderr,
              f"no berthd: {lost.returncode} {lost.stderr!r}")
    if failures:
        print(f"{len(failures)} failure(s)")
        sys.exit(1)
    print("ok: the CLI against a real dev cluster")


if __name__ == "__main__":
    main()
