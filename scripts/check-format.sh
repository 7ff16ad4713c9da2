#!/usr/bin/env bash
# Fails, listing the files, if any C++ source is not as clang-format (.clang-format) writes it or
# any web/src file is not as Prettier (.prettierrc.json, the version pinned in package.json)
# writes it. Fix with: bash scripts/check-format.sh --fix
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cxx=$(git ls-files 'cpp/*.cpp' 'cpp/*.hpp' 'tests/cpp/*.cpp' 'tests/cpp/*.hpp' 'tests/fuzz/*.cpp')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i $cxx
  [ -f .prettierrc.json ] && npx --no-install prettier --log-level warn --write web/src
  exit 0
fi
rc=0
# one clang-format process for every file (a process per file took most of this check's time)
bad=$(clang-format --dry-run -Werror $cxx 2>&1 | grep -o '^[^:]*\.[ch]pp' | sort -u)
if [ -n "$bad" ]; then
  echo "not as clang-format writes them (bash scripts/check-format.sh --fix):"
  echo "$bad"
  rc=1
else
  echo "clang-format: $(echo "$cxx" | wc -w) C++ files as clang-format writes them"
fi
if [ -f .prettierrc.json ]; then
  npx --no-install prettier --check web/src || rc=1
fi
exit $rc
