#!/usr/bin/env bash
# vs-slurm.sh -- Berth side by side with a real Slurm 22.05 on this machine (issue 7).
#
# For each scheduler in turn (Slurm, then Berth; never both at once) it starts
# the scheduler with the same pool of fake GPUs (4 x 8; --nodes 64 for 64 x 8),
# measures held-job intake (1 and 8 submitters; Berth's API through the compiled
# client bench/scale/intake_bench), idle submit-to-start latency,
# the reference workload wl200_seed1 (median of 3 runs) and wl_minutes (seeded,
# bench/gen_wl_minutes.py; once, compressed by --time-scale), the controller's
# CPU seconds and peak RSS, and stops it by PID (Slurm with the shared stop.sh).
# Prints one table and writes bench/results/latest.json.
#
# Slurm comes from ../shared/tools/slurm (install.sh apt-installs it if missing;
# root). Everything listens on 127.0.0.1. Not part of CI (it takes about an hour);
# CI runs `bench/metrics.py --self-test` and the Berth side at toy sizes
# (vs_slurm_berth_smoke in bench/CMakeLists.txt).
#
#   bench/vs-slurm.sh                       # the full run
#   bench/vs-slurm.sh --runs 1 --time-scale 0.02 --out /tmp/quick.json   # quick
#   bench/vs-slurm.sh --help                # every option
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ ! -x build/berth ] || [ ! -x build/berthd ] || [ ! -x build/bench/intake_bench ]; then
  cmake --preset default >/dev/null
  cmake --build --preset default --target berth intake_bench -j"$(nproc)"
fi
exec python3 "$ROOT/bench/vs_slurm.py" "$@"
