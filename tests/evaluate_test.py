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
    def test_the_developer_traces_are_replayed_again_with_checkpoints(self):
        specs = {spec["key"]: spec for spec in evaluate.replay_specs("/shared")}
        for run in ("philly", "itp-cluster02", "itp-cluster06", "itp-cluster08"):
            with self.subTest(run=run):
                again = specs["ckpt-" + run]
                self.assertEqual(again["args"],
                                 specs[run]["args"] + ["--checkpoint-interval", "1800"])
        self.assertNotIn("ckpt-itp-cluster05", specs, "only the developer traces")
        self.assertFalse(any("--checkpoint-interval" in spec["args"]
                             for key, spec in specs.items() if not key.startswith("ckpt-")))


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

    def test_a_checkpointed_philly_run_is_named_philly(self):
        results = {"ckpt-philly": summaries(
            {"fifo": 300, "slurm": 250, "las": 190, "qssf": 220, "berth": 100})}
        groups = {t["group"] for t in evaluate.check_targets(results, [])}
        self.assertIn("Philly, checkpoints every 1800 s", groups)

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
