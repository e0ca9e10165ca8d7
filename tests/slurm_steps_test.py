#!/usr/bin/env python3
"""Issue 29, item 1: a Slurm job's shape, against a real `berth dev` (server
and agents, two nodes of 4 fake GPUs), through the links in build/slurm/.

- The multi-node DDP batch script of the issue: `srun /usr/bin/python3
  train.py` runs one rank per node (torch.distributed over gloo, rank and
  world from SLURM_PROCID/SLURM_NTASKS, MASTER_ADDR/MASTER_PORT as Berth
  sets them); both ranks' all-reduce is right; the job ends COMPLETED.
- The batch script runs once although the job has two nodes (a counter).
- A failing step (`srun false`) as the script's last command fails the job.
- srun outside an allocation: a job whose tasks all run the command, its
  output and exit code; -l labels lines with the rank.
- salloc through a pty: `srun hostname` in its shell, output seen; leaving
  the shell ends the allocation.

The batch scripts reach the server as the user would, with the user's own
client configuration (here the dev cluster's file, named by BERTH_CONFIG).

Usage: slurm_steps_test.py BERTH_BINARY
"""
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()

TRAIN = r'''
import os
import torch
import torch.distributed as dist

rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
dist.init_process_group(
    "gloo", init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
    rank=rank, world_size=world)
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
expected = world * (world + 1) / 2
print(f"rank {rank} of {world} on node {os.environ['SLURM_NODEID']} "
      f"step {os.environ['SLURM_STEP_ID']} gpus {os.environ['CUDA_VISIBLE_DEVICES']} "
      f"sum {value.item():g} {'ok' if value.item() == expected else 'WRONG'}", flush=True)
dist.destroy_process_group()
'''


def read_pty(fd, until, timeout):
    """What the pty prints until the regular expression `until` matches it
    (or the time is up)."""
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline and not re.search(until.encode(), out):
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    return out.decode(errors="replace")


def main():
    binary = os.path.abspath(sys.argv[1])
    slurm_dir = os.path.join(os.path.dirname(binary), "slurm")
    with tempfile.TemporaryDirectory() as root:
        os.chmod(root, 0o755)
        berth = CliSandbox(binary, root)
        env = dict(berth.env, PATH=slurm_dir + os.pathsep + berth.env["PATH"])
        # The dev cluster's client file: the user's own configuration, which
        # srun in a batch script reads as `berth` does.
        config = os.path.join(root, ".config", "berth", "dev.toml")

        def run(*args, **kwargs):
            return subprocess.run(list(args), cwd=berth.work, env=env, capture_output=True,
                                  text=True, timeout=kwargs.pop("timeout", 120), **kwargs)

        def show(job):
            return json.loads(berth("show", job, "--json").stdout)

        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        # The nodes have the Slurm commands on their PATH, as a node with
        # Slurm's client tools installed.
        dev = berth_dev(binary, data, port, "--nodes", "2", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 2, 20, "two nodes up")
            work = berth.work
            with open(os.path.join(work, "train.py"), "w") as f:
                f.write(TRAIN)

            # (a) and (b): the DDP script, run once on the first node.
            counter = os.path.join(work, "counter")
            with open(os.path.join(work, "ddp.sh"), "w") as f:
                f.write("#!/bin/bash\n"
                        "#SBATCH --job-name=ddp\n"
                        "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                        "#SBATCH --gpus-per-node=4\n"
                        f"#SBATCH --output={work}/ddp-%j.out\n"
                        f"export BERTH_CONFIG={config}\n"
                        f"echo \"script on $(hostname)\" >> {counter}\n"
                        f"cd {work}\n"
                        "srun /usr/bin/python3 train.py\n")
            submitted = run("sbatch", "--parsable", "ddp.sh")
            ddp = submitted.stdout.strip()
            check(submitted.returncode == 0 and ddp.isdigit(),
                  f"sbatch the DDP script: {submitted.stdout!r} {submitted.stderr!r}")
            job = wait_until(lambda: (lambda j: j if j["state"] in
                                      ("succeeded", "failed", "cancelled") else None)(show(ddp)),
                             180, "the DDP job to end")
            output = open(os.path.join(work, f"ddp-{ddp}.out")).read()
            check(job["state"] == "succeeded" and job["exit_code"] == 0,
                  f"the DDP job succeeded: {job['state']} {job['message']!r}; output:\n{output}")
            nodes = {task["node"] for task in job["placement"]}
            check(len(nodes) == 2, f"the job had two nodes: {job['placement']}")
            ranks = sorted(line for line in output.splitlines() if line.startswith("rank "))
            check(len(ranks) == 2 and all(line.endswith("sum 3 ok") for line in ranks)
                  and "rank 0 of 2 on node 0 step 0" in ranks[0]
                  and "rank 1 of 2 on node 1 step 0" in ranks[1],
                  f"both ranks' all-reduce is right, one per node: {output!r}")
            check(all("gpus 0,1,2,3" in line for line in ranks),
                  f"each rank sees its node's 4 GPUs: {ranks}")
            acct = run("sacct", "-n", "-P", "-X", "-j", ddp, "-o", "State,ExitCode").stdout
            check(acct.strip() == "COMPLETED|0:0", f"sacct: COMPLETED: {acct!r}")
            # Without -X, the batch script's row and the srun step's, as Slurm's.
            acct = run("sacct", "-n", "-P", "-j", ddp, "-o", "JobID,JobName,State,NNodes").stdout
            check(acct.splitlines() == [f"{ddp}|ddp|COMPLETED|2", f"{ddp}.batch|batch|COMPLETED|1",
                                        f"{ddp}.0|python3|COMPLETED|2"],
                  f"sacct: the job, its .batch and its step: {acct!r}")
            with open(counter) as f:
                runs = f.read().splitlines()
            check(len(runs) == 1, f"the batch script ran once for two nodes: {runs}")

            # A failing step as the script's last command fails the job.
            with open(os.path.join(work, "fails.sh"), "w") as f:
                f.write("#!/bin/bash\n#SBATCH --nodes=2 --ntasks-per-node=1 --gpus-per-node=4\n"
                        f"export BERTH_CONFIG={config}\n"
                        "srun true\nsrun false\n")
            fails = run("sbatch", "--parsable", "fails.sh").stdout.strip()
            job = wait_until(lambda: (lambda j: j if j["state"] in
                                      ("succeeded", "failed", "cancelled") else None)(show(fails)),
                             120, "the failing-step job to end")
            check(job["state"] == "failed" and job["exit_code"] == 1,
                  f"srun false fails the job with 1: {job['state']} {job['exit_code']} "
                  f"{job['message']!r}")
            acct = run("sacct", "-n", "-P", "-j", fails, "-o", "JobID,JobName,State,ExitCode").stdout
            check(acct.splitlines() == [f"{fails}|fails.sh|FAILED|1:0",
                                        f"{fails}.batch|batch|FAILED|1:0",
                                        f"{fails}.0|true|COMPLETED|0:0",
                                        f"{fails}.1|false|FAILED|1:0"],
                  f"sacct: each step's row with its own outcome: {acct!r}")
            acct = run("sacct", "-n", "-P", "-j", f"{fails}.1", "-o", "JobID,State").stdout
            check(acct == f"{fails}.1|FAILED\n", f"sacct -j JOB.STEP: that row alone: {acct!r}")

            # srun outside an allocation: a job of two tasks, labelled output.
            out = run("srun", "-l", "-n", "2", "--gpus-per-task=0", "sh", "-c",
                      "echo hello from $BERTH_TASK")
            lines = sorted(out.stdout.splitlines())
            check(out.returncode == 0 and lines == ["0: hello from 0", "1: hello from 1"],
                  f"srun -l -n 2 from outside: {out.returncode} {out.stdout!r} {out.stderr!r}")
            # Each task is a Slurm task: its rank and the job's task count.
            out = run("srun", "-l", "-n", "2", "--gpus-per-task=0", "sh", "-c",
                      "echo $SLURM_PROCID/$SLURM_NTASKS local $SLURM_LOCALID job $SLURM_JOB_ID")
            lines = sorted(line.split(" job ")[0] for line in out.stdout.splitlines())
            check(out.returncode == 0 and lines == ["0: 0/2 local 0", "1: 1/2 local 1"] and
                  "job " in out.stdout and "job \n" not in out.stdout,
                  f"srun -n 2 from outside: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, "
                  f"SLURM_JOB_ID: {out.stdout!r} {out.stderr!r}")
            # -N 2: two nodes, as Slurm's, though both tasks fit one.
            out = run("srun", "-l", "-N", "2", "--gpus-per-node=0", "sh", "-c",
                      "echo $BERTH_NODE")
            nodes = {line.split(": ", 1)[-1] for line in out.stdout.splitlines()}
            check(out.returncode == 0 and len(nodes) == 2,
                  f"srun -N 2 from outside runs on two nodes: {out.stdout!r} {out.stderr!r}")
            out = run("srun", "--gpus-per-task=0", "sh", "-c", "echo bye; exit 3")
            check(out.returncode == 3 and out.stdout == "bye\n",
                  f"srun exits with the task's code: {out.returncode} {out.stdout!r}")

            # (c) salloc through a pty; srun in its shell; exit ends the job.
            pid, fd = pty.fork()
            if pid == 0:
                os.chdir(work)
                os.execve(os.path.join(slurm_dir, "salloc"),
                          ["salloc", "-N", "2", "--gpus-per-node=4"],
                          dict(env, SHELL="/bin/sh", PS1="$ "))
            seen = read_pty(fd, "Granted job allocation", 60)
            check("Granted job allocation" in seen, f"salloc granted: {seen!r}")
            os.write(fd, b"echo job=$SLURM_JOB_ID; srun hostname; echo srun=$?\n")
            seen = read_pty(fd, r"srun=\d", 60)
            host = os.uname().nodename
            check(seen.count(host) >= 2 and "srun=0" in seen,
                  f"srun hostname in salloc: twice, exit 0: {seen!r}")
            found = re.search(r"job=(\d+)", seen)
            allocation = found.group(1) if found else ""
            os.write(fd, b"exit\n")
            seen = read_pty(fd, "Relinquishing", 30)
            _, status = os.waitpid(pid, 0)
            os.close(fd)
            check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0,
                  f"salloc exits 0 with its shell: {status} {seen!r}")
            check(allocation.isdigit() and wait_until(
                lambda: show(allocation)["state"] in ("cancelled", "succeeded"), 30,
                "the allocation to end"), f"leaving salloc ends job {allocation!r}")
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("slurm steps: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
