"""How many of d2's drawn connectors lie under other connectors, and how many of their labels under other
text: what no reader of the PNG can recover for sure.

Grid layouts draw every connector straight, over the shapes in its way, so a connector can run
exactly along others (``net_office``'s left column: ``core -- access_1`` lies on ``core -- access_2``,
which runs on through ``access_1``). The pixels of such a connector are the pixels of the others:
the drawing is the same with or without it, and a reader that names it guesses.

For every diagram (or the ids given) the D2 file is drawn to SVG by the real ``d2`` binary with the
dataset's options (the same layout as its PNG), and each connector's path is read from the SVG
(d2 names each connector's group by its base64 key, ``(a -> b)[0]``). A connector is *hidden* when at
least ``--share`` of its length (its two ends' first ``--ends`` units left out: every connector
leaves a shape where others do) lies within ``--tol`` SVG units of a connector that is not hidden
(taken in the SVG's order, so that of two connectors drawn one on the other, one stays visible).
Arrowheads and labels are not counted: a connector whose line is hidden but whose head shows where
it ends still leaves its start to a guess.

The connectors' labels are measured too: d2 places a label at its connector's middle without moving
it off other text, so on a crowded diagram a label can be drawn over a shape's label or another
connector's (``etl_clickstream``: ``page`` and ``segments`` one on the other). Every line of text is
boxed from its position, its font size and the advance widths of the font d2 embeds in the SVG (from
its capitals' top to its descenders' foot), and a connector's label is *overlapped* when more than
``--label-share`` of its box (default: any of it) lies under another line's box. Such a label is
not lost for certain (two lines that only touch are often both read), but what is read there is
partly a guess.

    .venv/bin/python scripts/edge_visibility.py                     # the bundled dataset
    .venv/bin/python scripts/edge_visibility.py net_office --list    # name the hidden connectors and labels
"""
from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.dataset import DEFAULT_ROOT  # noqa: E402
from benchmark.errors import DiagQAError  # noqa: E402
from benchmark.render import render_file  # noqa: E402
from benchmark.report.diagrams import GROUP_OPEN, class_id, parse_svg_id  # noqa: E402

_GROUP = re.compile(GROUP_OPEN + r'>(.*?)</g>', re.S)
_CONNECTION = re.compile(r'<path d="([^"]+)"[^>]*class="connection')
_TOKEN = re.compile(r"[A-Za-z]|-?\d+(?:\.\d+)?(?:[eE]-?\d+)?")
#: points taken on each cubic or quadratic piece of a path
CURVE_STEPS = 16


def path_points(d: str) -> list[np.ndarray]:
    """The polylines of an SVG path's ``d`` (absolute M, L, H, V, C, Q, Z: what d2 writes), curves
    flattened into :data:`CURVE_STEPS` pieces.

    >>> [p.tolist() for p in path_points("M 0 0 L 10 0 V 5")]
    [[[0.0, 0.0], [10.0, 0.0], [10.0, 5.0]]]
    >>> pts = path_points("M 0 0 C 0 10 10 10 10 0")[0]
    >>> len(pts), pts[-1].tolist(), round(float(pts[:, 1].max()), 2)
    (17, [10.0, 0.0], 7.5)
    """
    toks = _TOKEN.findall(d)
    lines: list[list[tuple[float, float]]] = []
    i, cmd = 0, ""

    def num(k: int) -> float:
        return float(toks[i + k])

    while i < len(toks):
        if toks[i].isalpha():
            cmd = toks[i]
            i += 1
            if cmd in "Zz" and lines:
                lines[-1].append(lines[-1][0])
            continue
        if cmd == "M":
            lines.append([(num(0), num(1))])
            i += 2
            cmd = "L"   # further pairs after M are lines
        elif cmd == "L":
            lines[-1].append((num(0), num(1)))
            i += 2
        elif cmd == "H":
            lines[-1].append((num(0), lines[-1][-1][1]))
            i += 1
        elif cmd == "V":
            lines[-1].append((lines[-1][-1][0], num(0)))
            i += 1
        elif cmd in "CQ":
            n = 3 if cmd == "C" else 2
            ctrl = np.array([lines[-1][-1]] + [(num(2 * k), num(2 * k + 1)) for k in range(n)])
            t = np.linspace(0, 1, CURVE_STEPS + 1)[1:, None]
            if n == 3:
                pts = ((1 - t) ** 3 * ctrl[0] + 3 * (1 - t) ** 2 * t * ctrl[1] + 3 * (1 - t) * t ** 2 * ctrl[2]
                       + t ** 3 * ctrl[3])
            else:
                pts = (1 - t) ** 2 * ctrl[0] + 2 * (1 - t) * t * ctrl[1] + t ** 2 * ctrl[2]
            lines[-1].extend(map(tuple, pts))
            i += 2 * n
        else:
            raise ValueError(f"path command {cmd!r} is not read (path {d[:60]!r})")
    return [np.array(line, float) for line in lines if len(line) > 1]


def connectors(svg: str) -> list[tuple[str, list[np.ndarray]]]:
    """Each connector of a d2 SVG: its key (``(a -> b)[0]``) and polylines, in the SVG's order."""
    out = []
    for m in _GROUP.finditer(svg):
        path, escaped = _CONNECTION.search(m.group(2)), class_id(m.group(1))
        if path and escaped is not None:
            out.append((html.unescape(escaped), path_points(path.group(1))))
    return out


def sample(lines: list[np.ndarray], step: float = 1.0) -> np.ndarray:
    """Points every ``step`` units along the polylines.

    >>> sample([np.array([[0.0, 0.0], [4.0, 0.0]])]).tolist()
    [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0], [4.0, 0.0]]
    """
    pts = []
    for line in lines:
        for a, b in zip(line[:-1], line[1:]):
            n = max(1, int(np.ceil(np.hypot(*(b - a)) / step)))
            pts.append(a + (b - a) * (np.arange(n)[:, None] / n))
        pts.append(line[-1:])
    return np.concatenate(pts) if pts else np.zeros((0, 2))


def near(points: np.ndarray, lines: list[np.ndarray], tol: float) -> np.ndarray:
    """Which points lie within ``tol`` of any segment of the polylines.

    >>> near(np.array([[5.0, 1.0], [5.0, 3.0]]), [np.array([[0.0, 0.0], [10.0, 0.0]])], 2.0).tolist()
    [True, False]
    """
    hit = np.zeros(len(points), bool)
    for line in lines:
        a, b = line[:-1], line[1:]
        lo, hi = np.minimum(a, b).min(axis=0) - tol, np.maximum(a, b).max(axis=0) + tol
        inside = np.all((points >= lo) & (points <= hi), axis=1) & ~hit
        if not inside.any():
            continue
        p = points[inside][:, None, :]
        ab = (b - a)[None]
        length2 = np.maximum((ab ** 2).sum(axis=2), 1e-12)
        t = np.clip(((p - a[None]) * ab).sum(axis=2) / length2, 0, 1)
        dist = np.hypot(*np.moveaxis(p - (a[None] + t[..., None] * ab), 2, 0))
        hit[np.flatnonzero(inside)[(dist <= tol).any(axis=1)]] = True
    return hit


def hidden(conns: list[tuple[str, list[np.ndarray]]], tol: float, share: float, ends: float) -> list[tuple[str, float]]:
    """The hidden connectors (see the module's text), each with the share of its length covered.

    >>> a = ("(a -> b)[0]", [np.array([[0.0, 0.0], [0.0, 100.0]])])
    >>> b = ("(a -> c)[0]", [np.array([[0.0, 0.0], [0.0, 200.0]])])
    >>> c = ("(x -> y)[0]", [np.array([[50.0, 0.0], [50.0, 200.0]])])
    >>> [(k, round(s, 2)) for k, s in hidden([a, b, c], 2.0, 0.97, 6.0)]
    [('(a -> b)[0]', 1.0)]
    """
    out: list[tuple[str, float]] = []
    gone: set[int] = set()
    for k, (key, lines) in enumerate(conns):
        pts = sample(lines)
        if len(pts) == 0:
            continue
        keep = (np.hypot(*(pts - pts[0]).T) > ends) & (np.hypot(*(pts - pts[-1]).T) > ends)
        pts = pts[keep] if keep.any() else pts
        covered = np.zeros(len(pts), bool)
        for j, (_, other) in enumerate(conns):
            if j != k and j not in gone:
                covered |= near(pts, other, tol)
        s = float(covered.mean())
        if s >= share:
            gone.add(k)
            out.append((key, s))
    return out


_FACE = re.compile(r'font-family: (d2-\d+-font-[a-z]+);\s*src: url\("data:application/font-woff;base64,([^"]+)"')
_FACE_OF = re.compile(r'\.d2-\d+ \.(text[-a-z]*) \{\s*font-family: "([^"]+)"')
_OPEN = re.compile(GROUP_OPEN + r'>|<text ([^>]*)>(.*?)</text>', re.S)
_ATTR = re.compile(r'([a-z-]+)="([^"]*)"')
_TSPAN = re.compile(r'<tspan ([^>]*)>(.*?)</tspan>', re.S)
_SIZE = re.compile(r"font-size:([\d.]+)px")
_ANCHOR = re.compile(r"text-anchor:(\w+)")
#: how far left of its x a line starts, in its width, by its ``text-anchor``
_ANCHOR_SHIFT = {"middle": 0.5, "end": 1.0}
#: a line of text's box, in its font size: from this far above its baseline to this far below (a capital's
#: top and a descender's foot; tight, so that two lines set one under the other do not count as overlapping)
ASCENT, DESCENT = 0.72, 0.22


class Fonts:
    """Advance widths of the fonts d2 embeds in its SVG (WOFF subsets holding the glyphs drawn), by text class
    (``text``, ``text-bold``, ``text-italic``): what a line of text is as wide as, in SVG units."""

    def __init__(self, svg: str) -> None:
        import base64
        import io

        from fontTools.ttLib import TTFont  # fontTools comes with matplotlib

        faces = {}
        for name, data in _FACE.findall(svg):
            font = TTFont(io.BytesIO(base64.b64decode(data)))
            faces[name] = (font.getBestCmap(), font["hmtx"].metrics, font["head"].unitsPerEm)
        self._by_class = {cls: faces[name] for cls, name in _FACE_OF.findall(svg) if name in faces}
        if not self._by_class:
            raise ValueError("the SVG embeds no d2 text font (@font-face of a .text class): its labels cannot be measured")

    def width(self, cls: str, text: str, size: float) -> float:
        """The advance width of ``text`` set in ``cls`` at ``size`` (a class without a font of its own: the regular
        font, else any embedded one; a glyph the subset lacks: half an em)."""
        cmap, metrics, upm = (self._by_class.get(cls) or self._by_class.get("text")
                              or next(iter(self._by_class.values())))
        units = sum(metrics[cmap[ord(c)]][0] if ord(c) in cmap else upm / 2 for c in text)
        return units * size / upm


def text_boxes(svg: str) -> list[tuple[str | None, str, tuple[float, float, float, float]]]:
    """Every line of text d2 drew: the key of the group it belongs to (a connector's ``(a -> b)[0]`` or a
    shape's id; the last group opened before it, None before any), the line, and its box (x0, y0, x1, y1)."""
    fonts = Fonts(svg)
    out: list[tuple[str | None, str, tuple[float, float, float, float]]] = []
    owner = None
    for m in _OPEN.finditer(svg):
        if m.group(1) is not None:
            escaped = class_id(m.group(1))
            owner = html.unescape(escaped) if escaped is not None else owner
            continue
        attrs = dict(_ATTR.findall(m.group(2)))
        style = attrs.get("style", "")
        size = float(m_size.group(1)) if (m_size := _SIZE.search(style)) else 16.0
        cls = next((c for c in attrs.get("class", "").split() if c.startswith("text")), "text")
        shift = _ANCHOR_SHIFT.get(m_anchor.group(1), 0.0) if (m_anchor := _ANCHOR.search(style)) else 0.0
        x, y = float(attrs.get("x", 0)), float(attrs.get("y", 0))
        lines = [(x, y, m.group(3))]
        spans = _TSPAN.findall(m.group(3))
        if spans:
            lines = []
            for span_attrs, body in spans:
                a = dict(_ATTR.findall(span_attrs))
                x = float(a.get("x", x))
                y += float(a.get("dy", 0))
                lines.append((x, y, body))
        for lx, ly, body in lines:
            text = html.unescape(re.sub(r"<[^>]+>", "", body))
            if not text.strip():
                continue
            w = fonts.width(cls, text, size)
            left = lx - shift * w
            out.append((owner, text, (left, ly - ASCENT * size, left + w, ly + DESCENT * size)))
    return out


def covered_share(box: tuple[float, float, float, float], other: tuple[float, float, float, float]) -> float:
    """The share of ``box``'s area that ``other`` covers.

    >>> covered_share((0, 0, 10, 10), (5, 0, 20, 10)), covered_share((0, 0, 10, 10), (10, 0, 20, 10))
    (0.5, 0.0)
    """
    w = min(box[2], other[2]) - max(box[0], other[0])
    h = min(box[3], other[3]) - max(box[1], other[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return max(0.0, w) * max(0.0, h) / area if area > 0 else 0.0


def overlapped_labels(svg: str, share: float) -> tuple[int, list[tuple[str, str, str]]]:
    """The connectors' labels (lines of text inside a connector's group) and those of which more than ``share``
    of the box lies under another line of text (a shape's label or another connector's), each with the
    connector's key, the label and the text over it."""
    boxes = text_boxes(svg)
    labels = [(k, t, b) for k, t, b in boxes if k is not None and parse_svg_id(k)[0] == "edge"]
    out = []
    for key, text, box in labels:
        for okey, otext, obox in boxes:
            if (okey, otext, obox) != (key, text, box) and covered_share(box, obox) > share:
                out.append((key, text, otext))
                break
    return len(labels), out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("ids", nargs="*", help="diagram ids (default: every diagram of --data)")
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--tol", type=float, default=2.0, help="SVG units from another connector that count as on it")
    p.add_argument("--share", type=float, default=0.97, help="share of a connector's length covered to be hidden")
    p.add_argument("--ends", type=float, default=6.0, help="units left out at each end")
    p.add_argument("--label-share", type=float, default=0.0,
                   help="share of a connector label's box that must lie under other text to count (default: any)")
    p.add_argument("--list", action="store_true", help="name every hidden connector and overlapped label")
    p.add_argument("--json", type=Path, help="write the rows here too")
    args = p.parse_args(argv)
    ddir = args.data / "diagrams"
    names = args.ids or sorted(x.stem for x in ddir.glob("*.d2"))
    rows, total, lost, failed, labels, under = [], 0, 0, 0, 0, 0
    print("| diagram | connectors | hidden | labels | overlapped | hidden connectors; overlapped labels |\n"
          "|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            svg = Path(tmp) / f"{name}.svg"
            try:   # one diagram that d2 cannot draw, or whose SVG is not read, never loses the others
                render_file(ddir / f"{name}.d2", svg)
                text = svg.read_text(encoding="utf-8")
                conns = connectors(text)
                n_labels, overlapped = overlapped_labels(text, args.label_share)
            except (DiagQAError, ValueError, subprocess.TimeoutExpired) as exc:
                where = str(ddir / f"{name}.d2")
                print(f"edge_visibility: {exc if where in str(exc) else f'{where}: {exc}'}", file=sys.stderr)
                rows.append({"diagram": name, "error": str(exc)})
                failed += 1
                continue
            gone = hidden(conns, args.tol, args.share, args.ends)
            rows.append({"diagram": name, "connectors": len(conns), "hidden": [k for k, _ in gone],
                         "labels": n_labels,
                         "overlapped_labels": [{"connector": k, "label": t, "under": o} for k, t, o in overlapped]})
            total, lost = total + len(conns), lost + len(gone)
            labels, under = labels + n_labels, under + len(overlapped)
            if gone or overlapped or args.ids:
                shown = "; ".join(filter(None, [", ".join(k for k, _ in gone),
                                                ", ".join(f"{t!r} ({k}) under {o!r}" for k, t, o in overlapped)]))
                print(f"| {name} | {len(conns)} | {len(gone)} | {n_labels} | {len(overlapped)} | "
                      f"{shown if args.list else ''} |")
    ceiling = 1 - lost / total if total else None
    print(f"\n{len(names)} diagrams, {total} connectors drawn, {lost} hidden under others "
          f"({lost / total if total else 0:.1%}): at most {ceiling:.3f} of the connectors can be read from "
          f"the pixels (tol {args.tol}, share {args.share}, ends {args.ends})" if total else "no connectors")
    if labels:
        print(f"{labels} connector labels, {under} drawn overlapping other text ({under / labels:.1%}; "
              f"label share {args.label_share})")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "connectors": total, "hidden": lost, "labels": labels,
                                         "overlapped_labels": under}, indent=1, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    if failed:
        print(f"{failed} diagram(s) not measured (above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
