#!/usr/bin/env python3
"""Unit tests of scripts/evaluate.py's pure parts: which runs it makes and
which targets it checks, on summaries made up here (no binary, no trace).

Usage: evaluate_test.py [unittest args]
"""
import importlib.util
import os
import sys
import unittest

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "evaluate.py")
_SPEC = importlib.util.spec_from_file_location("evaluate", _PATH)
evaluate = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(evaluate)


def summaries(avg_jct_by_policy, avg_wait=100):
    return [{"policy": policy, "avg_jct_s": jct, "avg_wait_s": avg_wait}
            for policy, jct in avg_jct_by_policy.items()]


class ReplaySpecsTest(unittest.TestCase):
    def test_every_trace_runs_on_its_pool_and_one_node_smaller_and_larger(self):
        specs = {spec["key"]: spec for spec in evaluate.replay_specs("/shared")}
        for key, cluster in (("philly-79x8", "79x8xP100"), ("philly-81x8", "81x8xP100"),
                             ("itp-cluster02-17x8", "17x8xV100"),
                             ("itp-cluster05-4x8", "4x8xV100")):
            with self.subTest(key=key):
                args = specs[key]["args"]
                self.assertEqual(args[args.index("--cluster") + 1], cluster)
                base = specs[evaluate.base_run(key)]["args"]
                self.assertEqual([a for a in args if a != cluster],
                                 [a for a in base if a != base[base.index("--cluster") + 1]])

    def test_every_run_is_replayed_again_with_checkpoints(self):
        specs = {spec["key"]: spec for spec in evaluate.replay_specs("/shared")}
        plain = [key for key in specs if not key.startswith("ckpt-")]
        self.assertEqual(len(plain), 24, "8 traces on 3 pools each")
        for run in plain:
            with self.subTest(run=run):
                self.assertEqual(specs["ckpt-" + run]["args"],
                                 specs[run]["args"] + ["--checkpoint-interval", "1800"])
                self.assertNotIn("--checkpoint-interval", specs[run]["args"])


class CheckTargetsTest(unittest.TestCase):
    def test_with_checkpoints_berth_must_beat_each_baseline_on_avg_jct(self):
        results = {"ckpt-itp-cluster02": summaries(
            {"fifo": 300, "slurm": 250, "las": 190, "qssf": 220, "berth": 200})}
        targets = [t for t in evaluate.check_targets(results, [])
                   if t["group"].startswith("ITP cluster02")]
        self.assertEqual([(t["group"], t["label"], t["ok"]) for t in targets], [
            ("ITP cluster02, checkpoints every 1800 s", "avg JCT < fifo", True),
            ("ITP cluster02, checkpoints every 1800 s", "avg JCT < slurm", True),
            ("ITP cluster02, checkpoints every 1800 s", "avg JCT < las", False),
            ("ITP cluster02, checkpoints every 1800 s", "avg JCT < qssf", True),
        ])

    def test_runs_are_named_by_trace_pool_and_checkpoints(self):
        self.assertEqual(evaluate.target_group("ckpt-philly"), "Philly, checkpoints every 1800 s")
        self.assertEqual(evaluate.target_group("philly-79x8"), "Philly-79x8")
        self.assertEqual(evaluate.target_group("ckpt-itp-cluster02-17x8"),
                         "ITP cluster02-17x8, checkpoints every 1800 s")
        self.assertEqual(evaluate.base_run("ckpt-itp-cluster02-17x8"), "itp-cluster02")

    def test_a_missing_baseline_counts_as_not_met(self):
        results = {"ckpt-itp-cluster06": summaries({"fifo": 300, "berth": 100})}
        by_label = {t["label"]: t["ok"] for t in evaluate.check_targets(results, [])
                    if t["group"].startswith("ITP cluster06")}
        self.assertEqual(by_label["avg JCT < fifo"], True)
        self.assertIsNone(by_label["avg JCT < las"])


class DeveloperTraceTargetsTest(unittest.TestCase):
    def run_with(self, **berth):
        runs = summaries({"fifo": 300, "slurm": 250, "las": 190, "qssf": 220,
                          "srtf-oracle": 100, "berth": 114})
        runs[-1].update(berth)
        targets = evaluate.check_targets({"itp-cluster08": runs}, [])
        return {t["label"]: t["ok"] for t in targets if t["group"] == "ITP cluster08"}

    def test_avg_jct_within_1_15_of_the_oracle(self):
        self.assertTrue(self.run_with()["avg JCT ≤ 1.15 × srtf-oracle"])
        self.assertFalse(self.run_with(avg_jct_s=116)["avg JCT ≤ 1.15 × srtf-oracle"])

    def test_etas_within_25_percent_for_half_the_jobs(self):
        self.assertTrue(self.run_with(eta_within_25pct=0.5)["ETA within 25% ≥ 0.5"])
        self.assertFalse(self.run_with(eta_within_25pct=0.49)["ETA within 25% ≥ 0.5"])
        self.assertIsNone(self.run_with()["ETA within 25% ≥ 0.5"], "not reported: not met")

    def test_p80_intervals_cover_between_75_and_85_percent(self):
        for coverage, low, high in ((0.8, True, True), (0.74, False, True), (0.86, True, False)):
            with self.subTest(coverage=coverage):
                ok = self.run_with(eta_p80_coverage=coverage)
                self.assertEqual((ok["ETA p80 coverage ≥ 0.75"], ok["ETA p80 coverage ≤ 0.85"]),
                                 (low, high))

    def test_a_developer_trace_on_another_pool_is_held_to_the_same(self):
        runs = summaries({"fifo": 300, "slurm": 250, "las": 190, "qssf": 220,
                          "srtf-oracle": 100, "berth": 180})
        for run in runs:
            run.update(p99_wait_s=50, max_wait_s=60)
        runs[-1].update(eta_within_25pct=0.6, eta_p80_coverage=0.8, max_wait_s=70)
        labels = {t["label"]: t["ok"] for t in evaluate.check_targets({"philly-81x8": runs}, [])
                  if t["group"] == "Philly-81x8"}
        self.assertEqual(labels["avg JCT < qssf"], True)
        self.assertEqual(labels["p99 wait ≤ las"], True)
        self.assertEqual(labels["max wait ≤ slurm"], False)
        self.assertEqual(labels["avg JCT ≤ 1.15 × srtf-oracle"], False)
        self.assertEqual(labels["ETA within 25% ≥ 0.5"], True)
        small = {t["label"] for t in evaluate.check_targets({"itp-cluster05-4x8": runs}, [])
                 if t["group"] == "ITP cluster05-4x8"}
        self.assertNotIn("ETA within 25% ≥ 0.5", small, "not a developer trace")

    def test_philly_is_held_to_every_baseline(self):
        runs = summaries({"fifo": 300, "slurm": 250, "las": 190, "qssf": 220, "berth": 200})
        labels = {t["label"]: t["ok"] for t in evaluate.check_targets({"philly": runs}, [])
                  if t["group"] == "Philly"}
        self.assertEqual(labels["avg JCT < fifo"], True)
        self.assertEqual(labels["avg JCT < las"], False)


class ReplayTableTest(unittest.TestCase):
    def test_lost_work_and_the_most_stops_of_one_job_are_columns(self):
        table = evaluate.replay_table([{"policy": "berth", "preemptions": 12,
                                        "preemptions_per_job": {"p50": 0, "p99": 2, "max": 7},
                                        "lost_gpu_hours": 1234.56}])
        header, _, row = table.splitlines()
        cells = dict(zip([c.strip() for c in header.strip("|").split("|")],
                         [c.strip() for c in row.strip("|").split("|")]))
        self.assertEqual(cells["most stops of one job"], "7")
        self.assertEqual(cells["lost GPU-h"], "1234.6")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
