#!/usr/bin/env python3
"""Prints a Markdown table from `fdlab bench --json` files, as README.md and BENCHMARKS.md show.

    python3 bench/table.py bench/results/h100/roofline.json          # every row
    python3 bench/table.py --best bench/results/h100/roofline.json   # fastest strategy per case

The first lines name the device, the copy bandwidth, the commit and the command of each file.
"""
import argparse
import json

LABELS = {
    "lap3d-7pt": "7-point Laplacian, interior",
    "lap3d-25pt": "25-point Laplacian, interior",
    "lap3d-7pt-periodic": "probe: 7-point Laplacian, periodic",
    "d1x-8th": "8th-order d/dx, periodic",
    "d1y-8th": "8th-order d/dy, periodic",
    "d1z-8th": "8th-order d/dz, periodic",
    "d1x-8th-published-grid": "8th-order d/dx, NVIDIA's grid",
    "gradient-8th": "gradient (3 × 8th order), periodic",
    "lap2d-5pt": "5-point Laplacian, periodic",
    "lap1d-3pt": "3-point Laplacian, periodic",
    "fanout-3": "ceiling: 3 copies of the input",
    "zdiff-2pt": "ceiling: z difference",
    "ydiff2d-2pt": "ceiling: y difference (2-D)",
}


def shape(s):
    s = [n for n in s if n != 1] or [1]
    if len(set(s)) == 1:
        return f"{s[0]}{'²³'[len(s) - 2] if len(s) > 1 else ''}"
    return "×".join(map(str, s))


def row(r):
    t = r["time_ms"]["median"]
    if r.get("graph_us") is not None or r.get("latency_bound"):
        speed = f"{t * 1000:.1f} µs per launch"
        if r.get("back_to_back_us") is not None:
            speed += f", {r['back_to_back_us']:.1f} µs back to back"
        if r.get("graph_us") is not None:
            speed += f", {r['graph_us']:.2f} µs per graph replay"
        pct = "latency"
    else:
        speed = f"{r['gbps']:.0f} GB/s"
        pct = f"{r['pct_of_copy']:.1f}%" if r.get("pct_of_copy") is not None else "—"
    label = LABELS.get(r["case"], r["case"])
    return (f"| {label} | {shape(r['shape'])} | {r['precision']} | **{pct}** | {speed} "
            f"| `{r['strategy']}` |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--best", action="store_true", help="only the fastest strategy per case")
    a = ap.parse_args()
    for f in a.files:
        d = json.load(open(f))
        m = d["meta"]
        print(f"<!-- {f}: {m.get('device')}, copy {m.get('copy_gbps', 0):.0f} GB/s, "
              f"commit {m.get('git_sha', '?')[:7]}, {m.get('date', '?')} -->")
        print(f"<!-- command: {m.get('command', '?')} -->")
        print("| stencil | size | type | % of copy | speed | strategy |")
        print("|---|---|---|---|---|---|")
        rows = d["results"]
        if a.best:
            best = {}
            for r in rows:
                k = (r["suite"], r["case"], tuple(r["shape"]), r["precision"])
                if k not in best or r["time_ms"]["median"] < best[k]["time_ms"]["median"]:
                    best[k] = r
            rows = list(best.values())
        for r in rows:
            print(row(r))
        print()


if __name__ == "__main__":
    main()
