#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Which error call sites of fabricd ran under the tests (gcov line counts).

Build with coverage, run the tests, then list the sites:

    CFLAGS='-O0 -g --coverage -Wno-format-truncation' LDFLAGS=--coverage \\
        make -j2 BUILD=build/cov all unit tools
    make BUILD=build/cov unit-run          # and pytest (FABRICD defaults to fabricd/fabricd)
    scripts/error-coverage.py [--build build/cov] [--missed] [--json]

A site is one call of log_error(), diag_add(), config_error(), coro_error() or
wg_set_last_error() in fabricd/**/*.c (fabricd/bench excluded; the wrappers'
own bodies excluded). It ran when any line of the call statement has a count
above zero. gcov data (.gcda) are written when a process exits normally.
"""
import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CALLS = re.compile(r"\b(log_error|diag_add|config_error|coro_error|wg_set_last_error)\s*\(")
# the wrappers themselves: a definition line starts the function, not a call
DEFINITION = re.compile(r"^[A-Za-z_].*\b(log_error|diag_add|config_error|coro_error|wg_set_last_error)\s*\(")
WRAPPER_BODIES = {("fabricd/definition/values.c", "config_error"),
                  ("fabricd/wireguard/wg.c", "wg_set_last_error"),
                  ("fabricd/definition/pve_corosync.c", "coro_error"),
                  ("fabricd/base/diag.c", "diag_add"),
                  ("fabricd/base/log.c", "log_error")}


def gcov_lines(build, src):
    """{line: count or None (not executable)} for one source file."""
    objdir = build / src.parent
    res = subprocess.run(["gcov", "-t", "-o", str(objdir), str(src)], cwd=REPO,
                         capture_output=True, text=True)
    counts = {}
    current = None
    for line in res.stdout.splitlines():
        m = re.match(r"\s*([^:]+):\s*(\d+):(.*)", line)
        if not m:
            continue
        c, n = m.group(1).strip(), int(m.group(2))
        if n == 0:
            if m.group(3).startswith("Source:"):
                current = m.group(3)[len("Source:"):]
            continue
        if current != str(src):  # gcov -t also lists the headers' inline functions
            continue
        if c == "-":
            counts[n] = None
        elif c.startswith("#####") or c.startswith("====="):
            counts[n] = 0
        else:
            counts[n] = int(c.rstrip("*"))
    return counts


def statement_end(lines, i):
    """Index of the line where the statement starting at lines[i] ends (its ';')."""
    depth = 0
    for j in range(i, min(i + 30, len(lines))):
        for ch in re.sub(r'"(\\.|[^"\\])*"', '""', lines[j]):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == ";" and depth <= 0:
                return j
    return i


def enclosing_function(lines, i):
    for j in range(i, -1, -1):
        m = re.match(r"^[A-Za-z_][^;]*?\b([a-z_0-9]+)\s*\(", lines[j])
        if m and not lines[j].startswith(("static const", "#")):
            return m.group(1)
    return ""


def sites(build):
    out = []
    for src in sorted((REPO / "fabricd").rglob("*.c")):
        rel = src.relative_to(REPO)
        if rel.parts[1] == "bench":
            continue
        text = src.read_text().splitlines()
        counts = None
        for i, line in enumerate(text):
            m = CALLS.search(line)
            if not m or DEFINITION.match(line) or line.lstrip().startswith(("*", "/*", "//")):
                continue
            fn = enclosing_function(text, i)
            if (str(rel), fn) in WRAPPER_BODIES:
                continue
            if counts is None:
                counts = gcov_lines(build, rel)
            end = statement_end(text, i)
            cs = [counts.get(n) for n in range(i + 1, end + 2)]
            known = [c for c in cs if c is not None]
            count = max(known) if known else None
            stmt = " ".join(s.strip() for s in text[i:end + 1])
            msg = re.findall(r'"((?:\\.|[^"\\])*)"', stmt)
            out.append({"site": f"{rel}:{i + 1}", "function": fn, "call": m.group(1),
                        "count": count, "message": " ".join(msg)[:160]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/cov", help="the coverage build directory")
    ap.add_argument("--missed", action="store_true", help="list only the sites that never ran")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    build = Path(args.build)
    if not (REPO / build).is_dir():
        sys.exit(f"{build}: no such build directory; build with --coverage first (see --help)")
    all_sites = sites(build)
    ran = [s for s in all_sites if s["count"]]
    shown = [s for s in all_sites if not s["count"]] if args.missed else all_sites
    if args.json:
        json.dump({"total": len(all_sites), "executed": len(ran), "sites": shown}, sys.stdout, indent=1)
        print()
        return
    for s in shown:
        c = "-" if s["count"] is None else s["count"]
        print(f"{s['site']:45} {c:>7}  {s['function']}: {s['message']}")
    print(f"error sites: {len(all_sites)}, executed: {len(ran)}, never executed: {len(all_sites) - len(ran)}")


if __name__ == "__main__":
    main()
