#!/usr/bin/env bash
# The device check of a lent GPU machine (docs/benchmarks.md, "On a GPU"), one prepared
# run: the metrics' kernel pass on CUDA against the host's pass on the same inputs, the
# pass at N = 10^5 and 10^6 on CUDA, and prh's training step on CUDA beside PyTorch's.
#
#   BIN=path/to/prh-native OUT=folder bash benches/gpu/check.sh
#
# Inputs are drawn on the GPU by benches/gpu/pairs.py (a shared 64-dim latent seen
# through two random maps plus noise, D = 768), so the two sides share neighbourhoods.
# Each stage has its own time limit, so a slow one leaves the others their time.
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
ldconfig -p | grep -E "libcuda.so|libnvrtc" | head -4
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv
nproc
stage() { echo; echo "=== $(date -u +%H:%M:%S) $*"; }

stage "inputs"
time python3 benches/gpu/pairs.py "$DATA" 20000 100000 1000000

stage "N = 20,000: host pass (16 threads) vs --device cuda"
time timeout 120 "$BIN" metrics "$DATA/a20000.npy" "$DATA/b20000.npy" --json > "$OUT/host20k.json"
time timeout 120 "$BIN" metrics "$DATA/a20000.npy" "$DATA/b20000.npy" --json \
  --device cuda --device-mib 16384 > "$OUT/cuda20k.json"
python3 benches/gpu/compare.py "$OUT/host20k.json" "$OUT/cuda20k.json"

stage "N = 1,000,000 on cuda (--null 10)"
time timeout 330 "$BIN" metrics "$DATA/a1000000.npy" "$DATA/b1000000.npy" --json --null 10 \
  --device cuda --device-mib 32768 > "$OUT/cuda1m.json"
cat "$OUT/cuda1m.json"; echo

stage "N = 100,000: --device cuda, then the host pass (16 threads)"
time timeout 60 "$BIN" metrics "$DATA/a100000.npy" "$DATA/b100000.npy" --json \
  --device cuda --device-mib 32768 > "$OUT/cuda100k.json"
time timeout 120 "$BIN" metrics "$DATA/a100000.npy" "$DATA/b100000.npy" --json > "$OUT/host100k.json"
python3 benches/gpu/compare.py "$OUT/host100k.json" "$OUT/cuda100k.json"

stage "training step on cuda beside PyTorch on cuda"
time timeout 150 "$BIN" bench train --device cuda --sizes tiny,bert-s --batch 64 --len 64 \
  --steps 10 --warmup 3 --threads 1 --replicas 1 --peak-n 4096
stage "done"
