#!/usr/bin/env python3
"""run_workload_slurm.py -- replay a workload CSV on the bench Slurm cluster of
../shared/tools/slurm (install.sh) with the same job shape and output as
run_workload_berth.py, so metrics.py reads both the same way.

Each job is `sbatch --gres=gpu:G --time=MINUTES job.sh ID SECONDS MARKS`, as in
the shared run_workload.py (Slurm limits are whole minutes, at least 1).
This replayer exists because the shared one records only when sbatch returned,
not when it was called, and overwrites a second start mark.

  SLURM_CONF=/tmp/slurm-bench/etc/slurm.conf bench/run_workload_slurm.py WL.csv --out OUT
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replay_common as rc  # noqa: E402


def cluster_shape():
    r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %G"], capture_output=True, text=True,
                       check=True)
    nodes = {}
    for line in r.stdout.splitlines():
        if line.strip():
            name, gres = line.split()[:2]
            m = re.search(r"gpu:(\d+)", gres)
            nodes[name] = int(m.group(1)) if m else 0
    return nodes


def live_count():
    r = subprocess.run(["squeue", "-h", "-o", "%A"], capture_output=True, text=True)
    return len([x for x in r.stdout.split() if x.strip()])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--label", default="slurm")
    a = ap.parse_args()
    sbdir = os.environ.get("SLURM_BENCH_DIR", "/tmp/slurm-bench")
    os.environ.setdefault("SLURM_CONF", os.path.join(sbdir, "etc", "slurm.conf"))
    nodes = cluster_shape()
    total = sum(nodes.values())
    jobs = rc.read_workload(a.workload, a.time_scale)
    out, marks, jobsh = rc.prepare(a.out)
    if live_count():
        print(f"[{a.label}] warning: queue not empty at start", file=sys.stderr)

    def submit(j):
        minutes = rc.slurm_minutes(j["limit_s"])
        cmd = ["sbatch", "--parsable", f"--gres=gpu:{j['gpus']}", f"--time={minutes}",
               "-J", f"wl{j['id']}", "-o", "/dev/null", "-e", "/dev/null",
               jobsh, str(j["id"]), f"{j['duration_s']:.3f}", marks]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip())
        return r.stdout.strip().split(";")[0]

    print(f"[{a.label}] {len(jobs)} jobs on {len(nodes)} nodes, {total} GPUs", file=sys.stderr)
    t0 = rc.replay(jobs, submit, log=lambda m: print(m, file=sys.stderr))
    rc.wait_done(jobs, marks, live_count, a.timeout, a.label,
                 log=lambda m: print(m, file=sys.stderr))
    rc.write_outputs(out, jobs, {
        "scheduler": "slurm", "label": a.label, "workload": os.path.abspath(a.workload),
        "time_scale": a.time_scale, "limits": "minutes", "nodes": len(nodes),
        "gpus_per_node": max(nodes.values(), default=0), "total_gpus": total, "t0": t0})
    print(out)


if __name__ == "__main__":
    main()
