"""Shared by the workload replayers (run_workload_berth.py, run_workload_slurm.py).

Both replay a workload CSV (id,submit_s,gpus,duration_s,limit_s) with the same
job shape: a bash script that appends a start mark (epoch seconds, node,
CUDA_VISIBLE_DEVICES) to marks/start.ID, sleeps, and writes marks/end.ID.
The replayer records when each submit call began (t_call) and returned
(t_ack) in jobs.csv; metrics.py computes everything from those and the marks.

Output folder: meta.json, jobs.csv, job.sh, marks/.
"""
import csv
import json
import math
import os
import time

# $1 workload id, $2 seconds to sleep, $3 marks folder, $4 node name (if the
# scheduler has no variable for it). Start marks are appended, so a job run
# twice shows two lines.
JOB_SH = """#!/bin/bash
node=${BERTH_NODE:-${SLURMD_NODENAME:-$4}}
echo "$(date +%s.%N) ${node:-?} ${CUDA_VISIBLE_DEVICES:-none}" >> "$3/start.$1"
sleep "$2"
date +%s.%N > "$3/end.$1"
"""


def slurm_minutes(limit_s):
    """The time limit Slurm enforces for a job that declares `limit_s`: whole
    minutes, rounded up, at least one. Berth gets the same hard limit."""
    return max(1, math.ceil(limit_s / 60.0))


def read_workload(path, time_scale=1.0):
    jobs = []
    with open(path) as fh:
        for r in csv.DictReader(fh):
            jobs.append({"id": int(r["id"]),
                         "submit_s": float(r["submit_s"]) * time_scale,
                         "gpus": int(r["gpus"]),
                         "duration_s": float(r["duration_s"]) * time_scale,
                         "limit_s": float(r.get("limit_s") or r["duration_s"]) * time_scale})
    jobs.sort(key=lambda j: (j["submit_s"], j["id"]))
    return jobs


def prepare(out):
    out = os.path.abspath(out)
    marks = os.path.join(out, "marks")
    os.makedirs(marks, exist_ok=True)
    jobsh = os.path.join(out, "job.sh")
    with open(jobsh, "w") as fh:
        fh.write(JOB_SH)
    os.chmod(jobsh, 0o755)
    return out, marks, jobsh


def replay(jobs, submit, log=print):
    """Calls submit(job) at each job's submit_s (from now); records t_call, t_ack, sched_id."""
    t0 = time.time()
    for j in jobs:
        delay = t0 + j["submit_s"] - time.time()
        if delay > 0:
            time.sleep(delay)
        j["t_call"] = time.time()
        try:
            j["sched_id"] = submit(j)
        except Exception as e:  # a failed submit is a lost job, not a crash
            log(f"submit failed for {j['id']}: {e}")
            j["sched_id"] = None
        j["t_ack"] = time.time()
    return t0


def wait_done(jobs, marks, live_count, timeout_s, label, log=print):
    """Until every job has an end mark, or the scheduler has nothing live left
    (then the missing ones are lost), or the timeout."""
    t0 = time.time()
    last_log = last_live = 0.0
    while True:
        ended = sum(1 for j in jobs if os.path.exists(os.path.join(marks, f"end.{j['id']}")))
        if ended >= len(jobs):
            return True
        if time.time() - t0 > timeout_s:
            log(f"[{label}] timeout: {ended}/{len(jobs)} ended")
            return False
        if time.time() - last_live > 5:
            live = live_count()
            last_live = time.time()
            if time.time() - last_log > 30:
                log(f"[{label}] {ended}/{len(jobs)} ended, {live} live in the scheduler")
                last_log = time.time()
            if live == 0:
                time.sleep(2)  # marks of jobs that just ended
                if live_count() == 0:
                    return False
        time.sleep(0.5)


def write_outputs(out, jobs, meta):
    keys = ["id", "gpus", "submit_s", "duration_s", "limit_s", "t_call", "t_ack", "sched_id"]
    with open(os.path.join(out, "jobs.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        for j in sorted(jobs, key=lambda j: j["id"]):
            w.writerow(j)
    with open(os.path.join(out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
