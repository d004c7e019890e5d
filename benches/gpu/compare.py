"""Every metric of two `prh-native metrics --json` reports side by side, with the
absolute difference.   python3 compare.py HOST.json DEVICE.json"""
import json
import sys

METRICS = ["mutual_knn", "cycle_knn", "lcs_knn", "cka", "cka_rbf", "unbiased_cka",
           "cknna", "svcca", "edit_distance_knn", "null_mutual_knn_mean",
           "tied_lists_a", "tied_lists_b"]
host, dev = (json.load(open(p)) for p in sys.argv[1:3])
print(f"{'metric':<22}{'host':>14}{'device':>14}{'|diff|':>12}")
for name in METRICS:
    v, w = host.get(name), dev.get(name)
    if isinstance(v, (int, float)) and isinstance(w, (int, float)):
        print(f"{name:<22}{v:>14.6f}{w:>14.6f}{abs(v - w):>12.2e}")
