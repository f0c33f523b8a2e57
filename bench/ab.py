#!/usr/bin/env python3
"""Prints an A/B table of two or more `fdlab bench --json` files of the same suite, run side by
side in one machine start: each row's % of the copy measured in its own run, per binary.

    python3 bench/ab.py --label old --label new old.json new.json

Rows are matched by suite, case, precision, shape and (for stencil rows) strategy; the last
column is the change of the last file against the first, in points of % of copy.
"""
import argparse
import json


def rows(path):
    with open(path) as f:
        data = json.load(f)
    out = {}
    for r in data.get("results", []) + data.get("solvers", []):
        key = (
            r.get("suite", ""),
            r["case"],
            r.get("precision", ""),
            "×".join(map(str, r.get("shape", []))),
            r.get("strategy", ""),
            r.get("steps_per_pass", ""),
        )
        out[key] = r
    return data["meta"], out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--label", action="append", default=[], help="a name per file, in order")
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    labels = a.label or [f"run {i + 1}" for i in range(len(a.files))]
    runs = [rows(f) for f in a.files]
    print(f"| suite | case | precision | shape | strategy / steps a pass | "
          + " | ".join(f"{l} %" for l in labels) + " | Δ points |")
    print("|---" * (6 + len(labels)) + "|")
    keys = list(runs[0][1].keys())
    for k in keys:
        vals = [r[1].get(k, {}).get("pct_of_copy") for r in runs]
        cells = [f"{v:.1f}" if v is not None else "–" for v in vals]
        delta = (
            f"{vals[-1] - vals[0]:+.1f}" if vals[0] is not None and vals[-1] is not None else "–"
        )
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4] or k[5]} | "
              + " | ".join(cells) + f" | {delta} |")
    for l, (meta, _) in zip(labels, runs):
        print(f"\n{l}: {meta.get('git_sha')}, copy {meta.get('copy_gbps', 0):.0f} GB/s, "
              f"{meta.get('device')}")


if __name__ == "__main__":
    main()
