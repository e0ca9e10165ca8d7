#!/usr/bin/env bash
# Fails if a layer includes the headers of one it must not stand on
# (docs/architecture.md). The agent and the server stand side by side on
# src/protocol/: the agent includes nothing of the server, the store, the
# simulator or the CLI, and of the scheduling core only its header-only
# value types (ids, time, resources, node); the protocol the same, and
# nothing of the agent. Tests count too: a test that needs the server beside
# the agent is a cross-layer test, in tests/. CMake checks the same rules
# on what links what (cmake/BerthLayers.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

# The core's header-only value types, which the agent and the protocol may use.
plain_core='"core/(ids|time|resources|node)\.h"'

failed=0
# check LAYER FORBIDDEN-PREFIXES
check() {
  local layer=$1 forbidden=$2
  local files offending
  # Tracked and new (not ignored) files, so a new file cannot slip by.
  files=$(git ls-files --cached --others --exclude-standard "src/$layer/*.h" "src/$layer/*.cc" \
    2>/dev/null || find "src/$layer" -name '*.h' -o -name '*.cc')
  offending=$(echo "$files" | xargs grep -n -E "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($forbidden)/" |
    grep -v -E "$plain_core" || true)
  if [ -n "$offending" ]; then
    echo "lint-layers: src/$layer must not include these ($forbidden):" >&2
    echo "$offending" >&2
    failed=1
  fi
}

check agent 'server|store|core|sim|cli'
check protocol 'server|store|core|sim|cli|agent'
# How clients follow the leader (issue 32): the CLI and the agent both use
# it, so it stands on common/ alone.
check follow 'server|store|core|sim|cli|agent|protocol|http'

[ "$failed" -eq 0 ] || exit 1
echo "lint-layers: src/agent and src/protocol stand on protocol/, common/ and the core's value types only; src/follow on common/"
