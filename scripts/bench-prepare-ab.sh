#!/usr/bin/env bash
# `sysbench oltp_read_write prepare` (one table: multi-row INSERTs from one
# connection, then CREATE INDEX k_1) with several binaries alternated, each
# on a fresh data directory: wall time, the server's CPU and peak RSS.
#   scripts/bench-prepare-ab.sh ROWS ROUNDS "name|binary" ...
# For MariaDB as one of the sides, use "mariadb|mariadb".
set -euo pipefail
rows=$1 rounds=$2
shift 2
cd "$(dirname "$0")/.."
source scripts/lib.sh
WORK=$(mktemp -d /tmp/reorgdb-prepare.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
SB=(--mysql-host=127.0.0.1 --mysql-port=4713 --mysql-user=root --mysql-db=sbtest --tables=1 --table-size="$rows")
proc() { awk '{print $14+$15}' "/proc/$1/stat"; }
for r in $(seq 1 "$rounds"); do
  for cfg in "$@"; do
    IFS='|' read -r name bin <<<"$cfg"
    rm -rf "$WORK/data"
    if [ "$bin" = mariadb ]; then
      start_mariadb "$WORK/data" 4713
      pid=$MPID
    else
      $bin serve --data-dir "$WORK/data" --port 4713 --status-port -1 --log-level warn 2>/dev/null &
      pid=$!
      wait_port 4713
    fi
    mysql -h127.0.0.1 -P4713 -uroot -e 'CREATE DATABASE sbtest'
    c0=$(proc $pid); t0=$(date +%s.%N)
    sysbench oltp_read_write "${SB[@]}" prepare >/dev/null
    t1=$(date +%s.%N); c1=$(proc $pid)
    hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")
    printf '%s round %d: %.2f s, server %.2f CPU-s, peak RSS %d MiB\n' "$name" "$r" \
      "$(echo "$t1 - $t0" | bc)" "$(echo "($c1 - $c0) / 100" | bc -l)" "$hwm"
    kill $pid; wait $pid 2>/dev/null || true
  done
done
