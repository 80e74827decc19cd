#!/usr/bin/env python3
"""The one-way layers of docs/ARCHITECTURE.md, checked on the source: every project #include must point
at the including layer or one below it, and the folder-level include graph must have no cycle.
The build enforces the same (each layer compiles against its own include root), so this test mainly
prints the graph and names the offending line when someone edits CMakeLists.txt. Exit 0 = layers hold."""
import os
import re
import sys

# folder -> layer, and what each layer may include (besides itself); keep in step with CMakeLists.txt.
FOLDERS = {
    "common": "common", "physics": "physics", "model": "model", "platform": "platform",
    "kernels/cpu": "cpu", "kernels/cuda": "cuda", "io": "io", "engine": "engine", "prepare": "prepare",
    "app": "app", "python": "python",
}
BELOW = {
    "common": set(), "physics": set(), "model": {"common", "physics"},
    "platform": {"model", "common", "physics"},
    "cpu": {"platform", "model", "common", "physics"}, "cuda": {"platform", "model", "common", "physics"},
    "io": {"model", "common", "physics"},
    "engine": {"io", "cpu", "cuda", "platform", "model", "common", "physics"},
    # Above the engine nothing includes a platform (kernels/cpu, kernels/cuda): the engine chooses and makes them.
    "prepare": {"engine", "io", "platform", "model", "common", "physics"},
    # The command line talks to the engine (and prepare); it reads configs and writes files through io.
    "app": {"prepare", "engine", "io", "model", "common"},
    "python": {"engine", "io", "platform", "model", "common", "physics"},  # the Python module binds the engine
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE = (".hpp", ".cpp", ".cu", ".cuh", ".in")


def layer_of(path):
    for folder in sorted(FOLDERS, key=len, reverse=True):
        if path == folder or path.startswith(folder + "/"):
            return FOLDERS[folder]
    return None


def main(root):
    problems, edges = [], {}
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith(SOURCE):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                src = layer_of(path)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) == "mdsim_version.hpp":
                            continue
                        dst = layer_of(m.group(1))
                        if dst is None:
                            problems.append(f"{path}:{number}: includes {m.group(1)}, which is in no layer")
                            continue
                        if dst != src:
                            edges.setdefault(src, set()).add(dst)
                            if dst not in BELOW[src]:
                                problems.append(f"{path}:{number}: {src} includes {m.group(1)} ({dst}), "
                                                f"which is not below it")
    # Cycle check on the folder graph (depth-first search).
    state = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                problems.append("include cycle: " + " -> ".join(trail + [node, nxt]))
            elif nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    for src in sorted(edges):
        print(f"{src:8s} -> {', '.join(sorted(edges[src]))}")
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")))
