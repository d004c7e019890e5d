#!/usr/bin/env bash
# The device check of a lent GPU machine (docs/benchmarks.md, "Large N on a GPU"), one
# prepared run of about 9 minutes: the metrics' kernel pass on CUDA against the host's
# pass on the same inputs, prh's training step on CUDA beside PyTorch's, and the pass at
# N = 10^5 and 10^6 on CUDA with each stage's time (PRH_DEVICE_PROFILE=1).
#
#   BIN=path/to/prh-native OUT=folder bash benches/gpu/check.sh
#
# Inputs are drawn on the GPU by benches/gpu/pairs.py (a shared 64-dim latent seen
# through two random maps plus noise, D = 768), so the two sides share neighbourhoods.
# Each stage has its own time limit, so a slow one leaves the others their time. The
# 4 December 2026 run (docs/results/gpu-metrics/) used the first version of this script:
# N = 20,000 for the agreement check, which took 77 s on that machine's host pass.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-.dev/prh-native}
OUT=${OUT:-/tmp/prh-gpu}
DATA=${DATA:-/tmp/prh-gpu-data}
mkdir -p "$OUT" "$DATA"
TIMEFORMAT='  [%R s wall]'
# cubecl's CUDA runtime loads libcuda and NVRTC at run time and compiles kernels with the
# toolkit's headers.
if [ -d /usr/local/cuda ]; then
  export CUDA_PATH=${CUDA_PATH:-/usr/local/cuda}
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
nproc
stage() { echo; echo "=== $(date -u +%H:%M:%S) $*"; }

stage "inputs"
time python3 benches/gpu/pairs.py "$DATA" 10000 100000 1000000

stage "N = 10,000: host pass vs --device cuda (no null)"
time timeout 60 "$BIN" metrics "$DATA/a10000.npy" "$DATA/b10000.npy" --json --null 0 > "$OUT/host10k.json"
time timeout 60 "$BIN" metrics "$DATA/a10000.npy" "$DATA/b10000.npy" --json --null 0 \
  --device cuda > "$OUT/cuda10k.json"
python3 benches/gpu/compare.py "$OUT/host10k.json" "$OUT/cuda10k.json"

stage "training step on cuda beside PyTorch on cuda"
time timeout 120 "$BIN" bench train --device cuda --sizes tiny,bert-s --batch 64 --len 64 \
  --steps 10 --warmup 3 --threads 1 --replicas 1 --peak-n 4096

export PRH_DEVICE_PROFILE=1
stage "N = 100,000 on cuda (no null), stage times"
time timeout 60 "$BIN" metrics "$DATA/a100000.npy" "$DATA/b100000.npy" --json --null 0 \
  --device cuda --device-mib 32768 > "$OUT/cuda100k.json"

stage "N = 1,000,000 on cuda (no null), stage times"
time timeout 300 "$BIN" metrics "$DATA/a1000000.npy" "$DATA/b1000000.npy" --json --null 0 \
  --device cuda --device-mib 32768 > "$OUT/cuda1m.json"
cat "$OUT/cuda1m.json"; echo
stage "done"
