#!/usr/bin/env python3
"""Issue 29, item 5 and the signal parts of item 4: time limits, signals and
requeue, through the Slurm commands (links of berth in build/slurm/) against
a real `berth dev` (two nodes of 4 fake GPUs, real processes).

  - `#SBATCH --signal=B:USR1@5` with a 7 s limit: the batch shell's trap
    runs (before the limit), then the job ends TIMEOUT;
  - `scancel --signal=USR1 JOB`: the job's trap runs once per request (not
    once per heartbeat), and the job keeps running; `-b` too; an array
    element `JOB_INDEX` alone; a pending job and a bad signal are refused;
  - the checkpoint-then-requeue pattern: `scontrol requeue JOB` stops the
    running job and queues it again, and its second run reads
    SLURM_RESTART_COUNT=1; requeued again once ended (not with
    `Incomplete`), it runs a third time; a `--no-requeue` job is refused.

Usage: slurm_signals_test.py BERTH_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
import urllib.error

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import (Checks, CliSandbox, admin_token, berth_dev, free_port,  # noqa: E402
                           request, wait_until)

check = Checks()

# Sets its trap, says so, then waits in short sleeps (bash runs a trap
# between commands); each USR1 appends a line to usr1-<job>[-<index>].
TRAPPING = """#!/bin/bash
tag="${SLURM_ARRAY_JOB_ID:-$BERTH_JOB_ID}${SLURM_ARRAY_TASK_ID:+-$SLURM_ARRAY_TASK_ID}"
trap 'echo usr1 >> "usr1-$tag"' USR1
touch "ready-$tag"
while true; do sleep 0.1; done
"""


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def main():
    binary = os.path.abspath(sys.argv[1])
    slurm_dir = os.path.join(os.path.dirname(binary), "slurm")
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        env = dict(berth.env, PATH=slurm_dir + os.pathsep + berth.env["PATH"])
        work = berth.work

        def slurm(*args):
            return subprocess.run(list(args), cwd=work, env=env, capture_output=True, text=True,
                                  timeout=60)

        def script(name, text):
            with open(os.path.join(work, name), "w") as f:
                f.write(text)

        def sbatch(*args):
            out = slurm("sbatch", "--parsable", *args)
            check(out.returncode == 0, f"sbatch {args}: {out.stderr!r}")
            return out.stdout.strip()

        def show(job):
            return json.loads(berth("show", job, "--json").stdout)

        def at(name):
            return os.path.join(work, name)

        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        dev = berth_dev(binary, data, port, "--nodes", "2", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"{url}/readyz")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 2, 20, "two nodes up")
            token = admin_token(data)

            # --signal=B:USR1@5 with a 7 s limit: the trap, then TIMEOUT.
            script("limit.sh", """#!/bin/bash
#SBATCH --signal=B:USR1@5
#SBATCH --time=0:07
trap 'echo "$SECONDS" > "early-$BERTH_JOB_ID"' USR1
while true; do sleep 0.1; done
""")
            limited = sbatch("limit.sh")
            check(show(limited).get("time_limit_signal") ==
                  {"name": "USR1", "before_s": 5, "batch_only": True},
                  f"the job keeps its --signal: {show(limited).get('time_limit_signal')}")
            wait_until(lambda: show(limited)["state"] not in ("pending", "starting", "running",
                                                              "completing"), 60,
                       "the limited job to end")
            check(show(limited)["state"] == "timeout", f"it ends timeout: {show(limited)}")
            early = read(at(f"early-{limited}")).strip()
            check(early.isdigit() and int(early) < 7,
                  f"its trap ran before the limit (at {early!r} s)")
            acct = slurm("sacct", "-j", limited, "-X", "-n", "-P", "-o", "State")
            check(acct.stdout.strip() == "TIMEOUT", f"sacct says TIMEOUT: {acct.stdout!r}")

            # scancel --signal: once per request; the job keeps running.
            script("trap.sh", TRAPPING)
            trapping = sbatch("trap.sh")
            wait_until(lambda: os.path.exists(at(f"ready-{trapping}")), 30, "the trap to be set")
            out = slurm("scancel", "--signal=USR1", trapping)
            check(out.returncode == 0, f"scancel --signal: {out.stderr!r}")
            wait_until(lambda: read(at(f"usr1-{trapping}")) == "usr1\n", 30, "the first USR1")
            out = slurm("scancel", "-s", "SIGUSR1", "-b", trapping)
            check(out.returncode == 0, f"scancel -s SIGUSR1 -b: {out.stderr!r}")
            wait_until(lambda: read(at(f"usr1-{trapping}")) == "usr1\n" * 2, 30, "the second USR1")
            # Several 200 ms heartbeats later (each answer lists both
            # signals again), still two: each request is delivered once.
            subprocess.run(["sleep", "1"])
            check(read(at(f"usr1-{trapping}")) == "usr1\n" * 2,
                  f"each signal once: {read(at(f'usr1-{trapping}'))!r}")
            running = show(trapping)
            check(running["state"] == "running" and running["attempts"] == 1,
                  f"the signalled job keeps running: {running['state']}")
            bad = slurm("scancel", "--signal=NOPE", trapping)
            check(bad.returncode == 1 and "Invalid job signal: NOPE" in bad.stderr,
                  f"a bad signal: {bad.returncode} {bad.stderr!r}")
            bad = berth("signal", "-s", "NOPE", trapping)
            check(bad.returncode == 2 and "--signal" in bad.stderr,
                  f"berth signal with a bad signal exits 2 naming --signal: {bad.stderr!r}")
            try:
                request(f"{url}/api/v1/jobs/{trapping}/signal", token, "POST", {"signal": "USR9"})
                check(False, "the API takes an unknown signal")
            except urllib.error.HTTPError as error:
                body = error.read().decode()
                check(error.code == 400 and "signal" in body,
                      f"the API refuses an unknown signal naming the field: {error.code} {body}")
            held = sbatch("--hold", "trap.sh")
            out = slurm("scancel", "--signal=USR1", held)
            check(out.returncode == 1 and "not running" in out.stderr,
                  f"a pending job cannot be signalled: {out.returncode} {out.stderr!r}")
            check(slurm("scancel", trapping, held).returncode == 0, "scancel the trapping jobs")

            # An array element alone: JOB_INDEX.
            first = sbatch("--array=0-1", "trap.sh")
            for index in (0, 1):
                wait_until(lambda: os.path.exists(at(f"ready-{first}-{index}")), 30,
                           f"element {index}'s trap")
            out = slurm("scancel", "--signal=USR1", f"{first}_1")
            check(out.returncode == 0, f"scancel --signal JOB_INDEX: {out.stderr!r}")
            wait_until(lambda: read(at(f"usr1-{first}-1")) == "usr1\n", 30, "element 1's USR1")
            check(read(at(f"usr1-{first}-0")) == "", "element 0 got nothing")
            check(slurm("scancel", first).returncode == 0, "scancel the array")

            # Checkpoint, then requeue: the second run reads SLURM_RESTART_COUNT=1.
            script("requeue.sh", """#!/bin/bash
#SBATCH --requeue
echo "$SLURM_RESTART_COUNT $BERTH_RESTART_COUNT" >> "restarts-$BERTH_JOB_ID"
[ "$SLURM_RESTART_COUNT" -ge 1 ] && exit 0
touch "ready-$BERTH_JOB_ID"
while true; do sleep 0.1; done
""")
            requeued = sbatch("requeue.sh")
            wait_until(lambda: os.path.exists(at(f"ready-{requeued}")), 30, "the first run")
            out = slurm("scontrol", "requeue", requeued)
            check(out.returncode == 0, f"scontrol requeue: {out.returncode} {out.stderr!r}")
            wait_until(lambda: show(requeued)["state"] == "succeeded", 60,
                       "the requeued job's second run to succeed")
            check(read(at(f"restarts-{requeued}")) == "0 0\n1 1\n",
                  f"the runs read their restart counts: {read(at(f'restarts-{requeued}'))!r}")
            check(show(requeued)["attempts"] == 2, f"two runs: {show(requeued)['attempts']}")
            # An ended job: left alone by "Incomplete", requeued without it.
            out = slurm("scontrol", "requeue", "Incomplete", requeued)
            check(out.returncode == 0 and show(requeued)["state"] == "succeeded",
                  f"requeue Incomplete leaves an ended job: {out.stderr!r} {show(requeued)}")
            out = slurm("scontrol", "requeue", requeued)
            check(out.returncode == 0, f"scontrol requeue of an ended job: {out.stderr!r}")
            wait_until(lambda: show(requeued)["state"] == "succeeded"
                       and show(requeued)["attempts"] == 3, 60, "the ended job's third run")
            check(read(at(f"restarts-{requeued}")) == "0 0\n1 1\n2 2\n",
                  f"its third run reads 2: {read(at(f'restarts-{requeued}'))!r}")
            script("once.sh", "#!/bin/bash\n#SBATCH --no-requeue\n"
                   "touch ready-$BERTH_JOB_ID\nsleep 300\n")
            once = sbatch("once.sh")
            wait_until(lambda: os.path.exists(at(f"ready-{once}")), 30, "the --no-requeue job")
            refused = slurm("scontrol", "requeue", once)
            check(refused.returncode == 1 and "requeue false" in refused.stderr,
                  f"a --no-requeue job is not requeued: {refused.stderr!r}")
            check(slurm("scancel", once).returncode == 0, "scancel the --no-requeue job")
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("slurm signals: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
