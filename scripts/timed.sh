#!/bin/bash
# Usage: scripts/timed.sh NAME COMMAND [ARGUMENT...]
#
# Runs COMMAND and prints how long it took under NAME, also when it fails, so that CI's log
# shows the time of every part of `make test`. Exits with COMMAND's status.
set -u
name=$1
shift
start=$(date +%s)
echo "=== $name: started $(date -u +%H:%M:%S)"
"$@"
status=$?
echo "=== $name: $(( $(date +%s) - start )) s (exit $status)"
exit $status
