#!/usr/bin/env bash
# A/B sysbench oltp_read_write between ReorgDB binaries, side by side:
# every server is started and loaded first, then each round runs the
# workload on each server in turn.
#   scripts/bench-sysbench-ab.sh ROWS SECONDS ROUNDS "name|/path/to/reorgdb [serve flags]" ...
# e.g. scripts/bench-sysbench-ab.sh 2000000 60 2 "old|/tmp/reorgdb-old" "new|/tmp/reorgdb-new --cache-size 192"
# WL=oltp_point_select picks another workload, THREADS=16 another thread
# count; STEPS="oltp_update_index:4:90 oltp_read_write:64:30" runs a
# sequence of workload:threads:seconds in each round instead (each step on
# every server in turn), e.g. to build up row history before a read
# workload. Each line also gives the server's CPU time per transaction
# (steadier than TPS on a shared machine). Data goes to /tmp/abn.
# SEQ=GAP runs all the steps of a round on one server, back to back, then
# waits GAP seconds before the next server's turn: no server's background
# work (flushes, compactions) after one step lands in another server's
# next step, and what a step leaves behind is paid for by the step after
# it on the same server.
set -uo pipefail
ROWS=$1 SECS=$2 ROUNDS=$3; shift 3
pkill -f "serve --data-dir /tmp/abn" ; sleep 1
rm -rf /tmp/abn; mkdir -p /tmp/abn
trap 'pkill -f "serve --data-dir /tmp/abn"' EXIT
i=0; ports=(); names=()
for spec in "$@"; do
  name=${spec%%|*}; cmd=${spec#*|}; port=$((4600+i)); i=$((i+1))
  # "env A=1 /path/reorgdb --flag": the environment, the binary, then its
  # serve flags, which go after "serve".
  read -r -a words <<<"$cmd"; pre=()
  while [[ ${words[0]} == env || ${words[0]} == *=* ]]; do pre+=("${words[0]}"); words=("${words[@]:1}"); done
  "${pre[@]}" "${words[0]}" serve --data-dir /tmp/abn/$name --port $port --status-port $((10600+i)) --log-level warn \
    "${words[@]:1}" 2>/tmp/abn/$name.log &
  echo $! > /tmp/abn/$name.pid
  ports+=($port); names+=($name)
done
sleep 2
for j in "${!ports[@]}"; do p=${ports[$j]}
  mysql -h127.0.0.1 -P$p -uroot -e 'CREATE DATABASE sbtest'
  t0=$(date +%s.%N)
  sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=$ROWS prepare >/dev/null
  echo "prepare ${names[$j]} $(echo "$(date +%s.%N) - $t0" | bc)"
done
steps=${STEPS:-${WL:-oltp_read_write}:${THREADS:-4}:$SECS}
# run_step ROUND STEP J: one step on server J, one line of results.
run_step() {
  local r=$1 step=$2 j=$3 wl threads secs p pid c0 c1 out n
  IFS=: read -r wl threads secs <<<"$step"
  p=${ports[$j]}; pid=$(cat /tmp/abn/${names[$j]}.pid); c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  out=$(sysbench $wl --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$p --mysql-user=root --mysql-db=sbtest --tables=1 --table-size=$ROWS --threads=$threads --time=$secs --report-interval=0 run)
  c1=$(awk '{print $14+$15}' /proc/$pid/stat); n=$(echo "$out" | sed -n 's/.*transactions: *\([0-9]*\) .*/\1/p')
  echo "round $r $wl/$threads ${names[$j]} tps $(echo "$out" | sed -n 's/.*transactions: *[0-9]* *(\([0-9.]*\) per sec.).*/\1/p') cpu_us_per_txn $(( (c1 - c0) * 1000000 / $(getconf CLK_TCK) / n )) p95 $(echo "$out" | grep 95th | tr -s ' ' | cut -d: -f2) rss $(awk '/VmHWM/ {printf "%d", $2/1024}' /proc/$pid/status)"
}
for r in $(seq 1 $ROUNDS); do
  if [[ -n ${SEQ:-} ]]; then
    for j in "${!ports[@]}"; do
      for step in $steps; do run_step $r $step $j; done
      sleep "$SEQ"
    done
  else
    for step in $steps; do
      for j in "${!ports[@]}"; do run_step $r $step $j; done
    done
  fi
done
for j in "${!names[@]}"; do echo "disk ${names[$j]} $(du -sm /tmp/abn/${names[$j]} | cut -f1) MiB"; done
