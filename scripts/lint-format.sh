#!/usr/bin/env bash
# Fails if any C++ file differs from .clang-format (Google style): one
# convention for the whole tree. Fix with: clang-format -i <files>
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "lint-format: clang-format not installed (scripts/install-deps.sh)" >&2; exit 1; }
files=$(git ls-files 'src/*.h' 'src/*.cc' 'bench/*.cc' 'tests/*.cc' 'fuzz/*.cc')
clang-format --dry-run --Werror $files
echo "lint-format: $(echo "$files" | wc -l) files formatted"
