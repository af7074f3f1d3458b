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
scripts/go-sql-driver-suite.sh scripts/go-sql-driver-suite.expected-failures
go test -count=1 -timeout 30m ./... "$@"
# Again with Pebble's internal invariant checks, which catch a comparer or
# iterator misuse that ordinary builds would let through silently.
go test -count=1 -timeout 30m -tags invariants ./kv ./ddl ./sql
