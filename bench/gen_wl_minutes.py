#!/usr/bin/env python3
"""gen_wl_minutes.py -- the seeded `wl_minutes` workload of the Slurm comparison.

200 jobs (default), 1-8 GPUs each (uniform integers, all on one node),
durations log-uniform between 1 and 20 minutes, Poisson arrivals whose rate is
set so that the offered load is about 90% of the pool (--load, --pool-gpus),
and time limits of twice the true duration rounded up to whole minutes.

The rate is computed from the drawn jobs themselves (rate = load * GPUs /
mean GPU-seconds per job), so the realised offered load is the target, not
only its expectation. Same CSV as ../shared/tools/slurm/gen_workload.py:
  id,submit_s,gpus,duration_s,limit_s

  bench/gen_wl_minutes.py > wl_minutes.csv          # seed 1, 32 GPUs
  bench/gen_wl_minutes.py --pool-gpus 512 --seed 2  # 64 x 8
"""
import argparse
import math
import random
import sys


def generate(jobs=200, seed=1, pool_gpus=32, load=0.9, gpus=(1, 8),
             dur_min_s=60.0, dur_max_s=1200.0):
    """Returns a list of dicts id, submit_s, gpus, duration_s, limit_s."""
    rng = random.Random(seed)
    sizes = [rng.randint(gpus[0], gpus[1]) for _ in range(jobs)]
    lo, hi = math.log(dur_min_s), math.log(dur_max_s)
    durations = [round(math.exp(rng.uniform(lo, hi)), 1) for _ in range(jobs)]
    work_per_job = sum(g * d for g, d in zip(sizes, durations)) / jobs
    rate = load * pool_gpus / work_per_job  # jobs per second
    out, t = [], 0.0
    for i in range(jobs):
        if i > 0:
            t += rng.expovariate(rate)
        d = durations[i]
        out.append({"id": i + 1, "submit_s": round(t, 3), "gpus": sizes[i],
                    "duration_s": d, "limit_s": 60 * math.ceil(2 * d / 60.0)})
    return out


def write_csv(rows, fh):
    fh.write("id,submit_s,gpus,duration_s,limit_s\n")
    for r in rows:
        fh.write(f"{r['id']},{r['submit_s']:.3f},{r['gpus']},{r['duration_s']},{r['limit_s']}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool-gpus", type=int, default=32, help="GPUs in the pool (4 x 8 = 32)")
    ap.add_argument("--load", type=float, default=0.9, help="offered load, fraction of the pool")
    a = ap.parse_args()
    write_csv(generate(a.jobs, a.seed, a.pool_gpus, a.load), sys.stdout)


if __name__ == "__main__":
    main()
