"""PNG -> graph in the parser's public JSON form (DESIGN.md §3), without reading any D2.

``extract(path)`` returns ``{"nodes": [{"id", "label", "shape", "parent"}], "edges": [{"src",
"dst", "label", "directed", "arrow"}], "coverage": {"ocr_words", "label_words"}, "warnings": [...]}``:
the parser's form plus how many words OCR read and how many of them ended up in a node or edge
label, and a warning whenever the graph is empty or leaves much of the text out (never a silent
empty graph). Node ids are slugs of the labels, joined with their
container's id by ``.`` the way d2 names nested shapes; unlabelled shapes are ``node-<n>``. An
edge with one arrowhead is written tail ``->`` head; pixels cannot tell ``a <- b`` from
``b -> a``, and both mean the same flow.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmark.extract.connectors import RawEdge, find_edges
from benchmark.extract.labels import (assign_node_labels, group_blocks, group_lines, is_dashed_stroke,
                                      read_unlabelled, reread_foreign_labels, reread_stacked_words,
                                      reread_unsure_labels, slug, split_across_shapes, split_run_together,
                                      without_stub_marks)
from benchmark.extract.ocr import LANG, Word, read_words
from benchmark.extract.raster import Raster, load_rgb, make_raster
from benchmark.extract.shapes import Shape, find_shapes
from benchmark.extract.strokes import drawn_strokes

#: bump when the output for the same image may change (invalidates the cache)
EXTRACTOR_VERSION = "83"
#: a graph whose labels hold less than this share of the words OCR read gets a warning
LOW_COVERAGE = 0.5
#: a d2-read graph is checked against a reading by structure when more than this share of its
#: edges are drawn in other colours than the outlines' blue
OTHER_COLOUR_EDGES = 0.5


def extract(path: Path | str, lang: str = LANG) -> dict[str, Any]:
    """The graph drawn in the PNG at ``path``."""
    return extract_image(load_rgb(path), lang=lang)


def extract_image(rgb: np.ndarray, lang: str = LANG, timings: dict[str, float] | None = None,
                  words: list[Word] | None = None) -> dict[str, Any]:
    """The graph drawn in an RGB image (H x W x 3 uint8), with ``reader``: ``d2`` when it was read
    by d2's colours, ``any`` when by structure alone (:mod:`.generic`; an image without d2's
    shapes, or one whose labels d2's colours explain only in part, or whose edges are mostly
    in other colours than its outlines', when the structure reading's labels hold more words).

    ``words`` are :func:`.ocr.read_words` of this image when they were read already (the stored
    pass of :func:`.ocr.image_words`, shared with the OCR finders); otherwise tesseract reads them here.

    d2 renders at twice the nominal size; shapes and connectors are found on a half-size copy
    when its lines are still at least 2 pixels wide (four times fewer pixels), text is read at
    full size.
    """
    from benchmark.extract.generic import extract_any

    clock = _Clock(timings)
    r, factor = analysis_raster(rgb)
    shapes = find_shapes(r)
    clock.lap("shapes")
    if not shapes:  # nothing in d2's colours: another tool's drawing, read by structure alone
        return {**extract_any(rgb, lang=lang, timings=timings), "reader": "any"}
    words = [w.scaled(1 / factor) for w in (read_words(rgb, lang=lang) if words is None else words)]
    clock.lap("ocr")
    # connectors in other colours than d2's blue (a file's ``style.stroke``), dashes bridged;
    # dashes tesseract read as words are no text
    stroke, line_words, dashed = drawn_strokes(r, words)
    dash_words = count_words([w for i, w in enumerate(words) if i in line_words])
    words = [w for i, w in enumerate(words) if i not in line_words]
    words, stacked = reread_stacked_words(words, rgb, factor, lang)
    blocks = [b for b in group_blocks(group_lines(words), stacked) if not (b.grey and is_dashed_stroke(b, r.ink))]
    reread_unsure_labels(blocks, rgb, factor, lang)
    reread_foreign_labels(blocks, rgb, factor, lang)
    split_run_together(blocks, rgb, factor)
    blocks = split_across_shapes(blocks, shapes)
    outside: dict[int, list[tuple[int, int, int, int]]] = {}
    labels = assign_node_labels(blocks, shapes, outside, persons_below=True)
    read_unlabelled(labels, shapes, r, words, rgb, factor, lang)
    edge_blocks = [b for b in blocks if b.grey]
    edges = find_edges(dataclasses.replace(r, stroke=stroke), shapes, edge_blocks, outside, d2_heads=True,
                       dashed=dashed)
    clock.lap("connectors")
    graph = with_coverage(to_parse_json(shapes, labels, edges), count_words(words))
    # most connectors in other colours than the outlines': probably another tool's drawing whose
    # outlines happen to be bluish (Mermaid's lavender), which the structure reading may read better
    other_colours = other_colour_share(edges, r.stroke) > OTHER_COLOUR_EDGES
    if not graph["warnings"] and not other_colours:
        return {**graph, "reader": "d2"}
    # d2's colours explain only part of the picture: read it by structure too, keep the better
    # the words each reading accounts for: in its labels, and (d2's) the dashes of lines tesseract read as
    # words, which the structure reading may have made labels of
    other = extract_any(rgb, lang=lang, timings=timings)
    if other["coverage"]["label_words"] > graph["coverage"]["label_words"] + dash_words:
        return {**other, "reader": "any"}
    return {**graph, "reader": "d2"}


def other_colour_share(edges: list[RawEdge], blue: np.ndarray) -> float:
    """Share of the edges most of whose traced points are not on blue stroke (0 without edges)."""
    if not edges:
        return 0.0
    other = 0
    for e in edges:
        p = e.points.astype(int)
        other += float(blue[p[:, 1], p[:, 0]].mean()) < 0.5
    return other / len(edges)


def count_words(words: list) -> int:
    """Words holding a letter or digit (the count the coverage is measured against)."""
    return sum(1 for w in words if any(c.isalnum() for c in w.text))


def with_coverage(graph: dict[str, Any], ocr_words: int) -> dict[str, Any]:
    """The graph with its ``coverage`` counts and ``warnings`` about what extraction missed.

    >>> g = with_coverage({"nodes": [], "edges": []}, 12)
    >>> g["coverage"], g["warnings"]
    ({'ocr_words': 12, 'label_words': 0}, ['no shapes found, although OCR read 12 words: the drawing style is probably not one extraction can read'])
    >>> with_coverage({"nodes": [{"id": "a", "label": "Orders DB"}], "edges": []}, 2)["warnings"]
    []
    """
    def count(text: str | None) -> int:
        return sum(1 for t in (text or "").split() if any(c.isalnum() for c in t))

    used = sum(count(n.get("label")) for n in graph["nodes"]) + sum(count(e.get("label")) for e in graph["edges"])
    warnings = []
    if not graph["nodes"]:
        warnings.append(f"no shapes found, although OCR read {ocr_words} words: the drawing style is probably "
                        "not one extraction can read" if ocr_words else "no shapes and no text found")
    elif ocr_words >= 4 and used < LOW_COVERAGE * ocr_words:
        warnings.append(f"the graph's labels hold only {used} of the {ocr_words} words OCR read: shapes or "
                        "connectors were probably missed")
    if len(graph["nodes"]) >= 2 and not graph["edges"]:
        warnings.append(f"no connectors found between {len(graph['nodes'])} shapes")
    return {**graph, "coverage": {"ocr_words": ocr_words, "label_words": used},
            "warnings": warnings}


def analysis_raster(rgb: np.ndarray) -> tuple[Raster, int]:
    """The raster shapes and connectors are found on, and its reduction factor (1 or 2).

    The stroke width is measured on the full image (a half-size copy blurs it) and halved.
    """
    import dataclasses

    import cv2

    from benchmark.extract.raster import sampled_stroke_width

    h, w = rgb.shape[:2]
    full_width = sampled_stroke_width(rgb)
    if min(h, w) >= 200 and full_width >= 4:
        half = make_raster(cv2.resize(rgb, (w // 2, h // 2), interpolation=cv2.INTER_AREA), measure=False)
        return dataclasses.replace(half, line_width=full_width // 2), 2
    return make_raster(rgb), 1


def to_parse_json(shapes: list[Shape], labels: dict[int, str], edges: list[RawEdge]) -> dict[str, Any]:
    """Shapes, their labels and edges in the public JSON form, with unique label-derived ids."""
    ids: dict[int, str] = {}
    used: set[str] = set()

    def ident(s: Shape) -> str:
        if s.index in ids:
            return ids[s.index]
        base = slug(labels[s.index]) if labels.get(s.index) else f"node-{s.index + 1}"
        prefix = ident(_by_index[s.parent]) + "." if s.parent is not None else ""
        cand, n = prefix + base, 2
        while cand in used:
            cand, n = f"{prefix}{base}-{n}", n + 1
        used.add(cand)
        ids[s.index] = cand
        return cand

    _by_index = {s.index: s for s in shapes}
    nodes = []
    for s in sorted(shapes, key=lambda s: (s.box[1], s.box[0])):
        nid = ident(s)
        nodes.append({"id": nid, "label": labels.get(s.index, ""), "shape": s.kind,
                      "parent": ids[s.parent] if s.parent is not None else None})
    out_edges = []
    for e in edges:
        a, b = ids[e.a], ids[e.b]
        if e.head_a and e.head_b:
            src, dst, arrow = a, b, "<->"
        elif e.head_a:
            src, dst, arrow = b, a, "->"
        elif e.head_b:
            src, dst, arrow = a, b, "->"
        else:
            src, dst, arrow = a, b, "--"
        out_edges.append({"src": src, "dst": dst, "label": without_stub_marks(e.label), "directed": arrow == "->",
                          "arrow": arrow})
    out_edges.sort(key=lambda e: (e["src"], e["dst"], e["label"], e["arrow"]))
    return {"nodes": nodes, "edges": out_edges}


class _Clock:
    def __init__(self, sink: dict[str, float] | None) -> None:
        self.sink, self.t = sink, time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        if self.sink is not None:
            self.sink[name] = self.sink.get(name, 0.0) + now - self.t
        self.t = now
