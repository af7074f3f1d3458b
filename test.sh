#!/usr/bin/env bash
# Runs ReorgDB's whole test suite (needs sysbench for the end-to-end test).
set -euo pipefail
cd "$(dirname "$0")"
go test -count=1 -timeout 30m ./... "$@"
