#!/usr/bin/env python3
"""No function over 100 lines in the source folders (tests excepted): every function body, brace-matched with
comments, strings and preprocessor lines stripped, counted from its signature's first line to its closing brace;
lines that hold only a comment or a preprocessor directive are not counted, blank lines are. Lambdas and local classes count with the function around them.
    check_function_length.py ROOT [--limit N] [--list M]   exit 0 = every function within the limit;
--list M prints the M longest functions (a map for whoever splits the next one)."""
import os
import re
import sys

FOLDERS = ["common", "physics", "model", "platform", "kernels", "io", "engine", "prepare", "app", "python", "fuzz"]
SOURCE = (".hpp", ".cpp", ".cu", ".cuh", ".h")
CONTAINER = re.compile(r'\b(namespace|class|struct|union|enum)\b|extern\s*"C"')
ATTRIBUTES = {"__launch_bounds__", "__attribute__", "alignas", "decltype", "MDSIM_HD"}
CONTROL = re.compile(r'^\s*(if|for|while|switch|catch|do|else|try|return)\b')


def strip(text):
    """Comments, string and character literals and preprocessor lines blanked; newlines kept."""
    out, i, n = [], 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#" :
            j = i
            while j < n:  # a preprocessor line, with its continuations
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if text[k - 1:k] == "\\":
                    out.append("\n")
                    j = k + 1
                    continue
                j = k
                break
            i = j
            continue
        if c == "\n":
            out.append(c); at_line_start = True; i += 1; continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'R"([^(\s]*)\(', text[i:i + 20])
        if m:
            end = text.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # a digit separator (1'000)
                out.append(c); i += 1; continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    """(name, first line, lines) of each outermost function body in the file."""
    raw = open(path, encoding="utf-8", errors="replace").read()
    text = strip(raw)
    raw_lines = raw.split("\n")
    found = []
    stack = []  # per open brace: "container", "function" or "block"
    stmt_start = 0  # where the current statement (at container scope) began
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in ";}" and (not stack or stack[-1] == "container"):
            if c == "}" and stack:
                stack.pop()
            stmt_start = i + 1
            i += 1
            continue
        if c == "{":
            in_function = any(k != "container" for k in stack)
            if in_function:
                stack.append("block")
            else:
                head = text[stmt_start:i]
                flat = " ".join(head.split())
                if CONTAINER.search(flat) and "(" not in flat.split("{")[0].split(CONTAINER.search(flat).group(0))[0]:
                    stack.append("container")
                    stmt_start = i + 1
                elif "(" in flat and not CONTROL.match(flat) and not re.search(r"=\s*[^=]*$", flat.split("(")[0]):
                    end = match_brace(text, i)
                    first = stmt_start + len(head) - len(head.lstrip())
                    first_line = text.count("\n", 0, first)
                    body = text[first:end + 1].split("\n")
                    # blank lines count; lines that held only a comment or a preprocessor directive do not
                    lines = [l for k, l in enumerate(body) if l.strip() or not raw_lines[first_line + k].strip()]
                    names = [m for m in re.findall(r"([~\w:]+)\s*\(", flat) if m not in ATTRIBUTES]
                    found.append((names[0] if names else flat[:40], first_line + 1, len(lines)))
                    i = end + 1
                    stmt_start = i
                    continue
                else:
                    # a brace initialiser or an aggregate at namespace scope: skip it whole
                    i = match_brace(text, i) + 1
                    continue
            i += 1
            continue
        if c == "}":
            if stack:
                stack.pop()
        i += 1
    return found


def match_brace(text, i):
    depth = 0
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text) - 1


def main(argv):
    root = argv[1]
    limit = int(argv[argv.index("--limit") + 1]) if "--limit" in argv else 100
    show = int(argv[argv.index("--list") + 1]) if "--list" in argv else 0
    rows = []
    for folder in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if name.endswith(SOURCE):
                    path = os.path.join(dirpath, name)
                    for fn, line, count in functions(path):
                        rows.append((count, os.path.relpath(path, root), line, fn))
    rows.sort(reverse=True)
    for count, path, line, fn in rows[:show]:
        print(f"{count:5d}  {path}:{line}  {fn}")
    over = [r for r in rows if r[0] > limit]
    for count, path, line, fn in over:
        print(f"{path}:{line}: {fn} is {count} lines (limit {limit}): split it along its stages", file=sys.stderr)
    print(f"{len(rows)} functions, {len(over)} over {limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
