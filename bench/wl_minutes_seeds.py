#!/usr/bin/env python3
"""wl_minutes_seeds.py -- the `wl_minutes` workload over many seeds, in the simulator.

One seed of `wl_minutes` (the Slurm comparison's second workload) says little
about a policy's makespan: a 200-job schedule's end turns on a few large jobs.
This replays seeds 1..N through `berth sim` (the scheduling core the server
runs), each job as `bench/run_workload_berth.py` submits it to the server:
times compressed by --time-scale, the hard limit Slurm's whole minutes, the
runtime estimate the workload's limit, not preemptible. It prints, for each
policy, the median over the seeds of its makespan, mean wait and max wait
over the `slurm` policy's (Berth's model of tuned Slurm: age-ordered EASY
backfill on time limits), and in how many seeds its makespan was no longer.

  bench/wl_minutes_seeds.py --berth build/berth                 # seeds 1-30, x0.05
  bench/wl_minutes_seeds.py --berth build/berth --time-scale 1 --policies fifo,berth
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_wl_minutes  # noqa: E402
import replay_common as rc  # noqa: E402

BASELINE = "slurm"


def write_sim_csv(workload, time_scale, path):
    """The workload as the server receives it from run_workload_berth.py --limits slurm:
    the hard limit in Slurm's whole minutes, the declared limit as the estimate."""
    with open(path, "w") as fh:
        fh.write("id,submit_s,gpus,duration_s,limit_s,estimate_s\n")
        for j in rc.read_workload(workload, time_scale):
            fh.write(f"{j['id']},{j['submit_s']:.3f},{j['gpus']},{j['duration_s']:.3f},"
                     f"{60 * rc.slurm_minutes(j['limit_s'])},{j['limit_s']:.3f}\n")


def simulate(berth, trace, nodes, policies):
    out = subprocess.run(
        [berth, "sim", "--trace", trace, "--cluster", f"{nodes}x8xH100", "--policy",
         ",".join(policies), "--preemptible", "none", "--json", "--quiet"],
        capture_output=True, text=True, check=True).stdout
    summaries = json.loads(out)
    return {s["policy"]: s for s in (summaries if isinstance(summaries, list) else [summaries])}


def table(results, seeds):
    lines = [f"{len(seeds)} seeds; each policy over `{BASELINE}` in the same seed, median (range)",
             "", "| policy | makespan | mean wait | max wait | makespan <= " + BASELINE + " |",
             "|---|---:|---:|---:|---:|"]

    def ratio(values):
        return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"

    base = results[BASELINE]
    for policy, runs in results.items():
        makespan = [r["makespan_s"] / b["makespan_s"] for r, b in zip(runs, base)]
        wait = [r["avg_wait_s"] / b["avg_wait_s"] if b["avg_wait_s"] > 0 else 1.0
                for r, b in zip(runs, base)]
        max_wait = [r["max_wait_s"] / b["max_wait_s"] if b["max_wait_s"] > 0 else 1.0
                    for r, b in zip(runs, base)]
        no_longer = sum(m <= 1.0 for m in makespan)
        lines.append(f"| {policy} | {ratio(makespan)} | {ratio(wait)} | {ratio(max_wait)} | "
                     f"{no_longer}/{len(runs)} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--berth", default="build/berth", help="the berth binary")
    ap.add_argument("--seeds", type=int, default=30, help="seeds 1..N")
    ap.add_argument("--time-scale", type=float, default=0.05,
                    help="as vs-slurm.sh's --time-scale (default 0.05)")
    ap.add_argument("--nodes", type=int, default=4, help="8-GPU nodes in the pool")
    ap.add_argument("--policies", default="fifo,las,qssf,berth",
                    help=f"compared with {BASELINE} (always run)")
    ap.add_argument("--out", help="also write every summary here (JSON)")
    a = ap.parse_args()
    if a.seeds < 1:
        ap.error("--seeds must be at least 1")
    if a.time_scale <= 0:
        ap.error("--time-scale must be positive")
    policies = [BASELINE] + [p for p in a.policies.split(",") if p and p != BASELINE]
    seeds = list(range(1, a.seeds + 1))
    results = {p: [] for p in policies}
    with tempfile.TemporaryDirectory(prefix="wl-minutes-seeds-") as tmp:
        for seed in seeds:
            workload = os.path.join(tmp, f"wl_minutes_seed{seed}.csv")
            with open(workload, "w") as fh:
                gen_wl_minutes.write_csv(
                    gen_wl_minutes.generate(seed=seed, pool_gpus=8 * a.nodes), fh)
            trace = os.path.join(tmp, f"sim_seed{seed}.csv")
            write_sim_csv(workload, a.time_scale, trace)
            summaries = simulate(a.berth, trace, a.nodes, policies)
            for p in policies:
                results[p].append(summaries[p])
    print(table(results, seeds))
    if a.out:
        with open(a.out, "w") as fh:
            json.dump({"time_scale": a.time_scale, "nodes": a.nodes, "seeds": seeds,
                       "summaries": results}, fh, indent=1)


if __name__ == "__main__":
    main()
