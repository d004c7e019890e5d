#!/usr/bin/env bash
# The web side of CI: builds the playground exactly as `trunk build` would (without
# needing trunk: cargo + wasm-bindgen), then runs the end-to-end test in headless Debian
# Chromium. Called by .ci/run; runnable alone from a clean clone.
#
# Assumes / uses:
# - rustup toolchain from rust-toolchain.toml with the wasm32-unknown-unknown target.
# - CARGO_TARGET_DIR (default ./target): the native target dir. The test drives
#   $CARGO_TARGET_DIR/debug/prh-native; it is built here if missing (a no-op after
#   .ci/run's `cargo test`).
# - PRH_WASM_TARGET_DIR (default "$CARGO_TARGET_DIR-wasm"): a separate target dir for the
#   wasm32 build, so native and wasm feature sets do not keep recompiling burn.
# - PRH_TOOLS (default /opt/prh-tools): where wasm-bindgen-cli 0.2.130 is installed once
#   (`cargo install --root`), skipped when present. Its wasm-bindgen-test-runner runs
#   web/tests/core_numerics.rs under node (Debian's nodejs, also used by the e2e test).
# - apt (Debian 12): installs chromium + chromium-driver when /usr/bin/chromium is absent,
#   and fonts-nanum when no Korean font is installed (the lesson's Korean steps).
# - npm registry: `npm ci` in tests/web (puppeteer-core, locked by package-lock.json).
# Output: dist/ (the static site), docs/screenshots/*.png (from the e2e test, which also
# runs tests/web/correctness.mjs).
# The e2e test also launches Chromium with --enable-unsafe-webgpu (Debian's chromium ships
# SwiftShader, a CPU WebGPU adapter) to check the WebGPU embeddings against the CPU ones.
# Browser timings (not part of CI): node tests/web/bench.mjs after this script.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
WASM_TARGET_DIR=${PRH_WASM_TARGET_DIR:-$CARGO_TARGET_DIR-wasm}
TOOLS=${PRH_TOOLS:-/opt/prh-tools}
WASM_BINDGEN_VERSION=0.2.130
PROFILE=${PRH_WASM_PROFILE:-dev}   # dev: deps at opt-level 2 (workspace Cargo.toml)
PROFILE_DIR=$([ "$PROFILE" = dev ] && echo debug || echo "$PROFILE")
# faer's eigen/SVD kernels are generic, so they are compiled inside prh-core (and the
# spectral lab's code in prh-web): at the workspace's dev opt-level 1 an alpha change at
# 400 observations took ~220 ms in the page; opt-level 3 for these two crates only keeps
# the build incremental (docs/benchmarks.md, Browser).
WASM_OPT=(--config 'profile.dev.package.prh-core.opt-level=3' --config 'profile.dev.package.prh-web.opt-level=3')

step() { echo "--- [web $(date -u +%H:%M:%S)] $*"; }

step "headless chromium"
if ! [ -x /usr/bin/chromium ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q chromium chromium-driver
fi
/usr/bin/chromium --version

step "a Korean font (the lesson's Korean text in screenshots and the handout PDF)"
if ! fc-list :lang=ko | grep -q .; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q fonts-nanum
fi
fc-list :lang=ko | head -1

step "wasm-bindgen-cli $WASM_BINDGEN_VERSION in $TOOLS"
WB="$TOOLS/bin/wasm-bindgen"
if ! [ -x "$WB" ] || [ "$("$WB" --version)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  # No --locked: its lockfile pins a crate version the registry here lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --root "$TOOLS"
fi
"$WB" --version

step "prh-native (reference numbers for the e2e test)"
NATIVE="$CARGO_TARGET_DIR/debug/prh-native"
[ -x "$NATIVE" ] || cargo build -p prh-native
ls -l "$NATIVE"

step "prh-web for wasm32 (profile $PROFILE, target dir $WASM_TARGET_DIR)"
CARGO_TARGET_DIR="$WASM_TARGET_DIR" cargo build "${WASM_OPT[@]}" -p prh-web --target wasm32-unknown-unknown --profile "$PROFILE"
WASM="$WASM_TARGET_DIR/wasm32-unknown-unknown/$PROFILE_DIR/prh-web.wasm"

step "wasm-bindgen-test: core numerics in wasm32 equal the native reference values"
CARGO_TARGET_DIR="$WASM_TARGET_DIR" CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="$TOOLS/bin/wasm-bindgen-test-runner" \
  cargo test "${WASM_OPT[@]}" -p prh-web --target wasm32-unknown-unknown --test core_numerics

step "dist/: wasm-bindgen + the page trunk would write"
rm -rf dist
mkdir -p dist
"$WB" --target web --no-typescript --out-dir dist --out-name prh-web "$WASM"
cp web/style.css dist/style.css
# The alignment lab's metrics worker imports prh-web.js (web/src/labs/alignment/worker.rs).
cp web/metrics-worker.js dist/metrics-worker.js
# The live lab's training worker imports prh-web.js too (web/src/labs/live/worker.rs).
cp web/train-worker.js dist/train-worker.js
cp -r web/assets dist/assets
cat > dist/index.html <<'HTML'
<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>prh playground</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="./style.css" />
    <script type="module">
      import init from "./prh-web.js";
      init({ module_or_path: "./prh-web_bg.wasm" });
    </script>
  </head>
  <body></body>
</html>
HTML
ls -l dist

step "end-to-end test in headless chromium"
(cd tests/web && npm ci --no-audit --no-fund)
PRH_NATIVE="$NATIVE" PRH_DIST="$ROOT/dist" PRH_SCREENSHOTS="$ROOT/docs/screenshots" \
  node tests/web/e2e.mjs
step "web OK"
