#!/usr/bin/env bash
# What the web step needs that a fresh machine lacks, installed once: Debian's Chromium
# (+ chromedriver) and a Korean font, wasm-bindgen-cli and trunk (cargo install into
# $PRH_TOOLS, outside the clone). Each is skipped when present. Called by .ci/web.sh, and
# by .ci/run in the background at low priority while the native build runs (it uses the
# cores that build leaves idle: linking, the test run); web.sh waits for it.
set -euo pipefail
TOOLS=${PRH_TOOLS:-/opt/prh-tools}
WASM_BINDGEN_VERSION=0.2.130
# trunk 0.21.14 builds on the pinned stable 1.95.0 (0.22.1 needs rustc >= 1.96.1);
# docs/web.md says what differs.
TRUNK_VERSION=0.21.14

step() { echo "--- [tools $(date -u +%H:%M:%S)] $*"; }

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

# CI's copies of the two tools are built for build speed, not run speed: trunk's own
# release profile asks for fat LTO in one codegen unit (a long single-threaded link of its
# ~380 crates), and neither tool does work here where -O3 shows (trunk runs cargo and
# wasm-bindgen; wasm-bindgen rewrites one wasm file). Cargo's profile variables override
# the crates' [profile.release]; the install line itself stays the README's. docs/ci.md has
# the cold times before and after.
export CARGO_PROFILE_RELEASE_LTO=off
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
export CARGO_PROFILE_RELEASE_OPT_LEVEL=1
export CARGO_PROFILE_RELEASE_DEBUG=0

step "wasm-bindgen-cli $WASM_BINDGEN_VERSION in $TOOLS"
WB="$TOOLS/bin/wasm-bindgen"
if ! [ -x "$WB" ] || [ "$("$WB" --version)" != "wasm-bindgen $WASM_BINDGEN_VERSION" ]; then
  # No --locked: its lockfile pins a crate version the registry here lacks.
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --root "$TOOLS"
fi
"$WB" --version

step "trunk $TRUNK_VERSION in $TOOLS (the README's install line, outside the clone)"
TRUNK="$TOOLS/bin/trunk"
if ! [ -x "$TRUNK" ] || [ "$("$TRUNK" --version)" != "trunk $TRUNK_VERSION" ]; then
  # opt-level 0 for trunk alone: it only starts cargo and wasm-bindgen and copies files, so
  # its speed never shows, while its ~380 crates are the longest compile here.
  CARGO_PROFILE_RELEASE_OPT_LEVEL=0 \
    cargo install trunk --version "$TRUNK_VERSION" --locked --root "$TOOLS"
fi
"$TRUNK" --version
step "tools OK"
