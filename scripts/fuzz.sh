#!/bin/bash
# Usage: scripts/fuzz.sh BINARY SECONDS MODE [TARGET...]
#
# Runs each fuzz target of BINARY (the libFuzzer build of LifecycleFuzz, `make fuzz-build`) for
# SECONDS, two at a time (the machine has two cores), and prints a line per target: executions,
# executions per second, coverage at the start (the seeds) and at the end, and new corpus units.
# No TARGET: every target `BINARY --list` names.
#
# MODE `smoke` starts every run from the committed seeds (Fuzz/Corpus/<target>) alone, in a fresh
# working corpus, so runs compare; MODE `long` keeps the working corpus in .build-fuzz/corpus/<target>
# between runs, so a long run goes on where the last one stopped. The committed seeds are never
# written to. Each target's dictionary is Fuzz/Dictionaries/<target>.dict when there is one.
#
# A crash, a timeout (one input over 10 s), an out-of-memory (2 GiB) or a broken property (a
# `fatalError` in the target) fails the run: the input is saved in .build-fuzz/artifacts/ (ignored
# by git), the log is printed, and the script exits 1 after the other targets ran. Leak detection is
# off: the Swift runtime's caches look like leaks to LeakSanitizer.
set -u
binary=$1 seconds=$2 mode=$3
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/.build-fuzz
artifacts=$work/artifacts
logs=$work/logs
mkdir -p "$artifacts" "$logs"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <("$binary" --list)
fi

run_target() {
  local target=$1
  local corpus=$work/corpus/$target
  if [ "$mode" = smoke ]; then
    corpus=$work/smoke-corpus/$target
    rm -rf "$corpus"
  fi
  mkdir -p "$corpus"
  local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192
    -print_final_stats=1 -artifact_prefix="$artifacts/$target-")
  local dictionary=$root/Fuzz/Dictionaries/$target.dict
  [ -f "$dictionary" ] && options+=(-dict="$dictionary")
  FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no \
    timeout --kill-after=10 $((seconds + 120)) "$binary" "${options[@]}" "$corpus" "$root/Fuzz/Corpus/$target" \
    > "$logs/$target.log" 2>&1 < /dev/null
  echo $? > "$logs/$target.status"
}

summary() {
  local target=$1 log=$logs/$1.log status
  status=$(cat "$logs/$target.status")
  local runs speed initial final added
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log")
  initial=$(grep -m1 -oE 'INITED cov: [0-9]+' "$log" | grep -oE '[0-9]+$')
  final=$(grep -oE '^#[0-9]+.*cov: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
  printf '%-20s %10s runs %8s exec/s  cov %5s -> %-5s  +%s units  %s\n' "$target" "${runs:-?}" "${speed:-?}" \
    "${initial:-?}" "${final:-?}" "${added:-?}" "$([ "$status" = 0 ] && echo ok || echo "FAILED (exit $status)")"
}

echo "fuzzing ${#targets[@]} targets for $seconds s each ($mode), two at a time; logs in $logs"
running=0
for target in "${targets[@]}"; do
  run_target "$target" &
  running=$((running + 1))
  if [ $running -ge 2 ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

failed=0
for target in "${targets[@]}"; do
  summary "$target"
  [ "$(cat "$logs/$target.status")" = 0 ] || failed=1
done
if [ $failed -ne 0 ]; then
  for target in "${targets[@]}"; do
    [ "$(cat "$logs/$target.status")" = 0 ] && continue
    echo
    echo "=== $target failed ($logs/$target.log):"
    grep -aE -m5 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)|SUMMARY|ALARM|out-of-memory' "$logs/$target.log"
    grep -aE 'Test unit written to|^Base64:' "$logs/$target.log"
  done
  echo
  echo "reproduce: FUZZ_TARGET=<target> $binary <artifact>; artifacts: $(ls "$artifacts" | tr '\n' ' ')"
fi
exit $failed
