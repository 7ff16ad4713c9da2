#!/usr/bin/env bash
# Every test: installs what is missing, then runs each suite and reports them all.
# Exit status is non-zero if any suite failed.
#
#   bash scripts/test.sh           # everything (what CI runs)
#   bash scripts/test.sh --quick   # the edit loop: everything but the fuzz smoke, the ASan build
#                                  # and the browser tests (same suites otherwise)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h | --help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option $arg (try --quick)" >&2; exit 2 ;;
  esac
done
source scripts/setup.sh || exit 1
set +e

results=()
failed=0
TOTAL_START=$SECONDS
skipped=()
full() {  # full NAME COMMAND...: a suite the --quick mode leaves out
  if [ "$QUICK" -eq 1 ]; then skipped+=("$1"); else run "$@"; fi
}
run() {  # run NAME COMMAND...
  local name="$1"
  shift
  echo
  echo "==== ${name}: $*"
  local start=$SECONDS
  "$@"
  local rc=$?
  if [ $rc -eq 0 ]; then
    results+=("PASS  ${name} ($((SECONDS - start)) s)")
  else
    results+=("FAIL  ${name} (exit ${rc})")
    failed=$((failed + 1))
  fi
}

run "oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_fixtures.py --check
run "backward oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_backward_fixtures.py --check
run "variant-gradient oracle fixtures are current" /usr/bin/python3 tests/oracle/gen_variant_grad_fixtures.py --check
run "NumPy rng tables and fixture are current" /usr/bin/python3 tests/oracle/gen_numpy_rng.py --check
run "oracle mask fixture is current" /usr/bin/python3 tests/oracle/gen_masks.py --check
run "variant oracle fixture is current" /usr/bin/python3 tests/oracle/gen_variant_fixtures.py --check
run "lesson page-figure oracle fixture is current" /usr/bin/python3 tests/oracle/gen_lesson_fixtures.py --check
run "PyTorch model fixtures are current" /usr/bin/python3 tests/oracle/gen_model_fixtures.py --check
run "PyTorch score-gradient fixture is current" /usr/bin/python3 tests/oracle/gen_score_grad_fixtures.py --check
run "notebook helper + NumPy array fixtures (unittest)" /usr/bin/python3 -m unittest discover -s tests/python
run "C++ tests, native (ctest)" cmake --workflow --preset native
full "C++ tests, native ASan + UBSan (ctest)" cmake --workflow --preset native-asan
full "fuzz smoke (libFuzzer + ASan + UBSan, 55 s)" bash tests/fuzz/smoke.sh
run "C++ tests, wasm under Node (ctest)" cmake --workflow --preset wasm
run "JS API of the wasm module (node --test)" node --test tests/js/
run "soak: 10 000 calls through the wasm module (node --test)" node --test tests/soak/
run "TypeScript types (tsc --noEmit -p web)" npx --no-install tsc --noEmit -p web
run "web unit tests (vitest)" npm run --silent test:web
run "production build (vite)" npm run --silent build
full "browser tests (playwright-core + Chromium)" env AP_SKIP_BUILD=1 npm run --silent test:browser

echo
echo "==== summary"
printf '%s\n' "${results[@]}"
((${#skipped[@]})) && printf 'SKIP  %s (--quick)\n' "${skipped[@]}"
passed=$((${#results[@]} - failed))
echo "suites: ${passed} passed, ${failed} failed$([ "$QUICK" -eq 1 ] && echo ", ${#skipped[@]} left out by --quick") in $((SECONDS - TOTAL_START)) s"
exit $((failed > 0))
