"""No include circle between the C++ units of cpp/ (docs/architecture.md, "Where the code lives").

    /usr/bin/python3 -m unittest discover -s tests/python -v

A unit is a header and its same-named source counted as one: cpp/include/attn/attention.hpp and
cpp/src/attention.cpp are unit `attention`, cpp/src/kernels.hpp alone is unit `kernels`,
cpp/include/attn/tr/model.hpp and cpp/src/tr/model.cpp are `tr/model`; a file elsewhere in cpp/
(bindings, bench) is named by its path under cpp/. Every `#include "..."` is resolved as the
compiler does for this project: `attn/...` to cpp/include, anything else relative to the including
file, then to cpp/src. The test fails, listing the units of each circle, when a strongly connected
component of the unit graph holds more than one unit. Standard-library-only.
"""

import os
import re
import sys
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
EXTENSIONS = (".hpp", ".h", ".cpp", ".cc")


def unit_of(path, cpp):
    """The unit name of a file under cpp/: its path below include/attn/ or src/, no extension."""
    rel = os.path.relpath(path, cpp).replace(os.sep, "/")
    for prefix in ("include/attn/", "src/"):
        if rel.startswith(prefix):
            rel = rel[len(prefix):]
            break
    return os.path.splitext(rel)[0]


def resolve(name, including, cpp):
    """The file an `#include "name"` in `including` reads, or None (not part of cpp/)."""
    if name.startswith("attn/"):
        candidates = [os.path.join(cpp, "include", name)]
    else:
        candidates = [os.path.join(os.path.dirname(including), name), os.path.join(cpp, "src", name)]
    for c in candidates:
        if os.path.isfile(c):
            return os.path.normpath(c)
    return None


def unit_graph(cpp):
    """{unit: {unit it includes}} over every C++ file in cpp/, and {unit: [its files]}."""
    graph, files = {}, {}
    for dirpath, _, names in os.walk(cpp):
        for n in sorted(names):
            if not n.endswith(EXTENSIONS):
                continue
            path = os.path.join(dirpath, n)
            u = unit_of(path, cpp)
            files.setdefault(u, []).append(os.path.relpath(path, cpp))
            edges = graph.setdefault(u, set())
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE_RE.findall(text):
                target = resolve(inc, path, cpp)
                if target is not None:
                    v = unit_of(target, cpp)
                    if v != u:
                        edges.add(v)
                        graph.setdefault(v, set())
    return graph, files


def circles(graph):
    """Strongly connected components with more than one unit (Tarjan, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def describe(comp, graph):
    """One circle's units and the includes that close it."""
    members = set(comp)
    lines = ["circle of %d units: %s" % (len(comp), ", ".join(comp))]
    for u in comp:
        inside = sorted(v for v in graph[u] if v in members)
        lines.append("  %s includes %s" % (u, ", ".join(inside)))
    return "\n".join(lines)


def sources_reaching(header, cpp):
    """The .cpp files under cpp/src that include `header` (a path under cpp/), directly or not."""
    target = os.path.normpath(os.path.join(cpp, header))
    memo = {}

    def reaches(path, seen):
        if path == target:
            return True
        if path in memo:
            return memo[path]
        if path in seen:
            return False
        seen.add(path)
        with open(path, encoding="utf-8") as f:
            incs = INCLUDE_RE.findall(f.read())
        r = any(t is not None and reaches(t, seen) for t in (resolve(i, path, cpp) for i in incs))
        memo[path] = r
        return r

    out = []
    for dirpath, _, names in os.walk(os.path.join(cpp, "src")):
        for n in sorted(names):
            if n.endswith(".cpp") and reaches(os.path.join(dirpath, n), set()):
                out.append(os.path.relpath(os.path.join(dirpath, n), os.path.dirname(cpp)))
    return sorted(p.replace(os.sep, "/") for p in out)


class RelaxedSources(unittest.TestCase):
    def test_relaxed_build_recompiles_every_simd_source(self):
        # CMakeLists.txt compiles only ATTN_CORE_SIMD_SOURCES again for the relaxed-SIMD module
        # (the rest are attn_core's objects): a source that reaches simd_ops.hpp (the madd that the
        # relaxed build fuses) and is missing from that list would keep SIMD128 code there.
        with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"set\(ATTN_CORE_SIMD_SOURCES\s+([^)]*)\)", f.read())
        self.assertIsNotNone(m, "CMakeLists.txt sets ATTN_CORE_SIMD_SOURCES")
        listed = sorted(m.group(1).split())
        found = sources_reaching("src/simd_ops.hpp", os.path.join(ROOT, "cpp"))
        self.assertIn("cpp/src/simd_kernels.cpp", found)  # the walk follows includes
        self.assertEqual(listed, found)


class IncludeCircles(unittest.TestCase):
    def test_no_circle_between_units(self):
        cpp = os.path.join(ROOT, "cpp")
        graph, _ = unit_graph(cpp)
        self.assertIn("attention", graph)  # the walk found the core
        found = circles(graph)
        self.assertEqual(found, [], "include circles between units of cpp/:\n" +
                         "\n".join(describe(c, graph) for c in found))

    def test_finds_a_circle(self):
        # The checker itself can fail: a three-unit ring and a pair are both reported.
        g = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
        self.assertEqual(sorted(circles(g)), [["a", "b", "c"], ["d", "e"]])
        self.assertEqual(circles({"a": {"b"}, "b": set()}), [])

    def test_units(self):
        cpp = os.path.join(ROOT, "cpp")
        self.assertEqual(unit_of(os.path.join(cpp, "include", "attn", "tr", "model.hpp"), cpp),
                         "tr/model")
        self.assertEqual(unit_of(os.path.join(cpp, "src", "tr", "model.cpp"), cpp), "tr/model")
        self.assertEqual(unit_of(os.path.join(cpp, "src", "kernels.hpp"), cpp), "kernels")
        self.assertEqual(unit_of(os.path.join(cpp, "bindings", "bindings.cpp"), cpp),
                         "bindings/bindings")


if __name__ == "__main__":
    sys.exit(unittest.main())
