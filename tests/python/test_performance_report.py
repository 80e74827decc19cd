#!/usr/bin/env python3
"""bench/performance_report.py on the committed benchmark CSVs (docs/performance/), into a scratch copy of a
document: every CSV row becomes a table row with its figures, the text outside the markers is kept, the
block is replaced (not added) on a second run, the SVG is well-formed with a point per mdsim figure and per
recorded peer figure, and a document without the markers is refused.

    test_performance_report.py SOURCE_DIR SCRATCH_DIR
"""
import csv
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

source, scratch = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
scratch.mkdir(parents=True, exist_ok=True)
script = source / "bench" / "performance_report.py"
csvs = sorted((source / "docs" / "performance").glob("*.csv"))
failures = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        failures.append(what)


check(len(csvs) >= 1, f"benchmark CSV files in docs/performance: {len(csvs)}")
doc, plot = scratch / "perf.md", scratch / "perf.svg"
doc.write_text("before\n<!-- performance-suite:begin -->\nold\n<!-- performance-suite:end -->\nafter\n")
run = lambda d: subprocess.run([sys.executable, str(script), "--doc", str(d), "--svg", str(plot)] + [str(c) for c in csvs],
                               capture_output=True, text=True)
r = run(doc)
check(r.returncode == 0, f"the report runs (rc {r.returncode}) {r.stderr.strip()}")
text = doc.read_text()
check(text.startswith("before\n") and text.endswith("after\n") and "\nold\n" not in text, "text outside the markers kept, block replaced")
rows = [row for c in csvs for row in csv.DictReader(open(c, newline=""))]
for row in rows:
    line = next((l for l in text.splitlines() if f"| {int(row['atoms']):,} | {row['gpu']} |" in l and
                 f"| {float(row['us_per_step']):.1f} |" in l), None)
    check(line is not None, f"table row for {row['gpu']} {row['system']} ({row['us_per_step']} µs/step)")
run(doc)
check(doc.read_text().count("<!-- performance-suite:begin -->") == 1 and doc.read_text().count("| system (settings) |") == 1,
      "a second run replaces the block")
root = ET.parse(plot).getroot()
circles = [e for e in root.iter() if e.tag.endswith("circle")]
mdsim_points = sum(1 for row in rows if row["system"].startswith("dhfr_"))
peer_points = 3 * 2  # OpenMM and GROMACS at 1, 8 and 64 DHFR copies
check(len(circles) == mdsim_points + peer_points, f"SVG points: {len(circles)} (expected {mdsim_points} + {peer_points})")
bare = scratch / "bare.md"
bare.write_text("no markers\n")
r = run(bare)
check(r.returncode != 0 and "markers" in (r.stderr + r.stdout), "a document without the markers is refused")
print("test_performance_report: " + ("all passed" if not failures else f"{len(failures)} failed"))
sys.exit(1 if failures else 0)
