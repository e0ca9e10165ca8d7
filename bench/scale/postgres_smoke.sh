#!/usr/bin/env bash
# The scale benchmark's smallest size on a PostgreSQL store (CI smoke):
# a fresh database on the server named by BERTH_TEST_PG_URL
# (scripts/test-postgres.sh starts one), dropped afterwards.
#
#   bench/scale/postgres_smoke.sh SCALE_BENCH BERTH
set -euo pipefail
scale_bench=$1
berth=$2
: "${BERTH_TEST_PG_URL:?needs a PostgreSQL server: eval \"\$(scripts/test-postgres.sh start)\"}"
database=berth_scale_smoke_$$
psql -q -v ON_ERROR_STOP=1 "$BERTH_TEST_PG_URL" -c "CREATE DATABASE $database"
trap 'psql -q "$BERTH_TEST_PG_URL" -c "DROP DATABASE IF EXISTS $database WITH (FORCE)"' EXIT
"$scale_bench" --quick --berth "$berth" --database "${BERTH_TEST_PG_URL%/*}/$database"
