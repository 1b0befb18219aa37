#!/usr/bin/env python3
"""The house rules of the production tree (src/, decomposition/, io/; docs/architecture.md, "House rules"):
no source file over 800 lines and no function over 120 lines (from its opening brace at column 0 to its closing
brace at column 0, both counted).  Exits 1 naming every file and function that breaks one.
usage: check.py ROOT [FOLDER...]   (default folders: src decomposition io)"""
import os
import re
import sys

MAX_FILE, MAX_FUNCTION = 800, 120
root = sys.argv[1] if len(sys.argv) > 1 else "."
folders = sys.argv[2:] or ["src", "decomposition", "io"]
problems = []
for folder in folders:
    for dirpath, _, names in os.walk(os.path.join(root, folder)):
        for name in sorted(names):
            if not name.endswith((".c", ".h", ".cxx")):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            if len(lines) > MAX_FILE:
                problems.append("%s: %d lines (at most %d)" % (rel, len(lines), MAX_FILE))
            start = None
            for i, line in enumerate(lines):
                if line.startswith("{"):
                    start = i
                elif line.startswith("}") and start is not None:
                    n = i - start + 1
                    if n > MAX_FUNCTION and not lines[i].startswith("};"):
                        head = start - 1
                        while head > 0 and not (re.match(r"[A-Za-z_]", lines[head]) and "(" in lines[head]):
                            head -= 1
                        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", lines[head])
                        problems.append("%s:%d: function %s is %d lines (at most %d)"
                                        % (rel, start + 1, m.group(1) if m else "?", n, MAX_FUNCTION))
                    start = None
for p in problems:
    print("FAIL:", p)
print("PASS: no file over %d lines, no function over %d" % (MAX_FILE, MAX_FUNCTION) if not problems
      else "%d problem(s)" % len(problems))
sys.exit(1 if problems else 0)
