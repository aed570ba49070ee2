"""diagqa propose: the solver's answer and a minimal certificate for a structured question."""
from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from benchmark.dataset import DEFAULT_ROOT, Diagram
from benchmark.errors import DiagQAError
from benchmark.questions import ABSTAIN, NODE_ARGS, QUESTION_TYPES, answer_to_json
from benchmark.solver import propose_certificate

NAME = "propose"
HELP = "propose answer + certificate for a structured question (for an annotator to review)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("diagram", help="diagram id (diagrams/<id>.d2) or a path to a .d2 file")
    p.add_argument("type", choices=sorted(QUESTION_TYPES), help="question type")
    p.add_argument("args", nargs="+", metavar="KEY=VALUE", help="structured args, e.g. source=user target=db")
    p.add_argument("--data", type=Path, default=DEFAULT_ROOT, help="dataset directory (default: the bundled one)")


def main(args: argparse.Namespace) -> int:
    path = Path(args.diagram)
    if path.suffix != ".d2":
        path = args.data / "diagrams" / f"{args.diagram}.d2"
    if not path.exists():
        raise DiagQAError(f"no diagram file {path}")
    qargs = {}
    for item in args.args:
        key, sep, value = item.partition("=")
        if not sep:
            raise DiagQAError(f"argument {item!r} is not KEY=VALUE")
        qargs[key] = value
    t = QUESTION_TYPES[args.type]
    if set(qargs) != set(t.args):
        raise DiagQAError(f"type {t.name} takes args {list(t.args)}")
    d = Diagram(id=path.stem, d2_path=path, png_path=path.with_suffix(".png"))
    g = d.graph
    unknown = [f"{k}={v}" for k, v in qargs.items() if k in NODE_ARGS and v not in g]
    if unknown:
        raise DiagQAError(f"not nodes of {path.name}: {', '.join(unknown)}; nodes: {', '.join(sorted(g.nodes))}")
    answer, cert = propose_certificate(t.name, qargs, g)
    if t.name == "absent" and answer != ABSTAIN:
        raise DiagQAError(f"the diagram has a node named like {qargs['entity']!r}: {answer} "
                          f"({g.nodes[answer].get('label') or answer}); an absent question must name something it lacks")
    if answer is None:
        from benchmark.solver import parallel_only
        from benchmark.validate import PARALLEL_ONLY

        if parallel_only(t.name, qargs, g):
            raise DiagQAError(PARALLEL_ONLY)
        raise DiagQAError("the diagram does not determine an answer to this question (no such branch/edge/path, or ambiguous)")
    out = {"type": t.name, "args": qargs, "answer": answer_to_json(answer), "certificate": cert.to_json()}
    print(yaml.safe_dump(out, allow_unicode=True, sort_keys=False, default_flow_style=None), end="")
    return 0
