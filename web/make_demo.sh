#!/usr/bin/env bash
# Rebuilds the playground's demo assets from real data (Multi30k, see ../shared/data):
#   web/assets/demo_model.prh.safetensors  a good-view English text encoder with the
#                                           views-multilingual recipe (bag of embeddings,
#                                           spectral loss, lr 5e-2, 800 steps x 128 images; issue
#                                           20), exported for the Checkpoint lab;
#   web/assets/demo_a.npy, demo_b.npy      that encoder's embeddings of caption 1 and
#                                           caption 2 of the first 300 Multi30k test_2016
#                                           images (Alignment lab demo sets: same images,
#                                           different captions = good views).
#   web/assets/demo_vision.prh.safetensors,  the views-vision experiment's good-view text
#   web/assets/demo_vision.imagenet.safetensors encoder and its ImageNet class vectors (the
#                                           Checkpoint lab's nearest-classes demo), copied
#                                           from the export of views-vision's seed-0 good
#                                           views (8,192 steps): `prh-native experiment
#                                           views-vision --out OUT --data ../shared/data
#                                           --set 'experiment.objectives=["good"]' --set
#                                           'experiment.seeds=[0]'`, then --vision OUT/export.
#   web/assets/demo_multi_en.npy, demo_multi_de.npy  the views-multilingual experiment's
#                                           good-view en and de encoders (trained apart)
#                                           on the 1,000 test_2016 images (Alignment lab),
#                                           copied from docs/results/views-multilingual/export.
#   web/assets/demo_results.json           a `prh-native demo` run's results.json (the spectral
#                                           lab's convergence card), copied from its report.
#   web/assets/demo_captioner_{symbols,pictures}.safetensors  the caption lab's captioners:
#                                           `prh-native caption --export` of a demo's
#                                           good-view spectral encoders (symbols, pictures)
#                                           with the decoders `experiment captioner` trained.
# Usage: PRH_DATA=../shared/data web/make_demo.sh [path/to/prh-native]
#        web/make_demo.sh --demo [report dir]   (only the demo's results.json)
#        web/make_demo.sh --vision [export dir]   (only the vision pair)
#        web/make_demo.sh --multilingual [export dir]   (only the en/de pair)
#        web/make_demo.sh --captioner [demo dir] [captioner dir] [prh-native]  (only the
#                                           captioners; after `prh-native demo --out DEMO`
#                                           and `prh-native experiment captioner --demo DEMO
#                                           --out CAP`)
# After a rebuild, update the reference values in web/tests/core_numerics.rs (printed by
# the `prh-native metrics` / `embed` commands below).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --multilingual ]; then
  EXPORT=${2:-docs/results/views-multilingual/export}
  cp "$EXPORT/good.en.test.npy" web/assets/demo_multi_en.npy
  cp "$EXPORT/good.de.test.npy" web/assets/demo_multi_de.npy
  ls -l web/assets/demo_multi_*
  exit 0
fi
if [ "${1:-}" = --captioner ]; then
  DEMO=${2:-runs/demo}
  CAP=${3:-runs/experiments/captioner}
  NATIVE=${4:-${CARGO_TARGET_DIR:-target}/release/prh-native}
  for pair in symbols:symbolic_spectral_good pictures:spectral_good; do
    name=${pair%%:*}; run=${pair#*:}
    "$NATIVE" caption --image-run "$DEMO/${run}_image" --text-run "$DEMO/${run}_text" \
      --decoder-run "$CAP/decoder_$run" --fit 16 --map rotation \
      --export "web/assets/demo_captioner_$name.safetensors"
  done
  ls -l web/assets/demo_captioner_*
  exit 0
fi
if [ "${1:-}" = --demo ]; then
  cp "${2:-runs/demo}/results.json" web/assets/demo_results.json
  ls -l web/assets/demo_results.json
  exit 0
fi
if [ "${1:-}" = --vision ]; then
  EXPORT=${2:-docs/results/views-vision/export}
  cp "$EXPORT/good.prh.safetensors" web/assets/demo_vision.prh.safetensors
  cp "$EXPORT/good.imagenet.safetensors" web/assets/demo_vision.imagenet.safetensors
  ls -l web/assets/demo_vision.*
  exit 0
fi
NATIVE=${1:-${CARGO_TARGET_DIR:-target}/release/prh-native}
DATA=${PRH_DATA:?set PRH_DATA to the data folder}
WORK=$(mktemp -d)
RECIPE=(--set 'model.size="custom"' --set model.d_model=128 --set model.layers=0 --set model.heads=4
  --set model.d_ff=256 --set 'loss.kind="spectral"' --set optim.lr=5e-2 --set optim.warmup_steps=50
  --set views.batch_size=128 --set views.n_global=5 --set views.n_local=0 --set run.steps=800
  --set tokenizer.vocab_size=4000 --set run.checkpoint_every=400 --set run.eval_every=0)
"$NATIVE" train --config configs/good-en.toml "${RECIPE[@]}" --data "$DATA" --out "$WORK/run"
"$NATIVE" export --run "$WORK/run" --out web/assets/demo_model.prh.safetensors
zcat "$DATA/multi30k/task2/raw/test_2016.1.en.gz" | sed -n 1,300p > "$WORK/cap1.txt"  # sed reads to the end: head would SIGPIPE zcat under pipefail
zcat "$DATA/multi30k/task2/raw/test_2016.2.en.gz" | sed -n 1,300p > "$WORK/cap2.txt"
"$NATIVE" embed --run "$WORK/run" --texts "$WORK/cap1.txt" --out web/assets/demo_a.npy
"$NATIVE" embed --run "$WORK/run" --texts "$WORK/cap2.txt" --out web/assets/demo_b.npy
"$NATIVE" metrics web/assets/demo_a.npy web/assets/demo_b.npy --json
printf 'a man rides a bicycle down the street\na cyclist pedals along a city road\ntwo dogs play in the snow\n' > "$WORK/texts3.txt"
"$NATIVE" embed --run "$WORK/run" --texts "$WORK/texts3.txt" --out "$WORK/emb3.npy"
python3 -c "import numpy as np, sys; e = np.load(sys.argv[1]); print(e[:, :4].tolist()); print(np.linalg.norm(e.astype(np.float64), axis=1).tolist())" "$WORK/emb3.npy"
rm -rf "$WORK"
