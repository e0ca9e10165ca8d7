#!/usr/bin/env bash
# Builds Berth and runs every test: the lints (core purity, formatting), the
# optimized build with warnings as errors and all tests (including the trace
# validation against the independent reference replay), then the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)

echo "== lint: the core stays pure, the tree stays formatted"
bash scripts/lint-core.sh
bash scripts/lint-format.sh

echo "== build (RelWithDebInfo, -Werror)"
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"

echo "== tests"
ctest --preset default -j "$jobs"

echo "== build (ASan + UBSan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"

echo "== unit tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --preset asan -j "$jobs"

echo "== all tests passed"
