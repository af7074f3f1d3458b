#!/usr/bin/env bash
# Server CPU and disk bytes written per sysbench transaction for several
# ReorgDB binaries (or settings), each run alone on a fresh copy of one
# loaded data directory, so that none inherits another's compaction debt:
#   scripts/bench-fresh-copy.sh DATA_DIR ROWS ROUNDS "name|[env A=1] /path/to/reorgdb [serve flags]" ...
# DATA_DIR holds a sysbench table of ROWS rows in database sbtest (e.g. a
# stopped server's directory after `sysbench oltp_read_write prepare`).
# STEPS (default "oltp_update_index:30 oltp_insert:20 oltp_read_only:15")
# is the sequence of workload:seconds each server runs at 4 threads after a
# 5 s warm-up of the first; rounds alternate the servers' order. The bytes,
# write requests and cache flushes come from the block device under /tmp
# (its stat's sectors written, write I/Os and flush I/Os).
set -uo pipefail
DATA=$1 ROWS=$2 ROUNDS=$3; shift 3
STEPS=${STEPS:-"oltp_update_index:30 oltp_insert:20 oltp_read_only:15"}
cd "$(dirname "$0")/.."
. scripts/lib.sh
COPY=$(mktemp -d /tmp/reorgdb-fresh.XXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$COPY"' EXIT
DEV=/sys/class/block/$(basename "$(df --output=source "$COPY" | tail -1)")/stat
SB=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=4620 --mysql-user=root
    --mysql-db=sbtest --tables=1 --table-size="$ROWS" --threads=4)

measure() { # name workload seconds pid
  local d0 d1 c0 c1 out n p95
  d0=$(cat "$DEV"); c0=$(awk '{print $14+$15}' "/proc/$4/stat")
  out=$(sysbench "$2" "${SB[@]}" --time="$3" run)
  d1=$(cat "$DEV"); c1=$(awk '{print $14+$15}' "/proc/$4/stat")
  n=$(echo "$out" | sed -n 's/.*transactions: *\([0-9]*\) .*/\1/p')
  p95=$(echo "$out" | sed -n 's/.*95th percentile: *\([0-9.]*\).*/\1/p')
  awk -v n="$n" -v d0="$d0" -v d1="$d1" -v c=$((c1 - c0)) -v s="$3" -v hz="$(getconf CLK_TCK)" \
    -v name="$1" -v wl="$2" -v p95="$p95" 'BEGIN{split(d0, a, " "); split(d1, b, " ");
      printf "| %s | %s | %.0f | %s | %.0f | %.2f | %.2f / %.2f |\n", name, wl, n/s, p95, c*1e6/hz/n,
        (b[7]-a[7])*512/1024/n, (b[5]-a[5])/n, (b[16]-a[16])/n}'
}

specs=("$@")
echo "| round, server | workload | TPS | p95 ms | server CPU µs per transaction | KB written per transaction | write / flush requests per transaction |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for round in $(seq 1 "$ROUNDS"); do
  order=("${specs[@]}")
  if (( round % 2 == 0 )); then
    order=(); for ((i=${#specs[@]}-1; i>=0; i--)); do order+=("${specs[$i]}"); done
  fi
  for spec in "${order[@]}"; do
    name=${spec%%|*}
    read -r -a words <<<"${spec#*|}"; pre=()
    while [[ ${words[0]} == env || ${words[0]} == *=* ]]; do pre+=("${words[0]}"); words=("${words[@]:1}"); done
    rm -rf "$COPY/d" && cp -r "$DATA" "$COPY/d" && sync
    "${pre[@]}" "${words[0]}" serve --data-dir "$COPY/d" --port 4620 --status-port 10620 --log-level warn \
      "${words[@]:1}" 2>"$COPY/$name.log" &
    pid=$!
    wait_port 4620
    first=${STEPS%%:*}
    sysbench "$first" "${SB[@]}" --time=5 run >/dev/null
    for step in $STEPS; do measure "$round, $name" "${step%%:*}" "${step##*:}" $pid; done
    kill $pid; wait $pid 2>/dev/null; sleep 2
  done
done
