#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Lists C functions longer than a limit (default 80 lines, signature to closing
brace) in the given files or in fabricd/ and kmod/; exit 1 when there is one.
The repository's style: a function does one thing and fits a screen."""
import pathlib
import re
import sys

LIMIT = 80
START = re.compile(r"^[A-Za-z_][^;{}()]*\b([A-Za-z_]\w*)\s*\(")


def functions(path):
    lines = path.read_text().split("\n")
    i = 0
    while i < len(lines):
        m = START.match(lines[i])
        if m and not lines[i].startswith(("typedef", "struct", "enum", "#")):
            j = i
            while j < len(lines) and "{" not in lines[j] and ";" not in lines[j]:
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{") and ";" not in lines[j]:
                k = j
                while k < len(lines) and lines[k] != "}":
                    k += 1
                yield m.group(1), i + 1, k - i + 1
                i = k
        i += 1


def main(argv):
    root = pathlib.Path(__file__).resolve().parent.parent
    files = [pathlib.Path(a) for a in argv] or sorted(
        list((root / "fabricd").rglob("*.c")) + list((root / "kmod").glob("*.c")))
    long = [(f, name, line, n) for f in files for name, line, n in functions(f) if n > LIMIT]
    for f, name, line, n in long:
        print(f"{f}:{line}: {name}() has {n} lines (limit {LIMIT})")
    return 1 if long else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
