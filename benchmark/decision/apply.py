"""The decision layer over a finished run: one decision per sample of ``samples.jsonl``.

:func:`decide_records` reads every sample's graph signals from its metrics, applies the graph rules,
computes the text signals of the samples they leave undecided (or of every sample, ``signals="all"``)
in one batched pass (each distinct question, context and answer text embedded once), and applies
:func:`benchmark.decision.rules.decide`. :func:`write_decisions` writes
``decisions.jsonl`` (one line per sample, in the run's order) and ``decisions.md`` (the report
section of :mod:`benchmark.decision.section`) into the run directory.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from benchmark.decision.config import DecisionConfig
from benchmark.decision.rules import GraphSignals, decide, graph_decision, text_decision
from benchmark.decision.signals import Encoder, TextItem, text_signals_many

if TYPE_CHECKING:
    from benchmark.decision.section import DecisionTally

DECISIONS = "decisions.jsonl"
#: records -> one judge row (or None) per record (see :mod:`benchmark.decision.judge`)
Judge = Callable[[Sequence[dict[str, Any]]], Sequence[dict[str, Any] | None]]
SECTION = "decisions.md"


def answer_text(answer: dict[str, Any] | None) -> str:
    """The text of an answer that the text signals read: the reply, the explanation and the cited edges.

    >>> answer_text({"raw": "yes", "explanation": "A reads B.", "evidence": [["A", "B"]]})
    'yes\\nA reads B.\\nA -> B'
    >>> answer_text(None)
    ''
    """
    if not answer:
        return ""
    parts = [str(answer.get("raw") or "").strip(), str(answer.get("explanation") or "").strip()]
    for ev in answer.get("evidence") or []:
        if isinstance(ev, (list, tuple)) and len(ev) >= 2:
            parts.append(f"{ev[0]} -> {ev[1]}")
    return "\n".join(p for p in parts if p)


def text_item(rec: dict[str, Any]) -> TextItem:
    """Question, context (as the answerer saw it) and answer texts of a sample record."""
    q = rec.get("question") or {}
    ctx = rec.get("context") or {}
    return TextItem(question=str(q.get("text") or ""), context=str(ctx.get("text") or ""),
                    answer=answer_text(rec.get("answer")))


@dataclass
class DecidedRun:
    """Decisions of a run, with the time the layer took."""

    rows: list[dict[str, Any]]
    seconds: float
    problems: list[str] = field(default_factory=list)
    judge_seconds: float = 0.0   # time spent asking the judge (not counted in ``seconds``)
    #: samples whose text signals were computed
    texts: int = 0


#: which samples get text signals: ``needed`` -- only those no graph rule decides (the rules read
#: them nowhere else); ``all`` -- every sample, for the graph-against-text comparison
SIGNALS = ("needed", "all")


def decide_records(records: Sequence[dict[str, Any]], cfg: DecisionConfig | None = None,
                   encode: Encoder | None = None, judge: Judge | None = None, signals: str = "needed") -> DecidedRun:
    """One decision row per record (see :func:`write_decisions` for its keys).

    The graph rules run first; with ``signals="needed"`` the text signals are computed (in one batched
    pass) only for the samples they leave undecided -- the verdicts are the same as with ``"all"``, which
    computes them for every sample. A graph-decided row without text signals has ``signals`` and
    ``text_verdict`` None and is never ``uncertain`` (an exact rule needs no judge).

    ``judge`` (optional) is asked once, with the records whose decision needs it
    (:func:`benchmark.decision.judge.needs_judge`), for one judge row (or None) each; those rows carry
    ``judge`` (:func:`benchmark.decision.judge.judge_note`).
    """
    if signals not in SIGNALS:
        raise ValueError(f"signals must be one of {', '.join(SIGNALS)}, got {signals!r}")
    cfg = cfg or DecisionConfig()
    t0 = time.perf_counter()
    graphs = [GraphSignals.from_record(r) for r in records]
    first = [graph_decision(g, cfg) if cfg.use_graph else None for g in graphs]
    need = [i for i, d in enumerate(first) if d is None or signals == "all"]
    sigs = dict(zip(need, text_signals_many([text_item(records[i]) for i in need], encode)))
    decisions = [decide(sigs[i], g, cfg) if i in sigs else first[i] for i, g in enumerate(graphs)]
    notes: dict[int, dict[str, Any]] = {}
    t_judge = time.perf_counter()
    if judge is not None:
        from benchmark.decision.judge import consult, judge_note, needs_judge

        asked = [i for i, d in enumerate(decisions) if needs_judge(d, cfg)]
        for i, jrow in zip(asked, judge([records[i] for i in asked]) if asked else []):
            notes[i] = judge_note(jrow, decisions[i])
            decisions[i] = consult(decisions[i], jrow, cfg)
    judge_s = time.perf_counter() - t_judge   # the judge's own time (requests) is not the layer's
    rows = [decision_row(rec, graph, d, sigs.get(i), cfg, notes.get(i))
            for i, (rec, graph, d) in enumerate(zip(records, graphs, decisions))]
    return DecidedRun(rows, time.perf_counter() - t0 - judge_s, judge_seconds=judge_s, texts=len(need))


def decision_row(rec: dict[str, Any], graph: GraphSignals, d: Any, sig: Any, cfg: DecisionConfig,
                 note: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``decisions.jsonl`` row of one sample: its decision ``d``, text signals ``sig`` (or None)
    and judge ``note`` (or None)."""
    assert d is not None
    m = rec.get("metrics") or {}
    return {
        "sample_id": rec.get("sample_id"), "answerer": rec.get("answerer"), "variant": rec.get("variant"),
        "question_id": rec.get("question_id"), **d.to_json(), **({"judge": note} if note is not None else {}),
        "text_verdict": text_decision(sig, cfg).verdict if sig is not None else None,
        "signals": sig.to_json() if sig is not None else None,
        "graph": {"error": graph.error, "abstained": graph.abstained, "sufficient": graph.sufficient,
                  "srr": graph.srr, "faithfulness": graph.faithfulness, "n_claims": graph.n_claims,
                  "unsupported": graph.unsupported, "fabricated": graph.fabricated},
        "correct": m.get("correct"), "guess_class": m.get("guess_class"),
    }


def report_decisions(records: Sequence[Any] | None, run_files: Path, out: Path, cfg: DecisionConfig | None = None,
                     encode: Encoder | None = None) -> tuple[WrittenDecisions | None, str | None]:
    """The decisions the default report shows, written to ``out`` (``decisions.jsonl``): over ``records``
    when they are sample records (dicts or objects with ``to_json``), else (None, or report rows) over
    ``run_files/samples.jsonl`` read as a stream (:func:`decide_samples_into`); the thresholds of ``configs/decision.yaml``. Returns
    ``(decisions, None)`` or ``(None, why not)``: the text signals need the MiniLM model (the ``dense``
    extra), and a report is still written without it.
    """
    started, why = start_report_decisions(records, run_files, out, cfg, encode)
    if started is None:
        return None, why
    if isinstance(started, DecisionWriter):
        return started.read(Path(run_files) / "samples.jsonl"), None
    return started, None


def start_report_decisions(records: Sequence[Any] | None, run_files: Path, out: Path,
                           cfg: DecisionConfig | None = None, encode: Encoder | None = None
                           ) -> tuple[WrittenDecisions | DecisionWriter | None, str | None]:
    """:func:`report_decisions`, with the second pass over ``samples.jsonl`` left to the caller: for records
    given, the decisions written; for the samples file, the :class:`DecisionWriter` its first pass made (the
    text signals computed), to be given every record of the file in order -- by a pass over the file that
    reads it for something else too -- and closed; or ``(None, why not)``."""
    from benchmark.decision.config import load_config
    from benchmark.decision.section import DecisionTally
    from benchmark.errors import DiagQAError, StageUnavailable

    try:
        cfg = cfg or load_config()
        first = records[0] if records else None
        if isinstance(first, dict) or hasattr(first, "to_json"):
            recs = [slim_record(r if isinstance(r, dict) else r.to_json()) for r in records]
            decided = decide_records(recs, cfg, encode)
            write_decision_rows(out, decided.rows)
            tally = DecisionTally()
            for row in decided.rows:
                tally.add(row)
            return WrittenDecisions(tally.n, tally, decided.seconds, decided.texts), None
        path = Path(run_files) / "samples.jsonl"
        if not path.exists():
            return None, f"no samples.jsonl in {run_files}"
        return DecisionWriter.first_pass(path, out, cfg, encode), None
    except StageUnavailable as exc:
        return None, f"the text signals are unavailable: {exc}"
    except DiagQAError as exc:
        return None, str(exc)


def slim_record(rec: dict[str, Any]) -> dict[str, Any]:
    """The parts of a sample record the layer reads (texts, answer, metrics, error), nothing else:
    a run's records can be held for one batched pass without their context graphs.

    >>> slim_record({"sample_id": "s", "answerer": "a", "context": {"text": "A -> B", "graph": {"nodes": []}},
    ...              "question": {"text": "?", "type": "reachable"}, "answer": None})["context"]
    {'text': 'A -> B'}
    """
    q, ctx, ans = rec.get("question") or {}, rec.get("context") or {}, rec.get("answer")
    return {"sample_id": rec.get("sample_id"), "answerer": rec.get("answerer"), "variant": rec.get("variant"),
            "question_id": rec.get("question_id"), "selector": rec.get("selector"),
            "question": {"text": q.get("text")}, "context": {"text": ctx.get("text")},
            "answer": None if ans is None else {k: ans.get(k) for k in ("raw", "explanation", "evidence", "error")},
            "metrics": rec.get("metrics"), "error": rec.get("error")}


def write_decision_rows(path: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """One JSON line per decision row."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(dumps_decision(row))
    return path


def dumps_decision(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass
class WrittenDecisions:
    """Decisions written to a file as they were made: how many, the report section's numbers, the time."""

    samples: int
    tally: DecisionTally
    seconds: float
    texts: int = 0


def decide_samples_into(samples: Path, out: Path, cfg: DecisionConfig | None = None,
                        encode: Encoder | None = None) -> WrittenDecisions:
    """The decisions of :func:`decide_records` (text signals where needed), written to ``out`` as they
    are made, in two passes over ``samples.jsonl``: the first applies the graph rules and keeps the texts of
    only the samples they leave undecided, whose text signals are then computed in one batched pass; the
    second decides every sample again and writes its row at once (:class:`DecisionWriter`). What is held
    is those texts and the section's counts, not a record or a row per sample, so a run ten times as large
    takes no more memory for its decisions than the texts it really needs."""
    return DecisionWriter.first_pass(Path(samples), out, cfg, encode).read(Path(samples))


class DecisionWriter:
    """The second pass of :func:`decide_samples_into`: given every sample record of the file in order
    (:meth:`add`), it decides each and writes its row to ``out`` at once (through ``out.part``, moved into place
    by :meth:`close`), reading the text signals of the first pass (:meth:`first_pass`) in order. Its
    ``seconds`` are the layer's own: ``spent`` (the first pass's) and the time in :meth:`add` and :meth:`close`,
    not the time of the pass that reads the records."""

    def __init__(self, out: Path, cfg: DecisionConfig, signals: Iterable[Any], texts: int, spent: float = 0.0) -> None:
        from benchmark.decision.section import DecisionTally

        self.out, self.cfg, self.texts, self.seconds = Path(out), cfg, texts, spent
        self._signals = iter(signals)
        self.tally = DecisionTally()
        self._part = self.out.with_name(self.out.name + ".part")
        self._fh: Any = open(self._part, "w", encoding="utf-8")

    @classmethod
    def first_pass(cls, samples: Path, out: Path, cfg: DecisionConfig | None = None,
                   encode: Encoder | None = None) -> "DecisionWriter":
        """The first pass over ``samples``: the graph rules applied, the texts of the samples they leave
        undecided kept (each distinct text once) and their text signals computed in one batched pass."""
        from benchmark.records import loads_line
        from benchmark.rundir import scan_samples

        cfg = cfg or DecisionConfig()
        t0 = time.perf_counter()
        pool: dict[str, str] = {}

        def shared(text: str) -> str:
            return pool.setdefault(text, text)

        items: list[TextItem] = []
        for _, rec in scan_samples(Path(samples), loads_line):
            rec = slim_record(rec)
            if cfg.use_graph and graph_decision(GraphSignals.from_record(rec), cfg) is not None:
                continue
            item = text_item(rec)
            items.append(TextItem(question=shared(item.question), context=shared(item.context),
                                  answer=shared(item.answer)))
        pool.clear()
        signals = text_signals_many(items, encode)
        return cls(out, cfg, signals, len(items), time.perf_counter() - t0)

    def add(self, rec: dict[str, Any]) -> None:
        """Decide the next sample record and write its row."""
        t = time.perf_counter()
        rec = slim_record(rec)
        graph = GraphSignals.from_record(rec)
        d = graph_decision(graph, self.cfg) if self.cfg.use_graph else None
        sig = next(self._signals) if d is None else None
        row = decision_row(rec, graph, decide(sig, graph, self.cfg) if d is None else d, sig, self.cfg)
        self._fh.write(dumps_decision(row))
        self.tally.add(row)
        self.seconds += time.perf_counter() - t

    def read(self, samples: Path) -> WrittenDecisions:
        """Every record of ``samples`` given to :meth:`add` in a pass of its own, then :meth:`close`."""
        from benchmark.records import loads_line
        from benchmark.rundir import scan_samples

        for _, rec in scan_samples(samples, loads_line):
            self.add(rec)
        return self.close()

    def close(self) -> WrittenDecisions:
        """The file moved into place, and what was written."""
        t = time.perf_counter()
        self._fh.close()
        self._part.replace(self.out)
        self.seconds += time.perf_counter() - t
        return WrittenDecisions(self.tally.n, self.tally, self.seconds, self.texts)

    def discard(self) -> None:
        """Stop without writing the decisions (the pass that fed them failed)."""
        self._fh.close()
        self._part.unlink(missing_ok=True)


def write_decisions(run_dir: Path, decided: DecidedRun, section: str) -> tuple[Path, Path]:
    """``decisions.jsonl`` and ``decisions.md`` in ``run_dir``; returns their paths."""
    jpath, mpath = run_dir / DECISIONS, run_dir / SECTION
    write_decision_rows(jpath, decided.rows)
    mpath.write_text(section, encoding="utf-8")
    return jpath, mpath
