#!/usr/bin/env bash
# Server CPU time per sysbench transaction, ReorgDB and MariaDB side by side
# (steadier than TPS on a shared machine):
#   scripts/bench-cpu-per-txn.sh [rows] [seconds] [workload...]
# Each server gets a fresh data directory and a freshly prepared table; each
# workload runs 3 s to warm up, then [seconds] at 4 threads, and the
# server's user+system CPU (/proc/<pid>/stat) over the run is divided by the
# transactions. MariaDB as in bench-sysbench.sh (2G buffer pool, 512M log).
# It also gives the disk's write and cache-flush requests per transaction
# over the run (/sys/class/block/DEV/stat of the data directory's device):
# a durable commit is a WAL write and a flush, shared by the commits of a
# group. REORGDB_FLAGS adds flags to `reorgdb serve` (e.g. "--memtable-size
# 8"); MARIADB=0 skips the MariaDB side.
set -euo pipefail
ROWS=${1:-200000}
SECS=${2:-10}
shift 2 || true
WLS=("$@")
[ ${#WLS[@]} -gt 0 ] || WLS=(oltp_point_select oltp_read_only oltp_delete oltp_insert)
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-cpu.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
go build -o "$WORK/reorgdb" ./cmd/reorgdb

. scripts/lib.sh
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
# disk_ios: "writes flushes" completed so far on the device under $WORK
# (fields 5 and 16 of the block device's stat).
DEV=/sys/class/block/$(basename "$(df --output=source "$WORK" | tail -1)")/stat
disk_ios() { if [ -r "$DEV" ]; then awk '{print $5, $16}' "$DEV"; else echo 0 0; fi; }

run() { # name port pid
  local sb=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$2" --mysql-user=root
            --mysql-db=sbtest --tables=1 --table-size="$ROWS" --threads=4)
  mysql -h127.0.0.1 -P"$2" -uroot -e 'DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest'
  sysbench oltp_read_write "${sb[@]}" prepare >/dev/null
  local hz; hz=$(getconf CLK_TCK)
  for wl in "${WLS[@]}"; do
    sysbench "$wl" "${sb[@]}" --time=3 run >/dev/null
    local c0 c1 out n tps d0 d1
    c0=$(cpu_ticks "$3"); d0=$(disk_ios)
    out=$(sysbench "$wl" "${sb[@]}" --time="$SECS" --report-interval=0 run)
    c1=$(cpu_ticks "$3"); d1=$(disk_ios)
    n=$(echo "$out" | sed -n 's/.*transactions: *\([0-9]*\) .*/\1/p')
    tps=$(echo "$out" | sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p')
    printf '| %s | %s | %s | %d | %s |\n' "$1" "$wl" "$tps" $(( (c1 - c0) * 1000000 / hz / n )) \
      "$(echo "$d0 $d1" | awk -v n="$n" '{printf "%.2f, %.2f", ($3-$1)/n, ($4-$2)/n}')"
  done
}

echo "| server | workload | TPS | server CPU µs per transaction | disk writes, flushes per transaction |"
echo "| --- | --- | --- | --- | --- |"
# shellcheck disable=SC2086
"$WORK/reorgdb" serve ${REORGDB_FLAGS:-} --data-dir "$WORK/r" --port 4410 --status-port 10490 --log-level warn 2>"$WORK/r.log" &
RPID=$!
wait_port 4410
run ReorgDB 4410 $RPID
kill $RPID; wait $RPID 2>/dev/null || true

[ "${MARIADB:-1}" = 0 ] && exit 0
start_mariadb "$WORK/mdb" 3417
run "$(mariadb_version)" 3417 $MPID
kill $MPID; wait $MPID 2>/dev/null || true
