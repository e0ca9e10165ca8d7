#!/usr/bin/env bash
# Regenerates docs/evaluation.md: every policy on every developer trace through
# `berth sim`, the PAI 2023 packing run, the issue-3 targets checked.
#
#   scripts/evaluate.sh [--berth build/berth] [--shared ../shared] [--out docs/evaluation.md]
#                       [--parallel 2] [--check]
#
# Paths are relative to the repository root. Build first:
#   cmake --preset default && cmake --build --preset default
# Takes about 15 minutes on two cores. Exits non-zero when a run fails (and, with
# --check, when a target is missed). See scripts/evaluate.py for the details.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/evaluate.py "$@"
