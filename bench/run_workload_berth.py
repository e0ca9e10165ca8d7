#!/usr/bin/env python3
"""run_workload_berth.py -- replay a workload CSV (id,submit_s,gpus,duration_s,limit_s)
on a running Berth through its REST API, with the same job shape as the Slurm
replayer (replay_common.JOB_SH: start mark, sleep, end mark).

Limits (--limits):
  slurm (default)  time_limit_s = the limit Slurm enforces for the same job (the
                   workload's limit rounded up to whole minutes, at least 1), and
                   estimate_s = the workload's limit: same hard limit on both
                   sides, Berth also gets the declared limit at second resolution
                   as its runtime estimate (Slurm has no such field).
  exact            time_limit_s = the workload's limit, no estimate (jobs whose
                   limit equals their duration are then killed at the limit).

  bench/run_workload_berth.py WL.csv --url http://127.0.0.1:18480 --data-dir DIR \\
      --out OUT [--time-scale 0.1] [--timeout 3600]
Then: bench/metrics.py OUT
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replay_common as rc  # noqa: E402
from berth_client import Berth, admin_token  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--url", required=True)
    ap.add_argument("--token")
    ap.add_argument("--data-dir", help="berth dev data dir (for the admin token)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--time-scale", type=float, default=1.0,
                    help="multiply submit_s, duration_s and limit_s by this")
    ap.add_argument("--limits", choices=["slurm", "exact"], default="slurm")
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--label", default="berth")
    a = ap.parse_args()
    token = a.token or admin_token(a.data_dir)
    client = Berth(a.url, token)
    nodes = client.call("GET", "/api/v1/nodes")
    nodes = nodes.get("nodes", nodes) if isinstance(nodes, dict) else nodes
    gpus_per_node = {n["name"]: len(n.get("gpus", [])) for n in nodes}
    total = sum(gpus_per_node.values())

    jobs = rc.read_workload(a.workload, a.time_scale)
    out, marks, jobsh = rc.prepare(a.out)
    if client.live_jobs():
        print(f"[{a.label}] warning: jobs live at start", file=sys.stderr)

    def submit(j):
        body = {"name": f"wl{j['id']}", "gpus": j["gpus"],
                "command": [jobsh, str(j["id"]), f"{j['duration_s']:.3f}", marks]}
        if a.limits == "slurm":
            body["time_limit_s"] = 60.0 * rc.slurm_minutes(j["limit_s"])
            body["estimate_s"] = round(j["limit_s"], 3)
        else:
            body["time_limit_s"] = round(j["limit_s"], 3)
        return client.submit(body)

    print(f"[{a.label}] {len(jobs)} jobs on {len(nodes)} nodes, {total} GPUs", file=sys.stderr)
    t0 = rc.replay(jobs, submit, log=lambda m: print(m, file=sys.stderr))
    rc.wait_done(jobs, marks, lambda: len(client.live_jobs()), a.timeout, a.label,
                 log=lambda m: print(m, file=sys.stderr))
    rc.write_outputs(out, jobs, {
        "scheduler": "berth", "label": a.label, "workload": os.path.abspath(a.workload),
        "time_scale": a.time_scale, "limits": a.limits, "nodes": len(nodes),
        "gpus_per_node": max(gpus_per_node.values(), default=0), "total_gpus": total,
        "t0": t0})
    print(out)


if __name__ == "__main__":
    main()
