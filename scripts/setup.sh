#!/usr/bin/env bash
# Installs what the playground and its tests need, only when something is missing:
# Debian packages (apt-get) and the npm packages pinned in package-lock.json (npm ci).
# Sourced by playground.sh and test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

APT_PACKAGES=(emscripten libxtensor-dev xtl-dev libxsimd-dev libsimde-dev catch2 nlohmann-json3-dev zlib1g-dev ninja-build
  python3-numpy python3-torch python3-sentencepiece chromium chromium-headless-shell fonts-dejavu-core cmake clang libclang-rt-14-dev)
# node and npm may come from elsewhere than Debian (this machine kind ships its own).
command -v node >/dev/null && command -v npm >/dev/null || APT_PACKAGES+=(nodejs npm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi

# The course-material hosts the browser tests embed the playground in (tests/browser/hosts*.mjs):
# the classic notebook and nbconvert, MkDocs, RequireJS. Without their recommends (a desktop's
# worth of packages otherwise).
HOST_PACKAGES=(jupyter-notebook python3-notebook python3-nbclient python3-nbconvert jupyter-nbconvert
  python3-ipykernel mkdocs libjs-requirejs)
missing=()
for p in "${HOST_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages for the host tests: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm ci when node_modules is absent or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
fi

# reveal.js for the slide-deck host test: a test-only folder with its own lock file, so the app's
# dependencies do not grow.
if [ ! -f tests/hosts/node_modules/.package-lock.json ] || [ tests/hosts/package-lock.json -nt tests/hosts/node_modules/.package-lock.json ]; then
  echo "setup: npm ci --prefix tests/hosts"
  npm ci --prefix tests/hosts --no-audit --no-fund
fi

# A Jupyter widget manager (@jupyter-widgets/html-manager) and anywidget's front end, to test the
# anywidget module under the real widget protocol without a kernel (tests/browser/widget-protocol
# .test.mjs): a test-only folder with its own lock file, like tests/hosts.
if [ ! -f tests/widgets/node_modules/.package-lock.json ] || [ tests/widgets/package-lock.json -nt tests/widgets/node_modules/.package-lock.json ]; then
  echo "setup: npm ci --prefix tests/widgets"
  npm ci --prefix tests/widgets --no-audit --no-fund
fi

# The native presets build with Ninja (it compiles a target's sources while the libraries it links
# still build; docs/testing.md): a build folder configured earlier with another generator is
# configured afresh.
for d in build/native build/native-asan build/fuzz; do
  if [ -f "$d/CMakeCache.txt" ] && ! grep -qx 'CMAKE_GENERATOR:INTERNAL=Ninja' "$d/CMakeCache.txt"; then
    rm -rf "$d/CMakeCache.txt" "$d/CMakeFiles"
  fi
done

# Emscripten 3.1.6 needs Node to find its 'acorn' in Debian's node path.
export NODE_PATH=/usr/share/nodejs
