#!/usr/bin/env python3
"""Cross-checks `berth sim` against the independent reference replay (issue 2).

Runs the issue's acceptance command (Philly, Oct 1 - Dec 1 2017, one pool of
80 x 8 GPUs, five policies) and the reference replay in
shared/tools/reference-replay/ (written apart from Berth), then checks:
  - fifo and sjf-oracle agree with the reference within 3% on average JCT
    and average wait (the published figures are 29,723 / 18,242 s and
    13,204 / 1,724 s);
  - the ranking fifo > sjf-oracle > srtf-oracle holds on both, as in Helios;
  - every policy simulated all 68,510 jobs.

Usage: validate_philly.py BERTH_BINARY SHARED_DIR
"""
import json
import os
import re
import subprocess
import sys

TOLERANCE = 0.03


def main():
    berth, shared = sys.argv[1], sys.argv[2]
    trace = os.path.join(shared, "data/traces/philly-pollux/philly_jobs_2017-09-04_to_2017-11-30.csv.gz")
    reference = os.path.join(shared, "tools/reference-replay/philly_fifo_sjf.py")
    for path in (trace, reference):
        if not os.path.exists(path):
            sys.exit(f"missing {path}: the shared folder must sit beside the checkout")

    ours = json.loads(subprocess.run(
        [berth, "sim", "--trace", trace, "--format", "philly", "--cluster", "80x8xP100",
         "--from", "2017-10-01", "--to", "2017-12-01",
         "--policy", "fifo,sjf-oracle,srtf-oracle,las,slurm", "--json", "--quiet"],
        check=True, capture_output=True, text=True).stdout)
    by_policy = {summary["policy"]: summary for summary in ours}

    replay = subprocess.run([sys.executable, reference, trace, "pool:80"],
                            check=True, capture_output=True, text=True).stdout
    expected = {}
    for line in replay.splitlines():
        match = re.match(r"(\w+): jobs=(\d+) skipped=\d+ avg_jct=(\d+) avg_wait=(\d+)", line)
        if match:
            name = {"fifo": "fifo", "sjf": "sjf-oracle"}[match.group(1)]
            expected[name] = (int(match.group(2)), float(match.group(3)), float(match.group(4)))

    failures = []
    print(f"{'policy':<12} {'jobs':>7} {'avg_jct_s':>10} {'reference':>10} {'avg_wait_s':>10} {'reference':>10}")
    for name in ("fifo", "sjf-oracle"):
        jobs, jct, wait = expected[name]
        got = by_policy[name]
        print(f"{name:<12} {got['jobs']:>7} {got['avg_jct_s']:>10.0f} {jct:>10.0f} "
              f"{got['avg_wait_s']:>10.0f} {wait:>10.0f}")
        if got["jobs"] != jobs:
            failures.append(f"{name}: {got['jobs']} jobs, reference {jobs}")
        for field, want in (("avg_jct_s", jct), ("avg_wait_s", wait)):
            if abs(got[field] - want) > TOLERANCE * want:
                failures.append(f"{name} {field}: {got[field]:.0f}, reference {want:.0f} (> 3% apart)")

    for field in ("avg_jct_s", "avg_wait_s"):
        fifo, sjf, srtf = (by_policy[p][field] for p in ("fifo", "sjf-oracle", "srtf-oracle"))
        if not fifo > sjf > srtf:
            failures.append(f"ranking on {field}: fifo {fifo:.0f}, sjf {sjf:.0f}, srtf {srtf:.0f}")
    for name, summary in by_policy.items():
        if summary["jobs"] != 68510:
            failures.append(f"{name}: simulated {summary['jobs']} jobs, expected 68510")

    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok: fifo and sjf-oracle within 3% of the reference; fifo > sjf > srtf")


if __name__ == "__main__":
    main()
