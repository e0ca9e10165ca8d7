#!/usr/bin/env python3
"""Issue 4: a real Prometheus scrapes the Berth server and finds its metrics.

Starts `berth dev` and a private Prometheus (Debian's package; its own data
dir, --web.listen-address on loopback) that scrapes the server every second
and loads deploy/prometheus/alerts.yml. Checks that the target is up, that
Berth's metric families arrive with the values the API implies, that every
alert rule loaded healthy, and that every query of the Grafana dashboard in
deploy/grafana/ is valid PromQL over the scraped series.

Usage: prometheus_test.py BERTH_BINARY SOURCE_DIR
"""
import json
import os
import shutil
import sys
import tempfile
import urllib.parse

from berth_testlib import Process, admin_token, berth_dev, free_port, request, wait_until


def query(prometheus, expr):
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    _, reply = request(url, None)
    if reply.get("status") != "success":
        raise SystemExit(f"query failed: {expr}: {reply}")
    return reply["data"]["result"]


def main():
    binary, source = sys.argv[1], os.path.abspath(sys.argv[2])
    prometheus_binary = shutil.which("prometheus")
    if prometheus_binary is None:
        raise SystemExit("prometheus is not installed (scripts/install-deps.sh installs it)")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        data_dir = os.path.join(work, "berth")
        os.makedirs(data_dir)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        server = berth_dev(binary, data_dir, port, "--nodes", "0").start()
        prometheus = None
        try:
            server.wait_http(base + "/readyz")
            admin = admin_token(data_dir)
            for _ in range(3):
                request(base + "/api/v1/jobs", admin, "POST", {"command": ["true"]})

            # /metrics names users: Prometheus scrapes with a metrics token.
            _, issued = request(base + "/api/v1/tokens", admin, "POST",
                                {"user": "prometheus", "role": "metrics"})
            credentials = os.path.join(work, "metrics-token")
            with open(credentials, "w") as f:
                f.write(issued["token"])
            config = os.path.join(work, "prometheus.yml")
            with open(config, "w") as f:
                f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.join(source, "deploy/prometheus/alerts.yml")}
scrape_configs:
  - job_name: berth
    authorization:
      credentials_file: {credentials}
    static_configs:
      - targets: ["127.0.0.1:{port}"]
  - job_name: anonymous
    static_configs:
      - targets: ["127.0.0.1:{port}"]
""")
            prometheus_port = free_port()
            prometheus_url = f"http://127.0.0.1:{prometheus_port}"
            prometheus = Process([prometheus_binary, f"--config.file={config}",
                                  f"--storage.tsdb.path={os.path.join(work, 'tsdb')}",
                                  f"--web.listen-address=127.0.0.1:{prometheus_port}"],
                                 os.path.join(work, "prometheus.log")).start()
            prometheus.wait_http(prometheus_url + "/-/ready", timeout=60)

            # The scrape lands: the server is up and reports three pending jobs.
            wait_until(lambda: query(prometheus_url, 'up{job="berth"} == 1'), 60, "a scrape")
            # Without the token the same target refuses the scrape.
            wait_until(lambda: query(prometheus_url, 'up{job="anonymous"} == 0'), 60,
                       "an anonymous scrape refused")
            pending = wait_until(
                lambda: query(prometheus_url, 'sum(berth_jobs{state="pending"})'), 30,
                "berth_jobs")
            if float(pending[0]["value"][1]) != 3:
                failures.append(f"berth_jobs pending = {pending[0]['value'][1]}, want 3")
            for family in ["berth_api_requests_total", "berth_api_request_seconds_bucket",
                           "berth_scheduler_cycle_seconds_bucket", "berth_nodes",
                           "berth_scheduler_cycles"]:
                if not query(prometheus_url, family):
                    failures.append(f"{family}: no series scraped")

            # The alert rules loaded, each healthy.
            def rules_loaded():
                _, reply = request(prometheus_url + "/api/v1/rules", None)
                rules = [r for g in reply["data"]["groups"] for r in g["rules"]]
                rules_loaded.last = [(r["name"], r.get("health"), r.get("lastError")) for r in rules]
                return rules if rules and all(r.get("health") == "ok" for r in rules) else None
            rules_loaded.last = []
            try:
                rules = wait_until(rules_loaded, 30, "alert rules evaluated healthy")
            except SystemExit as error:
                raise SystemExit(f"{error}: {rules_loaded.last}")
            names = {r["name"] for r in rules}
            for wanted in ["BerthQueueWaitTooLong", "BerthNodeDown", "BerthGpusIdleWhileJobsWait",
                           "BerthSchedulerCycleSlow"]:
                if wanted not in names:
                    failures.append(f"alert {wanted} not loaded")

            # Every dashboard query is valid PromQL here.
            with open(os.path.join(source, "deploy/grafana/berth-dashboard.json")) as f:
                dashboard = json.load(f)
            exprs = [t["expr"] for p in dashboard["panels"] for t in p.get("targets", [])]
            for expr in exprs:
                query(prometheus_url, expr.replace("$__rate_interval", "1m"))
            print(f"prometheus scraped berth; {len(rules)} rules healthy; "
                  f"{len(exprs)} dashboard queries valid")
        finally:
            if prometheus:
                prometheus.stop()
            server.stop()
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
