"""diagqa find: which diagram is a question about? Rank diagrams for a text, or evaluate the finders."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from benchmark.dataset import DEFAULT_ROOT, load_dataset
from benchmark.errors import DiagQAError, StageUnavailable
from benchmark.graph import Subgraph
from benchmark.questions import Question

NAME = "find"
HELP = "rank the dataset's diagrams for a question text, or --eval the finders (recall@1, recall@5, MRR, twins)"

COLUMNS = ("finder", "status", "questions", "recall@1", "recall@5", "MRR", "recall@1_pair", "twin_questions",
           "twin_confusions", "twin_at_1", "twin_ties", "fit_s")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", help="a question, e.g. \"Does the cache reach the orders DB?\"")
    p.add_argument("--eval", action="store_true", help="evaluate finders on the dataset's questions")
    p.add_argument("--finders", nargs="+", metavar="NAME",
                   help="finders to use (default: every registered one for --eval, d2-bm25 for a text)")
    p.add_argument("-k", type=int, default=5, help="diagrams to print for a text (default 5)")
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")
    p.add_argument("--images", type=Path, metavar="DIR",
                   help="read each diagram's PNG as DIR/<id>.png instead (e.g. renders made by "
                        "`diagqa render --style sketch --out DIR`), to see how image finders hold up")
    p.add_argument("--limit", type=int, help="evaluate at most this many questions (dataset order)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def format_table(rows: list[dict[str, Any]]) -> str:
    """Rows of :func:`benchmark.finders.evaluate.finder_table` as an aligned text table; the reason a finder
    could not run, or the problems it met, follow the table."""
    cells = [[("-" if r.get(c) is None else str(r[c])) for c in COLUMNS] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    notes = [r["reason"] if r["reason"].startswith(f"{r['finder']}:") else f"{r['finder']}: {r['reason']}"
             for r in rows if r.get("reason")]
    return "\n".join(lines + ([""] + notes if notes else []))


def main(args: argparse.Namespace) -> int:
    from benchmark.finders.evaluate import finder_table
    from benchmark.plugins import load_all
    from benchmark.stages import FINDERS

    load_all()
    names = [n for part in (args.finders or []) for n in part.split(",") if n]
    unknown = [n for n in names if n not in FINDERS]
    if unknown:
        raise DiagQAError(f"unknown finder {unknown[0]!r}; known: {', '.join(FINDERS.names())}")
    if args.eval == bool(args.text):
        raise DiagQAError("give either a question text or --eval")
    dataset, _ = load_dataset(args.data, strict=False)
    if not dataset.diagrams:
        raise DiagQAError(f"no diagrams in {args.data}")
    if args.images:
        if not args.images.is_dir():
            raise DiagQAError(f"--images: {args.images} is not a folder")
        for d in dataset.diagrams.values():  # a PNG missing there is reported by the finders, not skipped
            d.png_path = args.images / f"{d.id}.png"
    if args.eval:
        questions = dataset.questions[: args.limit] if args.limit else dataset.questions
        rows = finder_table(dataset, names or FINDERS.names(), questions)
        print(json.dumps(rows, indent=1, ensure_ascii=False) if args.json else format_table(rows))
        print(f"\n{len(questions)} questions over {len(dataset.diagrams)} diagrams; twin_confusions: the twin ranked "
              f"above the right diagram (twin_at_1: ranked first; twin_ties: same score, order by id)")
        return 0
    query = Question(id="query", diagram="", text=args.text, type="edge_exists", args=(), answer=None,
                     certificate=Subgraph())
    out: dict[str, Any] = {}
    for name in names or ["d2-bm25"]:
        try:
            finder = FINDERS.create(name)
            finder.fit(dataset)
        except StageUnavailable as exc:
            out[name] = str(exc)
            continue
        out[name] = [{"diagram": d, "score": round(s, 4), "title": dataset.diagrams[d].title}
                     for d, s in finder.rank(query)[: args.k]]
    if args.json:
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return 0
    for name, found in out.items():
        print(f"{name}:")
        if isinstance(found, str):
            print(f"  unavailable: {found}")
            continue
        for i, row in enumerate(found, start=1):
            print(f"  {i}. {row['diagram']:<28} {row['score']:>9.4f}  {row['title']}")
    return 0
