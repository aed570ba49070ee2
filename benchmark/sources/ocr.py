"""Graph source ``ocr``: the graph read from the diagram's rendered PNG (:mod:`benchmark.extract`).

Extraction never reads the D2. Only afterwards are the extracted nodes aligned to the D2 nodes
by label (the scorer's view), so that node ids are D2 ids wherever alignment succeeds and
``ocr:<slug>`` otherwise: an element the extractor missed or misread then shows up as a gold
element missing from every context built on this graph.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx

from benchmark.dataset import Diagram
from benchmark.errors import InputError
from benchmark.graph import build_graph
from benchmark.stages import SOURCES

#: prefix of the ids of extracted nodes that match no D2 node
UNALIGNED = "ocr:"


def relabel(extracted: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """The extracted graph with ids replaced by their aligned D2 ids (``ocr:<id>`` when none).

    >>> g = {"nodes": [{"id": "a", "label": "A", "shape": "oval", "parent": None},
    ...                {"id": "b", "label": "B", "shape": "rectangle", "parent": "a"}],
    ...      "edges": [{"src": "b", "dst": "a", "label": "", "directed": True, "arrow": "->"}]}
    >>> r = relabel(g, {"a": "start"})
    >>> [n["id"] for n in r["nodes"]], r["nodes"][1]["parent"], (r["edges"][0]["src"], r["edges"][0]["dst"])
    (['start', 'ocr:b'], 'start', ('ocr:b', 'start'))
    """
    def new(i: str | None) -> str | None:
        return None if i is None else mapping.get(i, UNALIGNED + i)

    return {
        "nodes": [{**n, "id": new(n["id"]), "parent": new(n.get("parent"))} for n in extracted.get("nodes", [])],
        "edges": [{**e, "src": new(e["src"]), "dst": new(e["dst"])} for e in extracted.get("edges", [])],
    }


_STYLES = "default|elk|sketch|dark|graphviz|plantuml|mermaid"


@SOURCES.register("ocr-<style>", pattern=rf"ocr-(?P<style>{_STYLES})",
                  doc="the graph extracted from the diagram drawn in another style "
                      f"({_STYLES.replace('|', ', ')}): how much each drawing tool costs")
@SOURCES.register("ocr")
class OcrSource:
    """The extractor's graph of the diagram's PNG, node ids aligned to D2 ids where possible.

    With ``style`` (source ``ocr-<style>``) the diagram is first drawn in that style (d2's elk,
    sketch or dark, or Graphviz, PlantUML, Mermaid from the parsed graph; cached) and that
    drawing is read instead of the bundled PNG.
    """

    name = "ocr"
    #: its graphs are extracted from the diagram's image (see :class:`benchmark.stages.GraphSource`)
    reads_image = True

    def __init__(self, lang: str | None = None, cache_dir: Path | None = None, style: str = "default") -> None:
        self.lang = lang
        self.cache_dir = cache_dir
        self.style = style
        if style != "default":
            self.name = f"ocr-{style}"

    def load(self, diagram: Diagram) -> nx.MultiDiGraph:
        from benchmark.extract.ocr import LANG, require_tesseract

        require_tesseract()
        png = diagram.png_path
        if self.style != "default":
            from benchmark.extract.cache import default_cache_dir
            from benchmark.extract.runs import style_png

            png = style_png(diagram.d2_path, self.style, (self.cache_dir or default_cache_dir()) / "renders")
        if not png.exists():
            raise InputError(f"{png.name} is missing (run: diagqa render)", file=str(png))
        from benchmark.extract.align import align
        from benchmark.extract.cache import cached_extract

        extracted = cached_extract(png, lang=self.lang or LANG, cache_dir=self.cache_dir)
        return build_graph(relabel(extracted, align(extracted, diagram.parsed)))
