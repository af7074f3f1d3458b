#!/usr/bin/env bash
# Races online index builds against unique-swapping writers and sysbench,
# with SIGKILL at every phase, pause/resume and cancel, and checks every
# index and every acknowledged write after each trial (TestRaceHarness in
# sql/race_harness_test.go). CI runs 3 trials; this runs 200 by default.
#   scripts/race-harness.sh [trials] [first-seed]
set -euo pipefail
cd "$(dirname "$0")/.."
REORGDB_RACE_TRIALS=${1:-200} REORGDB_RACE_SEED=${2:-1} \
  go test -count=1 -timeout 0 -run '^TestRaceHarness$' -v ./sql | grep --line-buffered -E '^(---|=== RUN|ok|FAIL|PASS)|race_harness_test.go|ddl_crash_test.go'
