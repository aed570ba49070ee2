"""``d2chunks-<k>``: plain-text retrieval over the diagram's D2 script, turned back into a subgraph.

This is what a text-RAG pipeline would do with a diagram script: cut the source into windows of
lines, rank the windows against the question, and read what the best ones say.

1. **Lines.** The source is scanned once (:func:`scan`): for every line, the container blocks
   open around it (the lines whose ``{`` is still open) and whether it continues a multi-line
   string or block comment (such lines travel with the line that started them). Blank lines
   and lone ``}`` lines carry no words and are left out of the windows.
2. **Windows.** Windows of ``window`` consecutive remaining lines, every ``stride`` lines
   (default 4 and 2), are the documents; BM25 ranks them (:class:`retrievers.bm25.BM25Index`,
   ties to the earlier window) and the best ``k`` are kept.
3. **Re-parse.** The kept lines are written out again, in source order, inside the opening
   lines of the containers around them (closing braces added), together with the file's
   top-level ``vars`` and ``classes`` blocks. That snippet is compiled with the project's D2
   parser (:func:`benchmark.d2.parse_text`), so ids come out as absolute ids (``backend.api``)
   and chains, ``<-`` arrows and labels mean what they mean in the file. The container lines
   added as surroundings are compiled alone as well, and the nodes they alone create are
   dropped: a container comes in only when a kept line names it.
4. **Match to the graph.** Snippet edges are matched to the graph's edges by their ends (flow
   view; undirected edges either way), preferring an equal label; snippet nodes are kept when
   the graph has them. Only the graph's elements are returned.
5. **Fallback.** When the snippet does not compile (a window cut a construct the parser needs
   whole, an unresolved ``${var}``), each kept line is matched on its own
   (:func:`match_line`): the keys of an arrow chain, prefixed by the ids of the containers
   around the line, are resolved to graph nodes, and consecutive keys to the graph's edges
   between them; a line declaring a key selects that node.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

from benchmark.graph import Edge, Subgraph, build_graph, graph_edges
from benchmark.stages import SELECTORS
from retrievers.bm25 import BM25Index
from retrievers.cache import PerGraph

_CONTEXT_KEYS = ("vars", "classes")


@dataclass(frozen=True)
class Line:
    """One source line and its place in the block structure."""

    no: int                      # 0-based line index
    text: str
    ancestors: tuple[int, ...]   # opening lines of the blocks around it (outermost first; repeated per brace)
    opens: int                   # braces this line leaves open
    continues: bool              # starts inside a string / block comment begun on an earlier line

    @property
    def is_blank(self) -> bool:
        s = self.text.strip()
        return not s or set(s) <= set("};")


def scan(source: str) -> list[Line]:
    """Block structure of D2 ``source``, line by line (strings, comments and block strings skipped).

    >>> [(l.no, l.ancestors, l.opens) for l in scan("a: A {\\n  b: B\\n}\\nc -> a.b")]
    [(0, (), 1), (1, (0,), 0), (2, (0,), 0), (3, (), 0)]
    """
    lines = source.split("\n")
    out: list[Line] = []
    stack: list[int] = []
    state = "code"  # code | dq | sq | block_comment | block_string
    closer = ""
    for no, text in enumerate(lines):
        ancestors = tuple(stack)
        continues = state != "code"
        depth_before = len(stack)
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if state == "block_comment":
                j = text.find('"""', i)
                if j < 0:
                    break
                state, i = "code", j + 3
                continue
            if state == "block_string":
                j = text.find(closer, i)
                if j < 0:
                    break
                state, i = "code", j + len(closer)
                continue
            if state in ("dq", "sq"):
                quote = '"' if state == "dq" else "'"
                if c == "\\":
                    i += 2
                    continue
                if c == quote:
                    state = "code"
                i += 1
                continue
            if text.startswith('"""', i):
                state, i = "block_comment", i + 3
                continue
            if c == "#":
                break
            if c in "\"'" and text[:i].rstrip()[-1:] in ("", ":", "{", "[", ";", ",", ".", ">", "-", "(", "*", "&", "!"):
                state = "dq" if c == '"' else "sq"  # a quote inside a word ("Tok's") is just a letter
            elif c == "|" and re.search(r"[:\[;]\s*$", text[:i]):
                m = re.match(r"(\|+)(`*)", text[i:])
                assert m is not None
                closer = m.group(2) + m.group(1)
                state, i = "block_string", i + len(m.group(0))
                continue
            elif c == "{":
                stack.append(no)
            elif c == "}" and stack:
                stack.pop()
            i += 1
        if state in ("dq", "sq"):  # D2 strings do not span lines
            state = "code"
        opens = sum(1 for s in stack[depth_before:] if s == no) if len(stack) > depth_before else 0
        out.append(Line(no, text, ancestors, opens, continues))
    return out


@dataclass(frozen=True)
class Script:
    """A diagram script cut into units (a line plus the lines continuing it) and windows of units."""

    lines: list[Line]
    units: list[list[int]]           # line numbers of each unit
    windows: list[list[int]]         # unit indices of each window
    context_lines: frozenset[int]    # top-level vars / classes blocks
    unit_of: dict[int, int]          # line number -> its unit

    def whole_units(self, nos: set[int]) -> set[int]:
        """``nos`` with every line of the units they belong to (a block string opens a map on its last line)."""
        return {m for no in nos for m in (self.units[self.unit_of[no]] if no in self.unit_of else [no])}


def cut(source: str, window: int, stride: int) -> Script:
    """Units and windows of ``source`` (blank and lone-brace lines are not units)."""
    lines = scan(source)
    units: list[list[int]] = []
    for ln in lines:
        if ln.continues and units:
            units[-1].append(ln.no)
        elif not ln.is_blank:
            units.append([ln.no])
    starts = range(0, max(len(units) - window, 0) + 1, stride) if units else range(0)
    windows = [list(range(s, min(s + window, len(units)))) for s in starts]
    if units and windows and windows[-1][-1] != len(units) - 1:
        windows.append(list(range(max(len(units) - window, 0), len(units))))
    context: set[int] = set()
    for ln in lines:
        if not ln.ancestors and re.match(rf"\s*({'|'.join(_CONTEXT_KEYS)})\s*:\s*\{{", ln.text):
            context.add(ln.no)
        elif ln.ancestors and ln.ancestors[0] in context:
            context.add(ln.no)
    unit_of = {no: i for i, u in enumerate(units) for no in u}
    return Script(lines, units, windows, frozenset(context), unit_of)


def snippet(script: Script, keep: set[int], surroundings: bool = True) -> str:
    """D2 text of lines ``keep`` inside the opening lines of their containers, braces closed.

    With ``surroundings=False`` only the containers' opening lines (and the context blocks) are
    written, to tell which nodes the kept lines themselves bring.
    """
    lines = script.lines
    wanted = script.whole_units(set(script.context_lines) | {a for no in keep for a in lines[no].ancestors})
    if surroundings:
        wanted |= keep
    else:
        wanted -= keep
    out: list[str] = []
    open_stack: list[int] = []
    for no in sorted(wanted):
        ln = lines[no]
        if ln.is_blank and not ln.continues:
            continue
        while open_stack and open_stack[-1] not in ln.ancestors:
            open_stack.pop()
            out.append("}")
        text = ln.text
        net = text.count("{") - text.count("}")
        if net < 0 and not ln.continues:
            text = text.rstrip()
            while net < 0 and text.endswith("}"):
                text, net = text[:-1].rstrip(), net + 1
        out.append(text)
        open_stack.extend([no] * ln.opens)
    out.extend("}" for _ in open_stack)
    return "\n".join(out) + "\n"


_ARROW = re.compile(r"\s*(<-+>|<-+|-+>|--+)\s*")
_KEY = re.compile(r"^\s*([^:{;#]+?)\s*(?:[:{;#]|$)")


def _resolve(g: nx.MultiDiGraph, prefix: list[str], key: str) -> str | None:
    key = key.strip().strip('"').strip("'")
    if not key:
        return None
    parts = prefix[:]
    for p in key.split("."):
        if p == "_":
            if parts:
                parts.pop()
        else:
            parts.append(p)
    for cand in (".".join(parts), key):
        if cand in g:
            return cand
    tails = sorted(n for n in g.nodes if str(n).endswith("." + key))
    return tails[0] if len(tails) == 1 else None


def match_line(g: nx.MultiDiGraph, text: str, prefix: list[str]) -> Subgraph:
    """Graph elements one D2 line names, resolving keys inside the containers ``prefix``.

    >>> from benchmark.graph import build_graph
    >>> g = build_graph({"nodes": [{"id": "be"}, {"id": "be.api"}, {"id": "db"}],
    ...                  "edges": [{"src": "be.api", "dst": "db", "label": "SQL"}]})
    >>> sorted(match_line(g, "api -> _.db: SQL", ["be"]).all_nodes)
    ['be.api', 'db']
    """
    code = text.split("#", 1)[0]
    if code.lstrip().startswith("("):
        return Subgraph()
    parts = _ARROW.split(code)
    if len(parts) == 1:
        m = _KEY.match(code)
        node = _resolve(g, prefix, m.group(1)) if m else None
        return Subgraph(frozenset({node})) if node else Subgraph()
    keys = parts[0::2]
    arrows = parts[1::2]
    last = _KEY.match(keys[-1])
    keys[-1] = last.group(1) if last else keys[-1]
    label = code.split(":", 1)[1].split("{")[0].strip().strip('"') if ":" in parts[-1] else ""
    nodes = [_resolve(g, prefix, k) for k in keys]
    edges: set[Edge] = set()
    for (a, b), arrow in zip(zip(nodes, nodes[1:]), arrows):
        if a is None or b is None:
            continue
        if arrow.startswith("<") and arrow.endswith(">") or not (arrow.startswith("<") or arrow.endswith(">")):
            want = Edge(a, b, directed=False)
        else:
            want = Edge(b, a) if arrow.startswith("<") else Edge(a, b)
        cands = [e for e in graph_edges(g) if e.directed == want.directed and e.key() == want.key()]
        same = [e for e in cands if e.label == label]
        edges.update(same or cands)
    return Subgraph.from_edges(edges, [n for n in nodes if n is not None])


class _Graph:
    """The graph's edges indexed by their identity (src, dst), for matching snippet edges."""

    def __init__(self, g: nx.MultiDiGraph) -> None:
        self.g = g
        self.by_key: dict[tuple, list[Edge]] = {}
        for e in sorted(set(graph_edges(g))):
            self.by_key.setdefault(e.key(), []).append(e)

    def match(self, e: Edge) -> list[Edge]:
        cands = self.by_key.get(e.key(), [])
        if not cands and not e.directed:
            cands = self.by_key.get((e.dst, e.src), []) + self.by_key.get((e.src, e.dst), [])
        same = [c for c in cands if c.label == e.label]
        return same or cands


@dataclass
class _Index:
    script: Script
    bm25: BM25Index
    graph: _Graph
    base_dir: str | None
    #: subgraph of each set of kept lines already turned into one (questions often share windows)
    found: dict[frozenset[int], Subgraph] = field(default_factory=dict)
    #: node ids that the surroundings alone create, by the surroundings' text
    around: dict[str, frozenset[str]] = field(default_factory=dict)


@SELECTORS.register("d2chunks", pattern=r"d2chunks-(?P<k>\d+)(?:-w(?P<window>\d+)s(?P<stride>\d+))?")
class D2ChunksSelector:
    """Top-k BM25 windows of D2 source lines, re-parsed into the subgraph they describe."""

    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self, k: int = 5, window: int | None = None, stride: int | None = None) -> None:
        self.k = k
        self.window = 4 if window is None else window
        self.stride = 2 if stride is None else stride
        if k < 1 or self.window < 1 or self.stride < 1:
            raise ValueError(f"d2chunks needs k, window and stride >= 1, got {k}, {self.window}, {self.stride}")
        suffix = "" if (self.window, self.stride) == (4, 2) else f"-w{self.window}s{self.stride}"
        self.name = f"d2chunks-{k}{suffix}"
        self._indexes: PerGraph[_Index] = PerGraph()

    def _index(self, graph, diagram) -> _Index:
        def build() -> _Index:
            script = cut(diagram.source, self.window, self.stride)
            texts = [" ".join(script.lines[no].text for u in w for no in script.units[u]) for w in script.windows]
            d2_path = getattr(diagram, "d2_path", None)
            base = str(Path(d2_path).resolve().parent) if d2_path else None
            return _Index(script, BM25Index(texts), _Graph(graph), base)
        return self._indexes.get(diagram.id, graph, build)

    def selected_lines(self, question, graph, diagram) -> list[int]:
        """Line numbers (0-based) of the best ``k`` windows."""
        return self._lines(self._index(graph, diagram), question)

    def _lines(self, idx: _Index, question) -> list[int]:
        return sorted({no for w in idx.bm25.top(question.text, self.k) for u in idx.script.windows[w]
                       for no in idx.script.units[u]})

    def select(self, question, graph, diagram) -> Subgraph:
        idx = self._index(graph, diagram)
        keep = frozenset(self._lines(idx, question))
        if not keep:
            return Subgraph()
        if keep in idx.found:
            return idx.found[keep]
        found = self._reparse(idx, set(keep), diagram.id)
        if found is None:
            found = Subgraph()
            for no in sorted(keep):
                ln = idx.script.lines[no]
                prefix = self._prefix(idx, ln)
                found = found.union(match_line(graph, ln.text, prefix))
        return idx.found.setdefault(keep, found)

    def _reparse(self, idx: _Index, keep: set[int], diagram_id: str) -> Subgraph | None:
        from benchmark.d2 import D2SyntaxError, parse_text

        name = f"<{diagram_id} chunks>"
        around_text = snippet(idx.script, keep, surroundings=False)
        try:
            parsed = parse_text(snippet(idx.script, keep), filename=name, base_dir=idx.base_dir)
            if around_text not in idx.around:
                around = parse_text(around_text, filename=name, base_dir=idx.base_dir)
                idx.around[around_text] = frozenset(n["id"] for n in around["nodes"])
        except D2SyntaxError:
            return None
        g = idx.graph.g
        sub = build_graph(parsed)
        edges = {m for e in graph_edges(sub) for m in idx.graph.match(e)}
        nodes = {n for n in sub.nodes if n in g and n not in idx.around[around_text]}
        return Subgraph.from_edges(edges, nodes)

    def _prefix(self, idx: _Index, ln: Line) -> list[str]:
        prefix: list[str] = []
        for a in dict.fromkeys(ln.ancestors):
            m = _KEY.match(idx.script.lines[a].text)
            if m:
                prefix.extend(p for p in m.group(1).strip().split(".") if p)
        return prefix
