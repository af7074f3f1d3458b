#!/usr/bin/env bash
# ADD INDEX benchmark (issue 3): idle builds over a worker x batch matrix,
# then the seeds' plan 1 (index on a column the workload writes) under
# sysbench oltp_read_write, for ReorgDB and MariaDB side by side.
#   scripts/bench-addindex.sh [rows] [threads]
set -euo pipefail
ROWS=${1:-2000000}
THREADS=${2:-4}
WORKERS=${WORKERS:-"1 4 16"}
BATCHES=${BATCHES:-"32 256 1024 4096"}
MATRIX_MODES=${MATRIX_MODES-"txn ingest"}   # backfill modes of the idle matrix
LOAD_MODES=${LOAD_MODES-"txn ingest"}       # backfill modes run under load
LOAD_WORKERS=${LOAD_WORKERS:-4}              # worker counts run under load
LOAD_SHARES=${LOAD_SHARES:-25}               # reorgdb_ddl_cpu_share values run under load
MARIADB=${MARIADB:-1}                        # 0 skips the MariaDB side
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-addindex.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; cp "$WORK/r.log" /tmp/reorgdb-addindex-server.log 2>/dev/null; rm -rf "$WORK"' EXIT
go build -o "$WORK/reorgdb" ./cmd/reorgdb

. scripts/lib.sh
now() { date +%s.%N; }
sql() { mysql -h127.0.0.1 -P"$1" -uroot sbtest -N -e "$2"; }

# timed PORT STATEMENT: prints seconds
timed() {
  local t0 t1
  t0=$(now); sql "$1" "$2"; t1=$(now)
  echo "$t1 - $t0" | bc
}

# under_load NAME PORT DDL DROP: plan 1 with a baseline window
under_load() {
  local name=$1 port=$2 ddl=$3 drop=$4
  local log="$WORK/sb-$port.log"
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size="$ROWS" --threads="$THREADS" --time=3600 --report-interval=1 run >"$log" 2>&1 &
  local sb=$!
  sleep 25
  local d0 d1 dur
  d0=$(awk '/^\[/ {n++} END {print n}' "$log")
  dur=$(timed "$port" "$ddl")
  d1=$(awk '/^\[/ {n++} END {print n}' "$log")
  sleep 2
  kill $sb; wait $sb 2>/dev/null || true
  # Per-second samples: baseline = seconds 5..d0, DDL window = d0+1..d1.
  awk -v b0=5 -v b1="$d0" -v w1="$d1" '
    /^\[/ { n++; for (i = 1; i <= NF; i++) { if ($i == "tps:") t = $(i+1); if ($i == "qps:") q = $(i+1) }
            if (n > b0 && n <= b1) { bt += t; bq += q; bn++ }
            if (n > b1 && n <= w1) { dt += t; dq += q; dn++ } }
    END { printf "%.0f %.0f %.0f %.0f\n", bt/bn, bq/bn, (dn ? dt/dn : 0), (dn ? dq/dn : 0) }' "$log" > "$WORK/res"
  read -r btps bqps dtps dqps < "$WORK/res"
  printf '| %s | %s | %.1f | %s | %s | %s | %s | %.0f%% |\n' "$name" "$ddl" "$dur" "$btps" "$dtps" "$bqps" "$dqps" \
    "$(echo "100 * $dtps / $btps" | bc -l)"
  sql "$port" "$drop"
}

"$WORK/reorgdb" serve --data-dir "$WORK/r" --port 4500 --status-port 10580 --log-level info 2>"$WORK/r.log" &
RPID=$!
wait_port 4500
mysql -h127.0.0.1 -P4500 -uroot -e 'CREATE DATABASE sbtest'
sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=4500 --mysql-user=root \
  --mysql-db=sbtest --tables=1 --table-size="$ROWS" prepare >/dev/null

fast() { if [ "$1" = ingest ]; then echo ON; else echo OFF; fi; }
for mode in $MATRIX_MODES; do
  sql 4500 "SET GLOBAL tidb_ddl_enable_fast_reorg = $(fast $mode)"
  echo "### ReorgDB, idle ADD INDEX c_idx(c) on $ROWS rows, $mode backfill, seconds"
  echo
  printf '| workers \\ batch |'; for b in $BATCHES; do printf ' %s |' "$b"; done; echo
  printf '| --- |'; for b in $BATCHES; do printf ' --- |'; done; echo
  for w in $WORKERS; do
    printf '| %s |' "$w"
    for b in $BATCHES; do
      sql 4500 "SET GLOBAL tidb_ddl_reorg_worker_cnt = $w; SET GLOBAL tidb_ddl_reorg_batch_size = $b"
      printf ' %.1f |' "$(timed 4500 'ALTER TABLE sbtest1 ADD INDEX c_idx (c)')"
      sql 4500 'ALTER TABLE sbtest1 DROP INDEX c_idx'
    done
    echo
  done
  echo
done
sql 4500 "SET GLOBAL tidb_ddl_reorg_worker_cnt = 4; SET GLOBAL tidb_ddl_reorg_batch_size = 256"
echo "### Plan 1 under sysbench oltp_read_write, $THREADS threads (defaults)"
echo
echo "| server | DDL | duration s | baseline TPS | TPS during DDL | baseline QPS | QPS during DDL | TPS kept |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for mode in $LOAD_MODES; do
  for w in $LOAD_WORKERS; do
    for share in $LOAD_SHARES; do
      sql 4500 "SET GLOBAL tidb_ddl_enable_fast_reorg = $(fast $mode); SET GLOBAL tidb_ddl_reorg_worker_cnt = $w; SET GLOBAL reorgdb_ddl_cpu_share = $share"
      under_load "ReorgDB $mode, $w workers, cpu share $share%" 4500 "ALTER TABLE sbtest1 ADD INDEX c_idx (c)" "ALTER TABLE sbtest1 DROP INDEX c_idx"
    done
  done
done
kill $RPID; wait $RPID 2>/dev/null || true

if [ "$MARIADB" = 1 ] && command -v mariadbd >/dev/null; then
  start_mariadb "$WORK/m" 3507
  mysql -h127.0.0.1 -P3507 -uroot -e 'CREATE DATABASE sbtest'
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=3507 --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size="$ROWS" prepare >/dev/null
  idle=$(timed 3507 'ALTER TABLE sbtest1 ADD INDEX c_idx (c), ALGORITHM=INPLACE, LOCK=NONE')
  sql 3507 'ALTER TABLE sbtest1 DROP INDEX c_idx'
  under_load "MariaDB (idle build: $(printf %.1f "$idle") s)" 3507 \
    "ALTER TABLE sbtest1 ADD INDEX c_idx (c), ALGORITHM=INPLACE, LOCK=NONE" "ALTER TABLE sbtest1 DROP INDEX c_idx"
  kill $MPID; wait $MPID 2>/dev/null || true
fi
