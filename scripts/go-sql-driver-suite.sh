#!/usr/bin/env bash
# Runs go-sql-driver/mysql's own test suite (the version in go.mod) against
# a ReorgDB built from this tree, on a temporary data directory and free
# ports, and prints the pass/fail counts and the failing tests:
#   scripts/go-sql-driver-suite.sh [expected-failures-file]
# With an expected-failures file (one top-level test name a line, # starts a
# comment) it exits 1 when a test not in the file fails, and names the
# listed tests that pass now so the list can shrink. Without one it exits 1
# on any failure. The server's log is kept when something fails.
set -euo pipefail
export LC_ALL=C # sort and comm agree on the order
EXPECTED=${1:-}
cd "$(dirname "$0")/.."
ROOT=$PWD
[ -z "$EXPECTED" ] || EXPECTED=$(realpath "$EXPECTED")
VERSION=$(go list -m -f '{{.Version}}' github.com/go-sql-driver/mysql)
WORK=$(mktemp -d /tmp/reorgdb-driver.XXXX)
SPID=""
cleanup() {
  if [ -n "$SPID" ]; then kill "$SPID" 2>/dev/null || true; wait "$SPID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

SRC=$(go mod download -json "github.com/go-sql-driver/mysql@$VERSION" |
  sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$SRC" ] || { echo "go mod download gave no source dir for go-sql-driver/mysql@$VERSION" >&2; exit 2; }
cp -r "$SRC" "$WORK/driver"
chmod -R u+w "$WORK/driver"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
PORT=$(free_port)
STATUS_PORT=$(free_port)
go build -o "$WORK/reorgdb" ./cmd/reorgdb
"$WORK/reorgdb" serve --data-dir "$WORK/data" --port "$PORT" --status-port "$STATUS_PORT" \
  --log-level warn >"$WORK/server.log" 2>&1 &
SPID=$!
# The database and local_infile as the driver's own CI sets them up.
CLIENT=$(command -v mariadb || command -v mysql)
for _ in $(seq 1 150); do
  "$CLIENT" -h127.0.0.1 -P"$PORT" -uroot \
    -e 'CREATE DATABASE IF NOT EXISTS gotest; SET GLOBAL local_infile = 1' >/dev/null 2>&1 && break
  kill -0 "$SPID" 2>/dev/null || { cat "$WORK/server.log" >&2; echo "server exited" >&2; exit 2; }
  sleep 0.2
done
"$CLIENT" -h127.0.0.1 -P"$PORT" -uroot -e 'USE gotest' || { echo "server on port $PORT not reachable" >&2; exit 2; }

# TestConnectorReturnsTimeout dials 1.1.1.1:1234 and expects the dial to time
# out: it tests the network, not the server, and where a proxy accepts every
# connection it hangs and then panics, which ends the whole test binary.
cd "$WORK/driver"
MYSQL_TEST_USER=root MYSQL_TEST_PASS= MYSQL_TEST_PROT=tcp MYSQL_TEST_ADDR="127.0.0.1:$PORT" \
  MYSQL_TEST_DBNAME=gotest MYSQL_TEST_CONCURRENT=${MYSQL_TEST_CONCURRENT:-1} \
  go test -count=1 -p 1 -v -timeout 15m -skip '^TestConnectorReturnsTimeout$' . >"$WORK/test.log" 2>&1 || true

# Top-level results only: subtests are indented.
grep -E '^--- (PASS|FAIL|SKIP): ' "$WORK/test.log" | awk '{print $2, $3}' | tr -d ':' >"$WORK/results"
PASSED=$(grep -c '^PASS ' "$WORK/results" || true)
FAILED=$(grep -c '^FAIL ' "$WORK/results" || true)
SKIPPED=$(grep -c '^SKIP ' "$WORK/results" || true)
awk '$1=="FAIL"{print $2}' "$WORK/results" | sort >"$WORK/failing"
if ! kill -0 "$SPID" 2>/dev/null; then
  echo "the server died during the suite" >&2
  tail -50 "$WORK/server.log" >&2
  FAILED=$((FAILED + 1))
  echo "(server died)" >>"$WORK/failing"
fi
if grep -q '^panic: ' "$WORK/test.log"; then
  # A panic ends the test binary: the tests after it did not run.
  grep -A3 '^panic: ' "$WORK/test.log" >&2
  FAILED=$((FAILED + 1))
  echo "(go test panicked)" >>"$WORK/failing"
elif ! grep -qE '^(ok|FAIL|PASS)' "$WORK/test.log"; then
  echo "go test did not finish:" >&2
  tail -50 "$WORK/test.log" >&2
  FAILED=$((FAILED + 1))
  echo "(go test did not finish)" >>"$WORK/failing"
fi

sort -o "$WORK/failing" "$WORK/failing"
echo "go-sql-driver/mysql $VERSION suite against ReorgDB:"
[ ! -s "$WORK/failing" ] || sed 's/^/  failing: /' "$WORK/failing"
STATUS=0
if [ -n "$EXPECTED" ]; then
  sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$EXPECTED" | sort >"$WORK/expected"
  comm -23 "$WORK/failing" "$WORK/expected" | while read -r t; do
    echo "  UNEXPECTED failure: $t"
    awk -v t="$t" '$0 ~ "^=== (RUN|CONT|NAME) +"t"([/ ]|$)"{p=1; next} /^=== /{p=0} p' "$WORK/test.log" | head -40
  done
  comm -12 <(awk '$1=="PASS"{print $2}' "$WORK/results" | sort) "$WORK/expected" |
    sed 's/^/  expected to fail but passes now (remove it from the list): /'
  [ -z "$(comm -23 "$WORK/failing" "$WORK/expected")" ] || STATUS=1
else
  [ "$FAILED" = 0 ] || STATUS=1
fi
if [ "$STATUS" != 0 ]; then
  mkdir -p "$ROOT/driver-suite-logs"
  cp "$WORK/test.log" "$WORK/server.log" "$ROOT/driver-suite-logs/"
  echo "logs: driver-suite-logs/test.log, driver-suite-logs/server.log"
fi
echo "driver: $PASSED passed, $FAILED failed, $SKIPPED skipped"
exit $STATUS
