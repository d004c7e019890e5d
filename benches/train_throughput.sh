#!/usr/bin/env bash
# Training throughput (tokens/s) of `prh-native train` for the tiny and bert-s encoders
# on the CPU, printed beside the equivalent PyTorch step (benches/torch_step.py) measured
# in the same run. Not a test: numbers depend on the machine.
#
#   benches/train_throughput.sh [STEPS]        (needs $PRH_DATA or ../shared/data)
#
# prh counts non-pad tokens; its batch is BATCH groups x 8 views of mean length L
# (measured from the run and passed to PyTorch as a fixed length).
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS=${1:-4}
BATCH=${BATCH:-8}     # groups per step (x 8 views = sequences)
BIN=${PRH_BIN:-target/debug/prh-native}   # the dev profile builds deps at opt-level 2
[ -x "$BIN" ] || cargo build -p prh-native
TMP=$(mktemp -d)
printf "%-8s %10s %14s %14s\n" model steps "prh tok/s" "torch tok/s"
for size in tiny bert-s; do
  case $size in tiny) dims="--d 64 --layers 2 --heads 4 --dff 128";; bert-s) dims="--d 384 --layers 12 --heads 6 --dff 1536";; esac
  "$BIN" train --config configs/tiny.toml --out "$TMP/$size" --set model.size=\"$size\" \
    --set run.steps=$((STEPS + 1)) --set run.log_every=1 --set views.batch_size=$BATCH >/dev/null 2>&1
  # Skip step 1 (warm-up); tokens/s and mean tokens per sequence from metrics.jsonl.
  read -r prh len < <(python3 - "$TMP/$size/metrics.jsonl" "$BATCH" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])][1:]
seqs = 8 * int(sys.argv[2])
print(sum(r["items_per_s"] for r in rows) / len(rows), max(1, round(sum(r["items"] for r in rows) / len(rows) / seqs)))
PY
)
  torch=$(python3 benches/torch_step.py $dims --vocab 2000 --seqs $((8 * BATCH)) --len "$len" --steps "$STEPS" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin); print(round(r["tokens_per_s"]) if "tokens_per_s" in r else r["error"])')
  printf "%-8s %10s %14.0f %14s\n" "$size" "$STEPS" "$prh" "$torch"
done
rm -rf "$TMP"
