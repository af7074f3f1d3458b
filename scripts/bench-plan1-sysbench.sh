#!/usr/bin/env bash
# Plan 1 of issue 4 with the real sysbench: ADD INDEX c_idx(c) idle, then
# while sysbench oltp_read_write runs at 4 threads, on ReorgDB (durable
# server, default settings) and MariaDB 10.11 (INPLACE, LOCK=NONE), on
# tables loaded by `sysbench prepare`. Each round: an idle build, then a
# build started 20 s into the workload, which goes on for 20 s after the
# build; the baseline is the workload's TPS over seconds 6-20 and over the
# 15 s from 3 s after the build (both sides, so that a drift of the TPS
# during the run, such as a cache still warming up, does not count for or
# against the build), "during" its TPS over the seconds the ALTER ran.
# After the build the workload also maintains the new index, so the share
# of the baseline before the build alone is printed too, with the median of
# the per-second 95th-percentile latencies before and during the build and
# the server's peak RSS (VmHWM) after the round.
# REORGDB_BIN runs that binary instead of building one. REORGDB_SQL, if
# set, runs on ReorgDB before each ALTER (for example
# "SET GLOBAL reorgdb_ddl_cpu_share = 25"). REORGDB_FLAGS adds flags to
# `reorgdb serve` (for example "--cache-size 2048").
#   scripts/bench-plan1-sysbench.sh [rows] [rounds] [targets]
# targets: reorgdb,mariadb (default both). Needs sysbench and, for MariaDB,
# mariadb-server.
set -euo pipefail
ROWS=${1:-2000000}
ROUNDS=${2:-3}
TARGETS=${3:-reorgdb,mariadb}
cd "$(dirname "$0")/.."
WORK=$(mktemp -d /tmp/reorgdb-plan1.XXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ -n "${REORGDB_BIN:-}" ]; then cp "$REORGDB_BIN" "$WORK/reorgdb"; else go build -o "$WORK/reorgdb" ./cmd/reorgdb; fi

SB="--mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=$ROWS"

. scripts/lib.sh

# run TARGET PORT SUFFIX PID: the rounds against a loaded server.
run() {
  local name=$1 port=$2 suffix=$3 pid=$4
  local M="mysql -h127.0.0.1 -P$port -uroot sbtest"
  local pre=""
  if [[ $name == reorgdb && -n ${REORGDB_SQL:-} ]]; then pre="$REORGDB_SQL; "; fi
  # Warm up the caches (and let the load's compactions settle) first.
  sysbench oltp_read_write $SB --mysql-port="$port" --threads=4 --time=30 \
    --mysql-ignore-errors=1213,1205,1020,9007,8028 run >/dev/null 2>&1
  for r in $(seq 1 "$ROUNDS"); do
    local t0 t1 idle log=$WORK/$name-$r.log
    t0=$(date +%s.%N)
    $M -e "${pre}ALTER TABLE sbtest1 ADD INDEX c_idx (c)$suffix"
    t1=$(date +%s.%N)
    idle=$(echo "$t1 - $t0" | bc)
    $M -e 'ALTER TABLE sbtest1 DROP INDEX c_idx'
    sleep 5
    sysbench oltp_read_write $SB --mysql-port="$port" --threads=4 --time=600 --report-interval=1 \
      --mysql-ignore-errors=1213,1205,1020,9007,8028 run >"$log" 2>&1 &
    local sb=$!
    sleep 20
    t0=$(date +%s.%N)
    $M -e "${pre}ALTER TABLE sbtest1 ADD INDEX c_idx (c)$suffix"
    t1=$(date +%s.%N)
    sleep 20
    kill $sb; wait $sb 2>/dev/null || true
    $M -e 'ALTER TABLE sbtest1 DROP INDEX c_idx'
    local hwm
    hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")
    python3 - "$log" "$(echo "$t1 - $t0" | bc)" "$idle" "$name" "$r" "$hwm" <<'PY'
import re, statistics, sys
log, dur, idle, name, r, hwm = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
tps, p95 = {}, {}
for line in open(log):
    m = re.match(r'\[ (\d+)s \].*tps: ([\d.]+).*lat \(ms,95%\): ([\d.]+)', line)
    if m:
        tps[int(m.group(1))] = float(m.group(2))
        p95[int(m.group(1))] = float(m.group(3))
end = int(20 + dur)
base = [tps[s] for s in list(range(6, 21)) + list(range(end + 3, end + 19)) if s in tps]
# Seconds fully inside the ALTER, which started about 20 s in.
during = [tps[s] for s in range(22, end + 1) if s in tps]
b = sum(base) / len(base)
d = sum(during) / len(during) if during else float('nan')
pre = [tps[s] for s in range(6, 21) if s in tps]
p = sum(pre) / len(pre)
# Medians of the per-second 95th percentiles, before and during the build.
lp = statistics.median(p95[s] for s in range(6, 21) if s in p95)
ld = statistics.median(p95[s] for s in range(22, end + 1) if s in p95) if during else float('nan')
print(f"| {name} | {r} | {idle:.2f} | {dur:.2f} | {dur/idle:.1f}x | {b:.0f} | {d:.0f} | {100*d/b:.0f}% | {100*d/p:.0f}% | {lp:.1f} | {ld:.1f} | {hwm} MiB |")
PY
    sleep 5
  done
}

# measure TARGET PORT PID SUFFIX: load the started server, run the rounds,
# stop it.
measure() {
  local name=$1 port=$2 pid=$3 suffix=$4
  wait_port "$port"
  mysql -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE sbtest'
  sysbench oltp_read_write $SB --mysql-port="$port" --threads=4 prepare >/dev/null
  run "$name" "$port" "$suffix" "$pid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "| target | round | idle build (s) | build under load (s) | x idle | baseline TPS | TPS during the build | kept | kept (baseline before only) | p95 ms before | p95 ms during | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
if [[ $TARGETS == *reorgdb* ]]; then
  # shellcheck disable=SC2086 # REORGDB_FLAGS is a list of flags
  "$WORK/reorgdb" serve ${REORGDB_FLAGS:-} --data-dir "$WORK/r" --port 4503 --status-port 10583 2>"$WORK/r.log" &
  measure reorgdb 4503 $! ""
fi
if [[ $TARGETS == *mariadb* ]]; then
  start_mariadb "$WORK/m" 3509
  measure mariadb 3509 $MPID ", ALGORITHM=INPLACE, LOCK=NONE"
fi
