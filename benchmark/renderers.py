"""A D2 diagram's graph drawn by other tools: Graphviz ``dot``, PlantUML and Mermaid.

The graph is the parser's (:func:`benchmark.d2.parse_file`), so the ground truth of every
drawing is known. Each writer turns it into the tool's own language (nodes with their labels
and a close shape, containers as clusters / groups / subgraphs, edges with their labels and
arrows), and each tool's binary draws the PNG:

* ``graphviz``: ``dot -Tpng`` (Debian ``graphviz``);
* ``plantuml``: ``plantuml -tpng`` (Debian ``plantuml`` and a headless JRE), a component diagram;
* ``mermaid``: ``mmdc`` (npm ``@mermaid-js/mermaid-cli``) driving the system's Chromium, named by
  ``PUPPETEER_EXECUTABLE_PATH`` (default ``/usr/bin/chromium``): no browser is downloaded.

A missing tool raises :class:`~benchmark.errors.StageUnavailable` naming the package.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from benchmark.errors import InputError, StageUnavailable

#: bump when a writer or a tool's options change (part of the render cache key)
DRAW_VERSION = "2"
#: style name -> (binary, what installs it)
TOOLS = {
    "graphviz": ("dot", "apt-get install graphviz"),
    "plantuml": ("plantuml", "apt-get install plantuml default-jre-headless"),
    "mermaid": ("mmdc", "npm install -g @mermaid-js/mermaid-cli (with PUPPETEER_SKIP_DOWNLOAD=1) "
                        "and apt-get install chromium"),
}


def tool(style: str) -> str:
    """Path of the binary that draws ``style``; StageUnavailable when it is not installed."""
    name, how = TOOLS[style]
    found = shutil.which(name)
    if not found:
        raise StageUnavailable(f"the {style} style needs `{name}` ({how})")
    return found


@lru_cache(maxsize=None)
def tool_version(style: str) -> str:
    """One line naming the tool's version (part of the render cache key)."""
    binary = tool(style)
    args = {"graphviz": ["-V"], "plantuml": ["-version"], "mermaid": ["--version"]}[style]
    out = subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)
    lines = (out.stdout + out.stderr).strip().splitlines()
    return f"{lines[0].strip() if lines else style} draw-{DRAW_VERSION}"


def _children(graph: dict[str, Any]) -> dict[str | None, list[dict[str, Any]]]:
    kids: dict[str | None, list[dict[str, Any]]] = {}
    for n in graph["nodes"]:
        kids.setdefault(n.get("parent"), []).append(n)
    return kids


def _nested(graph: dict[str, Any], kids: dict[str | None, list[dict[str, Any]]], out: list[str], depth: int,
            indent: str, container: Callable[[str, dict[str, Any]], tuple[list[str], str]],
            node: Callable[[str, dict[str, Any]], str]) -> None:
    """Append the nodes of ``graph`` to ``out``, containers around their children: ``container(pad, n)``
    gives a container's opening lines and its closing line, ``node(pad, n)`` a leaf's line."""
    def emit(parent: str | None, level: int) -> None:
        pad = indent * level
        for n in kids.get(parent, []):
            if n["id"] in kids:
                opening, closing = container(pad, n)
                out.extend(opening)
                emit(n["id"], level + 1)
                out.append(closing)
            else:
                out.append(node(pad, n))

    emit(None, depth)


def _label(n: dict[str, Any]) -> str:
    label = n.get("label")
    return label if label is not None else str(n["id"]).split(".")[-1]


def _dot_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


DOT_SHAPES = {"rectangle": "box", "square": "box", "diamond": "diamond", "oval": "ellipse", "circle": "circle",
              "cylinder": "cylinder", "queue": "box", "hexagon": "hexagon", "parallelogram": "parallelogram",
              "page": "note", "cloud": "ellipse", "person": "box", "document": "note", "package": "tab",
              "step": "cds", "callout": "box", "stored_data": "box", "text": "plaintext"}


def to_dot(graph: dict[str, Any]) -> str:
    """The graph in Graphviz's language.

    >>> g = {"nodes": [{"id": "a", "label": "Start", "shape": "oval", "parent": None},
    ...                {"id": "b", "label": "Ok?", "shape": "diamond", "parent": None}],
    ...      "edges": [{"src": "a", "dst": "b", "label": "go", "arrow": "->"}]}
    >>> print(to_dot(g))  # doctest: +NORMALIZE_WHITESPACE
    digraph G {
     graph [dpi=144, pad=0.4, nodesep=0.5, ranksep=0.6, compound=true, fontname="DejaVu Sans"];
     node [fontname="DejaVu Sans", fontsize=14, shape=box];
     edge [fontname="DejaVu Sans", fontsize=13];
     n0 [label="Start", shape=ellipse];
     n1 [label="Ok?", shape=diamond];
     n0 -> n1 [label="go"];
    }
    """
    ids = {n["id"]: f"n{i}" for i, n in enumerate(graph["nodes"])}
    kids = _children(graph)
    out = ["digraph G {", ' graph [dpi=144, pad=0.4, nodesep=0.5, ranksep=0.6, compound=true, fontname="DejaVu Sans"];',
           ' node [fontname="DejaVu Sans", fontsize=14, shape=box];', ' edge [fontname="DejaVu Sans", fontsize=13];']

    _nested(graph, kids, out, 1, " ",
            lambda pad, n: ([f"{pad}subgraph cluster_{ids[n['id']]} {{", f"{pad} label={_dot_str(_label(n))};"],
                            f"{pad}}}"),
            lambda pad, n: (f"{pad}{ids[n['id']]} [label={_dot_str(_label(n))}, "
                            f"shape={DOT_SHAPES.get(n.get('shape') or 'rectangle', 'box')}];"))

    def leaf(nid: str) -> str:
        while nid in kids:
            nid = kids[nid][0]["id"]
        return nid

    for e in graph["edges"]:
        attrs = []
        src, dst = e["src"], e["dst"]
        if src in kids:      # an edge at a cluster: drawn to a node inside, clipped at the cluster
            attrs.append(f"ltail=cluster_{ids[src]}")
        if dst in kids:
            attrs.append(f"lhead=cluster_{ids[dst]}")
        src, dst = leaf(src), leaf(dst)
        if e.get("label"):
            attrs.append(f"label={_dot_str(e['label'])}")
        arrow = e.get("arrow", "->")
        if arrow == "--":
            attrs.append("dir=none")
        elif arrow == "<->":
            attrs.append("dir=both")
        elif arrow == "<-":
            attrs.append("dir=back")
        out.append(f" {ids[src]} -> {ids[dst]}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    out.append("}")
    return "\n".join(out)


def _puml_str(text: str) -> str:
    return '"' + text.replace('"', "'").replace("\n", "\\n") + '"'


PUML_SHAPES = {"cylinder": "database", "queue": "queue", "oval": "usecase", "circle": "usecase",
               "hexagon": "hexagon", "cloud": "cloud", "person": "actor", "page": "file", "document": "file",
               "package": "package", "diamond": "rectangle"}


def to_plantuml(graph: dict[str, Any]) -> str:
    """The graph as a PlantUML component diagram.

    >>> g = {"nodes": [{"id": "a", "label": "DB", "shape": "cylinder", "parent": None},
    ...                {"id": "b", "label": "App", "shape": "rectangle", "parent": None}],
    ...      "edges": [{"src": "b", "dst": "a", "label": "reads", "arrow": "->"}]}
    >>> print(to_plantuml(g))
    @startuml
    skinparam dpi 144
    skinparam defaultFontName DejaVu Sans
    skinparam shadowing false
    database "DB" as n0
    rectangle "App" as n1
    n1 --> n0 : "reads"
    @enduml
    """
    ids = {n["id"]: f"n{i}" for i, n in enumerate(graph["nodes"])}
    kids = _children(graph)
    out = ["@startuml", "skinparam dpi 144", "skinparam defaultFontName DejaVu Sans", "skinparam shadowing false"]

    _nested(graph, kids, out, 0, "  ",
            lambda pad, n: ([f"{pad}rectangle {_puml_str(_label(n))} as {ids[n['id']]} {{"], f"{pad}}}"),
            lambda pad, n: (f"{pad}{PUML_SHAPES.get(n.get('shape') or 'rectangle', 'rectangle')} "
                            f"{_puml_str(_label(n))} as {ids[n['id']]}"))
    for e in graph["edges"]:
        arrow = {"->": "-->", "<-": "<--", "<->": "<-->", "--": "--"}[e.get("arrow", "->")]
        label = f" : {_puml_str(e['label'])}" if e.get("label") else ""
        out.append(f"{ids[e['src']]} {arrow} {ids[e['dst']]}{label}")
    out.append("@enduml")
    return "\n".join(out)


def _mmd_str(text: str) -> str:
    return '"' + text.replace('"', "#quot;").replace("\n", "<br>") + '"'


MERMAID_SHAPES = {"diamond": ("{", "}"), "oval": ("([", "])"), "circle": ("((", "))"), "cylinder": ("[(", ")]"),
                  "hexagon": ("{{", "}}"), "parallelogram": ("[/", "/]"), "queue": ("[(", ")]")}


def _mmd_shape(n: dict[str, Any], text: str) -> str:
    left, right = MERMAID_SHAPES.get(n.get("shape") or "rectangle", ("[", "]"))
    return f"{left}{text}{right}"


def to_mermaid(graph: dict[str, Any], direction: str = "TD") -> str:
    """The graph as a Mermaid flowchart.

    >>> g = {"nodes": [{"id": "a", "label": "Ok?", "shape": "diamond", "parent": None},
    ...                {"id": "b", "label": "Done", "shape": "rectangle", "parent": None}],
    ...      "edges": [{"src": "a", "dst": "b", "label": "yes", "arrow": "->"}]}
    >>> print(to_mermaid(g))
    flowchart TD
      n0{"Ok?"}
      n1["Done"]
      n0 -->|"yes"| n1
    """
    ids = {n["id"]: f"n{i}" for i, n in enumerate(graph["nodes"])}
    kids = _children(graph)
    out = [f"flowchart {direction}"]

    _nested(graph, kids, out, 1, "  ",
            lambda pad, n: ([f"{pad}subgraph {ids[n['id']]} [{_mmd_str(_label(n))}]"], f"{pad}end"),
            lambda pad, n: f"{pad}{ids[n['id']]}{_mmd_shape(n, _mmd_str(_label(n)))}")
    for e in graph["edges"]:
        arrow = e.get("arrow", "->")
        src, dst = (e["dst"], e["src"]) if arrow == "<-" else (e["src"], e["dst"])
        link = {"->": "-->", "<-": "-->", "<->": "<-->", "--": "---"}[arrow]
        label = f"|{_mmd_str(e['label'])}|" if e.get("label") else ""
        out.append(f"  {ids[src]} {link}{label} {ids[dst]}")
    return "\n".join(out)


#: the largest side, in pixels, PlantUML may draw (its own default, 4096, crops the large diagrams)
PLANTUML_LIMIT_SIZE = 16384


def drawing_options(style: str) -> str:
    """What, besides the tool's version, decides how ``style`` is drawn (part of a drawing's cache key)."""
    from benchmark.render import MAX_PNG_PIXELS

    return {"plantuml": f"PLANTUML_LIMIT_SIZE={PLANTUML_LIMIT_SIZE}",
            "mermaid": f"scale 2 within {MAX_PNG_PIXELS} px"}.get(style, "")


def draw(graph: dict[str, Any], style: str, out_png: Path, source: str = "<graph>", timeout: float = 180) -> None:
    """Draw ``graph`` in ``style`` (graphviz, plantuml, mermaid) to ``out_png``."""
    binary = tool(style)
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"diagqa-{style}-") as tmp:
        work = Path(tmp)
        env = dict(os.environ)
        if style == "graphviz":
            src = work / "g.dot"
            src.write_text(to_dot(graph), encoding="utf-8")
            cmd, made = [binary, "-Tpng", str(src), "-o", str(work / "g.png")], work / "g.png"
        elif style == "plantuml":
            src = work / "g.puml"
            src.write_text(to_plantuml(graph), encoding="utf-8")
            cmd, made = [binary, "-tpng", "-charset", "UTF-8", "-Djava.awt.headless=true", str(src)], work / "g.png"
            # PlantUML crops a drawing to 4096 px a side by default, which cut the large diagrams off
            env.setdefault("PLANTUML_LIMIT_SIZE", str(PLANTUML_LIMIT_SIZE))
        elif style == "mermaid":
            src = work / "g.mmd"
            src.write_text(to_mermaid(graph), encoding="utf-8")
            browser = env.get("PUPPETEER_EXECUTABLE_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
            env["PUPPETEER_EXECUTABLE_PATH"] = browser
            conf = work / "puppeteer.json"
            conf.write_text(json.dumps({"executablePath": browser, "args": ["--no-sandbox", "--disable-gpu"]}))
            # natural size (not fitted to the page width, which shrinks large diagrams), twice over
            mconf = work / "mermaid.json"
            mconf.write_text(json.dumps({"flowchart": {"useMaxWidth": False}}))
            cmd, made = [binary, "-q", "-i", str(src), "-o", str(work / "g.png"), "-s", "2", "-b", "white",
                         "-p", str(conf), "-c", str(mconf)], work / "g.png"
        else:
            raise ValueError(f"no drawing tool for style {style!r}")
        _run_tool(style, cmd, made, env, work, timeout, source)
        if style == "mermaid":
            # twice the natural size, unless that is more pixels than a PNG the extractor reads (the large
            # diagrams): then drawn again at the largest scale that stays within it, as d2's PNGs are
            from benchmark.render import MAX_PNG_PIXELS, png_scale

            width, height = _png_size(made)
            scale = png_scale(width / 2, height / 2, MAX_PNG_PIXELS)
            if scale is not None:
                cmd[cmd.index("-s") + 1] = f"{2 * scale:.2f}"   # mermaid's -s is the whole factor
                made.unlink()
                _run_tool(style, cmd, made, env, work, timeout, source)
        shutil.move(str(made), str(out_png))


def _run_tool(style: str, cmd: list[str], made: Path, env: dict[str, str], work: Path, timeout: float,
              source: str) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=work)
    if proc.returncode != 0 or not made.exists():
        msg = [ln for ln in (proc.stderr or proc.stdout).strip().splitlines() if ln.strip()]
        why = " ".join(msg[-1].split()) if msg else f"exit {proc.returncode}"
        raise InputError(f"{style} failed to draw: {why}", file=source)


def _png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header."""
    import struct

    with open(path, "rb") as fh:
        head = fh.read(24)
    return struct.unpack(">II", head[16:24])
