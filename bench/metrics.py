#!/usr/bin/env python3
"""metrics.py -- every workload metric of the Slurm comparison, for either
scheduler, from the job marks only (never from a scheduler's accounting).

Input: a replay folder written by run_workload_berth.py or
run_workload_slurm.py (meta.json, jobs.csv, marks/start.ID, marks/end.ID), or
one written by ../shared/tools/slurm/run_workload.py (per_job.csv + marks/;
there the submit time is when sbatch returned, and pass --total-gpus).

  start.ID: one line per start: "EPOCH NODE CUDA_VISIBLE_DEVICES"
  end.ID:   "EPOCH"

Metrics (times in seconds, on the replay's own, possibly compressed, clock):
  makespan        last end mark - first submit call
  lower_bound     max(total GPU-seconds / pool GPUs, max(submit_s + duration_s))
  wait            first start mark - submit call; mean, p50, p95, max, by GPU size
  bounded slowdown  max(1, (wait + run) / max(run, tau)), tau = 10 s x time_scale
  gpu_utilization GPU-seconds between the marks / (pool GPUs x makespan)
  gpu_conflicts   pairs of jobs on the same node overlapping in time that share a GPU id
  gpu_count_mismatch  jobs whose CUDA_VISIBLE_DEVICES lists a different count of GPUs
  lost_jobs       jobs without a start mark or without an end mark
  duplicate_starts jobs started more than once

  bench/metrics.py DIR [--json]      bench/metrics.py --self-test
"""
import argparse
import csv
import json
import os
import sys

SIZE_CLASSES = (("1-2", 1, 2), ("3-4", 3, 4), ("5-8", 5, 8))


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = (len(xs) - 1) * p / 100.0
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def stats(xs):
    if not xs:
        return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}
    return {"n": len(xs), "mean": sum(xs) / len(xs), "p50": pct(xs, 50), "p95": pct(xs, 95),
            "max": max(xs)}


def read_marks(marks, jid):
    starts, end = [], None
    try:
        with open(os.path.join(marks, f"start.{jid}")) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 3:
                    starts.append((float(parts[0]), parts[1], parts[2]))
    except (FileNotFoundError, ValueError):
        pass
    try:
        with open(os.path.join(marks, f"end.{jid}")) as fh:
            end = float(fh.read().strip())
    except (FileNotFoundError, ValueError):
        pass
    return starts, end


def read_jobs(path, call_column):
    """The jobs of a replayer's CSV; `call_column` holds the submit-call time."""
    with open(path) as fh:
        return [{"id": int(r["id"]), "gpus": int(r["gpus"]),
                 "submit_s": float(r["submit_s"]),
                 "duration_s": float(r["duration_s"]),
                 "t_call": float(r[call_column]) if r.get(call_column) else None}
                for r in csv.DictReader(fh)]


def load(folder, total_gpus=None):
    """Returns (meta, jobs): jobs with id, gpus, submit_s, duration_s, t_call, starts, end."""
    marks = os.path.join(folder, "marks")
    meta, jobs = {}, []
    if os.path.exists(os.path.join(folder, "jobs.csv")):
        with open(os.path.join(folder, "meta.json")) as fh:
            meta = json.load(fh)
        jobs = read_jobs(os.path.join(folder, "jobs.csv"), "t_call")
    else:  # the shared run_workload.py: per_job.csv, submit time = sbatch return
        jobs = read_jobs(os.path.join(folder, "per_job.csv"), "t_ack")
        summ = os.path.join(folder, "summary.json")
        if os.path.exists(summ):
            with open(summ) as fh:
                s = json.load(fh)
            meta = {"scheduler": "slurm", "total_gpus": s.get("total_gpus"),
                    "time_scale": s.get("time_scale", 1.0)}
    if total_gpus:
        meta["total_gpus"] = total_gpus
    for j in jobs:
        j["starts"], j["end"] = read_marks(marks, j["id"])
    return meta, jobs


def compute(meta, jobs):
    total_gpus = meta["total_gpus"]
    scale = meta.get("time_scale", 1.0) or 1.0
    tau = 10.0 * scale
    ok = [j for j in jobs if j["starts"] and j["end"] is not None and j["t_call"] is not None]
    lost = len(jobs) - len(ok)
    dup = sum(1 for j in jobs if len(j["starts"]) > 1)
    calls = [j["t_call"] for j in jobs if j["t_call"] is not None]
    first = min(calls) if calls else 0.0
    for j in ok:
        j["start"] = j["starts"][0][0]
        j["node"], j["cvd"] = j["starts"][-1][1], j["starts"][-1][2]
        j["wait"] = j["start"] - j["t_call"]
        j["run"] = j["end"] - j["starts"][-1][0]
    last_end = max((j["end"] for j in ok), default=first)
    makespan = last_end - first
    lb = max(sum(j["gpus"] * j["duration_s"] for j in jobs) / total_gpus,
             max((j["submit_s"] + j["duration_s"] for j in jobs), default=0.0))
    gpu_s = sum(j["gpus"] * j["run"] for j in ok)
    waits = [j["wait"] for j in ok]
    bsld = [max(1.0, (j["wait"] + j["run"]) / max(j["run"], tau)) for j in ok]

    conflicts, mismatch, by_node = 0, 0, {}
    for j in ok:
        ids = set() if j["cvd"] == "none" else set(j["cvd"].split(","))
        if len(ids) != j["gpus"]:
            mismatch += 1
        by_node.setdefault(j["node"], []).append((j["starts"][-1][0], j["end"], ids))
    for lst in by_node.values():
        lst.sort(key=lambda x: x[0])
        for x in range(len(lst)):
            for y in range(x + 1, len(lst)):
                if lst[y][0] >= lst[x][1]:
                    break
                if lst[x][2] & lst[y][2]:
                    conflicts += 1
    ws = stats(waits)
    return {
        "jobs": len(jobs), "completed": len(ok), "lost_jobs": lost, "duplicate_starts": dup,
        "total_gpus": total_gpus, "time_scale": scale,
        "makespan_s": makespan, "lower_bound_s": lb,
        "makespan_over_lb": makespan / lb if lb else None,
        "gpu_utilization": gpu_s / (total_gpus * makespan) if makespan > 0 else None,
        "avg_wait_s": ws["mean"], "p50_wait_s": ws["p50"], "p95_wait_s": ws["p95"],
        "max_wait_s": ws["max"],
        "wait_by_gpus": {k: stats([j["wait"] for j in ok if lo <= j["gpus"] <= hi])
                         for k, lo, hi in SIZE_CLASSES},
        "bounded_slowdown": stats(bsld), "bounded_slowdown_tau_s": tau,
        "gpu_conflicts": conflicts, "gpu_count_mismatch": mismatch,
        "run_overhead_s": stats([j["run"] - j["duration_s"] for j in ok]),
    }


def summary_line(label, m):
    def f(x, d=1):
        return "-" if x is None else f"{x:.{d}f}"
    return (f"[{label}] jobs={m['jobs']} lost={m['lost_jobs']} makespan={f(m['makespan_s'])}s "
            f"(x{f(m['makespan_over_lb'], 2)} LB {f(m['lower_bound_s'])}s) "
            f"util={f(m['gpu_utilization'], 3)} wait mean={f(m['avg_wait_s'])} "
            f"p50={f(m['p50_wait_s'])} p95={f(m['p95_wait_s'])} max={f(m['max_wait_s'])} "
            f"bsld={f(m['bounded_slowdown']['mean'], 2)} conflicts={m['gpu_conflicts']}")


def self_test():
    """Synthetic marks: 2 nodes x 2 GPUs; one conflict, one lost job, known waits."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "marks"))
        with open(os.path.join(d, "meta.json"), "w") as fh:
            json.dump({"total_gpus": 4, "time_scale": 1.0}, fh)
        rows = [  # id, gpus, t_call, start, end, node, cvd
            (1, 2, 100.0, 101.0, 111.0, "a", "0,1"),
            (2, 1, 100.0, 105.0, 115.0, "a", "1"),      # overlaps job 1 on GPU 1
            (3, 2, 100.0, 103.0, 113.0, "b", "0,1"),
            (4, 1, 100.0, 111.0, 121.0, "a", "0"),      # after job 1: no conflict
            (5, 1, 100.0, None, None, None, None),      # lost
        ]
        with open(os.path.join(d, "jobs.csv"), "w") as fh:
            fh.write("id,gpus,submit_s,duration_s,limit_s,t_call,t_ack,sched_id\n")
            for jid, g, tc, s, e, node, cvd in rows:
                fh.write(f"{jid},{g},0,10,20,{tc},{tc},{jid}\n")
                if s is not None:
                    with open(os.path.join(d, "marks", f"start.{jid}"), "w") as m:
                        m.write(f"{s} {node} {cvd}\n")
                    with open(os.path.join(d, "marks", f"end.{jid}"), "w") as m:
                        m.write(f"{e}\n")
        m = compute(*load(d))
    assert m["lost_jobs"] == 1, m
    assert m["gpu_conflicts"] == 1, m
    assert abs(m["makespan_s"] - 21.0) < 1e-9, m
    assert abs(m["avg_wait_s"] - (1 + 5 + 3 + 11) / 4) < 1e-9, m
    assert m["max_wait_s"] == 11.0 and m["wait_by_gpus"]["1-2"]["n"] == 4, m
    assert abs(m["lower_bound_s"] - 17.5) < 1e-9, m  # (2+1+2+1+1)*10/4
    assert abs(m["gpu_utilization"] - 60.0 / (4 * 21.0)) < 1e-9, m
    assert abs(m["bounded_slowdown"]["max"] - 2.1) < 1e-9, m
    # the wl_minutes generator: seeded, in range, load about 90%
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_wl_minutes
    wl = gen_wl_minutes.generate()
    assert wl == gen_wl_minutes.generate() and len(wl) == 200
    assert all(1 <= j["gpus"] <= 8 and 60 <= j["duration_s"] <= 1200 for j in wl)
    assert all(j["limit_s"] % 60 == 0 and 2 * j["duration_s"] <= j["limit_s"] < 2 * j["duration_s"] + 60
               for j in wl)
    span = wl[-1]["submit_s"]
    work = sum(j["gpus"] * j["duration_s"] for j in wl)
    assert 0.7 < work / (32 * span) < 1.1, work / (32 * span)
    print("metrics self-test: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", nargs="?")
    ap.add_argument("--total-gpus", type=int)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    if not a.folder:
        ap.error("a replay folder, or --self-test")
    meta, jobs = load(a.folder, a.total_gpus)
    m = compute(meta, jobs)
    if a.json:
        json.dump(m, sys.stdout, indent=2)
        print()
    else:
        print(summary_line(meta.get("label", meta.get("scheduler", "?")), m))


if __name__ == "__main__":
    main()
