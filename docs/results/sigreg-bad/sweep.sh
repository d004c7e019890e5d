#!/bin/bash
# Why SIGReg's bad-view encoders stay far from the theorem's prediction (issue 19).
#
# Retrains the demo's SIGReg bad-view encoders standalone from one demo folder's run
# configs (`prh-native train --config DEMO/<run>/config.toml`), with SIGReg's weight
# lambda swept and the plateau rule off, and restarts the symbol runs from the spectral
# bad-view encoders (which hold F) with SIGReg for another 2,000 steps. Then analyse.py
# prints, per pair: mutual 10-NN over the 192 clean states, each encoder's CKA and
# sin-theta to F, and the share of each encoder's variance per factor.
#
#   bash docs/results/sigreg-bad/sweep.sh DEMO OUT      # ~6 minutes on 2 cores
#   python3 -B docs/results/sigreg-bad/analyse.py DEMO OUT
#
# DEMO: a `prh-native demo --out DEMO` folder (default world); OUT: a scratch folder.
set -euo pipefail
demo=$1
out=$2
bin=${PRH_NATIVE:-target/release/prh-native}
mkdir -p "$out"
pair() { # name source-run-stem settings...
    local name=$1 src=$2
    shift 2
    for side in image text; do
        rm -rf "$out/$name-$side"
        "$bin" train --config "$demo/${src}_$side/config.toml" --out "$out/$name-$side" --quiet "$@" >/dev/null
    done
}
# Symbols: the demo's settings (plateau rule on), then lambda to the end of the budget.
pair sym-demo symbolic_sigreg_bad
for l in 0.01 0.02 0.05 0.1 0.2 0.5 1.0 2.0; do
    pair "sym-l$l" symbolic_sigreg_bad --set loss.lambda=$l --set run.plateau_window=0
done
# Renderings: the demo's settings at three weights.
for l in 0.05 0.5 1.0; do
    pair "ren-l$l" sigreg_bad --set loss.lambda=$l
done
# From F: the spectral bad-view symbol encoders, resumed with SIGReg (lambda 0.05, no
# closed-form head) for 2,000 more steps.
for side in image text; do
    rm -rf "$out/sym-fromF-$side"
    cp -r "$demo/symbolic_spectral_bad_$side" "$out/sym-fromF-$side"
    python3 - "$out/sym-fromF-$side/config.toml" <<'PY'
import re, sys
p = sys.argv[1]
t = open(p).read()
t = t.replace('kind = "spectral"', 'kind = "sigreg"').replace("features = 33", "features = 0")
t = re.sub(r"^steps = (\d+)", lambda m: f"steps = {2 * int(m.group(1))}", t, count=1, flags=re.M)
open(p, "w").write(t)
PY
    "$bin" train --resume "$out/sym-fromF-$side" --quiet >/dev/null
done
