#!/usr/bin/env python3
"""vs_slurm.py -- Berth side by side with a real Slurm (issue 7); run through
bench/vs-slurm.sh. For each scheduler in turn, never both at once: start it
with the same pool, measure intake, idle latency, the reference workload
(median of --runs) and wl_minutes (once, --time-scale), read the controller's
CPU seconds and peak RSS from /proc, stop it by PID (Slurm by the shared
stop.sh); then print one table and write the JSON (--out). Berth's API intake
goes through the compiled client (--intake-bench, bench/scale/intake_bench).
Exits 1, after writing the JSON, if either side lost, double-started or
failed a job or ran two jobs on one GPU.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import intake  # noqa: E402
import metrics  # noqa: E402
import replay_common  # noqa: E402
from berth_client import Berth, admin_token  # noqa: E402

SLURM_TOOLS = os.path.normpath(os.path.join(ROOT, "..", "shared", "tools", "slurm"))
WL_KEYS = ["makespan_s", "lower_bound_s", "makespan_over_lb", "avg_wait_s", "p50_wait_s",
           "p95_wait_s", "max_wait_s", "gpu_utilization", "gpu_conflicts", "lost_jobs",
           "duplicate_starts", "gpu_count_mismatch"]


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def proc_usage(pid):
    """CPU seconds (user + system, this process only) and peak RSS (MiB) from /proc."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / tick
    hwm = 0
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024.0
    return {"cpu_s": cpu, "peak_rss_mib": hwm}


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median_range(runs):
    """{key: median} plus range {key: [min, max]} over the runs, for every number."""
    out, rng = {}, {}
    for k in WL_KEYS:
        vals = sorted(r[k] for r in runs if r.get(k) is not None)
        if not vals:
            out[k] = None
            continue
        n = len(vals)
        out[k] = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
        rng[k] = [vals[0], vals[-1]]
    out["range"] = rng
    out["runs"] = len(runs)
    # size classes and slowdown: of the median-makespan run
    mid = sorted(runs, key=lambda r: r["makespan_s"])[len(runs) // 2]
    out["wait_by_gpus_mean_s"] = {k: v["mean"] for k, v in mid["wait_by_gpus"].items()}
    out["bounded_slowdown_mean"] = mid["bounded_slowdown"]["mean"]
    out["bounded_slowdown_p95"] = mid["bounded_slowdown"]["p95"]
    return out


def one_workload(res):
    out = {k: res.get(k) for k in WL_KEYS}
    out["wait_by_gpus_mean_s"] = {k: v["mean"] for k, v in res["wait_by_gpus"].items()}
    out["bounded_slowdown_mean"] = res["bounded_slowdown"]["mean"]
    out["bounded_slowdown_p95"] = res["bounded_slowdown"]["p95"]
    out["time_scale"] = res["time_scale"]
    out["runs"] = 1
    return out


def run_py(argv, env=None, timeout=None):
    log("  $ " + " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in argv))
    r = subprocess.run([sys.executable] + argv, env=env, timeout=timeout, capture_output=True,
                       text=True)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"{argv[0]} exited with {r.returncode}")
    return r.stdout


def start_rate(a, sched, work, replay_argv, env, pool):
    """--burst-jobs one-GPU jobs that end as soon as they have marked their
    start, all queued while every node is drained; then every node is
    undrained at once: starts/s = jobs / (last start mark - undrain). With
    nothing else in the way, this is the scheduler's launch throughput with
    real processes. (Jobs of a fixed length would measure the pool: with
    0.5 s jobs, 32 GPUs start at most 64 jobs/s.)"""
    wl = os.path.join(work, "burst.csv")
    with open(wl, "w") as fh:
        fh.write("id,submit_s,gpus,duration_s,limit_s\n")
        for i in range(1, a.burst_jobs + 1):
            fh.write(f"{i},0.000,1,0,60\n")
    out = os.path.join(work, f"{sched}-burst")
    pool.drain()
    argv = replay_argv(wl, out, 1.0, f"{sched}-burst")
    log("  $ " + " ".join(os.path.relpath(x, ROOT) if x.startswith(ROOT) else x for x in argv))
    replay = subprocess.Popen([sys.executable] + argv, env=env)
    try:
        deadline = time.time() + 600
        while pool.queued() < a.burst_jobs:
            if replay.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{sched}: the burst was not queued ({pool.queued()} jobs)")
            time.sleep(0.2)
        released = time.time()
        pool.undrain()
        if replay.wait(timeout=a.workload_timeout + 120) != 0:
            raise RuntimeError(f"{sched} burst replay exited with {replay.returncode}")
    finally:
        if replay.poll() is None:
            replay.kill()
        pool.undrain()
    meta, jobs = metrics.load(out)
    m = metrics.compute(meta, jobs)
    starts = [j["starts"][0][0] for j in jobs if j["starts"]]
    rate = len(starts) / (max(starts) - released) if starts else None
    log(f"  {sched} start rate: {len(starts)} one-GPU jobs released at once, {fmt(rate)} starts/s "
        f"(lost {m['lost_jobs']}, conflicts {m['gpu_conflicts']})")
    return {"start_rate_per_s": rate,
            "start_rate": {"jobs": a.burst_jobs, "started": len(starts),
                           "lost_jobs": m["lost_jobs"], "gpu_conflicts": m["gpu_conflicts"]}}


def job_only_rate(a, work, runs=3):
    """The start rate's ceiling on this machine: the same job script, started
    --burst-jobs times by xargs with one process per CPU at a time, no
    scheduler at all. Every start of either scheduler runs these processes
    too (bash, two `date`s, `sleep`), so neither can start jobs faster; on a
    host slow at creating processes this caps what a ratio between the two
    can show. Median of `runs`, each measured like start_rate (jobs / (last
    start mark - launch))."""
    cpus = os.cpu_count() or 1
    rates = []
    for i in range(runs):
        out, marks, jobsh = replay_common.prepare(os.path.join(work, f"job-only-{i + 1}"))
        ids = "".join(f"{j}\n" for j in range(1, a.burst_jobs + 1))
        launched = time.time()
        subprocess.run(["xargs", "-P", str(cpus), "-I{}", jobsh, "{}", "0", marks, "local"],
                       input=ids, text=True, check=True)
        marked = [metrics.read_marks(marks, j)[0] for j in range(1, a.burst_jobs + 1)]
        starts = [job_starts[0][0] for job_starts in marked if job_starts]
        if len(starts) != a.burst_jobs:
            raise RuntimeError(f"job-only run: {len(starts)} of {a.burst_jobs} jobs marked a start")
        rates.append(len(starts) / (max(starts) - launched))
        time.sleep(1)
    rates.sort()
    log(f"  job-only ceiling: {a.burst_jobs} jobs, {cpus} at a time, no scheduler: "
        + ", ".join(fmt(r) for r in rates) + " starts/s")
    return {"per_s": rates[len(rates) // 2], "runs": rates, "parallel": cpus, "jobs": a.burst_jobs}


def workloads(a, sched, work, replay_argv, env, pool):
    res = start_rate(a, sched, work, replay_argv, env, pool) if a.burst_jobs > 0 else {}
    time.sleep(2)
    runs = []
    for i in range(a.runs):
        out = os.path.join(work, f"{sched}-wl200-{i + 1}")
        run_py(replay_argv(a.wl200, out, a.wl200_time_scale, f"{sched}-wl200-{i + 1}"), env,
               timeout=a.workload_timeout + 120)
        m = metrics.compute(*metrics.load(out))
        log("  " + metrics.summary_line(f"{sched} wl200 #{i + 1}", m))
        runs.append(m)
        time.sleep(2)
    if runs:
        res["wl200"] = median_range(runs)
        res["wl200"]["time_scale"] = a.wl200_time_scale
    if a.minutes_time_scale > 0:
        out = os.path.join(work, f"{sched}-wl_minutes")
        run_py(replay_argv(a.wl_minutes, out, a.minutes_time_scale, f"{sched}-wl_minutes"), env,
               timeout=a.workload_timeout + 120)
        m = metrics.compute(*metrics.load(out))
        log("  " + metrics.summary_line(f"{sched} wl_minutes", m))
        res["wl_minutes"] = one_workload(m)
    return res


# ------------------------------------------------------------------ Slurm
class Pool:
    """The emulated pool: every node drained or undrained at once (the start
    rate's release), and the number of jobs queued."""
    drained = False

    def drain(self):
        self.set_drained(True)
        self.drained = True

    def undrain(self):
        if self.drained:
            self.set_drained(False)
            self.drained = False


class SlurmPool(Pool):
    def __init__(self, env):
        self.env = env
        self.nodes = subprocess.run(["sinfo", "-h", "-o", "%N"], env=env, capture_output=True,
                                    text=True, check=True).stdout.strip()

    def set_drained(self, drained):
        state = ["State=DRAIN", "Reason=bench"] if drained else ["State=RESUME"]
        subprocess.run(["scontrol", "update", f"NodeName={self.nodes}", *state], env=self.env,
                       check=True)

    def queued(self):
        q = subprocess.run(["squeue", "-h", "-o", "%A"], env=self.env, capture_output=True,
                           text=True)
        return len(q.stdout.split())


def slurm_side(a, work):
    env = dict(os.environ)
    env["SLURM_BENCH_NODES"] = str(a.nodes)
    env["SLURM_BENCH_GPUS_PER_NODE"] = str(a.gpus_per_node)
    sbdir = env.setdefault("SLURM_BENCH_DIR", "/tmp/slurm-bench")
    env["SLURM_CONF"] = os.path.join(sbdir, "etc", "slurm.conf")
    os.environ.update({k: env[k] for k in ("SLURM_CONF", "SLURM_BENCH_DIR")})
    log(f"slurm: fresh start, {a.nodes} x {a.gpus_per_node} GPUs (install.sh)")
    subprocess.run([os.path.join(a.slurm_tools, "stop.sh")], env=env, check=False,
                   stdout=subprocess.DEVNULL)
    subprocess.run([os.path.join(a.slurm_tools, "install.sh")], env=env, check=True,
                   stdout=sys.stderr)
    with open(os.path.join(sbdir, "run", "slurmctld.pid")) as fh:
        ctld = int(fh.read().strip())
    version = subprocess.run(["sinfo", "-V"], capture_output=True, text=True).stdout.strip()
    res = {"version": version, "controller_pid_note": "slurmctld"}

    def drain():
        subprocess.run(["scancel", "-u", str(os.getuid())], env=env, check=False)
        for _ in range(600):
            q = subprocess.run(["squeue", "-h", "-o", "%A"], capture_output=True, text=True)
            if not q.stdout.strip():
                return
            time.sleep(0.5)
        raise RuntimeError("slurm queue did not drain")

    try:
        for p in (1, 8):
            drain()
            r = intake.throughput("sbatch", a.intake_jobs, p)
            log(f"  sbatch held, {p} submitter(s): {r['jobs_per_s']:.1f} jobs/s ({r['failed']} failed)")
            res[f"submit_jobs_per_s_{p}"] = r["jobs_per_s"]
            res[f"submit_{p}"] = r
        drain()
        time.sleep(2)
        lat = intake.latency("sbatch", a.latency_jobs)
        log(f"  sbatch idle submit-to-start: p50 {lat['p50_s'] * 1e3:.0f} ms p95 {lat['p95_s'] * 1e3:.0f} ms")
        res.update(start_latency_mean_s=lat["mean_s"], start_latency_p50_s=lat["p50_s"],
                   start_latency_p95_s=lat["p95_s"], start_latency=lat)
        drain()

        def replay_argv(wl, out, scale, label):
            return [os.path.join(HERE, "run_workload_slurm.py"), wl, "--out", out,
                    "--time-scale", str(scale), "--timeout", str(a.workload_timeout),
                    "--label", label]
        res.update(workloads(a, "slurm", work, replay_argv, env, SlurmPool(env)))
        res["controller"] = proc_usage(ctld)
        slurmds = []
        for n in os.listdir(os.path.join(sbdir, "run")):
            if n.startswith("slurmd-") and n.endswith(".pid") and ".daemon." not in n:
                with open(os.path.join(sbdir, "run", n)) as fh:
                    try:
                        slurmds.append(proc_usage(int(fh.read().strip())))
                    except (OSError, ValueError):
                        pass
        res["node_daemons_cpu_s"] = sum(x["cpu_s"] for x in slurmds)
    finally:
        log("slurm: stop.sh")
        subprocess.run([os.path.join(a.slurm_tools, "stop.sh")], env=env, check=False,
                       stdout=subprocess.DEVNULL)
    return res


# ------------------------------------------------------------------ Berth
class BerthPool(Pool):
    def __init__(self, client):
        self.client = client
        nodes = client.call("GET", "/api/v1/nodes")
        self.nodes = [n["name"] for n in nodes.get("nodes", [])]

    def set_drained(self, drained):
        for name in self.nodes:
            self.client.call("POST", f"/api/v1/nodes/{name}/{'drain' if drained else 'undrain'}")

    def queued(self):
        return len(self.client.live_jobs())


def berth_side(a, work):
    data = os.path.join(work, "berth-data")
    os.makedirs(data, exist_ok=True)
    port = a.port or free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [a.berth_bin, "dev", "--data-dir", data, "--listen", f"127.0.0.1:{port}",
            "--nodes", str(a.nodes), "--fake-gpus", f"{a.gpus_per_node}xH100-80GB",
            "--agent-heartbeat-interval", a.berth_heartbeat]
    log("berth: " + " ".join(argv))
    logf = open(os.path.join(work, "berth-dev.log"), "ab")
    proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT)
    logf.close()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    built = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(a.berth_bin)))
    res = {"version": f"git {commit} (HEAD when run; binary built {built})",
           "agent_heartbeat_interval": a.berth_heartbeat}
    try:
        deadline = time.time() + 60
        token = None
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"berth dev exited with {proc.returncode}")
            try:
                token = admin_token(data)
                client = Berth(url, token)
                nodes = client.call("GET", "/api/v1/nodes")
                nodes = nodes.get("nodes", nodes) if isinstance(nodes, dict) else nodes
                if sum(len(n.get("gpus", [])) for n in nodes) >= a.nodes * a.gpus_per_node:
                    break
            except (OSError, RuntimeError, ValueError):
                pass
            time.sleep(0.2)
        else:
            raise RuntimeError("berth dev did not come up with every node")
        client = Berth(url, token)

        def cancel_all():
            ids = client.live_jobs()
            for jid in ids:
                try:
                    client.call("POST", f"/api/v1/jobs/{jid}/cancel")
                except RuntimeError:
                    pass
            for _ in range(600):
                if not client.live_jobs():
                    return
                time.sleep(0.5)
            raise RuntimeError("berth queue did not drain")

        for p in (1, 8):
            # The API's figure: a compiled client (bench/scale/intake_bench,
            # one kept-alive connection per submitter), so that the server's
            # intake is measured, not the client's interpreter.
            r = intake.throughput_native(a.intake_bench, port, token, a.api_jobs, p)
            log(f"  berth API held, {p} submitter(s), C++ client: {r['jobs_per_s']:.1f} jobs/s, "
                f"ack p50 {r['ack_p50_ms']:.2f} ms p99 {r['ack_p99_ms']:.2f} ms")
            res[f"submit_jobs_per_s_{p}"] = r["jobs_per_s"]
            res[f"submit_{p}"] = r
            cancel_all()
        for p in (1, 8):
            r = intake.throughput("berth-api", a.api_jobs, p, url, token)
            log(f"  berth API held, {p} submitter(s), Python client: {r['jobs_per_s']:.1f} jobs/s, "
                f"ack p50 {r['ack_ms']['p50']:.1f} ms p99 {r['ack_ms']['p99']:.1f} ms ({r['failed']} failed)")
            res[f"submit_python_jobs_per_s_{p}"] = r["jobs_per_s"]
            res[f"submit_python_{p}"] = r
            cancel_all()
        r = intake.throughput("berth-api", max(50, a.api_jobs // 10), 1, url, token,
                              keepalive=True)
        log(f"  berth API held, 1 submitter, keep-alive connection: {r['jobs_per_s']:.1f} jobs/s, "
            f"ack p50 {r['ack_ms']['p50']:.1f} ms")
        res["submit_keepalive_jobs_per_s_1"] = r["jobs_per_s"]
        res["submit_keepalive_1"] = r
        cancel_all()
        for p in (1, 8):
            r = intake.throughput("berth-cli", a.intake_jobs, p, url, token, a.berth_bin)
            log(f"  berth CLI held, {p} submitter(s): {r['jobs_per_s']:.1f} jobs/s ({r['failed']} failed)")
            res[f"cli_submit_jobs_per_s_{p}"] = r["jobs_per_s"]
            res[f"cli_submit_{p}"] = r
            cancel_all()
        time.sleep(2)
        lat = intake.latency("berth-api", a.latency_jobs, url, token)
        log(f"  berth idle submit-to-start: p50 {lat['p50_s'] * 1e3:.0f} ms p95 {lat['p95_s'] * 1e3:.0f} ms")
        res.update(start_latency_mean_s=lat["mean_s"], start_latency_p50_s=lat["p50_s"],
                   start_latency_p95_s=lat["p95_s"], start_latency=lat)

        def replay_argv(wl, out, scale, label):
            return [os.path.join(HERE, "run_workload_berth.py"), wl, "--url", url,
                    "--data-dir", data, "--out", out, "--time-scale", str(scale),
                    "--timeout", str(a.workload_timeout), "--label", label]
        res.update(workloads(a, "berth", work, replay_argv, None, BerthPool(client)))
        res["controller"] = proc_usage(proc.pid)
        res["node_daemons_cpu_s"] = sum(proc_usage(c)["cpu_s"] for c in children(proc.pid))
    finally:
        log(f"berth: stopping berth dev (pid {proc.pid})")
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return res


# ------------------------------------------------------------------ report
def ratios(b, s):
    def div(x, y):
        return x / y if (x is not None and y) else None
    r = {
        "submit_jobs_per_s_1": div(b.get("submit_jobs_per_s_1"), s.get("submit_jobs_per_s_1")),
        "submit_jobs_per_s_8": div(b.get("submit_jobs_per_s_8"), s.get("submit_jobs_per_s_8")),
        "cli_submit_jobs_per_s_1": div(b.get("cli_submit_jobs_per_s_1"), s.get("submit_jobs_per_s_1")),
        "cli_submit_jobs_per_s_8": div(b.get("cli_submit_jobs_per_s_8"), s.get("submit_jobs_per_s_8")),
        "submit_python_jobs_per_s_1": div(b.get("submit_python_jobs_per_s_1"),
                                          s.get("submit_jobs_per_s_1")),
        "submit_python_jobs_per_s_8": div(b.get("submit_python_jobs_per_s_8"),
                                          s.get("submit_jobs_per_s_8")),
        "start_latency_p50_s": div(s.get("start_latency_p50_s"), b.get("start_latency_p50_s")),
        "start_latency_p95_s": div(s.get("start_latency_p95_s"), b.get("start_latency_p95_s")),
        "start_latency_mean_s": div(s.get("start_latency_mean_s"), b.get("start_latency_mean_s")),
        "start_rate_per_s": div(b.get("start_rate_per_s"), s.get("start_rate_per_s")),
    }
    for wl in ("wl200", "wl_minutes"):
        if wl in b and wl in s:
            for k in ("makespan_s", "avg_wait_s", "p95_wait_s", "max_wait_s"):
                r[f"{wl}_{k}"] = div(s[wl].get(k), b[wl].get(k))
            r[f"{wl}_gpu_utilization"] = div(b[wl].get("gpu_utilization"),
                                             s[wl].get("gpu_utilization"))
    return r


def correctness(res):
    """Every way a side lost or mixed up work: [] when none did."""
    problems = []
    for side in ("berth", "slurm"):
        r = res.get(side) or {}
        for key in ("submit_1", "submit_8", "submit_python_1", "submit_python_8",
                    "submit_keepalive_1", "cli_submit_1", "cli_submit_8"):
            if (r.get(key) or {}).get("failed"):
                problems.append(f"{side} {key}: {r[key]['failed']} submissions failed")
        for wl in ("start_rate", "wl200", "wl_minutes"):
            for k in ("lost_jobs", "gpu_conflicts", "duplicate_starts", "gpu_count_mismatch"):
                if (r.get(wl) or {}).get(k):
                    problems.append(f"{side} {wl}: {k} = {r[wl][k]}")
    return problems


def fmt(x, d=1):
    if x is None:
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{d}f}"


def table(res):
    b, s, r = res.get("berth", {}), res.get("slurm", {}), res.get("ratios", {})
    rows = [("intake, API/sbatch, 1 submitter (jobs/s)", "submit_jobs_per_s_1", 0, "submit_jobs_per_s_1"),
            ("intake, API/sbatch, 8 submitters (jobs/s)", "submit_jobs_per_s_8", 0, "submit_jobs_per_s_8"),
            ("intake, Python API client/sbatch, 1 submitter (jobs/s)", "submit_python_jobs_per_s_1", 0,
             "submit_python_jobs_per_s_1"),
            ("intake, Python API client/sbatch, 8 submitters (jobs/s)", "submit_python_jobs_per_s_8", 0,
             "submit_python_jobs_per_s_8"),
            ("intake, CLI/sbatch, 1 submitter (jobs/s)", "cli_submit_jobs_per_s_1", 0, "cli_submit_jobs_per_s_1"),
            ("intake, CLI/sbatch, 8 submitters (jobs/s)", "cli_submit_jobs_per_s_8", 0, "cli_submit_jobs_per_s_8"),
            ("idle submit-to-start mean (s)", "start_latency_mean_s", 3, "start_latency_mean_s"),
            ("idle submit-to-start p50 (s)", "start_latency_p50_s", 3, "start_latency_p50_s"),
            ("idle submit-to-start p95 (s)", "start_latency_p95_s", 3, "start_latency_p95_s"),
            ("start rate, 1-GPU jobs queued (starts/s)", "start_rate_per_s", 1, "start_rate_per_s")]
    lines = ["| metric | Berth | Slurm | ratio |", "|---|---:|---:|---:|"]
    for label, key, d, rk in rows:
        sv = s.get(key)
        if key.startswith(("cli_", "submit_python_")):  # against sbatch
            sv = s.get(key.replace("cli_", "").replace("python_", ""))
        lines.append(f"| {label} | {fmt(b.get(key), d)} | {fmt(sv, d)} | {fmt(r.get(rk), 2)} |")
    ceiling = (res.get("job_only_start_rate") or {}).get("per_s")
    if ceiling:
        def share(side):
            rate = side.get("start_rate_per_s")
            return fmt(rate / ceiling, 2) if rate else "-"
        lines.append(f"| start rate / job-only ceiling ({fmt(ceiling)} starts/s, no scheduler) | "
                     f"{share(b)} | {share(s)} | |")
    for wl in ("wl200", "wl_minutes"):
        bw, sw = b.get(wl) or {}, s.get(wl) or {}
        if not bw and not sw:
            continue
        scale = (bw or sw).get("time_scale")
        tag = wl if scale == 1.0 else f"{wl} (x{scale})"

        def cell(w, k, d):
            v = fmt(w.get(k), d)
            rg = w.get("range", {}).get(k)
            if rg and w.get("runs", 1) > 1:
                v += f" ({fmt(rg[0], d)}–{fmt(rg[1], d)})"
            return v
        for k, d, lab in (("makespan_s", 1, "makespan (s)"), ("makespan_over_lb", 2, "makespan / lower bound"),
                          ("gpu_utilization", 3, "GPU utilization"), ("avg_wait_s", 1, "wait mean (s)"),
                          ("p50_wait_s", 1, "wait p50 (s)"), ("p95_wait_s", 1, "wait p95 (s)"),
                          ("max_wait_s", 1, "wait max (s)"), ("gpu_conflicts", 0, "GPU-id conflicts"),
                          ("lost_jobs", 0, "lost or failed jobs")):
            rk = f"{wl}_{k}"
            lines.append(f"| {tag}: {lab} | {cell(bw, k, d)} | {cell(sw, k, d)} | {fmt(r.get(rk), 2)} |")
        for cls in ("1-2", "3-4", "5-8"):
            lines.append(f"| {tag}: wait mean, {cls} GPUs (s) | "
                         f"{fmt(bw.get('wait_by_gpus_mean_s', {}).get(cls))} | "
                         f"{fmt(sw.get('wait_by_gpus_mean_s', {}).get(cls))} | |")
        lines.append(f"| {tag}: bounded slowdown mean | {fmt(bw.get('bounded_slowdown_mean'), 2)} | "
                     f"{fmt(sw.get('bounded_slowdown_mean'), 2)} | |")
    for k, lab in (("cpu_s", "controller CPU (s)"), ("peak_rss_mib", "controller peak RSS (MiB)")):
        lines.append(f"| {lab} | {fmt(b.get('controller', {}).get(k))} | "
                     f"{fmt(s.get('controller', {}).get(k))} | |")
    lines.append(f"| node daemons CPU (s) | {fmt(b.get('node_daemons_cpu_s'))} | "
                 f"{fmt(s.get('node_daemons_cpu_s'))} | |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=4, help="emulated nodes (4; 64 for 64 x 8)")
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3, help="runs of the reference workload")
    ap.add_argument("--time-scale", dest="minutes_time_scale", type=float, default=0.05,
                    help="compression of wl_minutes (0: skip it)")
    ap.add_argument("--wl200-time-scale", type=float, default=1.0,
                    help="compression of the reference workload (quick runs only)")
    ap.add_argument("--wl200", default=os.path.join(SLURM_TOOLS, "workloads", "wl200_seed1.csv"))
    ap.add_argument("--wl-minutes", default=None, help="default: generated, seed 1, for the pool")
    ap.add_argument("--intake-jobs", type=int, default=400, help="jobs per sbatch / CLI intake run")
    ap.add_argument("--api-jobs", type=int, default=2000, help="jobs per API intake run")
    ap.add_argument("--latency-jobs", type=int, default=30)
    ap.add_argument("--burst-jobs", type=int, default=320,
                    help="one-GPU jobs of 0.5 s at t=0 for the start rate (0: skip)")
    ap.add_argument("--only", choices=["both", "berth", "slurm"], default="both")
    ap.add_argument("--berth-bin", default=os.path.join(ROOT, "build", "berth"))
    ap.add_argument("--intake-bench", default=os.path.join(ROOT, "build", "bench", "intake_bench"),
                    help="the compiled API client for Berth's intake")
    ap.add_argument("--berth-heartbeat", default="1s",
                    help="berth dev --agent-heartbeat-interval (1s: the agent's default)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--slurm-tools", default=SLURM_TOOLS)
    ap.add_argument("--workload-timeout", type=float, default=3600)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "latest.json"))
    ap.add_argument("--keep-work", action="store_true", help="keep the marks (temp folder)")
    a = ap.parse_args()
    a.berth_bin = os.path.abspath(a.berth_bin)
    a.intake_bench = os.path.abspath(a.intake_bench)
    work = tempfile.mkdtemp(prefix="berthbench-vs-slurm-")
    t_start = time.time()
    if not a.wl_minutes:
        import gen_wl_minutes
        a.wl_minutes = os.path.join(work, "wl_minutes_seed1.csv")
        with open(a.wl_minutes, "w") as fh:
            gen_wl_minutes.write_csv(gen_wl_minutes.generate(pool_gpus=a.nodes * a.gpus_per_node), fh)
    res = {"machine": machine(), "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "pool": {"nodes": a.nodes, "gpus_per_node": a.gpus_per_node},
           "wl200_runs": a.runs, "time_scale": {"wl200": a.wl200_time_scale, "wl_minutes": a.minutes_time_scale},
           "command": "bench/vs-slurm.sh " + " ".join(sys.argv[1:])}
    try:
        if a.burst_jobs > 0:
            res["job_only_start_rate"] = job_only_rate(a, work)
        if a.only in ("both", "slurm"):
            res["slurm"] = slurm_side(a, work)
        if a.only in ("both", "berth"):
            res["berth"] = berth_side(a, work)
        res["ratios"] = ratios(res.get("berth", {}), res.get("slurm", {}))
        res["wall_s"] = time.time() - t_start
        os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
        with open(a.out, "w") as fh:
            json.dump(res, fh, indent=2, sort_keys=True)
            fh.write("\n")
        print(table(res))
        print(f"\nwall {res['wall_s'] / 60:.1f} min; written {a.out}")
        problems = correctness(res)
        for p in problems:
            print(f"correctness: {p}", file=sys.stderr)
        if problems:
            sys.exit(1)
    finally:
        if a.keep_work:
            log(f"marks kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


def machine():
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as fh:
            mem = int(fh.readline().split()[1]) / 1024 / 1024
    except OSError:
        mem = 0
    return {"cpus": os.cpu_count(), "cpu": cpu, "mem_gib": round(mem, 1),
            "kernel": os.uname().release}


if __name__ == "__main__":
    main()
