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


if __name__ == "__main__":
    BERTH, SHARED = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:])
