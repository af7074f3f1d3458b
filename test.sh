#!/usr/bin/env bash
# Runs ReorgDB's whole test suite (needs sysbench for the end-to-end tests).
set -euo pipefail
cd "$(dirname "$0")"
# staticcheck at a pinned version, fetched through the Go module proxy the
# first time.
if command -v staticcheck >/dev/null 2>&1; then
  staticcheck ./...
else
  go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...
fi
# go-sql-driver/mysql's own test suite against a fresh server: a failing
# test that is not in the expected-failures list fails the run.
# It needs the mariadb (or mysql) client, which .ci/run installs; outside CI
# it is left out without one, as the Go tests that need the client are.
if [ -n "${CI:-}" ] || command -v mariadb >/dev/null 2>&1 || command -v mysql >/dev/null 2>&1; then
  scripts/go-sql-driver-suite.sh scripts/go-sql-driver-suite.expected-failures
else
  echo "go-sql-driver suite left out: no mariadb or mysql client (apt-get install mariadb-client)"
fi
go test -count=1 -timeout 30m ./... "$@"
# Again with Pebble's internal invariant checks, which catch a comparer or
# iterator misuse that ordinary builds would let through silently.
go test -count=1 -timeout 30m -tags invariants ./kv ./ddl ./sql
