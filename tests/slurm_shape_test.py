#!/usr/bin/env python3
"""Issue 29, items 2 and 3: a Slurm job's shape and variables, through a
real sbatch (build/slurm/sbatch) against `berth dev` (two nodes of 4 fake
GPUs).

`#SBATCH --nodes=2 --ntasks-per-node=4 --gpus-per-node=4` (the standard
srun DDP layout) became 8 tasks x 4 GPUs and waited as infeasible; now it
lands on 2 distinct nodes with 4 GPUs each, and its batch script sees
SLURM_NNODES=2, SLURM_NTASKS=8, SLURM_TASKS_PER_NODE=4(x2) and the nodes
in Slurm's compressed hostlist form.

Usage: slurm_shape_test.py BERTH_BINARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import Checks, CliSandbox, berth_dev, free_port, wait_until  # noqa: E402

check = Checks()

SCRIPT = """#!/bin/sh
#SBATCH --nodes=2 --ntasks-per-node=4 --gpus-per-node=4
#SBATCH --job-name=ddp
env | grep '^SLURM' | sort > "env-$SLURM_JOB_ID-$SLURM_NODEID.txt"
"""


def compressed(names):
    """Slurm's hostlist of names that share a prefix and end in numbers, in
    the order given (enough for the dev cluster's node-1, node-2)."""
    parts = [re.fullmatch(r"(.*?)(\d+)", name) for name in names]
    if len(names) > 1 and all(parts) and len({p.group(1) for p in parts}) == 1:
        numbers = [int(p.group(2)) for p in parts]
        if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
            return f"{parts[0].group(1)}[{numbers[0]}-{numbers[-1]}]"
        return f"{parts[0].group(1)}[{','.join(str(n) for n in numbers)}]"
    return ",".join(names)


# srun in a job reaches the server with the user's own configuration: the
# dev cluster's file (the job's HOME is its user's, not the sandbox's).
PACKED = """#!/bin/sh
#SBATCH -N 2 --gpus=3 --job-name=packed
export BERTH_CONFIG={config}
srun sh -c 'echo "$SLURM_GPUS_ON_NODE $SLURM_JOB_CPUS_PER_NODE" > "packed-$SLURM_JOB_ID-$SLURM_NODEID.txt"'
"""


def check_packed_gpus(berth, env):
    """`-N 2 --gpus=3` on nodes of 4 GPUs: Slurm packs 2 + 1 (one GPU for
    every node, the rest on the first); each node holds and sees its own."""
    with open(os.path.join(berth.work, "packed.sh"), "w") as f:
        f.write(PACKED.replace("{config}", os.path.join(berth.env["HOME"], ".config", "berth",
                                                        "dev.toml")))
    submitted = subprocess.run(["sbatch", "--parsable", "packed.sh"], cwd=berth.work, env=env,
                               capture_output=True, text=True, timeout=60)
    job = submitted.stdout.strip()
    check(submitted.returncode == 0 and job.isdigit(),
          f"sbatch packed: {submitted.stdout!r} {submitted.stderr!r}")
    if not job.isdigit():
        return

    def shown():
        return json.loads(berth("show", job, "--json").stdout)

    wait_until(lambda: shown()["state"] in ("succeeded", "failed", "cancelled"), 60,
               "the packed job to end")
    record = shown()
    output = os.path.join(berth.work, f"slurm-{job}.out")
    check(record["state"] == "succeeded",
          f"the packed job succeeded: {record['state']} {record.get('message')!r}: "
          f"{open(output).read() if os.path.exists(output) else '(no output)'}")
    placement = record["placement"]
    check([len(task["gpus"]) for task in placement] == [2, 1]
          and len({task["node"] for task in placement}) == 2,
          f"2 + 1 GPUs on two distinct nodes: {placement}")
    check([shape["gpus"] for shape in record.get("task_shapes", [])] == [2, 1],
          f"the job keeps each node's share: {record.get('task_shapes')}")
    for node, gpus in ((0, "2"), (1, "1")):
        path = os.path.join(berth.work, f"packed-{job}-{node}.txt")
        seen = open(path).read().split() if os.path.exists(path) else []
        check(seen == [gpus, "1(x2)"],
              f"node {node}'s step sees {gpus} GPUs and a CPU on each node: {seen}")


def main():
    binary = os.path.abspath(sys.argv[1])
    slurm_dir = os.path.join(os.path.dirname(binary), "slurm")
    with tempfile.TemporaryDirectory() as root:
        berth = CliSandbox(binary, root)
        env = dict(berth.env, PATH=slurm_dir + os.pathsep + berth.env["PATH"])
        data = os.path.join(root, "data")
        os.makedirs(data)
        port = free_port()
        dev = berth_dev(binary, data, port, "--nodes", "2", "--fake-gpus", "4xH100-80GB",
                        "--agent-heartbeat-interval", "200ms", env=berth.env)
        try:
            dev.start().wait_http(f"http://127.0.0.1:{port}/readyz")
            wait_until(lambda: berth("nodes").stdout.count(" up ") == 2, 20, "two nodes up")
            with open(os.path.join(berth.work, "ddp.sh"), "w") as f:
                f.write(SCRIPT)
            submitted = subprocess.run(["sbatch", "--parsable", "ddp.sh"], cwd=berth.work,
                                       env=env, capture_output=True, text=True, timeout=60)
            job = submitted.stdout.strip()
            check(submitted.returncode == 0 and job.isdigit(),
                  f"sbatch: {submitted.stdout!r} {submitted.stderr!r}")

            def shown():
                return json.loads(berth("show", job, "--json").stdout)

            wait_until(lambda: shown()["state"] in ("succeeded", "failed", "cancelled"), 60,
                       "the sbatch job to end")
            record = shown()
            check(record["state"] == "succeeded", f"the job succeeded: {record['state']} "
                  f"{record.get('message')!r}")
            placement = record["placement"]
            nodes = [task["node"] for task in placement]
            check(len(placement) == 2 and len(set(nodes)) == 2,
                  f"two Berth tasks on two distinct nodes: {placement}")
            check(all(len(task["gpus"]) == 4 for task in placement),
                  f"4 GPUs on each node: {placement}")
            check(record.get("slurm_tasks_per_node") == [4, 4],
                  f"the Slurm layout is kept: {record.get('slurm_tasks_per_node')}")

            path = os.path.join(berth.work, f"env-{job}-0.txt")
            check(os.path.exists(path), f"the batch script wrote {path}")
            seen = {}
            if os.path.exists(path):
                with open(path) as f:
                    seen = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
            expected = {
                "SLURM_JOB_ID": job,
                "SLURM_JOBID": job,
                "SLURM_JOB_NAME": "ddp",
                "SLURM_NNODES": "2",
                "SLURM_JOB_NUM_NODES": "2",
                "SLURM_NTASKS": "8",
                "SLURM_NPROCS": "8",
                "SLURM_NTASKS_PER_NODE": "4",
                "SLURM_TASKS_PER_NODE": "4(x2)",
                "SLURM_JOB_NODELIST": compressed(nodes),
                "SLURM_NODELIST": compressed(nodes),
                "SLURM_GPUS_ON_NODE": "4",
                "SLURM_GPUS_PER_NODE": "4",
                "SLURM_JOB_CPUS_PER_NODE": "4(x2)",
                "SLURM_NODEID": "0",
                "SLURM_PROCID": "0",
                "SLURM_LOCALID": "0",
                "SLURM_RESTART_COUNT": "0",
                "SLURM_SUBMIT_DIR": berth.work,
            }
            for name, value in expected.items():
                check(seen.get(name) == value, f"{name}={value} (got {seen.get(name)!r})")
            check("[" in seen.get("SLURM_JOB_NODELIST", ""),
                  f"the node list is compressed: {seen.get('SLURM_JOB_NODELIST')!r}")
            check_packed_gpus(berth, env)
        finally:
            dev.stop()
    if check.failures:
        print(f"{len(check.failures)} check(s) failed")
        return 1
    print("slurm shape: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
