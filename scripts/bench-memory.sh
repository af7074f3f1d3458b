#!/usr/bin/env bash
# Idle ADD INDEX c_idx(c) on loaded sbtest1 tables, with the server's
# peak RSS before and during the build.
#   scripts/bench-memory.sh DATA_DIR [DATA_DIR ...]
# Load a directory first, e.g. with a server on it and
#   reorgdb bench --dsn 'root:@tcp(127.0.0.1:4710)/' --rows 10000000 --plans idle
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(mktemp -d /tmp/reorgdb-mem.XXXX)/reorgdb
go build -o "$BIN" ./cmd/reorgdb
hwm() { awk '/VmHWM/ {print int($2/1024)}' "/proc/$1/status"; }
echo "| data dir | build | VmHWM before | peak RSS during the build |"
echo "| --- | --- | --- | --- |"
for dir in "$@"; do
  "$BIN" serve --data-dir "$dir" --port 4710 --status-port 10710 --log-level warn 2>/dev/null &
  pid=$!
  for _ in $(seq 1 100); do mysql -h127.0.0.1 -P4710 -uroot -e 'select 1' >/dev/null 2>&1 && break; sleep 0.2; done
  mysql -h127.0.0.1 -P4710 -uroot sbtest -e 'SELECT COUNT(*) FROM sbtest1' >/dev/null
  before=$(hwm $pid)
  t0=$(date +%s.%N)
  mysql -h127.0.0.1 -P4710 -uroot sbtest -e 'ALTER TABLE sbtest1 ADD INDEX c_idx (c)'
  t1=$(date +%s.%N)
  printf '| %s | %.2f s | %s MiB | %s MiB |\n' "$dir" "$(echo "$t1 - $t0" | bc)" "$before" "$(hwm $pid)"
  mysql -h127.0.0.1 -P4710 -uroot sbtest -e 'ALTER TABLE sbtest1 DROP INDEX c_idx'
  kill $pid; wait $pid 2>/dev/null || true
done
