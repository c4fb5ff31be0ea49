#!/usr/bin/env bash
# Two builds of `weir` against each other on code generation: each model is
# optimized once (`weir optimize --recipe auto`, by the new build), then
# the old and the new build each compile that session from an empty compile
# cache of its own and run it (`weir run SESSION --threads 2 --repeat N`),
# one after the other per model, so that a busy machine slows both alike.
# Prints, per build, the compile time and pieces of the cold run and the
# median run time, the new/old ratios, and as the peer in the same run ONNX
# Runtime's median at 2 threads (tests/bench/ort_bench.js, onnxruntime-node
# from scripts/bench.sh; "-" when it is not installed) with new/ORT.
#
#   tests/bench/ab_compile.sh [--repeat N] OLD_WEIR NEW_WEIR [MODEL...]
#
# MODEL names a file in build/bench/models (scripts/bench.sh exports them);
# the default is the whole zoo there. N defaults to 20.
set -euo pipefail
repeat=20
if [ "${1:-}" = --repeat ]; then
  repeat=$2
  shift 2
fi
usage_options="[--repeat N]"
# shellcheck source=ab_common.sh
. "$(dirname "$0")/ab_common.sh"
printf "%-16s %10s %10s %8s %7s %7s | %9s %9s %8s %9s %8s\n" model \
  "old cmp s" "new cmp s" new/old "old pc" "new pc" "old ms" "new ms" \
  new/old "ORT ms" new/ORT
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
field() { # field NAME LOG: the number after NAME on its line
  sed -n "s/^$1 *\([0-9.]*\) ms.*/\1/p" "$2" | tail -1
}
for m in "$@"; do
  WEIR_CACHE_DIR="$scratch/session.cache" "$new" optimize \
    "$models_dir/$m.onnx" --recipe auto -o "$scratch/$m.weir" --no-plugins \
    >"$scratch/optimize.log" 2>&1 || {
    printf "%-16s optimize failed\n" "$m"
    continue
  }
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    # The session's program, so that neither build replays the recipe, and
    # no compiled piece.
    rm -rf "$scratch/$which.cache"
    cp -r "$scratch/session.cache" "$scratch/$which.cache"
    rm -f "$scratch/$which.cache/"*.wobj
    WEIR_CACHE_DIR="$scratch/$which.cache" "$bin" run "$scratch/$m.weir" \
      --threads 2 --no-plugins >"$scratch/$which.cold.log" 2>&1 || true
    WEIR_CACHE_DIR="$scratch/$which.cache" "$bin" run "$scratch/$m.weir" \
      --threads 2 --no-plugins --repeat "$repeat" \
      >"$scratch/$which.warm.log" 2>&1 || true
  done
  old_c=$(field compile "$scratch/old.cold.log")
  new_c=$(field compile "$scratch/new.cold.log")
  old_p=$(sed -n 's/^compile .*(\([0-9]*\) piece.*/\1/p' "$scratch/old.cold.log")
  new_p=$(sed -n 's/^compile .*(\([0-9]*\) piece.*/\1/p' "$scratch/new.cold.log")
  old_t=$(field time "$scratch/old.warm.log")
  new_t=$(field time "$scratch/new.warm.log")
  if [ -z "$old_c" ] || [ -z "$new_c" ] || [ -z "$old_t" ] || [ -z "$new_t" ]; then
    printf "%-16s a run failed (see %s)\n" "$m" "$scratch"
    trap - EXIT
    continue
  fi
  ort_ms=- ratio=-
  if ort=$(NODE_PATH="$root/build/bench/node_modules" node \
    "$root/tests/bench/ort_bench.js" --model "$models_dir/$m.onnx" \
    --input "input=$models_dir/$m.input.npy" --threads 2 \
    --runs "$repeat" 2>/dev/null | tail -1) &&
    ms=$(echo "$ort" | grep -o '"median_ms": *[0-9.]*' | grep -o '[0-9.]*$'); then
    ort_ms=$(printf "%.2f" "$ms")
    ratio=$(printf "%.2f" "$(echo "$new_t / $ms" | bc -l)")
  fi
  printf "%-16s %10.2f %10.2f %8.2f %7s %7s | %9.2f %9.2f %8.2f %9s %8s\n" \
    "$m" "$(echo "$old_c / 1000" | bc -l)" "$(echo "$new_c / 1000" | bc -l)" \
    "$(echo "$new_c / $old_c" | bc -l)" "$old_p" "$new_p" "$old_t" "$new_t" \
    "$(echo "$new_t / $old_t" | bc -l)" "$ort_ms" "$ratio"
done
