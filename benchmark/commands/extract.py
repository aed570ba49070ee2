"""diagqa extract: read a diagram's graph from its PNG, or score extraction on a whole dataset."""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT
from benchmark.errors import DiagQAError, InputError
from benchmark.render import ALL_STYLES

NAME = "extract"
#: exit status of ``diagqa extract FILE`` when no node was found (errors in the input exit 2)
EMPTY_GRAPH_EXIT = 1
HELP = "read the graph drawn in a PNG (OCR + vision), or --eval: score extraction against the D2 on a dataset"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", type=Path, help="PNG to read (not with --eval)")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output format for FILE")
    p.add_argument("--eval", action="store_true", help="score extraction on every diagram of --data")
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--style", choices=ALL_STYLES, default="default",
                   help="with --eval: render every diagram in this style first (into the cache)")
    p.add_argument("--only", default=None, help="with --eval: comma-separated diagram ids (default: all)")
    p.add_argument("--workers", type=int, default=0, help="with --eval: processes (default: one per core)")
    p.add_argument("--worst", type=int, default=5, help="with --eval: how many worst diagrams to list")
    p.add_argument("--json", dest="json_out", type=Path, help="with --eval: also write all figures to this file")
    p.add_argument("--lang", default=None, help="tesseract languages (default: eng+rus)")
    p.add_argument("--no-cache", action="store_true", help="extract again even when a cached result exists")
    p.add_argument("--cache", type=Path, default=None, help="cache folder (default: .cache/extract, or $DIAGQA_CACHE/extract)")


def main(args: argparse.Namespace) -> int:
    from benchmark.extract.ocr import LANG, require_tesseract

    require_tesseract()
    lang = args.lang or LANG
    if args.eval:
        if args.file is not None:
            raise DiagQAError("give either FILE or --eval, not both")
        return _evaluate(args, lang)
    if args.file is None:
        raise DiagQAError("give a PNG file to read, or --eval")
    if not args.file.exists():
        raise InputError("no such file", file=str(args.file))
    from benchmark.extract.cache import cached_extract
    from benchmark.extract.pipeline import extract

    try:
        graph = extract(args.file, lang=lang) if args.no_cache else cached_extract(args.file, lang=lang,
                                                                                     cache_dir=args.cache)
    except ValueError as exc:
        raise InputError(str(exc), file=str(args.file)) from exc
    if args.format == "json":
        print(json.dumps(graph, ensure_ascii=False, indent=1))
    else:
        print(format_graph(graph))
    for w in graph.get("warnings", []):
        print(f"warning: {args.file}: {w}", file=sys.stderr)
    # an empty graph is a failure to read the diagram, not a diagram without nodes
    return 0 if graph["nodes"] else EMPTY_GRAPH_EXIT


def format_graph(graph: dict) -> str:
    """Nodes then edges, one a line, as a person would read them off the picture."""
    lines = [f"{len(graph['nodes'])} nodes, {len(graph['edges'])} edges"]
    for n in graph["nodes"]:
        parent = f"  in {n['parent']}" if n.get("parent") else ""
        label = (n.get("label") or "").replace("\n", " / ")
        lines.append(f"  {n['id']}: {label!r} [{n['shape']}]{parent}")
    for e in graph["edges"]:
        label = f": {e['label']}" if e.get("label") else ""
        lines.append(f"  {e['src']} {e['arrow']} {e['dst']}{label}")
    return "\n".join(lines)


def _fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def _evaluate(args: argparse.Namespace, lang: str) -> int:
    from benchmark.extract.evaluate import summarise, worst
    from benchmark.extract.runs import eval_dataset

    ddir = args.data / "diagrams"
    if not ddir.is_dir():
        raise InputError("a dataset directory needs a 'diagrams/' folder", file=str(args.data))
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one tesseract thread per worker process
    ids = [i for i in (args.only or "").split(",") if i] or None
    if ids:
        missing = [i for i in ids if not (ddir / f"{i}.d2").exists()]
        if missing:
            raise InputError(f"no diagram {', '.join(missing)} in this dataset", file=str(ddir))
    scores = eval_dataset(args.data, style=args.style, workers=args.workers or None, lang=lang,
                          cache_dir=args.cache, ids=ids)
    s = summarise(scores)
    out = sys.stdout
    print(f"extraction on {s['diagrams']} diagrams ({args.style} style), {s['failed']} failed", file=out)
    print(f"  node F1           {_fmt(s['node_f1'])}  (precision {_fmt(s['node_precision'])}, "
          f"recall {_fmt(s['node_recall'])}; {s['matched_nodes']}/{s['ref_nodes']} D2 nodes found, "
          f"{s['ext_nodes']} extracted)", file=out)
    print(f"  directed-edge F1  {_fmt(s['edge_f1'])}  (precision {_fmt(s['edge_precision'])}, "
          f"recall {_fmt(s['edge_recall'])}; {s['matched_edges']}/{s['ref_edges']} D2 edges found, "
          f"{s['ext_edges']} extracted)", file=out)
    print(f"  edge-label acc.   {_fmt(s['label_accuracy'])}  ({s['labels_correct']}/{s['labelled_edges']} "
          f"labels of found edges)", file=out)
    print(f"  nesting acc.      {_fmt(s['nesting_accuracy'])}  ({s['nested_right']}/{s['matched_nodes']} "
          f"found nodes in their D2 container)", file=out)
    if s["warned"]:
        print(f"  warnings          {s['warned']} diagrams (empty graph or labels holding under half "
              f"the words OCR read; see --json)", file=out)
    print(f"  per-diagram mean: node F1 {_fmt(s['macro_node_f1'])}, edge F1 {_fmt(s['macro_edge_f1'])}, "
          f"label acc. {_fmt(s['macro_label_accuracy'])}", file=out)
    bad = worst(scores, args.worst)
    if bad:
        print("worst diagrams (edge F1, node F1, label acc.):", file=out)
        for d in bad:
            tail = f"  error: {d.error}" if d.error else ""
            print(f"  {d.diagram:<32} {_fmt(d.edge_f1)}  {_fmt(d.node_f1)}  {_fmt(d.label_accuracy)}{tail}", file=out)
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps({"style": args.style, "summary": s,
                                             "diagrams": [d.to_json() for d in scores]},
                                            ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0
