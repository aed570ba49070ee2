"""The generated split of counterfactual pairs (``diagqa perturb``): one edited diagram per chosen
edit, its questions annotated by the reference solver and checked by the validator.

Layout of the split (a dataset directory, usable with ``--data``)::

    diagrams/<id>__cf<k>.d2 (+ .png, renders.json)    the edited diagrams
    annotations/<id>__cf<k>.yaml                       their questions
    diagrams/<id>.d2 ... annotations/<id>.yaml         the original diagrams, copied (unless left out)
    pairs.json                                         every pair, what was edited, what has no pair

A counterfactual question keeps the original's text, type and args (a node that a ``move`` edit put
elsewhere is named by its new id); its id is
``<counterfactual diagram>-q<N>`` for the original's ``<diagram>-q<N>``; its answer and certificate
are the solver's on the edited diagram. Two questions of one diagram that get the same edit share
the edited diagram.
"""
from __future__ import annotations

import json
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from benchmark.dataset import Dataset, Diagram
from benchmark.d2 import parse_text
from benchmark.errors import DiagQAError, InputError
from benchmark.graph import Subgraph, build_graph
from benchmark.perturb import Edit, NotRealisable, choose_edit, edit_args, pivotal, realise
from benchmark.questions import Question, answer_to_json
from benchmark.render import (check_render, d2_binary, d2_version, load_manifest, render_file, sha256_file,
                              write_manifest)
from benchmark.solver import propose_certificate, resolve_certificate

PAIRS_FILE = "pairs.json"
CF_MARK = "__cf"


@dataclass
class Pair:
    question: Question
    edit: Edit
    diagram_id: str            # the counterfactual diagram
    question_id: str           # the counterfactual question
    answer: Any                # the solver's answer on the edited diagram
    certificate: Subgraph      # and its minimal certificate there
    edit_json: dict[str, Any]
    pivotal: bool
    args: dict[str, str] = field(default_factory=dict)  # the question's args on the edited diagram


@dataclass
class SplitPlan:
    """What :func:`plan_split` decided: the pairs, the edited D2 texts, and the questions left without."""

    seed: int
    pairs: list[Pair] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)          # counterfactual diagram id -> D2 text
    origin: dict[str, str] = field(default_factory=dict)         # counterfactual diagram id -> original id
    without: list[dict[str, str]] = field(default_factory=list)  # {question, type, reason}
    questions: int = 0


def _cf_question_id(q: Question, cf_diagram: str) -> str:
    suffix = q.id[len(q.diagram):] if q.id.startswith(q.diagram) else "-" + q.id
    return cf_diagram + suffix


def plan_split(ds: Dataset, questions: list[Question], seed: int = 0) -> SplitPlan:
    """Choose and make an edit for every question (diagrams in id order): the pairs of a split."""
    plan = SplitPlan(seed=seed, questions=len(questions))
    by_diagram: dict[str, list[Question]] = {}
    for q in questions:
        by_diagram.setdefault(q.diagram, []).append(q)
    for did in sorted(by_diagram):
        d = ds.diagrams[did]
        parsed, text, g = d.parsed, d.source, d.graph
        made: dict[Edit, str] = {}      # edit -> counterfactual diagram id
        realised: dict[Edit, str | None] = {}

        def usable(e: Edit) -> bool:
            if e not in realised:
                try:
                    realised[e] = realise(text, parsed, e, filename=str(d.d2_path))
                except NotRealisable:
                    realised[e] = None
            return realised[e] is not None

        for q in by_diagram[did]:
            edit = choose_edit(q, parsed, g, seed, usable)
            if edit is None:
                plan.without.append({"question": q.id, "type": q.type, "reason": _no_pair_reason(q.type)})
                continue
            if edit not in made:
                cf_id = f"{did}{CF_MARK}{len(made) + 1}"
                made[edit] = cf_id
                plan.texts[cf_id] = realised[edit]  # type: ignore[assignment]
                plan.origin[cf_id] = did
            cf_id = made[edit]
            cert, _ = resolve_certificate(q.certificate, g)
            new_graph = build_graph(parse_text(plan.texts[cf_id]))
            args = edit_args(edit, q.arg)
            answer, new_cert = propose_certificate(q.type, args, new_graph)
            plan.pairs.append(Pair(q, edit, cf_id, _cf_question_id(q, cf_id), answer, new_cert, edit.describe(parsed),
                                   pivotal(edit, parsed, cert), args))
    return plan


def _no_pair_reason(qtype: str) -> str:
    if qtype == "absent":
        return "an absent question names nothing in the diagram: no edit makes the diagram answer it"
    if qtype == "inside":
        return "the node cannot be moved out of or into the container in the D2 text"
    return "no single remove, reverse, relabel or added arrow flips the answer"


# -- writing ------------------------------------------------------------------------------------

def _flow(value: Any) -> str:
    """One YAML value in flow style on one line (as the hand-written annotations are)."""
    out = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 30, sort_keys=False)
    return out.removesuffix("\n").removesuffix("\n...").strip()


def _annotation_text(cf_id: str, original: Diagram, items: list[Pair]) -> str:
    lines = [f"diagram: {cf_id}", f"title: {_flow(original.title)}", f"domain: {_flow(original.domain)}",
             f"language: {_flow(original.language)}", "questions:"]
    for pair in items:
        q, answer = pair.question, pair.answer
        ans = ("yes" if answer else "no") if isinstance(answer, bool) else _flow(answer_to_json(answer))
        cert_json = pair.certificate.to_json()
        # no counter_prior: it is measured when the split is loaded, as for every dataset
        lines += [f"  - id: {pair.question_id}",
                  f"    text: {_flow(q.text)}",
                  f"    type: {q.type}",
                  f"    args: {_flow(pair.args or dict(q.args))}",
                  f"    answer: {ans}",
                  "    certificate:",
                  f"      nodes: {_flow(cert_json['nodes'])}",
                  f"      edges: {_flow(cert_json['edges'])}",
                  f"    rationale: {_flow(_rationale(pair))}"]
    return "\n".join(lines) + "\n"


def _rationale(pair: Pair) -> str:
    e = pair.edit_json
    if e["kind"] == "move":
        old, new = e["node"]
        return (f"Counterfactual of {pair.question.id} (node {old} moved to {new}); "
                "answer and certificate from the reference solver.")
    edges = "; ".join(" -> ".join(x[:2]) + (f" [{x[2]}]" if len(x) > 2 else "") for x in e["edges"])
    what = {"remove": "removed", "reverse": "reversed", "swap_labels": "labels swapped",
            "relabel": f"relabelled {e.get('label')!r}", "add": "added"}[e["kind"]]
    return f"Counterfactual of {pair.question.id} (edge {edges} {what}); answer and certificate from the reference solver."


def _clear(out: Path) -> None:
    """Empty a previous split in ``out``; refuse a folder that is not one."""
    if not out.exists():
        return
    if any(out.iterdir()) and not (out / PAIRS_FILE).exists():
        raise DiagQAError(f"{out} is not empty and holds no {PAIRS_FILE}: not overwriting it")
    for sub in ("diagrams", "annotations"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    (out / PAIRS_FILE).unlink(missing_ok=True)


def write_split(ds: Dataset, plan: SplitPlan, out: Path, render: bool = True, originals: bool = True,
                progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write ``plan`` as a dataset directory under ``out``; returns the content of ``pairs.json``.

    Every edited D2 file is compiled by the real d2 binary (rendered to PNG, or ``d2 validate``
    when ``render`` is off); a pair whose diagram d2 refuses is dropped and listed.
    """
    import subprocess

    _clear(out)
    ddir, adir = out / "diagrams", out / "annotations"
    ddir.mkdir(parents=True, exist_ok=True)
    adir.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, dict[str, str]] = {}
    refused: dict[str, str] = {}
    for cf_id in sorted(plan.texts):
        d2_path = ddir / f"{cf_id}.d2"
        d2_path.write_text(plan.texts[cf_id], encoding="utf-8")
        try:
            if render:
                png = ddir / f"{cf_id}.png"
                render_file(d2_path, png)
                manifest[cf_id] = {"d2_sha256": sha256_file(d2_path), "png_sha256": sha256_file(png),
                                   "d2_version": d2_version()}
            else:
                proc = subprocess.run([d2_binary(), "validate", str(d2_path)], capture_output=True, text=True, timeout=120)
                if proc.returncode != 0:
                    raise InputError(f"d2 validate failed: {(proc.stderr or proc.stdout).strip()[-200:]}", file=str(d2_path))
        except InputError as exc:
            refused[cf_id] = str(exc)
            d2_path.unlink()
            continue
        if progress is not None:
            progress(cf_id)
    pairs = [p for p in plan.pairs if p.diagram_id not in refused]
    without = list(plan.without) + [{"question": p.question.id, "type": p.question.type,
                                     "reason": f"d2 refused the edited diagram: {refused[p.diagram_id]}"}
                                    for p in plan.pairs if p.diagram_id in refused]
    by_cf: dict[str, list[Pair]] = {}
    for p in pairs:
        by_cf.setdefault(p.diagram_id, []).append(p)
    for cf_id, items in sorted(by_cf.items()):
        original = ds.diagrams[plan.origin[cf_id]]
        (adir / f"{cf_id}.yaml").write_text(_annotation_text(cf_id, original, items), encoding="utf-8")
    if originals:
        src_dir = next(iter(ds.diagrams.values())).d2_path.parent if ds.diagrams else out
        src_manifest = load_manifest(src_dir)
        for did in sorted(ds.diagrams):
            d = ds.diagrams[did]
            shutil.copyfile(d.d2_path, ddir / d.d2_path.name)
            if d.annotation_path is not None:
                shutil.copyfile(d.annotation_path, adir / d.annotation_path.name)
            if not render:
                continue
            if check_render(src_dir, did, src_manifest).ok:  # the original's own render, as recorded
                shutil.copyfile(d.png_path, ddir / d.png_path.name)
                manifest[did] = src_manifest[did]
            else:
                render_file(ddir / d.d2_path.name, ddir / d.png_path.name)
                manifest[did] = {"d2_sha256": sha256_file(ddir / d.d2_path.name),
                                 "png_sha256": sha256_file(ddir / d.png_path.name), "d2_version": d2_version()}
    if render:
        write_manifest(ddir, manifest)
    data = pairs_json(ds, plan, pairs, without, render=render, originals=originals)
    (out / PAIRS_FILE).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return data


def pairs_json(ds: Dataset, plan: SplitPlan, pairs: list[Pair], without: list[dict[str, str]],
               render: bool, originals: bool) -> dict[str, Any]:
    """The content of ``pairs.json``: settings, the share of questions with a pair, and every pair."""
    with_pair = {p.question.id for p in pairs}
    by_type: dict[str, list[int]] = {}
    for p in pairs:
        by_type.setdefault(p.question.type, [0, 0])[0] += 1
    for w in without:
        by_type.setdefault(w["type"], [0, 0])
    for t in by_type:
        by_type[t][1] = by_type[t][0] + sum(1 for w in without if w["type"] == t)
    return {
        "seed": plan.seed,
        "source": {"root": str(ds.root), "hash": ds.content_hash()},
        "rendered": render, "originals_included": originals,
        "questions": plan.questions,
        "with_pair": len(with_pair),
        "share_with_pair": len(with_pair) / plan.questions if plan.questions else None,
        "pivotal": sum(1 for p in pairs if p.pivotal),
        "diagrams": len({p.diagram_id for p in pairs}),
        "by_type": {t: {"with_pair": a, "questions": n} for t, (a, n) in sorted(by_type.items())},
        "by_edit": dict(sorted(Counter(p.edit.kind for p in pairs).items())),
        "pairs": [{"question": p.question.id, "counterfactual": p.question_id, "diagram": p.question.diagram,
                   "counterfactual_diagram": p.diagram_id, "edit": p.edit_json, "pivotal": p.pivotal,
                   "answer": answer_to_json(p.question.answer), "counterfactual_answer": answer_to_json(p.answer)}
                  for p in pairs],
        "without_pair": without,
    }


def load_pairs(path: Path | str) -> dict[str, str]:
    """``{original question id: counterfactual question id}`` from a split's ``pairs.json`` (or its folder)."""
    path = Path(path)
    if path.is_dir():
        path = path / PAIRS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {p["question"]: p["counterfactual"] for p in data["pairs"]}
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise InputError(f"not a pairs file: {exc}", file=str(path)) from exc
