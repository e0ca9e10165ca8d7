#!/usr/bin/env python3
"""intake.py -- submission throughput and idle submit-to-start latency, for
Berth (REST API or CLI) and Slurm (sbatch).

Throughput: N held jobs (so launch cost does not blur it) from P concurrent
sequential submitters; jobs/s = accepted jobs / wall time.
  (throughput_native: the same through the compiled client,
             bench/scale/intake_bench --port, one kept-alive connection each)
  berth-api  POST /api/v1/jobs {"hold": true}, a new connection per job (with
             --keepalive: one connection per submitter; see docs/performance.md
             for why that is slower), each submitter its own process (the
             Python client, not the server, may be the limit: client_cpu_s)
  berth-cli  `berth submit --hold --gpus 1 --time 1m -- true`, one process a job
  sbatch     `sbatch -H --gres=gpu:1 --time=1 --wrap true`, one process a job
             (as ../shared/tools/slurm/bench_submit.sh does)

Latency: one job at a time on the idle cluster; the job's first action writes
`date +%s.%N`; latency = that mark - the moment the submit call began. The
next job goes once the previous one has left the queue, after a random
pause of 0.2-1.2 s (seeded) so that the submissions do not lock to a phase of
the agents' heartbeats or Slurm's scheduling passes.
  berth-api  the job submitted through the API (a new connection)
  sbatch     sbatch (the client's own start-up is inside the figure)

  bench/intake.py throughput berth-api --jobs 2000 --submitters 8 --url U --data-dir D
  bench/intake.py latency sbatch --jobs 30
"""
import argparse
import json
import multiprocessing
import os
import random
import resource
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_client import Berth, admin_token  # noqa: E402
from metrics import stats  # noqa: E402


def _api_worker(url, token, count, q, keepalive):
    c = Berth(url, token, keepalive=keepalive)
    ok = bad = 0
    lat = []
    body = {"command": ["true"], "gpus": 1, "time_limit_s": 60, "hold": True, "name": "intake"}
    for _ in range(count):
        t = time.perf_counter()
        try:
            c.submit(body)
            ok += 1
            lat.append(time.perf_counter() - t)
        except Exception:  # counted, not raised: the rate is of accepted jobs
            bad += 1
    q.put((ok, bad, lat))


def _proc_loop(argv, count, env, out, i):
    ok = bad = 0
    for _ in range(count):
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        if r.returncode == 0:
            ok += 1
        else:
            bad += 1
    out[i] = (ok, bad)


def berth_env(url, token):
    env = dict(os.environ)
    env["BERTH_ADDR"], env["BERTH_TOKEN"] = url, token
    return env


def throughput(kind, jobs, submitters, url=None, token=None, berth_bin=None, keepalive=False):
    per = max(1, jobs // submitters)
    total = per * submitters
    lat = []
    t0 = time.perf_counter()
    if kind == "berth-api":
        q = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=_api_worker, args=(url, token, per, q, keepalive))
                 for _ in range(submitters)]
        for p in procs:
            p.start()
        results = [q.get() for _ in procs]
        for p in procs:
            p.join()
        ok = sum(r[0] for r in results)
        bad = sum(r[1] for r in results)
        for r in results:
            lat += r[2]
    else:
        if kind == "berth-cli":
            argv = [berth_bin, "submit", "--hold", "--gpus", "1", "--time", "1m", "--", "true"]
            env = berth_env(url, token)
        elif kind == "sbatch":
            argv = ["sbatch", "-Q", "-H", "-o", "/dev/null", "-e", "/dev/null", "-J", "sub",
                    "--gres=gpu:1", "--time=1", "--wrap", "true"]
            env = dict(os.environ)
        else:
            raise SystemExit(f"unknown kind {kind}")
        out = [None] * submitters
        threads = [threading.Thread(target=_proc_loop, args=(argv, per, env, out, i))
                   for i in range(submitters)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ok = sum(r[0] for r in out)
        bad = sum(r[1] for r in out)
    wall = time.perf_counter() - t0
    res = {"kind": kind + ("-keepalive" if keepalive and kind == "berth-api" else ""),
           "submitters": submitters, "jobs": total, "ok": ok, "failed": bad,
           "wall_s": wall, "jobs_per_s": ok / wall if wall > 0 else None}
    if lat:
        s = stats(lat)
        lat.sort()
        res["ack_ms"] = {"mean": s["mean"] * 1e3, "p50": s["p50"] * 1e3,
                         "p99": lat[min(len(lat) - 1, int(0.99 * len(lat)))] * 1e3,
                         "max": s["max"] * 1e3}
    return res


def throughput_native(intake_bench, port, token, jobs, submitters):
    """berth-api through the compiled client (bench/scale/intake_bench): `jobs`
    held jobs from `submitters` kept-alive connections to the server on
    127.0.0.1:port. Returns its result: jobs_per_s, ack_p50_ms, ack_p99_ms, ..."""
    out = subprocess.run([intake_bench, "--port", str(port), "--token", token,
                          "--clients", str(submitters), "--jobs", str(jobs)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{intake_bench} exited with {out.returncode}: {out.stderr.strip()}")
    res = json.loads(out.stdout)[0]
    res["kind"] = "berth-api-cpp"
    res["submitters"] = submitters
    return res


def _wait_file(path, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open(path) as fh:
                txt = fh.read().strip()
            if txt:
                return float(txt)
        except (FileNotFoundError, ValueError):
            pass
        time.sleep(0.002)
    return None


def latency(kind, jobs, url=None, token=None, timeout=60.0):
    marks = tempfile.mkdtemp(prefix="berthbench-lat-")
    client = Berth(url, token) if kind == "berth-api" else None
    if client:
        client.call("GET", "/api/v1/whoami")  # the server is up
    rows = []
    rng = random.Random(1)
    try:
        for i in range(jobs):
            f = os.path.join(marks, f"start.{i}")
            script = f"date +%s.%N > {f}"
            t_call = time.time()
            if kind == "berth-api":
                jid = client.submit({"command": ["bash", "-c", script], "gpus": 1,
                                     "time_limit_s": 60, "name": "lat"})
            else:
                r = subprocess.run(["sbatch", "--parsable", "--gres=gpu:1", "-o", "/dev/null",
                                    "-e", "/dev/null", "-J", "lat", "--time=1", "--wrap", script],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit("sbatch failed: " + r.stderr.strip())
                jid = r.stdout.strip().split(";")[0]
            t_ack = time.time()
            start = _wait_file(f, timeout)
            if start is None:
                raise SystemExit(f"{kind}: job {jid} did not start within {timeout} s")
            rows.append((start - t_call, t_ack - t_call))
            deadline = time.time() + timeout
            while time.time() < deadline:  # until it has left the queue
                if kind == "berth-api":
                    if client.call("GET", f"/api/v1/jobs/{jid}")["state"] in (
                            "succeeded", "failed", "cancelled"):
                        break
                else:
                    q = subprocess.run(["squeue", "-h", "-j", jid, "-o", "%A"],
                                       capture_output=True, text=True)
                    if not q.stdout.strip():
                        break
                time.sleep(0.02)
            # a random pause, so submissions do not lock to a periodic phase
            # of either scheduler (heartbeats, scheduling passes)
            time.sleep(0.2 + rng.random())
    finally:
        for n in os.listdir(marks):
            os.unlink(os.path.join(marks, n))
        os.rmdir(marks)
    s = stats([r[0] for r in rows])
    a = stats([r[1] for r in rows])
    return {"kind": kind, "jobs": jobs, "mean_s": s["mean"], "p50_s": s["p50"], "p95_s": s["p95"],
            "max_s": s["max"], "submit_call_mean_s": a["mean"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["throughput", "latency"])
    ap.add_argument("kind", choices=["berth-api", "berth-cli", "sbatch"])
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--submitters", type=int, default=1)
    ap.add_argument("--url")
    ap.add_argument("--token")
    ap.add_argument("--data-dir")
    ap.add_argument("--berth-bin", default="build/berth")
    ap.add_argument("--keepalive", action="store_true")
    a = ap.parse_args()
    token = a.token or (admin_token(a.data_dir) if a.data_dir else None)
    if a.what == "throughput":
        r = throughput(a.kind, a.jobs, a.submitters, a.url, token, os.path.abspath(a.berth_bin),
                       a.keepalive)
    else:
        r = latency(a.kind, a.jobs, a.url, token)
    r["client_cpu_s"] = sum(getattr(resource.getrusage(w), f) for w in (
        resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
    json.dump(r, sys.stdout)
    print()


if __name__ == "__main__":
    main()
