#!/usr/bin/env python3
"""The benchmark table and plot of docs/PERFORMANCE.md from bench/performance_suite.sh's CSV files.

    python3 bench/performance_report.py [--doc DOC.md] [--svg PLOT.svg] performance_H100.csv [performance_H200.csv ...]

Writes docs/performance.svg (ns/day against atoms, log-log: mdsim on each GPU of the files, and OpenMM 8's
and GROMACS's figures recorded on the H100 in issue 18) and replaces the part of docs/PERFORMANCE.md
between the markers `<!-- performance-suite:begin -->` and `<!-- performance-suite:end -->` with the
table. --doc and --svg name other files (tests/python/test_performance_report.py). Standard library only
(the SVG is written directly).
"""
import argparse
import csv
import math
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "PERFORMANCE.md"
SVG = ROOT / "docs" / "performance.svg"
BEGIN, END = "<!-- performance-suite:begin -->", "<!-- performance-suite:end -->"

LABELS = {
    "dhfr_1": "DHFR, benchmark settings (4 fs)",
    "dhfr_2": "DHFR 2×2×2, benchmark settings",
    "dhfr_3": "DHFR 3×3×3, benchmark settings",
    "dhfr_4": "DHFR 4×4×4, benchmark settings",
    "amber14": "DHFR, amber14, PME 1.0 nm, 2 fs",
}
# ns/day on one H100, OpenMM 8's CUDA platform and GROMACS 2027-dev's GPU-resident step, each timed in the
# same device run as mdsim (issue 18: ranges over its runs; the plot uses their middle).
PEERS = {
    "dhfr_1": {"OpenMM 8": (1602, 1668), "GROMACS": (2188, 2298)},
    "amber14": {"OpenMM 8": (861, 864)},
    "dhfr_2": {"OpenMM 8": (452, 452), "GROMACS": (385, 385)},
    "dhfr_4": {"OpenMM 8": (54.8, 54.8), "GROMACS": (55.2, 55.2)},
}
ATOMS = {"dhfr_1": 23558, "amber14": 23558, "dhfr_2": 188464, "dhfr_3": 636066, "dhfr_4": 1507712}
SERIES = ["dhfr_1", "dhfr_2", "dhfr_3", "dhfr_4"]  # the benchmark-settings line
COLOURS = ["#1f77b4", "#17becf", "#9467bd", "#8c564b"]
PEER_COLOURS = {"OpenMM 8": "#d62728", "GROMACS": "#2ca02c"}


def read(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def fmt_range(lo, hi):
    return f"{lo:,.4g}" if lo == hi else f"{lo:,.4g}–{hi:,.4g}"


def table(rows):
    gpus = list(dict.fromkeys(r["gpu"] for r in rows))
    out = ["| system (settings) | atoms | GPU | mdsim µs/step | mdsim ns/day | context device memory (MiB, bytes/atom) "
           "| OpenMM 8 ns/day (H100) | GROMACS ns/day (H100) | mdsim ÷ best peer |",
           "|---|---|---|---|---|---|---|---|---|"]
    for system in LABELS:
        for gpu in gpus:
            r = next((r for r in rows if r["system"] == system and r["gpu"] == gpu), None)
            if r is None:
                continue
            peers = PEERS.get(system, {})
            best = max((hi for lo, hi in peers.values()), default=None)
            nsd = float(r["ns_per_day"])
            ratio = f"{nsd / best:.2f}" if best and "H100" in gpu else "—"
            out.append(f"| {LABELS[system]} | {int(r['atoms']):,} | {gpu} | {float(r['us_per_step']):.1f} | {nsd:,.1f} | "
                       f"{float(r['context_mib']):,.0f} ({float(r['bytes_per_atom']):,.0f}) | "
                       f"{fmt_range(*peers['OpenMM 8']) if 'OpenMM 8' in peers else '—'} | "
                       f"{fmt_range(*peers['GROMACS']) if 'GROMACS' in peers else '—'} | {ratio} |")
    return "\n".join(out)


def svg(rows):
    w, h, left, right, top, bottom = 760, 480, 80, 220, 30, 60
    xs = [math.log10(a) for a in (1e4, 3e6)]
    ys = [math.log10(v) for v in (20, 5000)]

    def px(atoms):
        return left + (math.log10(atoms) - xs[0]) / (xs[1] - xs[0]) * (w - left - right)

    def py(nsd):
        return h - bottom - (math.log10(nsd) - ys[0]) / (ys[1] - ys[0]) * (h - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
             f'<rect width="{w}" height="{h}" fill="white"/>']
    for v in (20, 50, 100, 200, 500, 1000, 2000, 5000):
        y = py(v)
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{w - right}" y2="{y:.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{v:,}</text>')
    for a in (1e4, 3e4, 1e5, 3e5, 1e6, 3e6):
        x = px(a)
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{h - bottom}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{h - bottom + 16}" text-anchor="middle">{a:,.0f}</text>')
    parts.append(f'<text x="{(left + w - right) / 2}" y="{h - 15}" text-anchor="middle">atoms</text>')
    parts.append(f'<text x="18" y="{(top + h - bottom) / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 18 {(top + h - bottom) / 2})">ns/day</text>')
    legend = []

    def line(points, colour, label, dashed=False):
        points = sorted(points)
        if len(points) > 1:
            d = " ".join(f"{px(a):.1f},{py(v):.1f}" for a, v in points)
            dash = ' stroke-dasharray="5,4"' if dashed else ""
            parts.append(f'<polyline points="{d}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
        for a, v in points:
            parts.append(f'<circle cx="{px(a):.1f}" cy="{py(v):.1f}" r="4" fill="{colour}"/>')
        legend.append((colour, label, dashed))

    for k, gpu in enumerate(dict.fromkeys(r["gpu"] for r in rows)):
        colour = COLOURS[k % len(COLOURS)]
        pts = [(int(r["atoms"]), float(r["ns_per_day"])) for r in rows if r["gpu"] == gpu and r["system"] in SERIES]
        line(pts, colour, f"mdsim, {gpu}")
        for r in rows:
            if r["gpu"] == gpu and r["system"] == "amber14":
                x, y = px(int(r["atoms"])), py(float(r["ns_per_day"]))
                parts.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="none" stroke="{colour}" '
                             f'stroke-width="2"/>')
    for peer, colour in PEER_COLOURS.items():
        pts = [(ATOMS[s], 0.5 * (lo + hi)) for s, p in PEERS.items() if s in SERIES and peer in p for lo, hi in [p[peer]]]
        line(pts, colour, f"{peer}, H100 (issue 18)", dashed=True)
        if "amber14" in PEERS and peer in PEERS["amber14"]:
            lo, hi = PEERS["amber14"][peer]
            x, y = px(ATOMS["amber14"]), py(0.5 * (lo + hi))
            parts.append(f'<rect x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" fill="none" stroke="{colour}" '
                         f'stroke-width="2"/>')
    for k, (colour, label, dashed) in enumerate(legend):
        y = top + 10 + 20 * k
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        parts.append(f'<line x1="{w - right + 15}" y1="{y}" x2="{w - right + 40}" y2="{y}" stroke="{colour}" '
                     f'stroke-width="2"{dash}/>')
        parts.append(f'<text x="{w - right + 46}" y="{y + 4}">{label}</text>')
    y = top + 10 + 20 * len(legend)
    parts.append(f'<rect x="{w - right + 23}" y="{y - 4}" width="8" height="8" fill="none" stroke="#555" stroke-width="2"/>')
    parts.append(f'<text x="{w - right + 46}" y="{y + 4}">amber14, 2 fs</text>')
    parts.append(f'<text x="{w - right + 15}" y="{y + 24}">lines: benchmark settings,</text>')
    parts.append(f'<text x="{w - right + 15}" y="{y + 40}">DHFR and its replicas</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+", help="bench/performance_suite.sh's CSV files")
    parser.add_argument("--doc", type=pathlib.Path, default=DOC, help="the Markdown file with the markers")
    parser.add_argument("--svg", type=pathlib.Path, default=SVG, help="the plot to write")
    args = parser.parse_args()
    rows = read(args.csv)
    text = args.doc.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"{args.doc}: the markers {BEGIN} and {END} are missing")
    args.svg.write_text(svg(rows))
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = f"{BEGIN}\n{table(rows)}\n\n![ns/day against atoms]({args.svg.name})\n{END}"
    args.doc.write_text(head + block + tail)
    print(table(rows))


if __name__ == "__main__":
    main()
