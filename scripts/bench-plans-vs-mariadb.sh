#!/usr/bin/env bash
# The seeds' plans on ReorgDB (durable server, default settings) and then
# on MariaDB (Debian's mariadb-server, INPLACE/LOCK=NONE), back to back on
# fresh data directories, with `reorgdb bench`.
#   scripts/bench-plans-vs-mariadb.sh [rows] [plans]
set -euo pipefail
ROWS=${1:-2000000}
PLANS=${2:-idle,plan1,plan2,plan3}
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-plans.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
go build -o "$WORK/reorgdb" ./cmd/reorgdb
. scripts/lib.sh

"$WORK/reorgdb" serve --data-dir "$WORK/r" --port 4501 --status-port 10581 2>"$WORK/r.log" &
RPID=$!
sleep 3
"$WORK/reorgdb" bench --dsn 'root:@tcp(127.0.0.1:4501)/' --rows "$ROWS" --plans "$PLANS" \
  --warmup 5s --baseline 15s --out "${OUT:-bench-results}/reorgdb" --quiet
kill $RPID; wait $RPID 2>/dev/null || true

start_mariadb "$WORK/m" 3508
"$WORK/reorgdb" bench --dsn 'root:@tcp(127.0.0.1:3508)/' --ddl-suffix ', ALGORITHM=INPLACE, LOCK=NONE' \
  --rows "$ROWS" --plans "$PLANS" --warmup 5s --baseline 15s --out "${OUT:-bench-results}/mariadb" --quiet
kill $MPID; wait $MPID 2>/dev/null || true
