# Shared by the A/B scripts (ab_optimize.sh, ab_compile.sh), sourced after
# they take their options, with "OLD_WEIR NEW_WEIR [MODEL...]" left in "$@":
# sets old, new, root, models_dir and scratch (removed on exit), and leaves
# the models in "$@" (the whole zoo in build/bench/models when none given).
if [ $# -lt 2 ]; then
  echo "usage: $0 $usage_options OLD_WEIR NEW_WEIR [MODEL...]" >&2
  exit 2
fi
old=$1 new=$2
shift 2
root="$(cd "$(dirname "$0")/../.." && pwd)"
models_dir="$root/build/bench/models"
if [ $# -eq 0 ]; then
  set -- $(ls "$models_dir" | sed -n 's/\.onnx$//p')
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
