"""The dataset validator: every check of issue "dataset", each problem naming diagram, question and line.

Checks, in order, per question: schema (done by the loader), node ids exist, the reference
solver's answer equals the annotated one, the certificate lies inside the diagram, proves the
answer (solver on the certificate alone, plus the closed set for negative and universal
questions), and is minimal. Per diagram: the D2 parses, the PNG exists and is not stale, and
twin pairs point at each other with opposite answers to the shared question.
"""
from __future__ import annotations

from pathlib import Path

from benchmark.dataset import Dataset, Diagram, load_dataset, node_args_missing
from benchmark.errors import DiagQAError, InputError
from benchmark.questions import Question, answer_to_json
from benchmark.render import check_render, load_manifest
from benchmark.solver import answers_match, droppable, proves, resolve_certificate, solve


def _problem(q: Question, msg: str) -> InputError:
    return InputError(msg, file=q.file, line=q.line, question=q.id)


def validate_question(q: Question, diagram: Diagram) -> list[InputError]:
    """Problems of one question against its diagram's graph (empty when it is sound)."""
    g = diagram.graph
    missing = node_args_missing(q, g)
    if missing:
        return [_problem(q, f"args name nodes that are not in diagram {diagram.id}: {', '.join(missing)}")]
    problems = []
    got = solve(q.type, q.arg, g)
    if not answers_match(q.type, q.arg, got, q.answer, g):
        problems.append(_problem(q, f"annotated answer {answer_to_json(q.answer)!r} but the solver computes "
                                    f"{answer_to_json(got)!r} on diagram {diagram.id}"))
        return problems
    cert, outside = resolve_certificate(q.certificate, g)
    if outside:
        problems.append(_problem(q, "certificate is not inside the diagram: " + "; ".join(outside)))
        return problems
    if not proves(q.type, q.arg, q.answer, cert, g):
        what = "is not closed (negative/universal questions need every reached node and its out-edges)" \
            if q.needs_closure() else "does not prove the answer (the solver on the certificate alone disagrees)"
        problems.append(_problem(q, f"certificate {what}"))
        return problems
    extra = droppable(q.type, q.arg, q.answer, cert, g)
    if extra:
        problems.append(_problem(q, "certificate is not minimal: can drop " + ", ".join(extra)))
    return problems


def validate_dataset(ds: Dataset, schema_problems: list[InputError] | None = None,
                     check_renders: bool = True) -> list[InputError]:
    problems = list(schema_problems or [])
    manifests: dict[Path, dict] = {}
    for d in ds.diagrams.values():
        try:
            d.graph
        except DiagQAError as exc:
            problems.append(exc if isinstance(exc, InputError) else InputError(str(exc), file=str(d.d2_path)))
            continue
        if check_renders:
            ddir = d.d2_path.parent
            if ddir not in manifests:
                manifests[ddir] = load_manifest(ddir)
            status = check_render(ddir, d.id, manifests[ddir])
            if not status.ok:
                problems.append(InputError(status.problem, file=str(d.d2_path)))
        for q in d.questions:
            problems.extend(validate_question(q, d))
    problems.extend(_twin_problems(ds))
    return problems


def _twin_problems(ds: Dataset) -> list[InputError]:
    problems = []
    by_id = {q.id: q for q in ds.questions}
    for d in ds.diagrams.values():
        if not d.twin:
            continue
        twin = ds.diagrams.get(d.twin)
        where = dict(file=str(d.annotation_path), line=1)
        if twin is None:
            problems.append(InputError(f"twin diagram {d.twin!r} is not in the dataset", **where))
            continue
        if twin.twin != d.id:
            problems.append(InputError(f"twin {d.twin!r} does not name {d.id!r} as its twin", **where))
        paired = [q for q in d.questions if dict(q.extra).get("twin_question")]
        if not paired:
            problems.append(InputError(f"twin pair {d.id}/{d.twin}: no question has twin_question", **where))
        for q in paired:
            other = by_id.get(dict(q.extra)["twin_question"])
            if other is None or other.diagram != twin.id:
                problems.append(_problem(q, f"twin_question {dict(q.extra)['twin_question']!r} is not a question of {twin.id}"))
            elif other.type != q.type or other.args != q.args:
                problems.append(_problem(q, f"twin question {other.id} must have the same type and args"))
            elif other.answer == q.answer:
                problems.append(_problem(q, f"twin question {other.id} has the same answer; twins must differ"))
    return problems


def validate_path(root: Path | str | None = None, check_renders: bool = True,
                  allow_outside_imports: bool = False) -> tuple[Dataset, list[InputError]]:
    ds, schema = load_dataset(root, strict=False, allow_outside_imports=allow_outside_imports)
    return ds, validate_dataset(ds, schema, check_renders=check_renders)
