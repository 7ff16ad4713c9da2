#!/usr/bin/env bash
# Fuzz smoke test for scripts/test.sh: builds the libFuzzer harness in the `native-asan` preset
# (clang, ASan + UBSan; the Catch2 suite under ASan links the same core objects, so the core
# compiles once for both) and fuzzes for a fixed time (default 55 s; FUZZ_SECONDS overrides) starting
# from the committed seed corpus. New inputs go to a temporary folder, never into the repo.
# Exit status: 0 if no crash, invariant violation, sanitizer report, leak or timeout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${FUZZ_SECONDS:-55}"
cmake --preset native-asan >/dev/null
cmake --build --preset native-asan --target fuzz_attention
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp tests/fuzz/corpus/* "$work/corpus/"
set +e
build/native-asan/fuzz_attention -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/log" 2>&1
rc=$?
set -e
grep -E '^(stat::|INFO: Seed|#[0-9]+ +DONE)' "$work/log" || true
if [ $rc -ne 0 ]; then
  echo "fuzz smoke FAILED (exit $rc); the report:"
  grep -v -E '^#[0-9]+ +(NEW|REDUCE|pulse)' "$work/log" | tail -60
  mkdir -p build/fuzz/artifacts
  cp "$work/artifacts/"* build/fuzz/artifacts/ 2>/dev/null && echo "reproducer(s) kept in build/fuzz/artifacts/"
  exit $rc
fi
