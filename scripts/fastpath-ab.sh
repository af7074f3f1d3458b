#!/usr/bin/env bash
# A/B of the prepared-statement fast path (issue 13) with one binary:
# REORGDB_FASTPATH=off against on, alternating runs on one data directory.
#   scripts/fastpath-ab.sh [rows] [seconds] [rounds] [workload...]
# e.g. scripts/fastpath-ab.sh 200000 20 3 oltp_point_select oltp_read_only
# Prints one line per run; take the median of each mode. Each run starts
# from a copy of the freshly prepared data directory.
set -euo pipefail
ROWS=${1:-200000}
SECS=${2:-20}
ROUNDS=${3:-3}
shift 3 || true
WORKLOADS=("$@")
[ ${#WORKLOADS[@]} -gt 0 ] || WORKLOADS=(oltp_point_select oltp_read_only)
PORT=${PORT:-4471}
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-fastpath-ab.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
go build -o "$WORK/reorgdb" ./cmd/reorgdb
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root
    --mysql-db=sbtest --tables=1 --table-size="$ROWS")

start() { # start MODE: serve with the fast path on or off, on the prepared data
  rm -rf "$WORK/data"
  [ ! -d "$WORK/data.base" ] || cp -a "$WORK/data.base" "$WORK/data"
  REORGDB_FASTPATH=$1 "$WORK/reorgdb" serve --data-dir "$WORK/data" --port "$PORT" \
    --status-port -1 --log-level warn >>"$WORK/server.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 100); do
    mysql -h127.0.0.1 -P"$PORT" -uroot -e 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "server did not start" >&2; return 1
}

start on
mysql -h127.0.0.1 -P"$PORT" -uroot -e 'CREATE DATABASE sbtest'
sysbench oltp_read_write "${SB[@]}" prepare >/dev/null
kill $PID; wait $PID 2>/dev/null || true
# Every run starts from the prepared rows: write workloads (oltp_delete
# above all, which only deletes) would otherwise give each run a different
# table than the one before it.
mv "$WORK/data" "$WORK/data.base"

for wl in "${WORKLOADS[@]}"; do
  for r in $(seq 1 "$ROUNDS"); do
    for mode in off on; do
      start $mode
      tps=$(sysbench "$wl" "${SB[@]}" --threads=4 --time="$SECS" --report-interval=0 run |
        sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p')
      echo "$wl round=$r fastpath=$mode tps=$tps"
      kill $PID; wait $PID 2>/dev/null || true
    done
  done
done
