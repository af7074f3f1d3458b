#!/usr/bin/env bash
# Idle ADD INDEX c_idx(c) with several binaries alternated on one loaded
# data directory: wall time, the server's CPU and the machine's CPU
# (kernel writeback included) during the ALTER, and peak RSS.
#   scripts/bench-idle-ab.sh DATA_DIR ROUNDS "name|binary" ...
# A binary may come with an environment: "name|env GOGC=100 /path/to/reorgdb".
# AFTER=8 also gives the server's CPU over the 8 s after the ALTER: the
# compactions the new index sets off. A spec's name may carry SQL to run
# before its ALTER after a second '|':
#   "big|/path/to/reorgdb|SET GLOBAL innodb_ddl_buffer_size = 1073741824"
# Load DATA_DIR first, e.g. with a server on it and
#   reorgdb bench --dsn 'root:@tcp(127.0.0.1:4710)/' --rows 2000000 --plans idle
set -euo pipefail
dir=$1 rounds=$2
shift 2
M="mysql -h127.0.0.1 -P4712 -uroot sbtest"
machine() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
proc() { awk '{print $14+$15}' "/proc/$1/stat"; }
for r in $(seq 1 "$rounds"); do
  for cfg in "$@"; do
    IFS='|' read -r name bin pre <<<"$cfg"
    $bin serve --data-dir "$dir" --port 4712 --status-port 10712 --log-level warn 2>/dev/null &
    pid=$!
    for _ in $(seq 1 100); do mysql -h127.0.0.1 -P4712 -uroot -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.2; done
    $M -e 'SELECT COUNT(*) FROM sbtest1' >/dev/null
    [ -z "${pre:-}" ] || $M -e "$pre"
    c0=$(proc $pid); m0=$(machine); t0=$(date +%s.%N)
    $M -e 'ALTER TABLE sbtest1 ADD INDEX c_idx (c)'
    t1=$(date +%s.%N); c1=$(proc $pid); m1=$(machine)
    after=""
    if [ "${AFTER:-0}" -gt 0 ]; then
      sleep "$AFTER"
      after=$(printf ', then %.2f CPU-s in %d s' "$(echo "($(proc $pid) - $c1) / 100" | bc -l)" "$AFTER")
    fi
    hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")
    printf '%s round %d: %.2f s, server %.2f CPU-s, machine %.2f CPU-s%s, peak RSS %d MiB\n' "$name" "$r" \
      "$(echo "$t1 - $t0" | bc)" "$(echo "($c1 - $c0) / 100" | bc -l)" "$(echo "($m1 - $m0) / 100" | bc -l)" "$after" "$hwm"
    $M -e 'ALTER TABLE sbtest1 DROP INDEX c_idx'
    kill $pid; wait $pid 2>/dev/null || true
  done
done
