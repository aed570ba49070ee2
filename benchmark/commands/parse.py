"""diagqa parse: print the graph a D2 file compiles to (nodes and edges)."""
from __future__ import annotations

import argparse
import json

NAME = "parse"
HELP = "parse a .d2 file and print its nodes and edges (json or text)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the .d2 file")
    p.add_argument("--format", choices=("json", "text"), default="json",
                   help="output format (default: json)")


def format_text(graph: dict) -> str:
    """One line per node (``id [shape] "label" in parent``), then one per edge."""
    lines = []
    for n in graph["nodes"]:
        where = f" in {n['parent']}" if n["parent"] is not None else ""
        lines.append(f"node {n['id']} [{n['shape']}] {json.dumps(n['label'], ensure_ascii=False)}{where}")
    for e in graph["edges"]:
        label = f": {json.dumps(e['label'], ensure_ascii=False)}" if e["label"] is not None else ""
        lines.append(f"edge {e['src']} {e['arrow']} {e['dst']}{label}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from benchmark.d2 import parse_file

    graph = parse_file(args.file)
    if args.format == "json":
        print(json.dumps(graph, ensure_ascii=False, indent=2))
    else:
        print(format_text(graph))
    return 0
