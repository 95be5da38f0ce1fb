#!/usr/bin/env python3
"""Small files with one purpose: no source file in app/ or core/ over 800
lines, no function over 150. The files and functions that are over today
are listed below with the size they may not grow past; each is to be split
(docs/contributing.md). A new one over the line, or a listed one that grew,
fails; a listed one that shrank under the line is named, to be taken off.

usage: check_sizes.py REPOSITORY_ROOT
"""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150

# path: the most lines it may have until it is split
OVER_FILES = {
}

# (path, function name): the most lines it may have until it is split
OVER_FUNCTIONS = {
}

NOT_A_FUNCTION = re.compile(r"(namespace|struct|class|enum|union|extern|//|#|template)\b")
NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9:~]*)\s*\(")


def functions(lines):
    """(name, first line, length) of each function defined at column 0: its
    signature's line ends in '{', its body ends at a '}' at column 0."""
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if line and not line[0].isspace() and line.rstrip().endswith("{") and "(" in line and not NOT_A_FUNCTION.match(line):
                start = i
        elif line.startswith("}"):
            m = NAME.search(lines[start])
            yield (m.group(1) if m else "?"), start + 1, i - start + 1
            start = None


def main(root):
    problems, notes = [], []
    for top in ("app", "core"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
                n = len(lines) - (1 if lines and lines[-1] == "" else 0)
                ceiling = OVER_FILES.get(rel)
                if ceiling is None and n > MAX_FILE_LINES:
                    problems.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES}: split it by purpose)")
                elif ceiling is not None and n > ceiling:
                    problems.append(f"{rel}: {n} lines, and it may not grow past {ceiling} until it is split")
                elif ceiling is not None and n <= MAX_FILE_LINES:
                    notes.append(f"{rel}: {n} lines now: take it off OVER_FILES")
                for fn, first, length in functions(lines):
                    ceiling = OVER_FUNCTIONS.get((rel, fn))
                    if ceiling is None and length > MAX_FUNCTION_LINES:
                        problems.append(f"{rel}:{first}: {fn} is {length} lines (at most {MAX_FUNCTION_LINES})")
                    elif ceiling is not None and length > ceiling:
                        problems.append(f"{rel}:{first}: {fn} is {length} lines, and may not grow past {ceiling} until it is split")
                    elif ceiling is not None and length <= MAX_FUNCTION_LINES:
                        notes.append(f"{rel}: {fn} is {length} lines now: take it off OVER_FUNCTIONS")
    for note in notes:
        print("note:", note)
    for problem in problems:
        print("too long:", problem)
    if problems:
        return 1
    listed = len(OVER_FILES) + len(OVER_FUNCTIONS)
    print(f"sizes: every file within {MAX_FILE_LINES} lines and every function within {MAX_FUNCTION_LINES}"
          + (f", but the {len(OVER_FILES)} files and {len(OVER_FUNCTIONS)} functions listed to be split" if listed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
