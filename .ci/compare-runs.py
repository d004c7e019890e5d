#!/usr/bin/env python3
"""Field-by-field comparison of two report folders (a refactor's proof of no change).

usage: compare-runs.py BEFORE_DIR AFTER_DIR

Walks both folders; for every file present in either:
- .json: parsed and compared field by field (numbers exactly: the runs are seeded and
  bit-repeatable); fields that measure wall time are listed and skipped;
- .jsonl: the same, line by line;
- .safetensors: metadata field by field and every tensor's dtype, shape and bytes (the
  header's key order is a hash map's);
- anything else (.md, .svg, .npy, .toml, checkpoints): compared byte for byte, except
  lines of text files that state a wall time.
Prints one line per difference and a summary; exits 1 on any difference.
"""
import json
import os
import re
import sys

# Keys whose values are wall-clock measurements (differ run to run by design), and the
# command line (it names the two folders compared).
TIME_KEY = re.compile(r"(^|_)(s|secs?|seconds|elapsed|wall|per_sec|rate|throughput|now|t)$|samples_per_s|items_per_s|_ms$|^duration|^command$")
# Text lines that state a wall time ("(4.3 s)", "in 12.1 s", "123 ms").
TIME_TEXT = re.compile(r"\d+(\.\d+)?\s*(s|ms|min)\b|Command: .*")


def walk(root):
    out = set()
    for d, _, files in os.walk(root):
        for f in files:
            out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def cmp_json(a, b, path, diffs, skipped):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}"
            if TIME_KEY.search(k):
                skipped.add(k)
                continue
            if k not in a or k not in b:
                diffs.append(f"{p}: only in {'after' if k not in a else 'before'}")
                continue
            cmp_json(a[k], b[k], p, diffs, skipped)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: length {len(a)} vs {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            cmp_json(x, y, f"{path}[{i}]", diffs, skipped)
    elif a != b:
        diffs.append(f"{path}: {a!r} vs {b!r}")


def safetensors_parts(raw):
    """(metadata, {name: (dtype, shape, bytes)}) of a safetensors file: its header's JSON
    object order (and so the bytes) may differ run to run (a hash map), its content not."""
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = raw[8 + n:]
    return meta, {k: (v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
                  for k, v in header.items()}


def main():
    before, after = sys.argv[1], sys.argv[2]
    files = sorted(walk(before) | walk(after))
    diffs, skipped, same = [], set(), 0
    for rel in files:
        pa, pb = os.path.join(before, rel), os.path.join(after, rel)
        if not os.path.exists(pa) or not os.path.exists(pb):
            diffs.append(f"{rel}: only in {'after' if not os.path.exists(pa) else 'before'}")
            continue
        ra, rb = open(pa, "rb").read(), open(pb, "rb").read()
        if ra == rb:
            same += 1
            continue
        n0 = len(diffs)
        if rel.endswith(".safetensors"):
            (ma, ta), (mb, tb) = safetensors_parts(ra), safetensors_parts(rb)
            cmp_json(ma, mb, f"{rel}:metadata", diffs, skipped)
            for k in sorted(set(ta) | set(tb)):
                if ta.get(k) != tb.get(k):
                    diffs.append(f"{rel}: tensor {k} differs")
        elif rel.endswith(".json"):
            cmp_json(json.loads(ra), json.loads(rb), rel, diffs, skipped)
        elif rel.endswith(".jsonl"):
            la, lb = ra.decode().splitlines(), rb.decode().splitlines()
            if len(la) != len(lb):
                diffs.append(f"{rel}: {len(la)} vs {len(lb)} lines")
            for i, (x, y) in enumerate(zip(la, lb)):
                cmp_json(json.loads(x), json.loads(y), f"{rel}:{i + 1}", diffs, skipped)
        else:
            try:
                la, lb = ra.decode().splitlines(), rb.decode().splitlines()
            except UnicodeDecodeError:
                diffs.append(f"{rel}: binary files differ")
                continue
            if len(la) != len(lb):
                diffs.append(f"{rel}: {len(la)} vs {len(lb)} lines")
            for i, (x, y) in enumerate(zip(la, lb)):
                if x != y and not (TIME_TEXT.search(x) and TIME_TEXT.sub("", x) == TIME_TEXT.sub("", y)):
                    diffs.append(f"{rel}:{i + 1}: {x[:100]!r} vs {y[:100]!r}")
        if len(diffs) == n0:
            same += 1
    for d in diffs[:200]:
        print("DIFF", d)
    print(f"{len(files)} files: {same} equal (timings aside), {len(diffs)} differences; "
          f"wall-time keys skipped: {', '.join(sorted(skipped)) or 'none'}")
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
