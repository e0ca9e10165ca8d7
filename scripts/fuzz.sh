#!/usr/bin/env bash
# Fuzzes the job submission parser (libFuzzer + ASan + UBSan) for SECONDS
# (default 30) on WORKERS processes (default 1), from the seed corpus.
#
#   bash scripts/fuzz.sh            # the short run scripts/test.sh (and CI) makes
#   bash scripts/fuzz.sh 3600 "$(nproc)"   # a nightly run, outside CI
#
# CI's 30 s run finds a bug only by luck: ten-minute runs here found one in
# most tries while the parser's messages were being escaped (2026-12-06).
# Run the long one after changing anything the parser or its messages use,
# and nightly where a machine is free. Exit status 1 on a finding; the
# input that triggers it and the logs stay in the directory printed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-30}
workers=${2:-1}
for value in "$seconds" "$workers"; do
  if ! [[ "$value" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: scripts/fuzz.sh [SECONDS] [WORKERS] (positive whole numbers; got '$value')" >&2
    exit 2
  fi
done

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DBERTH_FUZZ=ON -DBERTH_BUILD_BENCH=OFF -DBERTH_WERROR=ON >/dev/null
cmake --build build-fuzz --target job_request_fuzz -j "$(nproc)"
fuzzer=$PWD/build-fuzz/fuzz/job_request_fuzz

# On a copy of the seed corpus in a temporary directory: libFuzzer adds the
# inputs it finds to its corpus and writes findings to -artifact_prefix
# (with several workers, each worker's log goes to fuzz-N.log there).
fuzz_dir=$(mktemp -d)
cp -r fuzz/corpus/job_request "$fuzz_dir/corpus"
flags=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
  -artifact_prefix="$fuzz_dir/")
if ((workers > 1)); then flags+=(-jobs="$workers" -workers="$workers"); fi
status=0
(cd "$fuzz_dir" && "$fuzzer" "${flags[@]}" corpus >log 2>&1) || status=$?
# A worker's finding need not fail the parent: the artifacts decide too.
findings=$(find "$fuzz_dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) | head -n 5)
if ((status != 0)) || [[ -n "$findings" ]]; then
  tail -n 60 "$fuzz_dir"/log "$fuzz_dir"/fuzz-*.log 2>/dev/null || true
  echo "fuzz: a finding (${findings:-exit status $status}); inputs and logs are in $fuzz_dir" >&2
  exit 1
fi
logs=("$fuzz_dir"/log)
if ((workers > 1)); then logs=("$fuzz_dir"/fuzz-*.log); fi  # the parent's log repeats them
cat "${logs[@]}" | grep -E 'DONE|number_of_executed_units' || true
rm -rf "$fuzz_dir"
