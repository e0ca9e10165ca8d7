#!/usr/bin/env bash
# Fails if the scheduling core reaches for I/O, threads, clocks, randomness or
# databases: src/core must stay a pure function of its inputs (STYLE.md).
# Test files (*_test.cc and test-only headers) may use what they like.
set -euo pipefail
cd "$(dirname "$0")/.."

forbidden='#include <(thread|mutex|atomic|future|condition_variable|chrono|fstream|iostream|filesystem|random|ctime|sys/|unistd\.h|fcntl\.h|sqlite3\.h|libpq-fe\.h|httplib\.h)|std::chrono|system_clock|steady_clock|std::(random_device|mt19937)|getenv|fopen|\bprintf\('

files=$(git ls-files 'src/core/*.h' 'src/core/*.cc' 2>/dev/null || find src/core -name '*.h' -o -name '*.cc')
offending=$(echo "$files" | grep -v -E '_test\.cc$|/test_builders\.h$|/random_scenario\.h$' |
  xargs grep -n -E "$forbidden" || true)
if [ -n "$offending" ]; then
  echo "lint-core: src/core must not do I/O, threads, clocks or randomness:" >&2
  echo "$offending" >&2
  exit 1
fi
echo "lint-core: src/core is pure"
