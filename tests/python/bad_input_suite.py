#!/usr/bin/env python3
"""The CLI's bad-input contract: every case in tests/python/bad_input_cases.py runs `mdsim` on a small
valid setup broken in one way, in a fresh folder, and asserts

  * the exit code (2: input error, 1: runtime failure),
  * a located message: the case's regex must match stderr (file name, line:column or line where the input has
    lines, the key or atom named),
  * nothing written: every file and folder of the case's folder (size, sha256, mtime, type) is the same after
    the command as before, unless the case names it in `may_change`,
  * no raw text: no Python traceback, "terminate called", "std::", "what():", "bad_alloc", "filesystem error",
    no death by a signal, no time-out,
  * one line: stderr holds one error line (lines starting with "notice:" aside).

Usage: bad_input_suite.py MDSIM_BINARY TEST_DATA_DIR [-k REGEX] [-j JOBS] [--keep] [-v]
Exit code 0 when every case passed (or was skipped, saying why), 1 otherwise.
"""
import argparse
import concurrent.futures
import hashlib
import importlib.util
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_FILE = os.path.join(HERE, "bad_input_cases.py")
TIMEOUT_S = 60
RAW_TEXT = re.compile(r"Traceback \(most recent call last\)|terminate called|std::|what\(\):|bad_alloc|"
                      r"filesystem error|Segmentation fault|core dumped|Aborted")


def load_cases():
    spec = importlib.util.spec_from_file_location("bad_input_cases", CASES_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------ snapshot of a folder

def snapshot(root):
    """Path -> (type, size, sha256, mtime_ns, mode) for everything under root (links not followed)."""
    result = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                with open(path, "rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        h.update(block)
                result[rel] = ("file", st.st_size, h.hexdigest(), st.st_mtime_ns, stat.S_IMODE(st.st_mode))
            elif stat.S_ISLNK(st.st_mode):
                result[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                result[rel] = ("dir", stat.S_IMODE(st.st_mode))
            elif stat.S_ISFIFO(st.st_mode):
                result[rel] = ("fifo", st.st_mtime_ns)
            else:
                result[rel] = ("other", st.st_mode)
    return result


def snapshot_difference(before, after, may_change):
    allowed = lambda rel: any(rel == m or rel.startswith(m.rstrip("/") + "/") for m in may_change)
    problems = []
    for rel in sorted(set(before) | set(after)):
        if allowed(rel):
            continue
        if rel not in before:
            problems.append(f"created {rel}")
        elif rel not in after:
            problems.append(f"removed {rel}")
        elif before[rel] != after[rel]:
            problems.append(f"changed {rel}")
    return problems


# ------------------------------------------------------------------ building a case's folder

class SetupError(Exception):
    pass


def write_file(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content.encode() if isinstance(content, str) else content)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def substitute(text, pattern, replacement, where):
    new, count = re.subn(pattern, replacement, text, flags=re.M)
    if count == 0:
        raise SetupError(f"pattern {pattern!r} not found in {where}")
    return new


def build_case(case, root, module, artifacts):
    base = module.BASES[case.get("base", "vac")]
    for rel, content in base.get("files", {}).items():
        write_file(os.path.join(root, rel), content)
    for rel, source in base.get("copy", {}).items():
        src = source.replace("<DATA>", module.DATA_DIR)
        write_file(os.path.join(root, rel), read_file(src))
    for rel, name in base.get("artifacts", {}).items():
        copy_artifact(artifacts[name], os.path.join(root, rel))
    config = os.path.join(root, "config.yaml")
    if "config" in case:
        write_file(config, case["config"])
    for pattern, replacement in case.get("sub", []):
        text = read_file(config).decode()
        write_file(config, substitute(text, pattern, replacement, "config.yaml"))
    if "append" in case:
        write_file(config, read_file(config) + case["append"].encode())
    for rel in case.get("remove", []):
        path = os.path.join(root, rel)
        shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    for rel, name in case.get("artifacts", {}).items():
        copy_artifact(artifacts[name], os.path.join(root, rel))
    for rel, edits in case.get("edit", {}).items():
        path = os.path.join(root, rel)
        text = read_file(path).decode()
        for pattern, replacement in edits:
            text = substitute(text, pattern, replacement, rel)
        write_file(path, text)
    for rel, changes in case.get("lines", {}).items():  # {line number (1-based): new text or None = delete}
        path = os.path.join(root, rel)
        lines = read_file(path).decode().split("\n")
        for number in sorted(changes, reverse=True):
            if number > len(lines):
                raise SetupError(f"{rel} has no line {number}")
            if changes[number] is None:
                del lines[number - 1]
            else:
                lines[number - 1] = changes[number]
        write_file(path, "\n".join(lines))
    for rel, content in case.get("write", {}).items():
        write_file(os.path.join(root, rel), content)
    for rel in case.get("mkdir", []):
        os.makedirs(os.path.join(root, rel), exist_ok=True)
    for rel in case.get("fifo", []):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        os.mkfifo(os.path.join(root, rel))
    for rel, target in case.get("symlink", {}).items():
        os.symlink(target, os.path.join(root, rel))
    if "setup" in case:
        case["setup"](root)
    for rel in case.get("readonly", []):
        os.chmod(os.path.join(root, rel), 0o555)


def copy_artifact(source, destination):
    if os.path.isdir(source):
        shutil.copytree(source, destination)
    else:
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(source, destination)


def make_artifacts(mdsim, module, work):
    """Outputs of real runs that resume cases start from (built once per suite run)."""
    artifacts = {}
    for name, spec in module.ARTIFACTS.items():
        folder = os.path.join(work, "artifact_" + name)
        os.makedirs(folder)
        build_case({"base": spec["base"]}, folder, module, artifacts)
        r = subprocess.run([mdsim] + [a.replace("<CFG>", os.path.join(folder, "config.yaml")) for a in spec["args"]],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise SystemExit(f"bad_input_suite: making artifact {name} failed ({r.returncode}): {r.stderr}")
        artifacts[name] = os.path.join(folder, spec["result"])
    return artifacts


# ------------------------------------------------------------------ running one case

def is_root():
    return hasattr(os, "geteuid") and os.geteuid() == 0


def placeholders(text, root):
    return (text.replace("<CFG>", re.escape(os.path.join(root, "config.yaml")))
                .replace("<DIR>", re.escape(root)))


_cuda_present = None


def cuda_present(mdsim):
    """True when `mdsim platforms` lists a CUDA device (asked once)."""
    global _cuda_present
    if _cuda_present is None:
        listing = subprocess.run([mdsim, "platforms"], capture_output=True, text=True, timeout=60)
        _cuda_present = "cuda:0" in listing.stdout
    return _cuda_present


def run_case(case, mdsim, module, artifacts, work, keep):
    name = case["name"]
    if case.get("readonly") and is_root():
        return ("SKIP", "running as root: a read-only folder does not stop root from writing, so this case "
                        "cannot fail as it should")
    if case.get("no_cuda") and cuda_present(mdsim):
        return ("SKIP", "a CUDA device is present, so what this case refuses is valid here")
    for needed in case.get("needs", []):
        if importlib.util.find_spec(needed) is None:
            return ("SKIP", f"needs the Python module {needed}, which {sys.executable} lacks")
    root = os.path.join(work, name)
    os.makedirs(root)
    try:
        try:
            build_case(case, root, module, artifacts)
        except Exception as e:  # a broken case is a failure of that case, reported with its cause
            return ("FAIL", f"setup: {type(e).__name__}: {e}")
        before = snapshot(root)
        args = [a.replace("<CFG>", os.path.join(root, "config.yaml")).replace("<DIR>", root)
                for a in case.get("args", ["run", "<CFG>"])]
        started = time.monotonic()
        try:
            r = subprocess.run([mdsim] + args, cwd=root, capture_output=True, timeout=TIMEOUT_S,
                               stdin=subprocess.DEVNULL)
            code, out, err = r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            code, out, err = None, "", ""
        elapsed = time.monotonic() - started
        after = snapshot(root)
        problems = []
        expected_code = case.get("code", 2)
        if code is None:
            problems.append(f"timed out after {TIMEOUT_S} s")
        elif code < 0:
            problems.append(f"killed by signal {-code}")
        elif code != expected_code:
            problems.append(f"exit code {code}, expected {expected_code}")
        pattern = placeholders(case["err"], root)
        if code is not None and not re.search(pattern, err):
            problems.append("stderr does not match the expected message")
        raw = RAW_TEXT.search(out + err)
        if raw:
            problems.append(f"raw text {raw.group(0)!r} in the output")
        lines = [l for l in err.splitlines() if l.strip() and not l.startswith("notice:")]
        if code is not None and case.get("one_line", True) and len(lines) != 1:
            problems.append(f"stderr has {len(lines)} lines, expected one error line")
        problems += snapshot_difference(before, after, case.get("may_change", []))
        for check in case.get("after", []):  # extra assertions: callables returning a problem or None
            problem = check(root)
            if problem:
                problems.append(problem)
        summary = err.strip().replace(os.path.join(root, ""), "").replace("\n", " | ")
        detail = "; ".join(problems) + (f"\n        stderr: {summary[:400]}" if problems else "")
        return ("PASS" if not problems else "FAIL", detail, elapsed, summary)
    finally:
        if not keep:
            for folder, dirs, _ in os.walk(root):
                for d in dirs:
                    os.chmod(os.path.join(folder, d), 0o755)
            shutil.rmtree(root, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mdsim")
    parser.add_argument("data_dir", help="tests/data/shared (systems/*.pdb)")
    parser.add_argument("-k", dest="filter", help="run only the cases whose name matches this regex")
    parser.add_argument("-j", dest="jobs", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the case folders (printed)")
    parser.add_argument("-v", dest="verbose", action="store_true", help="print every case's stderr")
    options = parser.parse_args()

    mdsim = os.path.abspath(options.mdsim)
    module = load_cases()
    module.DATA_DIR = os.path.abspath(options.data_dir)
    cases = module.CASES
    names = [c["name"] for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"bad_input_suite: duplicate case names: {sorted(duplicates)}")
    if options.filter:
        cases = [c for c in cases if re.search(options.filter, c["name"])]

    started = time.monotonic()
    work = tempfile.mkdtemp(prefix="mdsim_bad_input_")
    try:
        artifacts = make_artifacts(mdsim, module, work)
        with concurrent.futures.ThreadPoolExecutor(max_workers=options.jobs) as pool:
            futures = [pool.submit(run_case, c, mdsim, module, artifacts, work, options.keep) for c in cases]
            results = [f.result() for f in futures]
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"case folders kept in {work}")

    counts = {}
    failed = []
    by_family = {}
    for case, result in zip(cases, results):
        status, detail = result[0], result[1]
        counts[status] = counts.get(status, 0) + 1
        family = by_family.setdefault(case.get("family", "?"), {})
        family[status] = family.get(status, 0) + 1
        if status == "FAIL":
            failed.append(case["name"])
        line = f"{status:<28} {case['name']}"
        if detail and (status != "PASS" or options.verbose):
            line += f"\n        {detail}"
        if options.verbose and status == "PASS" and len(result) > 3:
            line += f"\n        stderr: {result[3][:300]}"
        print(line)
    print()
    for family in sorted(by_family):
        print(f"  {family:<12} " + ", ".join(f"{n} {s}" for s, n in sorted(by_family[family].items())))
    print(f"bad_input_suite: {len(cases)} cases, " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) +
          f" in {time.monotonic() - started:.1f} s")
    if failed:
        print("failed: " + " ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
