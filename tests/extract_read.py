"""A bundled diagram drawn in a style by the real tool; read back by extraction, and the D2 edges it read."""
from __future__ import annotations

from pathlib import Path


def drawn(name: str, style: str, tmp_path: Path) -> Path:
    """The PNG of the bundled diagram ``name``: its own for the default style, else drawn in ``style`` by
    the real tool into ``tmp_path``."""
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.render import render_file

    png = DEFAULT_ROOT / "diagrams" / f"{name}.png"
    if style != "default":
        png = tmp_path / f"{name}-{style}.png"
        render_file(DEFAULT_ROOT / "diagrams" / f"{name}.d2", png, style=style)
    return png


def edges_read(name: str, style: str, tmp_path: Path) -> tuple[dict, set[tuple[str, str]]]:
    """The graph extracted from the bundled diagram ``name`` drawn in ``style``, and the (src, dst) of
    the reference (D2) edges it reads, its nodes aligned to the D2's."""
    from benchmark.d2 import parse_file
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract.align import align
    from benchmark.extract.evaluate import flow_edges, match_edges
    from benchmark.extract.pipeline import extract

    graph, ref = extract(drawn(name, style, tmp_path)), parse_file(DEFAULT_ROOT / "diagrams" / f"{name}.d2")
    to_ref = align(graph, ref)
    renamed = {"nodes": [], "edges": [{**e, "src": to_ref.get(e["src"], "?"), "dst": to_ref.get(e["dst"], "?")}
                                      for e in graph["edges"]]}
    return graph, {(r.src, r.dst) for _, r in match_edges(flow_edges(renamed), flow_edges(ref))}
