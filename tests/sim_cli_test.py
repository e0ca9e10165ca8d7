#!/usr/bin/env python3
"""End-to-end tests of the `berth sim` command line: real binary, real traces.

Usage: sim_cli_test.py BERTH_BINARY SHARED_DIR [unittest args]
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

BERTH = SHARED = None


def trace(*parts):
    return os.path.join(SHARED, "data/traces", *parts)


def run(*args):
    return subprocess.run([BERTH, "sim", *args], capture_output=True, text=True)


class SimCliTest(unittest.TestCase):
    def test_every_itp_cluster_simulates(self):
        for number in ("01", "02", "05", "06", "08", "09", "10"):
            with self.subTest(cluster=number):
                result = run("--trace", trace("microsoft-itp-2021/raw", f"cluster{number}.csv"),
                             "--format", "itp", "--cluster", "16x8xV100", "--policy", "fifo",
                             "--json", "--quiet")
                self.assertEqual(result.returncode, 0, result.stderr)
                summary = json.loads(result.stdout)
                self.assertEqual(summary["policy"], "fifo")
                self.assertGreater(summary["jobs"], 0)
                self.assertIn("rows read", result.stderr)

    def test_one_policy_prints_an_object_several_an_array(self):
        args = ["--trace", trace("microsoft-itp-2021/raw/cluster10.csv"), "--format", "itp",
                "--cluster", "4x8xV100", "--json", "--quiet"]
        single = json.loads(run(*args, "--policy", "las").stdout)
        self.assertIsInstance(single, dict)
        for field in ("policy", "jobs", "avg_jct_s", "p50_jct_s", "p99_jct_s", "avg_wait_s",
                      "p50_wait_s", "p99_wait_s", "max_wait_s", "makespan_s", "gpu_utilization",
                      "lb_avg_jct_s", "events", "sim_wall_s"):
            self.assertIn(field, single)
        self.assertGreaterEqual(single["avg_jct_s"], single["lb_avg_jct_s"])
        several = json.loads(run(*args, "--policy", "fifo,slurm").stdout)
        self.assertEqual([s["policy"] for s in several], ["fifo", "slurm"])

    def test_predicting_policies_report_prediction_and_eta(self):
        result = run("--trace", trace("microsoft-itp-2021/raw/cluster10.csv"), "--format", "itp",
                     "--cluster", "4x8xV100", "--policy", "qssf,berth,las", "--json", "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        by_policy = {s["policy"]: s for s in json.loads(result.stdout)}
        for name in ("qssf", "berth"):
            self.assertGreaterEqual(by_policy[name]["prediction_mdape"], 0)
        self.assertIn("eta_within_25pct", by_policy["berth"])
        self.assertNotIn("prediction_mdape", by_policy["las"])
        for summary in by_policy.values():
            self.assertLessEqual(summary["p99_wait_s"], summary["p999_wait_s"])
            self.assertLessEqual(summary["p999_wait_s"], summary["max_wait_s"])

    def test_vc_quotas_report_teams(self):
        result = run("--trace", trace("philly-pollux/philly_jobs_2017-09-04_to_2017-11-30.csv.gz"),
                     "--format", "philly", "--cluster", "20x8xP100", "--vc-quotas",
                     trace("philly-pollux/philly_vc_nodes_helios_qssf.csv"),
                     "--from", "2017-11-01", "--to", "2017-11-04", "--policy", "berth,fifo",
                     "--json", "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        for summary in json.loads(result.stdout):
            self.assertGreater(summary["jain_fairness"], 0)
            self.assertLessEqual(summary["jain_fairness"], 1)
            teams = {t["queue"]: t for t in summary["teams"]}
            self.assertIn("6214e9", teams)
            self.assertEqual(sum(t["jobs"] for t in teams.values()), summary["jobs"])
        conflict = run("--trace", trace("philly-pollux/philly_jobs_2017-09-04_to_2017-11-30.csv.gz"),
                       "--format", "philly", "--vc-nodes",
                       trace("philly-pollux/philly_vc_nodes_helios_qssf.csv"), "--vc-quotas",
                       trace("philly-pollux/philly_vc_nodes_helios_qssf.csv"))
        self.assertEqual(conflict.returncode, 2)
        self.assertIn("--vc-quotas", conflict.stderr)

    def test_table_by_default(self):
        result = run("--trace", trace("microsoft-itp-2021/raw/cluster10.csv"), "--format", "itp",
                     "--cluster", "4x8xV100", "--policy", "fifo,sjf-oracle", "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.strip().splitlines()
        self.assertTrue(lines[0].startswith("policy"))
        self.assertEqual([line.split()[0] for line in lines[1:]], ["fifo", "sjf-oracle"])

    def test_per_vc_partitions(self):
        result = run("--trace", trace("philly-pollux/philly_jobs_2017-09-04_to_2017-11-30.csv.gz"),
                     "--format", "philly", "--vc-nodes",
                     trace("philly-pollux/philly_vc_nodes_helios_qssf.csv"),
                     "--from", "2017-11-01", "--to", "2017-11-08", "--policy", "fifo", "--json",
                     "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        summary = json.loads(result.stdout)
        self.assertGreater(summary["jobs"], 1000)
        self.assertIn("queue not in --vc-nodes", result.stderr)

    def test_out_writes_csv_svg_and_summary(self):
        with tempfile.TemporaryDirectory() as out:
            result = run("--trace", os.path.join(SHARED, "tools/slurm/workloads/wl200_seed1.csv"),
                         "--format", "csv", "--cluster", "4x8xV100", "--policy", "fifo,slurm",
                         "--out", out, "--quiet")
            self.assertEqual(result.returncode, 0, result.stderr)
            names = set(os.listdir(out))
            for name in ("jobs-fifo.csv", "jobs-slurm.csv", "queue_length.svg", "wait_cdf.svg",
                         "utilization.svg", "summary.json"):
                self.assertIn(name, names)
            with open(os.path.join(out, "jobs-fifo.csv")) as f:
                self.assertEqual(len(f.read().strip().splitlines()), 201)
            with open(os.path.join(out, "summary.json")) as f:
                self.assertEqual(len(json.load(f)), 2)

    def test_bad_input_names_the_flag(self):
        cases = [
            (["--format", "itp", "--cluster", "80x8xP100", "--policy", "fifo,nope"],
             "unknown policy 'nope'"),
            (["--format", "itp", "--cluster", "80by8"], "--cluster"),
            (["--format", "itp", "--cluster", "80x8xP100", "--from", "2017-13-01"], "--from"),
            (["--format", "itp"], "exactly one of --cluster"),
            (["--format", "slurm", "--cluster", "80x8xP100"], "format"),
            (["--format", "philly", "--cluster", "80x8xP100"], "unknown column 'job_id'"),
        ]
        for extra, message in cases:
            with self.subTest(args=extra):
                result = run("--trace", trace("microsoft-itp-2021/raw/cluster10.csv"), *extra)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertIn(message, result.stderr)

    def test_strict_fails_on_a_bad_row(self):
        with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
            f.write("submit_s,duration_s,gpus\n0,10,1\n5,ten,1\n")
        try:
            lenient = run("--trace", f.name, "--cluster", "1x8xV100", "--policy", "fifo", "--json", "--quiet")
            self.assertEqual(lenient.returncode, 0, lenient.stderr)
            self.assertEqual(json.loads(lenient.stdout)["jobs"], 1)
            self.assertIn(f"{f.name}:3", lenient.stderr)
            strict = run("--trace", f.name, "--cluster", "1x8xV100", "--strict")
            self.assertEqual(strict.returncode, 2)
            self.assertIn(f"{f.name}:3", strict.stderr)
        finally:
            os.unlink(f.name)


PAI = ("alibaba-pai-gpu-2023",)


def pack(*args):
    return run("--format", "pai2023", "--trace", trace(*PAI, "openb_pod_list_default.csv"),
               "--nodes-file", trace(*PAI, "openb_node_list_gpu_node.csv"), "--pack", *args)


class PackCliTest(unittest.TestCase):
    def test_pack_compares_best_fit_and_berth(self):
        result = pack("--json", "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)
        results = json.loads(result.stdout)
        self.assertEqual([r["placement"] for r in results], ["best-fit", "berth"])
        for r in results:
            for field in ("unallocated_gpu_share", "total_gpus", "allocated_gpu_milli",
                          "pods_placed", "passes"):
                self.assertIn(field, r)
            self.assertEqual(r["total_gpus"], 6212)
            self.assertAlmostEqual(r["unallocated_gpu_share"],
                                   1 - r["allocated_gpu_milli"] / 6212000, places=9)
            self.assertEqual(r["stop"], "a pass placed nothing")
        best_fit, berth = results
        # Issue 3: Berth's placement leaves fewer GPUs unallocated than best fit.
        self.assertLess(berth["unallocated_gpu_share"], best_fit["unallocated_gpu_share"])

    def test_pack_prints_a_table_by_default(self):
        result = pack()
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.strip().splitlines()
        self.assertTrue(lines[0].startswith("placement"))
        self.assertIn("unallocated_gpu_share", lines[0])
        self.assertEqual([line.split()[0] for line in lines[1:]], ["best-fit", "berth"])
        self.assertIn("8152 pod rows read", result.stderr)
        self.assertIn("1213 nodes", result.stderr)

    def test_pack_bad_flags_name_the_flag(self):
        pods = trace(*PAI, "openb_pod_list_default.csv")
        nodes = trace(*PAI, "openb_node_list_gpu_node.csv")
        cases = [
            (["--format", "pai2023", "--pack"], "--nodes-file"),
            (["--format", "pai2023", "--nodes-file", nodes], "--pack"),
            (["--format", "itp", "--pack", "--nodes-file", nodes], "--format pai2023"),
            (["--format", "pai2023", "--pack", "--nodes-file", nodes, "--policy", "fifo"],
             "--policy"),
            (["--format", "pai2023", "--pack", "--nodes-file", nodes, "--cluster", "1x8xV100"],
             "--cluster"),
            (["--format", "pai2023", "--pack", "--nodes-file", nodes + ".absent"],
             "--nodes-file"),
            (["--format", "pai2023", "--pack", "--nodes-file", pods], "unknown column 'name'"),
        ]
        for extra, message in cases:
            with self.subTest(args=extra):
                result = run("--trace", pods, *extra)
                self.assertEqual(result.returncode, 2, result.stdout)
                self.assertIn(message, result.stderr)
        itp = run("--trace", trace("microsoft-itp-2021/raw/cluster10.csv"), "--format", "itp",
                  "--cluster", "1x8xV100", "--nodes-file", nodes)
        self.assertEqual(itp.returncode, 2)
        self.assertIn("--nodes-file", itp.stderr)

    def test_pack_reports_bad_rows_and_strict_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            pods = os.path.join(tmp, "pods.csv")
            nodes = os.path.join(tmp, "nodes.csv")
            with open(pods, "w") as f:
                f.write("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                        "a,1000,1024,1,500,\nb,1000,1024,1,zero,\nc,1000,1024,16,1000,\n")
            with open(nodes, "w") as f:
                f.write("sn,cpu_milli,memory_mib,gpu,model\nn0,8000,65536,2,T4\n")
            args = ["--format", "pai2023", "--trace", pods, "--nodes-file", nodes, "--pack"]
            lenient = run(*args, "--json")
            self.assertEqual(lenient.returncode, 0, lenient.stderr)
            self.assertIn(f"{pods}:3: gpu_milli", lenient.stderr)
            self.assertIn("1 pods never fit (larger than any node)", lenient.stderr)
            results = json.loads(lenient.stdout)
            # Four 0.5 shares fill both T4s under either rule.
            self.assertEqual([r["pods_placed"] for r in results], [4, 4])
            self.assertEqual([r["unallocated_gpu_share"] for r in results], [0, 0])
            self.assertEqual(results[0]["never_fit"], {"larger than any node": 1})
            strict = run(*args, "--strict")
            self.assertEqual(strict.returncode, 2)
            self.assertIn(f"{pods}:3", strict.stderr)


if __name__ == "__main__":
    BERTH, SHARED = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:])
