"""Which law form to fit, chosen on a validation budget (issue 20's held-out law check).

Reads a scaling results.json (default: this folder's; pass another, e.g.
docs/results/scaling/results.json for the vision measure) and compares three 3-parameter
laws of mutual 10-NN against samples n, for each objective:
  power:    a - b n^-c, c in [1e-3, 3]   (the experiment's law, crates/prh-core/src/experiments/scaling_law.rs)
  power+-:  a + b n^g, g in [-3, 3]       (the same offset power law with the exponent's sign free:
                                          g < 0 saturates, g > 0 accelerates in log n; added
                                          6 December, after both measures' test budgets were seen)
  logistic: a / (1 + exp(-k (ln n - l)))  (a sigmoid in log n: the curve's onset accelerates)
Validation: fit each form on the 4 budgets before the second-to-last one and predict it. The
form with the smaller validation error is then fitted on the 4 budgets before the last one
(the experiment's window: fit_from = 3, held_out = 7 with 8 budgets) and predicts the last,
the test budget, against its seed range. Run (no training; from any folder):
  python3 -B docs/results/scaling-multilingual/law_forms.py [RESULTS_JSON]
"""
import json
import os
import sys

import numpy as np
from scipy.optimize import least_squares

HERE = os.path.dirname(os.path.abspath(__file__))


def power_pm(n, y):
    """a + b n^g by profiling g over a grid (for fixed g the model is linear in a, b)."""
    best = None
    for g in np.concatenate([-np.geomspace(3, 1e-3, 300), np.geomspace(1e-3, 3, 300)]):
        x = n**g
        design = np.c_[np.ones_like(x), x]
        coef = np.linalg.lstsq(design, y, rcond=None)[0]
        sse = float(((design @ coef - y) ** 2).sum())
        if best is None or sse < best[0]:
            best = (sse, np.array([coef[0], coef[1], g]))
    return best[1]


FORMS = {
    "power": (lambda p, n: p[0] - p[1] * n ** (-p[2]), [0.3, 1, 0.3], [-10, -1e3, 1e-3], [10, 1e3, 3]),
    "power+-": (lambda p, n: p[0] + p[1] * n ** p[2], None, None, None),
    "logistic": (
        lambda p, n: p[0] / (1 + np.exp(-p[2] * (np.log(n) - p[1]))),
        [0.25, np.log(3e4), 1.5],
        [0, 0, 0.01],
        [1, 40, 20],
    ),
}


def fit_predict(form, mean, fit_ns, at):
    f, x0, lb, ub = FORMS[form]
    n = np.array(fit_ns, dtype=float)
    y = np.array([mean[v] for v in fit_ns])
    if x0 is None:
        p = power_pm(n, y)
    else:
        p = least_squares(lambda q: f(q, n) - y, x0, bounds=(lb, ub)).x
    return p, float(f(p, at))


def curve(points, objective):
    """Budgets in samples (ascending), {samples: mutual 10-NN per seed}, {samples: seed mean}."""
    pts = [p for p in points if p["objective"] == objective]
    ns = sorted({p["samples"] for p in pts})
    by = {n: [p["scores"]["mutual_knn"] for p in sorted(pts, key=lambda p: p["seed"]) if p["samples"] == n] for n in ns}
    mean = {n: float(np.mean(v)) for n, v in by.items()}
    return ns, by, mean


def choose(mean, fit_ns, val_n):
    """{form: (params, prediction at val_n, |error|)} for each form fitted on fit_ns, and the
    form with the smallest error (the validation choice)."""
    out = {}
    for form in FORMS:
        p, pred = fit_predict(form, mean, fit_ns, val_n)
        out[form] = (p, pred, abs(pred - mean[val_n]))
    return out, min(out, key=lambda f: out[f][2])


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results.json")
    r = json.load(open(path))
    for objective in sorted({p["objective"] for p in r["points"]}):
        report(r, objective)


def report(r, objective):
    ns, by, mean = curve(r["points"], objective)
    if len(ns) < 6:
        print(f"{objective}: {len(ns)} budgets, too few for a validation and a test budget")
        return

    def row(label, n):
        return f"{label} {int(n)}: observed {mean[n]:.4f} [{min(by[n]):.4f}, {max(by[n]):.4f}]"

    print(f"== {r.get('measure', '?')} measure, {objective}")
    val_n, test_n = ns[-2], ns[-1]
    print(row("validation budget", val_n))
    fits, chosen = choose(mean, ns[-6:-2], val_n)
    for form, (p, pred, err) in fits.items():
        inside = min(by[val_n]) <= pred <= max(by[val_n])
        print(
            f"  {form:8s} fit on {[int(v) for v in ns[-6:-2]]}: predicts {pred:.4f} "
            f"(error {err:.4f}, {'within' if inside else 'outside'} the seed range), "
            f"params {np.round(p, 4)}"
        )
    print(f"chosen on validation: {chosen}")
    print(row("test budget", test_n))
    for form in FORMS:
        p, pred = fit_predict(form, mean, ns[-5:-1], test_n)
        inside = min(by[test_n]) <= pred <= max(by[test_n])
        mark = " (chosen)" if form == chosen else ""
        print(
            f"  {form:8s} fit on {[int(v) for v in ns[-5:-1]]}: predicts {pred:.4f} "
            f"(error {abs(pred - mean[test_n]):.4f}): {'within' if inside else 'outside'} the seed range{mark}"
        )


if __name__ == "__main__":
    main()
