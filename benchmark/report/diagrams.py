"""Diagrams for the report's drill-down: each D2 file rendered once to SVG by the real ``d2`` binary
(cached on disk by the hash of its text, the d2 version and the render flags), and the map from the
SVG's shapes and connections to the graph's node ids and edges, so the page can colour the gold
certificate, the retrieved subgraph and what was missed on the diagram itself.

d2 names each shape's and connection's ``<g>`` by the base64 of its absolute id, HTML-escaped:
``backend.api`` for a shape, ``(a -> b)[0]`` for a connection, ``outer.(a -> b)[0]`` for one declared
inside a container.

>>> parse_svg_id("outer.(a -&gt; b)[1]")
('edge', 'outer.a', 'outer.b', True, 1)
>>> parse_svg_id("(c &lt;- x.y)[0]"), parse_svg_id("backend.api")
(('edge', 'x.y', 'c', True, 0), ('node', 'backend.api'))
>>> match_edge(["a", "b", "x", True], [("b", "a", "", False), ("a", "b", "x", True)])
1
>>> match_edge(["a", "b", "y", False], [("b", "a", "", False), ("a", "c", "y", True)])
0
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import html
import os
import re
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from benchmark.render import STYLES, d2_binary, d2_version

#: the flags every drill-down diagram is rendered with (the dataset's PNG style)
FLAGS = ["--omit-version", "--pad=20", *STYLES["default"]]

#: the opening of a shape's or connection's group: its class is the base64 of its id (group 1), then the
#: names of its D2 classes (``class: data`` draws ``<g class="KGEgLT4gYilbMF0= data">``)
GROUP_OPEN = r'<g class="([A-Za-z0-9+/]+=*)(?: [^"]*)?"'
_GROUP = re.compile(GROUP_OPEN)
_EDGE = re.compile(r"^(?:(?P<prefix>.*?)\.)?\((?P<src>.+?) (?P<arrow><->|->|<-|--) (?P<dst>.+?)\)\[(?P<i>\d+)\]$")
#: embedded font subsets: left out (the page's sans-serif stands in), they are most of an SVG's bytes
_FONT = re.compile(r"@font-face\s*\{[^}]*\}")


def cache_dir() -> Path:
    """``$DIAGQA_CACHE/renders`` when set, else ``.cache/renders`` at the project root."""
    base = os.environ.get("DIAGQA_CACHE")
    root = Path(base) if base else Path(__file__).resolve().parent.parent.parent / ".cache"
    return root / "renders"


def render_svg(d2_path: Path, cache: Path | None = None) -> str:
    """The SVG of ``d2_path`` as d2 draws it (fonts left out), from the cache when rendered before."""
    text = Path(d2_path).read_bytes()
    key = hashlib.sha256(b"\0".join([text, d2_version().encode(), " ".join(FLAGS).encode()])).hexdigest()
    cache = cache or cache_dir()
    hit = cache / key[:2] / f"{key}.svg"
    if hit.exists():
        return hit.read_text(encoding="utf-8")
    hit.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "d.svg"
        proc = subprocess.run([d2_binary(), *FLAGS, str(d2_path), str(out)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "D2_LAYOUT": "", "D2_THEME": ""})
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"d2 could not render {d2_path}: {proc.stderr.strip()[-300:]}")
        svg = _FONT.sub("", out.read_text(encoding="utf-8"))
    part = hit.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")  # one per writer, threads included
    part.write_text(svg, encoding="utf-8")
    part.replace(hit)  # whole or absent, even with two writers
    return svg


def parse_svg_id(escaped: str) -> tuple[Any, ...]:
    """``("node", id)`` or ``("edge", src, dst, directed, index)`` of a d2 element id (HTML-escaped),
    with ``<-`` turned around as the graph turns it."""
    text = html.unescape(escaped)
    m = _EDGE.match(text)
    if not m:
        return ("node", text)
    prefix = f"{m['prefix']}." if m["prefix"] else ""
    src, dst, arrow = prefix + m["src"], prefix + m["dst"], m["arrow"]
    if arrow == "<-":
        src, dst = dst, src
    return ("edge", src, dst, arrow in ("->", "<-"), int(m["i"]))


def class_id(cls: str) -> str | None:
    """The element id a d2 ``<g>`` class holds (base64 of the HTML-escaped id; still escaped), or ``None``
    for a class that holds none.

    >>> class_id("KGEgLT4gYilbMF0="), class_id("shape")
    ('(a -> b)[0]', None)
    """
    try:
        return base64.b64decode(cls, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def svg_elements(svg: str) -> list[tuple[str, tuple[Any, ...]]]:
    """Every shape and connection of a d2 SVG: (its ``<g>`` class, :func:`parse_svg_id` of it)."""
    return [(cls, parse_svg_id(escaped)) for cls in _GROUP.findall(svg) if (escaped := class_id(cls)) is not None]


def _ends(src: str, dst: str, directed: bool) -> tuple[Any, ...]:
    return (src, dst, True) if directed else (*sorted((src, dst)), False)


def _pair(a: Any, b: Any) -> tuple[str, str]:
    return (str(a), str(b)) if str(a) <= str(b) else (str(b), str(a))


def edge_pairs(edges: list[tuple[str, str, str, bool]]) -> dict[tuple[str, str], list[int]]:
    """The indices of ``edges`` by their two ends, in either order (for :func:`match_edge`).

    >>> edge_pairs([("b", "a", "", False), ("a", "c", "y", True), ("a", "b", "x", True)])
    {('a', 'b'): [0, 2], ('a', 'c'): [1]}
    """
    out: dict[tuple[str, str], list[int]] = {}
    for i, e in enumerate(edges):
        out.setdefault(_pair(e[0], e[1]), []).append(i)
    return out


def match_edge(edge: list[Any], edges: list[tuple[str, str, str, bool]],
               pairs: dict[tuple[str, str], list[int]] | None = None) -> int | None:
    """Index in ``edges`` (src, dst, label, directed) of the diagram edge that ``edge`` ([src, dst, label?,
    directed?], a record's form) stands for: same ends (an undirected edge on either side matches both
    orders), the same label first; ``None`` when no edge joins those ends. ``pairs`` (:func:`edge_pairs` of
    ``edges``) saves looking at the edges between other ends."""
    src, dst = edge[0], edge[1]
    label = edge[2] if len(edge) > 2 and isinstance(edge[2], str) else ""
    directed = edge[3] if len(edge) > 3 else True
    near = range(len(edges)) if pairs is None else pairs.get(_pair(src, dst), ())
    found = [i for i in near if (edges[i][0], edges[i][1]) == (src, dst)
             or ((not edges[i][3] or not directed) and (edges[i][1], edges[i][0]) == (src, dst))]
    return min(found, key=lambda i: (edges[i][2] != label, (edges[i][0], edges[i][1]) != (src, dst)), default=None)


def diagram_map(svg: str, graph: dict[str, Any]) -> dict[str, Any]:
    """The drill-down's view of one diagram: its SVG, ``nodes`` (node id -> ``<g>`` class) and ``edges``
    ([src, dst, label, directed, ``<g>`` class or ``None``] in the graph's order, from its node-link
    JSON ``graph``). Connections are paired with the graph's edges between the same ends in order."""
    elements = svg_elements(svg)
    nodes = {e[1]: cls for cls, e in elements if e[0] == "node"}
    drawn: dict[tuple[Any, ...], list[str]] = {}
    for cls, e in elements:
        if e[0] == "edge":
            drawn.setdefault(_ends(e[1], e[2], e[3]), []).append(cls)
    edges = []
    for e in graph.get("edges", []):
        directed = bool(e.get("directed", True))
        queue = drawn.get(_ends(e["source"], e["target"], directed)) or []
        edges.append([e["source"], e["target"], e.get("label") or "", directed, queue.pop(0) if queue else None])
    return {"svg": svg, "nodes": nodes, "edges": edges}
