#!/usr/bin/env python3
"""Module cycles of the workspace's crates: which modules use each other,
directly or around a loop (strongly connected groups of two or more).

Usage: scripts/module-cycles.py [--depth N] [--edges] [CRATE ...]

--edges also prints, under each group, the uses between its modules (the
ones to move or turn around to break it).

An edge A -> B means a file of module A names `crate::B...` (or reaches B
through `super::`). Modules are counted N path segments deep (default 1:
`plan::network` counts as `plan`); uses of a module's own ancestors or
descendants are not edges. Tests (`*_tests.rs`, `tests.rs`, `#[cfg(test)]`
blocks are not separated: a test module that knots counts). Prints each
group and exits 1 when any crate has one, so CI or a reviewer can run it.
"""
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
PATH_RE = re.compile(r"\b(crate|super)((?:::" + IDENT + r")+|::\{)")


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    if rel in (["lib"], ["main"]):
        return []
    return rel


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def brace_items(text, start):
    """Top-level names inside `{...}` starting at text[start] == '{'."""
    depth, cur, out = 0, "", []
    for ch in text[start:]:
        if ch == "{":
            depth += 1
            if depth == 1:
                continue
        elif ch == "}":
            depth -= 1
            if depth == 0:
                out.append(cur)
                break
        if depth == 1 and ch == ",":
            out.append(cur)
            cur = ""
        elif depth >= 1:
            cur += ch
    return [re.sub(r"\s+", "", x) for x in out if x.strip()]


def refs(text, here, root_mods, is_root):
    for m in PATH_RE.finditer(text):
        base = [] if m.group(1) == "crate" else here[:-1] if here else []
        tail = m.group(2)
        if tail == "::{":
            for item in brace_items(text, m.end() - 1):
                yield base + [s for s in item.split("::") if s]
        else:
            segs = [s for s in tail.split("::") if s]
            while m.group(1) == "super" and segs and segs[0] == "super":
                base, segs = base[:-1], segs[1:]
            yield base + segs
    if is_root:
        for name in root_mods:
            if re.search(r"(?<![:\w])" + re.escape(name) + r"::", text):
                yield [name]


def crate_graph(src, depth):
    files = []
    for d, _, fs in os.walk(src):
        files += [os.path.join(d, f) for f in fs if f.endswith(".rs")]
    mods = {tuple(module_of(src, f)) for f in files}
    root_mods = sorted({m[0] for m in mods if m})
    edges = {}
    for f in files:
        here = module_of(src, f)
        text = strip_comments(open(f, encoding="utf-8", errors="replace").read())
        a = tuple(here[:depth])
        if not a:
            continue
        for r in refs(text, here, root_mods, not here):
            # The longest module prefix the path names.
            k = max((i for i in range(len(r) + 1) if tuple(r[:i]) in mods), default=0)
            b = tuple(r[:k][:depth])
            if not b or b == a or a[: len(b)] == b or b[: len(a)] == a:
                continue
            edges.setdefault(a, set()).add(b)
    return edges


def sccs(edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    nodes = set(edges) | {b for bs in edges.values() for b in bs}

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    depth, show_edges = 1, False
    while args[:1] in (["--depth"], ["--edges"]):
        if args[0] == "--edges":
            show_edges, args = True, args[1:]
        else:
            depth, args = int(args[1]), args[2:]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates")
    crates = args or sorted(os.listdir(root))
    found = 0
    for c in crates:
        src = os.path.join(root, c, "src")
        if not os.path.isdir(src):
            continue
        edges = crate_graph(src, depth)
        for g in sccs(edges):
            found += 1
            names = ["::".join(m) for m in g]
            print(f"{c}: {len(g)} modules in a cycle: {', '.join(names)}")
            if show_edges:
                for a in g:
                    for b in sorted(edges.get(a, ())):
                        if b in g:
                            print(f"    {'::'.join(a)} -> {'::'.join(b)}")
    if not found:
        print("no module cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
