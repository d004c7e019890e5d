#!/usr/bin/env bash
# The web side of CI: builds the playground with `trunk build`, exactly as the README tells
# users to (index.html + Trunk.toml), then runs the end-to-end test in headless Debian
# Chromium on that build. Called by .ci/run; runnable alone from a clean clone.
#
# Assumes / uses:
# - rustup toolchain from rust-toolchain.toml with the wasm32-unknown-unknown target.
# - CARGO_TARGET_DIR (default ./target): the native target dir. The test drives
#   $CARGO_TARGET_DIR/debug/prh-native; it is built here if missing (a no-op after
#   .ci/run's `cargo test`).
# - PRH_WASM_TARGET_DIR (default "$CARGO_TARGET_DIR-wasm"): a separate target dir for the
#   wasm32 build, so native and wasm feature sets do not keep recompiling burn.
# - PRH_TOOLS (default /opt/prh-tools): where trunk 0.21.14 and wasm-bindgen-cli 0.2.130
#   are installed once (`cargo install --root`), skipped when present. trunk runs offline
#   and takes wasm-bindgen from PATH. wasm-bindgen-test-runner runs
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

step() { echo "--- [web $(date -u +%H:%M:%S)] $*"; }

step "Chromium, a Korean font, wasm-bindgen-cli, trunk (.ci/tools.sh; no-ops when present)"
bash .ci/tools.sh
TRUNK="$TOOLS/bin/trunk"

step "prh-native (reference numbers for the e2e test)"
NATIVE="$CARGO_TARGET_DIR/debug/prh-native"
[ -x "$NATIVE" ] || cargo build -p prh-native
ls -l "$NATIVE"

# Clippy for the browser's code: clippy-driver stands in for rustc on the workspace's own
# crates (prh-core, prh-web; dependencies still get plain rustc), so the builds below lint
# them for wasm32 at no extra compile: the code under cfg(target_arch = "wasm32") that a
# native clippy never sees, and no native check of the web-only dependencies. clippy-driver
# is rustc with clippy's lints added (and `--cfg clippy`, which no crate here reads); the
# module it emits is rustc's. Warnings are errors, as in .ci/run's clippy pass. This is
# `cargo clippy`'s own mechanism (it sets these two variables for `cargo check`).
CLIPPY_DRIVER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)
if [ -z "$CLIPPY_DRIVER" ]; then
  echo "error: clippy-driver not found (rust-toolchain.toml lists clippy: rustup component add clippy)" >&2
  exit 1
fi
export RUSTC_WORKSPACE_WRAPPER="$CLIPPY_DRIVER"
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"

step "dist/: trunk build, as a user runs it (index.html, Trunk.toml; profile web-dev; linted by clippy)"
# trunk finds wasm-bindgen (the version .ci/tools.sh installs) on PATH (Trunk.toml pins it, offline).
rm -rf dist
PATH="$TOOLS/bin:$PATH" CARGO_TARGET_DIR="$WASM_TARGET_DIR" "$TRUNK" build
ls -l dist

step "wasm-bindgen-test: core numerics in wasm32 equal the native reference values (linted by clippy)"
CARGO_TARGET_DIR="$WASM_TARGET_DIR" CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="$TOOLS/bin/wasm-bindgen-test-runner" \
  cargo test --profile web-dev -p prh-web --target wasm32-unknown-unknown --test core_numerics

step "end-to-end test in headless chromium"
(cd tests/web && npm ci --no-audit --no-fund)
PRH_NATIVE="$NATIVE" PRH_DIST="$ROOT/dist" PRH_SCREENSHOTS="$ROOT/docs/screenshots" \
  node tests/web/e2e.mjs
step "web OK"
