#!/usr/bin/env bash
# Side-by-side sysbench benchmark of ReorgDB and MariaDB on this machine.
#   scripts/bench-sysbench.sh [rows] [seconds] [threads] [extra-threads...]
# Runs the seven OLTP workloads at [threads], then oltp_read_write at each
# of [extra-threads] (e.g. 16 64) for its error count, on each server.
# Prints one Markdown table; needs sysbench and mariadb-server (apt-get).
# REORGDB_FLAGS adds flags to `reorgdb serve` and MARIADB_FLAGS options to
# mariadbd, e.g. REORGDB_FLAGS=--no-sync
# MARIADB_FLAGS=--innodb-flush-log-at-trx-commit=2 for relaxed durability.
set -euo pipefail
ROWS=${1:-2000000}
SECS=${2:-60}
THREADS=${3:-4}
shift 3 || true
EXTRA=("$@")
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-bench.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; cp "$WORK"/*.log /tmp/ 2>/dev/null; rm -rf "$WORK"' EXIT

go build -o "$WORK/reorgdb" ./cmd/reorgdb

peak_rss_mib() { awk '/VmHWM/ {printf "%d", $2/1024}' "/proc/$1/status" 2>/dev/null || echo "(server gone)"; }

. scripts/lib.sh

# run_suite NAME PORT PID: prepare, then the three workloads.
run_suite() {
  local name=$1 port=$2 pid=$3
  local sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root
            --mysql-db=sbtest --tables=1 --table-size="$ROWS")
  mysql -h127.0.0.1 -P"$port" -uroot -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  local t0 t1
  t0=$(date +%s.%N)
  sysbench oltp_read_write "${sb[@]}" prepare >/dev/null
  t1=$(date +%s.%N)
  printf '| %s | prepare %s rows | %.1f s | | | | |\n' "$name" "$ROWS" "$(echo "$t1 - $t0" | bc)"
  local runs=()
  for wl in oltp_point_select oltp_read_only oltp_read_write oltp_update_index oltp_update_non_index oltp_delete oltp_insert; do
    runs+=("$wl:$THREADS")
  done
  for th in "${EXTRA[@]}"; do runs+=("oltp_read_write:$th"); done
  for run in "${runs[@]}"; do
    local wl=${run%%:*} th=${run##*:}
    local out
    out=$(sysbench "$wl" "${sb[@]}" --threads="$th" --time="$SECS" --report-interval=0 run)
    local tps qps p95 errs
    tps=$(echo "$out" | sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p')
    qps=$(echo "$out" | sed -n 's/.*queries: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p')
    p95=$(echo "$out" | sed -n 's/.*95th percentile: *\([0-9.]*\).*/\1/p')
    errs=$(echo "$out" | sed -n 's/.*ignored errors: *\([0-9]*\).*/\1/p')
    printf '| %s | %s, %s threads | | %s | %s | %s | %s |\n' "$name" "$wl" "$th" "$tps" "$qps" "$p95" "$errs"
  done
  printf '| %s | peak RSS | %s MiB | | | | |\n' "$name" "$(peak_rss_mib "$pid")"
}

echo "| server | step | time | TPS | QPS | p95 ms | ignored errors |"
echo "| --- | --- | --- | --- | --- | --- | --- |"

# shellcheck disable=SC2086 # REORGDB_FLAGS is a list of flags
"$WORK/reorgdb" serve ${REORGDB_FLAGS:-} --data-dir "$WORK/reorgdb-data" --port 4400 --status-port 10480 --log-level warn 2>"$WORK/reorgdb.log" &
RPID=$!
wait_port 4400
run_suite ReorgDB 4400 $RPID
kill $RPID; wait $RPID 2>/dev/null || true

if command -v mariadbd >/dev/null; then
  start_mariadb "$WORK/mdb" 3407
  run_suite "$(mariadb_version)" 3407 $MPID
  kill $MPID; wait $MPID 2>/dev/null || true
fi
