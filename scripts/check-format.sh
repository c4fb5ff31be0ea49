#!/usr/bin/env bash
# Checks (or with --fix, applies) clang-format on every C++ file in the tree.
# The style is .clang-format (LLVM-based). Exit status 1 lists the files that
# need formatting.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'needs clang-format: %s\n' "${bad[@]}"
  echo "run scripts/check-format.sh --fix"
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
