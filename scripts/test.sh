#!/usr/bin/env bash
# Every test: installs what is missing, then runs each suite and reports them all.
# Exit status is non-zero if any suite failed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/setup.sh || exit 1
set +e

results=()
failed=0
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
run "NumPy rng tables and fixture are current" /usr/bin/python3 tests/oracle/gen_numpy_rng.py --check
run "oracle mask fixture is current" /usr/bin/python3 tests/oracle/gen_masks.py --check
run "PyTorch model fixtures are current" /usr/bin/python3 tests/oracle/gen_model_fixtures.py --check
run "C++ tests, native (ctest)" cmake --workflow --preset native
run "C++ tests, native ASan + UBSan (ctest)" cmake --workflow --preset native-asan
run "fuzz smoke (libFuzzer + ASan + UBSan, 55 s)" bash tests/fuzz/smoke.sh
run "C++ tests, wasm under Node (ctest)" cmake --workflow --preset wasm
run "JS API of the wasm module (node --test)" node --test tests/js/
run "soak: 10 000 calls through the wasm module (node --test)" node --test tests/soak/
run "web unit tests (vitest)" npm run --silent test:web
run "production build (vite)" npm run --silent build
run "browser tests (playwright-core + Chromium)" env AP_SKIP_BUILD=1 npm run --silent test:browser

echo
echo "==== summary"
printf '%s\n' "${results[@]}"
passed=$((${#results[@]} - failed))
echo "suites: ${passed} passed, ${failed} failed"
exit $((failed > 0))
