#!/usr/bin/env bash
# Every test: installs what is missing, then runs each suite and reports them all.
# Exit status is non-zero if any suite failed.
#
#   bash scripts/test.sh           # everything (what CI runs)
#   bash scripts/test.sh --quick   # the edit loop: everything but the fuzz smoke, the ASan build
#                                  # and the browser tests (same suites otherwise)
#   AP_SCREENSHOTS=1 bash scripts/test.sh   # the browser tests also write their screenshots
#
# Suites that use one core (the oracle checks, the JS API files, the type check, the fuzz smoke,
# most browser files) run two at a time on this two-core machine kind; the builds use both cores
# themselves, and the browser files that time something run alone. Each suite's output goes to
# build/test-logs/ and is printed whole when it ends, so parallel suites never interleave.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option $arg (try --quick)" >&2; exit 2 ;;
  esac
done
source scripts/setup.sh || exit 1
set +e

LOGS=build/test-logs
rm -rf "$LOGS" && mkdir -p "$LOGS"
SLOTS=2
results=()
failed=0
TOTAL_START=$SECONDS
skipped=()
pending=()  # suites started in the background, in start order: "NAME<TAB>LOG"

# record NAME RC SECONDS
record() {
  if [ "$2" -eq 0 ]; then
    results+=("PASS  $1 ($3 s)")
  else
    results+=("FAIL  $1 (exit $2)")
    failed=$((failed + 1))
  fi
}

run() {  # run NAME COMMAND...: in the foreground
  local name="$1"
  shift
  echo
  echo "==== ${name}: $*"
  local start=$SECONDS
  "$@"
  record "$name" $? $((SECONDS - start))
}

spawn() {  # spawn NAME COMMAND...: in the background, at most SLOTS at once; see collect
  local name="$1"
  shift
  while (($(jobs -rp | wc -l) >= SLOTS)); do wait -n; done
  local log
  log="$LOGS/$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '_' | cut -c1-60).log"
  (
    start=$SECONDS
    echo "==== ${name}: $*" >"$log"
    "$@" >>"$log" 2>&1
    rc=$?
    echo "$rc $((SECONDS - start))" >"$log.rc"
  ) &
  pending+=("${name}"$'\t'"${log}")
}

collect() {  # waits for every spawned suite, prints each one's output and records it
  wait
  local entry name log rc secs
  for entry in "${pending[@]}"; do
    name="${entry%%$'\t'*}"
    log="${entry#*$'\t'}"
    echo
    cat "$log"
    read -r rc secs <"$log.rc" 2>/dev/null || { rc=1; secs=0; }
    record "$name" "$rc" "$secs"
  done
  pending=()
}

full() {  # full run|spawn NAME COMMAND...: a suite the --quick mode leaves out
  local how="$1"
  shift
  if [ "$QUICK" -eq 1 ]; then skipped+=("$1"); else "$how" "$@"; fi
}

# 1. The oracles' fixtures are current, the notebook helper and the include graph (unittest),
#    the formatting: each one process, two at a time.
spawn "oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_fixtures.py --check
spawn "backward oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_backward_fixtures.py --check
spawn "variant-gradient oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_variant_grad_fixtures.py --check
spawn "NumPy rng tables and fixture are current" /usr/bin/python3 tests/oracle/gen_numpy_rng.py --check
spawn "oracle mask fixture is current" /usr/bin/python3 tests/oracle/gen_masks.py --check
spawn "variant oracle fixture is current" /usr/bin/python3 tests/oracle/gen_variant_fixtures.py --check
spawn "lesson page-figure oracle fixture is current" /usr/bin/python3 tests/oracle/gen_lesson_fixtures.py --check
spawn "PyTorch model fixtures are current" /usr/bin/python3 tests/oracle/gen_model_fixtures.py --check
spawn "PyTorch score-gradient fixture is current" /usr/bin/python3 tests/oracle/gen_score_grad_fixtures.py --check
spawn "sampling oracle fixture is current" /usr/bin/python3 tests/oracle/gen_sampling_fixtures.py --check
spawn "NumPy probe fixture is current" /usr/bin/python3 tests/oracle/gen_probe_fixtures.py --check
spawn "SentencePiece tokenizer and shipped-model fixtures are current" bash -c "/usr/bin/python3 tests/oracle/gen_bpe_fixtures.py --check && /usr/bin/python3 tests/oracle/gen_shipped_fixtures.py --check"
spawn "PyTorch lr-schedule fixture is current" /usr/bin/python3 tests/oracle/gen_schedule_fixtures.py --check
spawn "Python text-view fixtures (held-out ids, softmax, float16 checkpoint) are current" /usr/bin/python3 tests/oracle/gen_text_view_fixtures.py --check
spawn "NumPy print, softmax-step, breakdown, role, geometry, cross-attention and alignment fixtures are current" bash -c "/usr/bin/python3 tests/oracle/gen_numpy_print.py --check && /usr/bin/python3 tests/oracle/gen_softmax_steps.py --check && /usr/bin/python3 tests/oracle/gen_breakdown_fixtures.py --check && /usr/bin/python3 tests/oracle/gen_roles_fixtures.py --check && /usr/bin/python3 tests/oracle/gen_geometry_fixtures.py --check && /usr/bin/python3 tests/oracle/gen_cross_fixtures.py --check && /usr/bin/python3 tests/oracle/gen_alignment_fixtures.py --check"
spawn "notebook helper, arrays, include graph (unittest)" /usr/bin/python3 -m unittest discover -s tests/python
spawn "formatting (clang-format, Prettier)" bash scripts/check-format.sh
collect

# 2. The Catch2 suites: native, under ASan + UBSan, then in wasm under Node. The fuzz smoke
#    (one core for a fixed time) runs beside the wasm build.
run "C++ tests, native (ctest)" cmake --workflow --preset native
full run "C++ tests, native ASan + UBSan (ctest)" cmake --workflow --preset native-asan
full spawn "fuzz smoke (libFuzzer + ASan + UBSan, 55 s)" bash tests/fuzz/smoke.sh
spawn "C++ tests, wasm under Node (ctest)" cmake --workflow --preset wasm
collect

# 3. The page's unit tests and types, the soak, the production build, the browser module's JS API.
#    vitest runs its files one at a time (one worker on two cores) and is the longest: it starts
#    first, the one-core suites fill the other core beside it, and the JS API files (two at a
#    time) come last, taking both cores once vitest ends.
spawn "web unit tests (vitest)" npm run --silent test:web
spawn "TypeScript types (tsc --noEmit -p web)" npx --no-install tsc --noEmit -p web
spawn "soak: 10 000 calls through the wasm module (node --test)" node --test tests/soak/
spawn "production build (vite)" npm run --silent build
spawn "JS API of the wasm module (node --test)" node --test --test-concurrency=2 tests/js/
collect

# 4. The browser tests, three files at a time; the files that time the page run alone after them.
#    Without their screenshots (they assert nothing; AP_SCREENSHOTS=1 bash scripts/test.sh, or
#    npm run test:browser, writes them to test-results/).
full run "browser tests (playwright-core + Chromium)" env AP_SKIP_BUILD=1 AP_SCREENSHOTS="${AP_SCREENSHOTS:-0}" node tests/browser/run.mjs

echo
echo "==== summary"
printf '%s\n' "${results[@]}"
((${#skipped[@]})) && printf 'SKIP  %s (--quick)\n' "${skipped[@]}"
passed=$((${#results[@]} - failed))
echo "suites: ${passed} passed, ${failed} failed$([ "$QUICK" -eq 1 ] && echo ", ${#skipped[@]} left out by --quick") in $((SECONDS - TOTAL_START)) s"
exit $((failed > 0))
