"""The dataset validator: every check of issue "dataset", each problem naming diagram, question and line.

Checks, in order, per question: schema (done by the loader), node ids exist, the reference
solver's answer equals the annotated one, the certificate lies inside the diagram, proves the
answer (solver on the certificate alone, plus the closed set for negative and universal
questions), and is minimal. Per diagram: the D2 parses, the PNG exists and is not stale, and
twin pairs point at each other with opposite answers to the shared question.
"""
from __future__ import annotations

from pathlib import Path

import networkx as nx

from benchmark.dataset import Dataset, Diagram, load_dataset, node_args_missing, released
from benchmark.errors import DiagQAError, InputError
from benchmark.graph import Subgraph, restrict
from benchmark.progress import Progress, counted
from benchmark.questions import Question, answer_to_json
from benchmark.render import check_render, load_manifest
from benchmark.solver import answers_match, droppable, parallel_only, proves, resolve_certificate, solve


def _problem(q: Question, msg: str) -> InputError:
    return InputError(msg, file=q.file, line=q.line, question=q.id)


#: why a certificate that lies inside the diagram fails to prove its answer (one wording for
#: ``diagqa validate`` and ``diagqa run``)
NOT_PROVING = "certificate does not prove the answer (the solver on the certificate alone disagrees)"
PARALLEL_ONLY = ("every route that avoids the node leaves a parallel fork (class: parallel) whose other branch "
                 "reaches it: all branches of a fork run, so no run avoids it; ask where branches are exclusive")
NOT_CLOSED = "certificate is not closed (negative/universal questions need every reached node and its out-edges)"


def certificate_problem(q: Question, cert: Subgraph, g: nx.MultiDiGraph) -> str | None:
    """Why the resolved certificate ``cert`` does not prove ``q``'s answer on ``g`` (None when it does).

    The solver on the certificate alone must give the answer (else :data:`NOT_PROVING`); for
    negative and universal questions the certificate must also hold a closed set (else
    :data:`NOT_CLOSED`).
    """
    if proves(q.type, q.arg, q.answer, cert, g):
        return None
    if answers_match(q.type, q.arg, solve(q.type, q.arg, restrict(g, cert)), q.answer, g):
        return NOT_CLOSED
    return NOT_PROVING


def question_problems(q: Question, diagram: Diagram, minimal: bool = True) -> list[InputError]:
    """Problems of one question against its diagram's graph (empty when it is sound).

    One check for every caller: ``diagqa validate`` asks for minimality too, ``diagqa run``
    (``minimal=False``) only needs a question it can score. The first failing step stops the check.
    """
    g = diagram.graph
    missing = node_args_missing(q, g)
    if missing:
        return [_problem(q, f"args name nodes that are not in diagram {diagram.id}: {', '.join(missing)}")]
    got = solve(q.type, q.arg, g)
    if got is None and parallel_only(q.type, q.arg, g):
        return [_problem(q, PARALLEL_ONLY)]
    if not answers_match(q.type, q.arg, got, q.answer, g):
        return [_problem(q, f"annotated answer {answer_to_json(q.answer)!r} but the solver computes "
                            f"{answer_to_json(got)!r} on diagram {diagram.id}")]
    cert, outside = resolve_certificate(q.certificate, g)
    if outside:
        return [_problem(q, "certificate is not inside the diagram: " + "; ".join(outside))]
    if q.type == "path" and cert.all_nodes != frozenset(q.answer):
        return [_problem(q, "certificate is not the annotated route (a path certificate is the answer's nodes and edges)")]
    problem = certificate_problem(q, cert, g)
    if problem:
        return [_problem(q, problem)]
    if minimal:
        extra = droppable(q.type, q.arg, q.answer, cert, g)
        if extra:
            return [_problem(q, "certificate is not minimal: can drop " + ", ".join(extra))]
    return []


def validate_question(q: Question, diagram: Diagram) -> list[InputError]:
    """Every problem of one question, minimality included (what ``diagqa validate`` reports)."""
    return question_problems(q, diagram, minimal=True)


#: the step :func:`validate_dataset` reports to its ``progress``: each diagram checked
VALIDATING = "validating diagrams"


def validate_dataset(ds: Dataset, schema_problems: list[InputError] | None = None,
                     check_renders: bool = True, progress: Progress | None = None) -> list[InputError]:
    problems = list(schema_problems or [])
    manifests: dict[Path, dict | None] = {}  # None: unreadable, reported once
    for d in counted(ds.diagrams.values(), len(ds.diagrams), progress, VALIDATING):
        with released([d]):   # one diagram's graph at a time (one held before stays held)
            problems.extend(_diagram_problems(d, check_renders, manifests))
    problems.extend(_twin_problems(ds))
    return problems


def _diagram_problems(d: Diagram, check_renders: bool, manifests: dict[Path, dict | None]) -> list[InputError]:
    """The problems of one diagram (its parse, its render when ``check_renders``, each of its questions);
    ``manifests`` holds each folder's render manifest once read (None: unreadable, reported once)."""
    problems: list[InputError] = []
    try:
        d.graph
    except DiagQAError as exc:
        return [exc if isinstance(exc, InputError) else InputError(str(exc), file=str(d.d2_path))]
    if check_renders:
        ddir = d.d2_path.parent
        if ddir not in manifests:
            try:
                manifests[ddir] = load_manifest(ddir)
            except InputError as exc:
                problems.append(exc)
                manifests[ddir] = None
        manifest = manifests[ddir]
        status = check_render(ddir, d.id, manifest) if manifest is not None else None
        if status is not None and not status.ok:
            problems.append(InputError(status.problem, file=str(d.d2_path)))
    for q in d.questions:
        problems.extend(validate_question(q, d))
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


def validate_path(root: Path | str | None = None, check_renders: bool = True, allow_outside_imports: bool = False,
                  progress: Progress | None = None) -> tuple[Dataset, list[InputError]]:
    """The dataset at ``root`` and every problem :func:`validate_dataset` finds in it (after the schema's);
    ``progress`` is told of the loading (:func:`~benchmark.dataset.load_dataset`) and of each diagram checked
    (:data:`VALIDATING`)."""
    ds, schema = load_dataset(root, strict=False, allow_outside_imports=allow_outside_imports, progress=progress)
    return ds, validate_dataset(ds, schema, check_renders=check_renders, progress=progress)
