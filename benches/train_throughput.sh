#!/usr/bin/env bash
# Training throughput of prh's text-JEPA step beside the same PyTorch step, measured in
# the same run: a thin wrapper over `prh-native bench train` (tokens/s, ratio, MFU).
#
#   benches/train_throughput.sh [--sizes tiny,bert-s --batch 8 --len 16 --steps 5 ...]
#
# Builds a release binary with the default CPU backend (burn-flex, one thread) in its own
# target dir, so the dev builds in target/ are not disturbed; PRH_FEATURES=cpu-fast builds
# the multi-threaded one instead.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target-bench}
cargo build --release -p prh-native ${PRH_FEATURES:+--features "$PRH_FEATURES"}
exec "$CARGO_TARGET_DIR/release/prh-native" bench train "$@"
