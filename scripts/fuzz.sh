#!/usr/bin/env bash
# Runs every libFuzzer harness (tests/fuzz/harnesses) for SECONDS each (600
# by default), as many at once as there are cores, and prints one line per
# harness: executions, coverage, corpus size and findings.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
#
# Builds the `fuzz` preset (clang 19, libFuzzer, ASan + UBSan) into
# build/fuzz. Each harness's working corpus is build/fuzz/corpus/NAME,
# seeded from tests/fuzz/corpus; findings land in build/fuzz/findings/NAME
# and its log in build/fuzz/logs/NAME.log: a crash, a timeout (30 s), an
# out-of-memory (3 GiB) or a leak is a finding; an input slower than 10 s is
# kept there too (slow-unit-*) and counted apart. A finding, once fixed,
# belongs in tests/fuzz/regressions/NAME/, which the suite replays. Exits 1
# when any harness found something.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(onnx_interpret onnx_jit program_json session recipe expr_text
             tensor_file)
fi

scripts/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

out=build/fuzz
mkdir -p "$out/logs"
run_one() {
  local name=$1 seeds dict
  case $name in
    onnx_*) seeds=onnx; dict=tests/fuzz/onnx.dict ;;
    program_json|session|recipe) seeds=$name; dict=tests/fuzz/json.dict ;;
    *) seeds=$name; dict="" ;;
  esac
  mkdir -p "$out/corpus/$name" "$out/findings/$name"
  cp -n tests/fuzz/corpus/$seeds/* "$out/corpus/$name/" 2>/dev/null || true
  # -timeout: an input that takes longer is a finding (a hang);
  # -rss_limit_mb: so is one that needs more memory than this.
  # allocator_may_return_null: a request larger than ASan serves throws
  # std::bad_alloc, as in a normal build (ONNX's passes, in their child
  # process, turn that into a note); in Weir's own code it is still a
  # finding, as an exception that escapes.
  ASAN_OPTIONS=allocator_may_return_null=1:${ASAN_OPTIONS:-} \
  "$out/tests/fuzz/weir_fuzz_$name" "$out/corpus/$name" \
    -max_total_time="$seconds" -timeout=30 -rss_limit_mb=3072 \
    -max_len=262144 -print_final_stats=1 ${dict:+-dict=$dict} \
    -artifact_prefix="$out/findings/$name/" >"$out/logs/$name.log" 2>&1 || true
}

jobs=$(nproc)
for name in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_one "$name" &
done
wait

found=0
printf '%-16s %12s %9s %8s %8s %9s %6s\n' harness executions exec/s cov corpus \
  findings slow
for name in "${harnesses[@]}"; do
  log=$out/logs/$name.log
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || echo 0)
  corpus=$(find "$out/corpus/$name" -type f | wc -l)
  findings=$(find "$out/findings/$name" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$out/findings/$name" -type f -name 'slow-unit-*' | wc -l)
  found=$((found + findings))
  printf '%-16s %12s %9s %8s %8s %9s %6s\n' "$name" "${execs:-0}" "${rate:-0}" \
    "${cov:-0}" "$corpus" "$findings" "$slow"
done
[ "$found" -eq 0 ]
