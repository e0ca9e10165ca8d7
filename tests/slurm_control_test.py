#!/usr/bin/env python3
"""Issue 29: the array throttle, singleton dependencies, scontrol hold,
release and update, and sacctmgr show user, through the Slurm commands
(links of berth in build/slurm/) against a real `berth dev`.

  - `sbatch --array=0-5%2` of short sleeps: each element reads its own
    SLURM_ARRAY_TASK_ID, and the start and end times the elements record
    never have more than two running at once; squeue shows the waiting ones
    as Slurm's JobArrayTaskLimit, `berth why` says the limit.
  - `sbatch -d singleton` waits (squeue: Dependency) until the earlier job
    of its name has ended, and starts only after it.
  - `scontrol hold` / `release` / `update JobId= TimeLimit= Partition=
    Priority=`: a waiting job changes, as `scontrol show job` shows; a user
    may not set a priority, a running job cannot change, an unknown job is
    "Invalid job id specified"; each refusal exits 1.
  - `sacctmgr -P show user format=account`: the queues the user may use.

Usage: slurm_control_test.py BERTH_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import (Checks, CliSandbox, admin_token, berth_dev, free_port,  # noqa: E402
                           request, wait_until)

check = Checks()


def max_running_at_once(intervals):
    """The most intervals (start, end) open at one moment."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, delta in events:  # at a tie an end (-1) sorts first: it left before the next came
        running += delta
        most = max(most, running)
    return most


def main():
    binary = os.path.abspath(sys.argv[1])
    slurm_dir = os.path.join(os.path.dirname(binary), "slurm")
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        env = dict(berth.env, PATH=slurm_dir + os.pathsep + berth.env["PATH"])

        def slurm(*args, extra_env=None):
            return subprocess.run(list(args), cwd=berth.work, env=dict(env, **(extra_env or {})),
                                  capture_output=True, text=True, timeout=60)

        data = os.path.join(root, "data")
        out = os.path.join(root, "out")
        os.makedirs(data)
        os.makedirs(out)
        os.chmod(out, 0o777)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        dev = berth_dev(binary, data, port, "--nodes", "2", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"{url}/readyz")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 2, 20, "two nodes up")
            admin = admin_token(data)
            request(f"{url}/api/v1/queues", admin, "PUT", {"queues": [
                {"name": "batch", "default": True},
                {"name": "short", "max_time_s": 3600},
                {"name": "private", "allow_users": ["carol"]}]})

            def job(job_id):
                return json.loads(berth("show", str(job_id), "--json").stdout)

            def reasons():
                # -r: one line per waiting array element (Slurm folds them without it).
                lines = slurm("squeue", "-h", "-r", "-t", "all", "-o",
                              "%i|%T|%r").stdout.splitlines()
                return {line.split("|")[0]: line.split("|")[2] for line in lines}

            def reason_of(job_id):
                return reasons().get(job_id)

            # --- the array throttle ---
            with open(os.path.join(berth.work, "sweep.sh"), "w") as f:
                f.write("#!/bin/sh\n#SBATCH --array=0-5%2\n#SBATCH -J sweep --gpus=1\n"
                        "i=$SLURM_ARRAY_TASK_ID\n"
                        f"echo \"$i $(date +%s.%N)\" > {out}/s$i && mv {out}/s$i {out}/start.$i\n"
                        "sleep 2\n"
                        f"date +%s.%N > {out}/e$i && mv {out}/e$i {out}/end.$i\n")
            submitted = slurm("sbatch", "--parsable", "sweep.sh")
            check(submitted.returncode == 0, f"sbatch --array: {submitted.stderr!r}")
            array = int(submitted.stdout.strip().split(";")[0])
            # squeue's %i names an element ARRAY_INDEX; its own job id is ARRAY + INDEX.
            elements = [f"{array}_{i}" for i in range(6)]
            waiting = wait_until(
                lambda: [i for i, reason in enumerate(map(reasons().get, elements))
                         if reason == "JobArrayTaskLimit"],
                30, "elements held back by the array's %2")
            why = berth("why", str(array + waiting[-1]))
            check("array_limit" in why.stdout and "%2" in why.stdout,
                  f"berth why names the array limit: {why.stdout!r}")
            wait_until(lambda: all(os.path.exists(f"{out}/end.{i}") for i in range(6)), 120,
                       "every element to end")
            intervals, indices = [], []
            for i in range(6):
                with open(f"{out}/start.{i}") as f:
                    index, start = f.read().split()
                with open(f"{out}/end.{i}") as f:
                    end = f.read().strip()
                indices.append(index)
                intervals.append((float(start), float(end)))
            check(indices == [str(i) for i in range(6)],
                  f"each element reads its own SLURM_ARRAY_TASK_ID: {indices}")
            check(max_running_at_once(intervals) == 2,
                  f"never more than 2 elements at once, and 2 did run together: {intervals}")

            # --- singleton ---
            first = slurm("sbatch", "--parsable", "-J", "solo", "--gpus=0", "--wrap",
                          f"sleep 3; date +%s.%N > {out}/t1 && mv {out}/t1 {out}/solo1.end")
            second = slurm("sbatch", "--parsable", "-J", "solo", "--gpus=0", "-d", "singleton",
                           "--wrap", f"date +%s.%N > {out}/t2 && mv {out}/t2 {out}/solo2.start")
            other = slurm("sbatch", "--parsable", "-J", "duo", "--gpus=0",
                          "--dependency=singleton", "--wrap", f"touch {out}/duo.start")
            check(first.returncode == 0 and second.returncode == 0 and other.returncode == 0,
                  f"sbatch -d singleton is accepted: {second.stderr!r} {other.stderr!r}")
            solo1, solo2 = first.stdout.strip(), second.stdout.strip()
            check(reason_of(solo2) == "Dependency",
                  f"a singleton waits as Dependency: {reason_of(solo2)}")
            wait_until(lambda: os.path.exists(f"{out}/duo.start"), 60,
                       "a singleton with no namesake to start")
            wait_until(lambda: os.path.exists(f"{out}/solo2.start"), 60,
                       "the singleton to start once the first solo ended")
            with open(f"{out}/solo1.end") as f1, open(f"{out}/solo2.start") as f2:
                ended, started = float(f1.read()), float(f2.read())
            check(started >= ended, f"the singleton started after its namesake ended: "
                  f"{started} < {ended} ({solo1}, {solo2})")

            # --- scontrol hold, release, update ---
            # Two jobs fill the 8 GPUs; the next one waits for Resources.
            fillers = [slurm("sbatch", "--parsable", "--gpus=4", "--wrap", "sleep 300")
                       .stdout.strip() for _ in range(2)]
            waits = slurm("sbatch", "--parsable", "--gpus=1", "--wrap", "true").stdout.strip()
            wait_until(lambda: reason_of(waits) == "Resources", 30, "a job waiting for GPUs")
            result = slurm("scontrol", "hold", waits)
            check(result.returncode == 0 and reason_of(waits) == "JobHeldUser",
                  f"scontrol hold: {result.stderr!r} {reason_of(waits)}")
            result = slurm("scontrol", "hold", fillers[0])
            check(result.returncode == 1 and result.stderr ==
                  f"Job is no longer pending execution for job {fillers[0]}\n",
                  f"scontrol hold of a running job: {result.stderr!r}")
            result = slurm("scontrol", "release", waits)
            check(result.returncode == 0 and job(waits)["state"] == "pending",
                  f"scontrol release: {result.stderr!r}")
            for filler in fillers:
                slurm("scancel", filler)
            wait_until(lambda: job(waits)["state"] == "succeeded", 60, "the released job to run")
            pending = slurm("sbatch", "--parsable", "--hold", "-p", "short", "-t", "30",
                            "--wrap", "true").stdout.strip()
            result = slurm("scontrol", "update", f"JobId={pending}", "TimeLimit=10:00",
                           "Partition=batch", "Priority=7")
            check(result.returncode == 0 and result.stdout == "" and result.stderr == "",
                  f"scontrol update as an admin: {result.returncode} {result.stderr!r}")
            shown = slurm("scontrol", "show", "job", "-o", pending).stdout.split()
            check("TimeLimit=00:10:00" in shown and "Partition=batch" in shown and
                  "Priority=7" in shown, f"scontrol show job shows the update: {shown!r}")
            stored = job(pending)
            check(stored["time_limit_s"] == 600 and stored["queue"] == "batch" and
                  stored["priority"] == 7, f"the API shows it: {stored}")

            made = berth("token", "create", "--user", "bob", "--json", "--server", url,
                         "--token", admin)
            bob = {"BERTH_ADDR": url, "BERTH_TOKEN": json.loads(made.stdout)["token"]}
            bobs = slurm("sbatch", "--parsable", "--hold", "-p", "short", "-t", "30",
                         "--wrap", "true", extra_env=bob).stdout.strip()
            result = slurm("scontrol", "update", f"JobId={bobs}", "Priority=50", extra_env=bob)
            check(result.returncode == 1 and result.stderr.startswith(
                "slurm_update error: Access/permission denied") and "priority" in result.stderr,
                  f"a user may not set a priority: {result.returncode} {result.stderr!r}")
            result = slurm("scontrol", "update", f"JobId={bobs}", "TimeLimit=2", extra_env=bob)
            check(result.returncode == 0, f"a user lowers their limit: {result.stderr!r}")
            result = slurm("scontrol", "update", f"JobId={bobs}", "TimeLimit=2:00:00",
                           extra_env=bob)
            check(result.returncode == 1 and "max_time_s" in result.stderr,
                  f"not beyond the partition's limit: {result.stderr!r}")
            result = slurm("scontrol", "update", f"JobId={bobs}", "Partition=private",
                           extra_env=bob)
            check(result.returncode == 1 and "may not submit to queue private" in result.stderr,
                  f"not into a partition closed to the user: {result.stderr!r}")
            result = slurm("scontrol", "update", f"JobId={pending}", "TimeLimit=5",
                           extra_env=bob)
            check(result.returncode == 1 and "Access/permission denied" in result.stderr,
                  f"not another user's job: {result.stderr!r}")
            result = slurm("scontrol", "release", bobs, extra_env=bob)
            check(result.returncode == 0, f"scontrol release: {result.stderr!r}")
            wait_until(lambda: job(bobs)["state"] in ("starting", "running", "succeeded",
                                                      "failed"), 30, "bob's job to start")
            result = slurm("scontrol", "update", f"JobId={bobs}", "TimeLimit=1", extra_env=bob)
            check(result.returncode == 1 and ("Job is no longer pending execution" in
                                              result.stderr or "already completing" in
                                              result.stderr),
                  f"a started job keeps its limit: {result.stderr!r}")
            result = slurm("scontrol", "update", "JobId=999999", "TimeLimit=5")
            check(result.returncode == 1 and
                  result.stderr == "slurm_update error: Invalid job id specified\n",
                  f"an unknown job: {result.stderr!r}")
            result = slurm("scontrol", "update", f"JobId={pending}", "NumNodes=2")
            check(result.returncode == 1 and result.stderr.startswith(
                "Update of this parameter is not supported: NumNodes=2"),
                  f"a key Berth cannot update: {result.stderr!r}")
            result = slurm("scontrol", "hold", "999999")
            check(result.returncode == 1 and
                  result.stderr == "Invalid job id specified for job 999999\n",
                  f"scontrol hold of an unknown job: {result.stderr!r}")

            # --- sacctmgr ---
            result = slurm("sacctmgr", "-P", "show", "user", "format=account")
            check(result.returncode == 0 and result.stdout == "Account\nbatch\nshort\n",
                  f"sacctmgr -P: the queues the user may use: {result.stdout!r} {result.stderr!r}")
            result = slurm("sacctmgr", "-nP", "show", "user", "carol", "format=User,Account")
            check(result.returncode == 0 and result.stdout.splitlines() ==
                  ["carol|batch", "carol|short", "carol|private"],
                  f"sacctmgr show user carol: {result.stdout!r} {result.stderr!r}")
            result = slurm("sacctmgr", "show", "account")
            check(result.returncode == 1 and "only shows users" in result.stderr,
                  f"what sacctmgr cannot do is refused: {result.stderr!r}")
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("ok: array %N, singleton, scontrol hold/release/update, sacctmgr")
    return 0


if __name__ == "__main__":
    sys.exit(main())
