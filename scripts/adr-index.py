#!/usr/bin/env python3
"""Rewrite the table in docs/adr/README.md from the records themselves.

Each record's first line is its title (`# NNNN: Title` or `# ADR NNNN: Title`)
and its `Status:` line gives the status (`accepted`, `superseded by NNNN`).
Run from the repository root; `--check` exits 1 when the index is stale.
"""
import pathlib
import re
import sys

adr = pathlib.Path("docs/adr")
index = adr / "README.md"
rows = []
for f in sorted(adr.glob("[0-9][0-9][0-9][0-9]-*.md")):
    lines = f.read_text(encoding="utf-8").splitlines()
    title = re.sub(r"^#\s*(ADR\s*)?\d{4}\s*[:.-]?\s*", "", lines[0]).strip()
    status = "accepted"
    for line in lines[1:12]:
        m = re.match(r"Status:\s*(.+)", line)
        if m:
            sup = re.search(r"superseded by (\d{4})", m.group(1))
            status = f"superseded by {sup.group(1)}" if sup else m.group(1).split()[0].strip(" .;,(")
            break
    rows.append(f"| [{f.name[:4]}]({f.name}) | {title} | {status} |")

text = index.read_text(encoding="utf-8")
head = text[: text.index("| record |")]
new = head + "| record | decision | status |\n| --- | --- | --- |\n" + "\n".join(rows) + "\n"
if "--check" in sys.argv:
    sys.exit(0 if new == text else 1)
index.write_text(new, encoding="utf-8")
