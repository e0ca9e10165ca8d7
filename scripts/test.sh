#!/usr/bin/env bash
# Builds Berth and runs every test: the lints (core purity, layers,
# formatting), the optimized build with warnings as errors and all tests
# (including the trace validation against the independent reference
# replay), then the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and a short
# libFuzzer run over the job submission parser.
#
# Both presets (CMakePresets.json) emit line tables only (-g1): full debug
# info was a quarter of an optimized test file's compile time (10 s against
# 7.7 s for berth_policy_test.cc here) and a tenth under ASan, and stack
# traces, ASan's included, need only files and lines.
#
# The ASan preset compiles in unity batches (CMAKE_UNITY_BUILD, eight files
# per compilation): reading the headers is most of each file's compile, and
# the batches halved that build's CPU time here. The optimized build stays
# one file per compilation, so every file still compiles on its own (a
# batch hides a declaration a file forgot to include) and a change
# recompiles one file. Names local to a file (anonymous namespaces,
# using-declarations) share its batch, so give them specific names.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)

# Seconds each phase took, printed at the end (CI shows the log's tail):
# where the time goes is what to shorten next.
timings=""
phase_start=$SECONDS
phase_name=""
phase() {
  if [ -n "$phase_name" ]; then
    echo "-- $phase_name took $((SECONDS - phase_start)) s"
    timings="$timings $phase_name $((SECONDS - phase_start))s,"
  fi
  phase_name=$1
  phase_start=$SECONDS
}

phase lint
echo "== lint: the core stays pure, the agent stays off the server, the tree stays formatted"
bash scripts/lint-core.sh
bash scripts/lint-layers.sh
bash scripts/lint-format.sh

phase build
echo "== build (RelWithDebInfo, -Werror)"
cmake --preset default >/dev/null
cmake --build --preset default -j "$jobs"

phase postgres
echo "== PostgreSQL for the store tests (stopped on exit)"
pg_env=$(bash scripts/test-postgres.sh start)  # fails the script if it cannot start
eval "$pg_env"
trap 'bash scripts/test-postgres.sh stop "$BERTH_TEST_PG_DIR"' EXIT

phase tests
echo "== tests"
ctest --preset default -j "$jobs"

phase asan-build
echo "== build (ASan + UBSan)"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"

phase asan-tests
echo "== unit tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --preset asan -j "$jobs"

phase fuzz
echo "== fuzz: the job submission parser (libFuzzer + ASan + UBSan, 30 s)"
bash scripts/fuzz.sh 30

phase done
echo "== all tests passed; seconds per phase:${timings%,}"
