#!/usr/bin/env python3
"""The size of the house (docs/architecture.md "Keeping the house"): source files over 600
lines and Rust functions over 150 lines, from the files git tracks. Upgrade scripts
(sql/memory_ext--*.sql) and test data are left out: they are history, not code one edits.

    python3 scripts/house.py            # both lists
"""
import re
import subprocess
import sys

FILE_LIMIT, FN_LIMIT = 600, 150
SOURCE = re.compile(r"\.(rs|sql|py|ts|js|sh)$")
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")


def tracked():
    out = subprocess.run(["git", "ls-files"], capture_output=True, text=True, check=True).stdout
    for path in out.splitlines():
        if SOURCE.search(path) and not path.startswith("tests/data/") and not re.match(r"sql/memory_ext--", path):
            yield path


def functions(path, lines):
    """(name, first line, length) of each Rust function, by brace depth from its `fn` line."""
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        depth, started, j = 0, False, i
        while j < len(lines):
            code = re.sub(r'"(\\.|[^"\\])*"', '""', lines[j].split("//")[0])
            depth += code.count("{") - code.count("}")
            started = started or "{" in code
            if started and depth <= 0:
                break
            if not started and code.rstrip().endswith(";"):
                break  # a declaration without a body (traits, extern blocks)
            j += 1
        if started:
            yield m.group(6), i + 1, j - i + 1
        i += 1


def main():
    big_files, long_fns = [], []
    for path in tracked():
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        if len(lines) > FILE_LIMIT:
            big_files.append((len(lines), path))
        if path.endswith(".rs"):
            for name, line, n in functions(path, lines):
                if n > FN_LIMIT:
                    long_fns.append((n, f"{path}:{line} {name}"))
    print(f"files over {FILE_LIMIT} lines: {len(big_files)}")
    for n, p in sorted(big_files, reverse=True):
        print(f"  {n:5}  {p}")
    print(f"functions over {FN_LIMIT} lines: {len(long_fns)}")
    for n, f in sorted(long_fns, reverse=True):
        print(f"  {n:5}  {f}")


if __name__ == "__main__":
    sys.exit(main())
