#!/usr/bin/env bash
# Compile-fail tests of the host-hook near-miss checks (core/cluster.hpp, issue 19): each file in
# tests/docs/hook_errors/ must NOT compile, and the compiler's output must contain its `// expect:`
# line (the static_assert message naming the hook and docs/concepts.md). Usage:
#   bash tests/docs/check_hook_errors.sh [compiler]
set -uo pipefail
cd "$(dirname "$0")/../.."
cxx=${1:-${CXX:-g++}}
pass=0 fail=0
for f in tests/docs/hook_errors/*.cpp; do
  expect=$(sed -n 's|^// expect: ||p' "$f")
  out=$("$cxx" -std=c++20 -Iinclude -isystem /usr/include/eigen3 -fsyntax-only "$f" 2>&1)
  if [ $? -eq 0 ]; then
    echo "FAIL $f: compiled, expected an error containing: $expect"; fail=$((fail + 1))
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "FAIL $f: the error does not say: $expect"; echo "$out" | head -5; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done
echo "hook near-miss checks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
