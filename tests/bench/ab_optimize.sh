#!/usr/bin/env bash
# Two builds of `weir` against each other on `weir optimize --recipe auto`:
# each model runs with the old binary, then the new one, so that a busy
# machine slows both alike. Prints wall seconds, their ratio, peak resident
# MB (GNU time) and whether both sessions have the same program hash, and,
# as the peer in the same run, ONNX Runtime's session creation at 2 threads
# (tests/bench/ort_bench.js, onnxruntime-node from scripts/bench.sh) with
# the new time's ratio to it ("-" when ORT is not installed or fails).
#
#   tests/bench/ab_optimize.sh [--ready] OLD_WEIR NEW_WEIR [MODEL...]
#
# --ready adds the time to ready, the way a user gets there: the optimize
# above, then `weir run SESSION --threads 2` with the compile cache the
# optimize left (cold: no piece compiled yet) and again (warm), each build
# with a cache folder of its own, wall seconds; "cold" is optimize + the
# first run, compared with ORT's session creation.
#
# MODEL names a file in build/bench/models (scripts/bench.sh exports them);
# the default is the whole zoo there.
set -euo pipefail
ready=no
if [ "${1:-}" = --ready ]; then
  ready=yes
  shift
fi
usage_options="[--ready]"
# shellcheck source=ab_common.sh
. "$(dirname "$0")/ab_common.sh"
printf "%-16s %8s %8s %8s %9s %9s  %-9s %8s %8s" model "old s" "new s" \
  new/old "old MB" "new MB" "same hash" "ORT s" new/ORT
if [ "$ready" = yes ]; then
  printf " | %9s %9s %9s %9s %9s" "old cold" "new cold" "old warm" "new warm" \
    "cold/ORT"
fi
printf "\n"
export OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2
for m in "$@"; do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin=$new
    rm -rf "$scratch/$which.cache"
    WEIR_CACHE_DIR="$scratch/$which.cache" /usr/bin/time -f "%e %M" \
      -o "$scratch/$which.time" \
      "$bin" optimize "$models_dir/$m.onnx" --recipe auto \
      -o "$scratch/$which.weir" --no-plugins >"$scratch/$which.log" 2>&1
    if [ "$ready" = yes ]; then
      for run in cold warm; do
        WEIR_CACHE_DIR="$scratch/$which.cache" /usr/bin/time -f "%e" \
          -o "$scratch/$which.$run.time" "$bin" run "$scratch/$which.weir" \
          --threads 2 --no-plugins >"$scratch/$which.$run.log" 2>&1 ||
          echo "-1" >"$scratch/$which.$run.time"
      done
    fi
  done
  read -r old_s old_kb <"$scratch/old.time"
  read -r new_s new_kb <"$scratch/new.time"
  old_hash=$(grep -o 'hash [0-9a-f]*$' "$scratch/old.log" | tail -1 || true)
  new_hash=$(grep -o 'hash [0-9a-f]*$' "$scratch/new.log" | tail -1 || true)
  same=no
  [ -n "$old_hash" ] && [ "$old_hash" = "$new_hash" ] && same=yes
  ort_s=- ratio=-
  if ort=$(NODE_PATH="$root/build/bench/node_modules" node \
    "$root/tests/bench/ort_bench.js" --model "$models_dir/$m.onnx" \
    --input "input=$models_dir/$m.input.npy" --threads 2 --runs 1 \
    --warmup-s 0 2>/dev/null | tail -1) &&
    ms=$(echo "$ort" | grep -o '"session_ms": *[0-9.]*' | grep -o '[0-9.]*$'); then
    ort_s=$(printf "%.2f" "$(echo "$ms / 1000" | bc -l)")
    ratio=$(printf "%.1fx" "$(echo "$new_s * 1000 / $ms" | bc -l)")
  fi
  printf "%-16s %8.2f %8.2f %8.2f %9d %9d  %-9s %8s %8s" "$m" "$old_s" \
    "$new_s" "$(echo "$new_s / $old_s" | bc -l)" $((old_kb / 1024)) \
    $((new_kb / 1024)) "$same" "$ort_s" "$ratio"
  if [ "$ready" = yes ]; then
    old_cold=$(echo "$old_s + $(tail -1 "$scratch/old.cold.time")" | bc -l)
    new_cold=$(echo "$new_s + $(tail -1 "$scratch/new.cold.time")" | bc -l)
    cold_ratio=-
    [ "$ort_s" != - ] &&
      cold_ratio=$(printf "%.1fx" "$(echo "$new_cold / $ort_s" | bc -l)")
    printf " | %9.2f %9.2f %9.2f %9.2f %9s" "$old_cold" "$new_cold" \
      "$(tail -1 "$scratch/old.warm.time")" \
      "$(tail -1 "$scratch/new.warm.time")" "$cold_ratio"
  fi
  printf "\n"
done
