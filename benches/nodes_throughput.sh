#!/usr/bin/env bash
# Multi-node training overhead on this machine's loopback (docs/scaling.md): the same
# text-JEPA run (configs/tiny.toml on Multi30k, one replica per process) as 1, 2 and 4
# processes joined by burn's collective engine; tokens/s of the whole run from node 0's
# metrics.jsonl (median of the logged intervals after the first).
#
#   benches/nodes_throughput.sh [SIZE [BATCH [STEPS]]]     # default: tiny 32 40
#
# On a 2-core machine N processes share 2 cores, so this measures the engine's overhead
# (serialising, the ring's transfers, the sync) and the loss of per-process parallelism,
# not a speed-up. Builds a release binary in its own target dir (target-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-tiny}; BATCH=${2:-32}; STEPS=${3:-40}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target-bench}
cargo build --release -p prh-native ${PRH_FEATURES:+--features "$PRH_FEATURES"} >&2
BIN="$CARGO_TARGET_DIR/release/prh-native"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
LOG=$(( STEPS / 8 > 0 ? STEPS / 8 : 1 ))
SETS=(--set "model.size=\"$SIZE\"" --set "views.batch_size=$BATCH" --set "run.steps=$STEPS"
      --set "run.log_every=$LOG" --set run.checkpoint_every=100000 --set eval.pairs=false)
# One tokenizer for every run (training one takes time and ties break per process).
"$BIN" train --config configs/tiny.toml --out "$WORK/tok" "${SETS[@]}" --set run.steps=1 --quiet >&2
SETS+=(--set "tokenizer.path=$WORK/tok/tokenizer.json")
printf '| processes | tokens/s | vs 1 process | s/step |\n|---|---|---|---|\n'
BASE=""
for N in 1 2 4; do
  PORT=$(( 29900 + 10 * N ))
  for R in $(seq 1 $(( N - 1 ))); do
    "$BIN" train --config configs/tiny.toml --out "$WORK/n$N" "${SETS[@]}" --quiet \
      --nodes "$N" --node-rank "$R" --coordinator "127.0.0.1:$PORT" >&2 &
  done
  "$BIN" train --config configs/tiny.toml --out "$WORK/n$N" "${SETS[@]}" --quiet \
    --nodes "$N" --node-rank 0 --coordinator "127.0.0.1:$PORT" >&2
  wait
  read -r TPS STEP_S < <(python3 - "$WORK/n$N/metrics.jsonl" "$LOG" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])][1:]
tps = statistics.median(r["items_per_s"] for r in rows)
step_s = statistics.median(r["items"] / r["items_per_s"] / int(sys.argv[2]) for r in rows)
print(f"{tps:.0f} {step_s:.3f}")
PY
)
  BASE=${BASE:-$TPS}
  printf '| %d | %s | %.2fx | %s |\n' "$N" "$TPS" "$(python3 -c "print($TPS/$BASE)")" "$STEP_S"
done
