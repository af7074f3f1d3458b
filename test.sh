#!/usr/bin/env bash
# Runs ReorgDB's whole test suite (needs sysbench for the end-to-end test).
set -euo pipefail
cd "$(dirname "$0")"
go test -count=1 -timeout 30m ./... "$@"
# Again with Pebble's internal invariant checks, which catch a comparer or
# iterator misuse that ordinary builds would let through silently.
go test -count=1 -timeout 30m -tags invariants ./kv ./ddl ./sql
