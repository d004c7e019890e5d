"""Which law form to fit, chosen on a validation budget (issue 20's held-out law check).

Reads this folder's results.json (good views, 3 seeds per budget) and compares two
3-parameter laws of mutual 10-NN against samples n:
  power:    a - b n^-c            (the experiment's law, crates/prh-core/src/experiments/scaling_law.rs)
  logistic: a / (1 + exp(-k (ln n - l)))   (a sigmoid in log n: the curve's onset accelerates)
Validation: fit each on the 4 budgets before 65,536 images, predict 65,536. The form with
the smaller validation error is then fitted on 8,192-65,536 (the experiment's window,
fit_from = 3) and predicts the test budget, 131,072, against its seed range.
Run (from any folder; it finds results.json beside itself):
  python3 -B docs/results/scaling-multilingual/law_forms.py
"""
import json
import os

import numpy as np
from scipy.optimize import least_squares

HERE = os.path.dirname(os.path.abspath(__file__))
r = json.load(open(os.path.join(HERE, "results.json")))
pts = [p for p in r["points"] if p["objective"] == "good"]
ns = sorted({p["samples"] for p in pts})
by = {n: [p["scores"]["mutual_knn"] for p in pts if p["samples"] == n] for n in ns}
mean = {n: float(np.mean(v)) for n, v in by.items()}

FORMS = {
    "power": (lambda p, n: p[0] - p[1] * n ** (-p[2]), [0.3, 1, 0.3], [-10, -1e3, 1e-3], [10, 1e3, 3]),
    "logistic": (
        lambda p, n: p[0] / (1 + np.exp(-p[2] * (np.log(n) - p[1]))),
        [0.25, np.log(3e4), 1.5],
        [0, 0, 0.01],
        [1, 40, 20],
    ),
}


def fit_predict(form, fit_ns, at):
    f, x0, lb, ub = FORMS[form]
    n = np.array(fit_ns)
    y = np.array([mean[v] for v in fit_ns])
    p = least_squares(lambda q: f(q, n) - y, x0, bounds=(lb, ub)).x
    return p, float(f(p, at))


def row(label, n):
    return f"{label} {int(n)}: observed {mean[n]:.4f} [{min(by[n]):.4f}, {max(by[n]):.4f}]"


val_n, test_n = 65536.0, 131072.0
i = ns.index(val_n)
print(row("validation budget", val_n))
errors = {}
for form in FORMS:
    p, pred = fit_predict(form, ns[i - 4 : i], val_n)
    errors[form] = abs(pred - mean[val_n])
    print(f"  {form:8s} fit on {[int(v) for v in ns[i - 4:i]]}: predicts {pred:.4f} (error {errors[form]:.4f}), params {np.round(p, 4)}")
chosen = min(errors, key=errors.get)
print(f"chosen on validation: {chosen}")
j = ns.index(test_n)
p, pred = fit_predict(chosen, ns[j - 4 : j], test_n)
lo, hi = min(by[test_n]), max(by[test_n])
print(row("test budget", test_n))
print(f"  {chosen} fit on {[int(v) for v in ns[j - 4:j]]}: predicts {pred:.4f}: {'within' if lo <= pred <= hi else 'outside'} the seed range")
