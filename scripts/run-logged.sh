#!/bin/bash
# Usage: scripts/run-logged.sh LOG SECONDS COMMAND [ARGUMENT...]
#
# Runs COMMAND with its output in LOG, followed with tail while it runs, bounded to SECONDS.
# Test runs start bus daemons, mocks and apps; if the test process crashes they outlive it,
# still holding its output. Into a pipe, that output would never end, and swift test, tee or CI
# would wait for good; into a file, nobody waits for it. A failed run repeats its failures last,
# because CI shows only the tail of a long log. Exits with COMMAND's status (124: time limit).
set -u
log=$1 limit=$2
shift 2
: > "$log"
timeout --kill-after=30 "$limit" "$@" > "$log" 2>&1 < /dev/null &
command_pid=$!
tail -n +1 -f --pid=$command_pid "$log" &
tail_pid=$!
wait $command_pid
status=$?
wait $tail_pid
if [ $status -ne 0 ]; then
  echo
  echo "=== the failures of this run (exit $status; the whole log is $log):"
  grep -aE "✘|error:|Fatal error|crashed|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|Signal [0-9]+" "$log" | tail -40
  # A sanitizer's report is its stacks, which the lines above leave out: the first two in full
  # (bounded), so a race or an overflow seen only in CI can be read from CI's tail.
  if grep -aqE "^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: AddressSanitizer)" "$log"; then
    echo
    echo "=== the first sanitizer reports of this run:"
    awk '/WARNING: ThreadSanitizer|ERROR: AddressSanitizer/ { if (++n > 2) exit; on = 1; lines = 0 }
         on && lines++ < 80 { print }
         /^SUMMARY: / { on = 0 }' "$log"
  fi
fi
exit $status
