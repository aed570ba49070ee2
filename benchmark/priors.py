"""Prior baselines: how far a dataset can be answered without reading the diagram (DESIGN.md §6).

A *prior baseline* answers every question without the diagram's edges. How guessable the
dataset is, is the accuracy of the **strongest** of them, not of the weakest (``blind``):

========================  ==============================================================
baseline                  what it sees and does
========================  ==============================================================
``majority``              the most common gold answer of the question's type in the
                          dataset (in-sample; ties go to the smallest answer); for a type that
                          gives its answer away (``absent``), of the other questions of the
                          answer form it reads as
``text-cue``              yes/no: "without"/"без"/"минуя" -> yes, "both"/"оба"/"обе" -> yes,
                          else no; other kinds: the ``majority`` answer of the type
``cue-majority``          the most common gold answer of the question's (type, cue word) cell,
                          when the cell holds at least :data:`MIN_CELL` questions, else of the
                          type (in-sample: an upper estimate of what text cues can learn)
``keyword``               the ``keyword`` answerer with no context (question words only)
``keyword-nodes``         the ``keyword`` answerer given the diagram's node labels, no edges
``blind``                 the ``blind`` answerer (fixed priors from the question text)
``llm-question``          the ``llm`` answerer with no context (only when a model is set)
``llm-nodes``             the ``llm`` answerer given the node labels, no edges (ditto)
========================  ==============================================================

*Counter-prior*, measured (:func:`measured_counter_prior`): a yes/no or node question that the
strongest prior baseline answers wrongly -- the strongest on the yes/no questions for a yes/no
question, the strongest on the node questions for a node question (the baseline each is judged
by is its *basis*). Counts, sets, paths and labels have no common-sense prior of that kind, so
they are never counter-prior by this definition.

>>> text_cue("Can the User reach the DB without the Auth Service?"), text_cue("Does A reach B?")
(True, False)
>>> accuracy([True, False, None, True])
0.6666666666666666
>>> accuracy([None]) is None
True
"""
from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from benchmark.dataset import Dataset, Diagram, id_digest, released
from benchmark.errors import StageUnavailable
from benchmark.graph import Subgraph
from benchmark.progress import Progress
from benchmark.questions import QUESTION_TYPES, Question, answer_to_json
from benchmark.solver import answers_match

#: the cue words of the text-cue rule (English and Russian): any of them -> "yes", else "no"
TEXT_CUES = re.compile(r"(?<!\w)(without|both|без|минуя|оба|обе|обоих)(?!\w)", re.IGNORECASE)
#: cue words of the (type x cue word) cells, in the order they are looked for; a question's cue is
#: the first one its text contains ("-" when none)
CUE_WORDS = ("without", "без", "минуя", "both", "оба", "обе", "обоих", "directly", "direct", "straight",
             "напрямую", "ever", "eventually", "still", "again", "back", "once", "after")
#: smallest (type, cue) cell whose own majority ``cue-majority`` uses
MIN_CELL = 5
#: answer kinds that a prior can have an opinion on, and so the only ones that can be counter-prior
COUNTER_PRIOR_KINDS = ("bool", "node")
#: every baseline in report order; the llm ones run only when a model is configured
BASELINES = ("majority", "text-cue", "cue-majority", "keyword", "keyword-nodes", "blind", "llm-question", "llm-nodes")
NO_MODEL_BASELINES = BASELINES[:6]
#: baselines whose prediction for a question does not depend on the other questions run (the
#: majority answers do): one :func:`run_priors` may take them from another's ``predictions``
SET_FREE_BASELINES = ("keyword", "keyword-nodes", "blind")


def text_cue(text: str) -> bool:
    """The text-cue rule on one yes/no question: a cue word ("without", "both") means yes."""
    return TEXT_CUES.search(text) is not None


def cue_word(text: str) -> str:
    """The first of :data:`CUE_WORDS` that ``text`` contains as a whole word, else ``"-"``.

    >>> cue_word("Does A still reach B without C?"), cue_word("Does A reach B?")
    ('without', '-')
    """
    words = set(re.findall(r"\w+", text.casefold()))
    return next((w for w in CUE_WORDS if w in words), "-")


def accuracy(correct: Iterable[bool | None]) -> float | None:
    """Share of True among the measured values (None = unmeasured, left out); None when none is measured."""
    measured = [c for c in correct if c is not None]
    return sum(measured) / len(measured) if measured else None


def _sort_key(value: Any) -> str:
    return json.dumps(answer_to_json(value), ensure_ascii=False, sort_keys=True)


class _Majorities:
    """Gold answers counted per key (question type, answer kind or cell), a question at a time; the most
    common answer of each key is its majority (ties: the smallest answer by its JSON form)."""

    def __init__(self) -> None:
        self.counts: dict[Any, Counter] = {}
        self.values: dict[Any, dict[str, Any]] = {}

    def add(self, key: Any, answer: Any) -> None:
        form = _sort_key(answer)
        self.counts.setdefault(key, Counter())[form] += 1
        self.values.setdefault(key, {})[form] = answer

    def majorities(self, min_n: int = 1) -> dict[Any, Any]:
        """key -> its most common answer, for the keys counted at least ``min_n`` times (keys in order)."""
        return {k: self.values[k][min(c, key=lambda x: (-c[x], x))]
                for k, c in sorted(self.counts.items()) if c.total() >= min_n}


def majority_answers(questions: Iterable[Question]) -> dict[str, Any]:
    """The most common gold answer per question type (ties: the smallest answer by its JSON form).

    >>> from benchmark.graph import Subgraph
    >>> qs = [Question(f"q{i}", "d", "t", "reachable", (), a, Subgraph()) for i, a in enumerate([True, False, False])]
    >>> majority_answers(qs)
    {'reachable': False}
    """
    counted = _Majorities()
    for q in questions:
        counted.add(q.type, q.answer)
    return counted.majorities()


#: question types whose type gives their answer away (``absent``: abstain); a prior that reads the
#: question sees only the answer form it reads as, so it answers them as the other questions of that form
READS_AS_ITS_FORM = frozenset({"absent"})


def reading_majority(questions: Iterable[Question]) -> dict[str, Any]:
    """The most common gold answer per answer kind over the questions whose type does not give their
    answer away (ties as in :func:`majority_answers`): what the majority baselines answer to a
    question of :data:`READS_AS_ITS_FORM`, by the form it reads as.

    >>> from benchmark.graph import Subgraph
    >>> qs = [Question("a", "d", "t", "reachable", (), False, Subgraph()),
    ...       Question("b", "d", "t", "absent", (("entity", "X"), ("form", "bool")), "abstain", Subgraph())]
    >>> reading_majority(qs)
    {'bool': False}
    """
    counted = _Majorities()
    for q in questions:
        if q.type not in READS_AS_ITS_FORM:
            counted.add(q.kind, q.answer)
    return counted.majorities()


def cue_majority_answers(questions: Iterable[Question], min_cell: int = MIN_CELL) -> dict[tuple[str, str], Any]:
    """The most common gold answer per (type, :func:`cue_word`) cell that holds at least ``min_cell``
    questions (ties as in :func:`majority_answers`); smaller cells are left out.

    >>> from benchmark.graph import Subgraph
    >>> qs = [Question(f"q{i}", "d", t, "reachable", (), a, Subgraph())
    ...       for i, (t, a) in enumerate([("A without B?", True)] * 2 + [("A to B?", False)] * 3)]
    >>> cue_majority_answers(qs, min_cell=2)
    {('reachable', '-'): False, ('reachable', 'without'): True}
    """
    counted = _Majorities()
    for q in questions:
        counted.add((q.type, cue_word(q.text)), q.answer)
    return counted.majorities(min_cell)


def _answer_tables(questions: Iterable[Question]) -> tuple[dict[str, Any], dict[str, Any], dict[tuple[str, str], Any]]:
    """:func:`majority_answers`, :func:`reading_majority` and :func:`cue_majority_answers` (cells of
    :data:`MIN_CELL`) in one pass over ``questions``."""
    by_type, by_kind, by_cue = _Majorities(), _Majorities(), _Majorities()
    for q in questions:
        by_type.add(q.type, q.answer)
        if q.type not in READS_AS_ITS_FORM:
            by_kind.add(q.kind, q.answer)
        by_cue.add((q.type, cue_word(q.text)), q.answer)
    return by_type.majorities(), by_kind.majorities(), by_cue.majorities(MIN_CELL)


@dataclass(frozen=True, slots=True)
class Prediction:
    """One baseline's answer to one question. ``correct`` is None when the answerer failed (unmeasured)."""

    raw: Any
    correct: bool | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        raw = frozenset(self.raw) if isinstance(self.raw, set) else self.raw
        return {"raw": answer_to_json(raw), "correct": self.correct, "error": self.error}


def _score_canonical(q: Question, value: Any, d: Diagram) -> Prediction:
    return Prediction(answer_to_json(value), answers_match(q.type, q.arg, value, q.answer, d.graph))


def _score_answer(q: Question, answer: Any, d: Diagram, failures_unmeasured: bool) -> Prediction:
    from benchmark.metrics.accuracy import is_correct

    if answer.error and failures_unmeasured:
        return Prediction(answer.raw, None, answer.error)
    return Prediction(answer.raw, is_correct(q, answer.raw, d.graph), answer.error)


def nodes_only_context(d: Diagram) -> Any:
    """The diagram's node labels without a single edge, as an answerer's context."""
    from benchmark.context import make_context

    return make_context(d.id, Subgraph(frozenset(d.graph.nodes)), d.graph)


#: a baseline: (question, its diagram) -> prediction
Predictor = Callable[[Question, Diagram], Prediction]


def make_baselines(questions: Iterable[Question], llm_options: Mapping[str, Any] | None = None,
                   names: Sequence[str] = BASELINES) -> tuple[dict[str, Predictor], dict[str, str]]:
    """The predictors of ``names`` for ``questions`` (whose gold answers give the majority answers: read
    once, so they may be a generator) and the reasons of those that cannot run here.

    The llm baselines are built with ``llm_options`` (keyword arguments of the ``llm`` answerer);
    without a configured model they are unavailable, with the answerer's own reason.
    """
    from benchmark.answerers.blind import BlindAnswerer
    from benchmark.answerers.keyword import KeywordAnswerer

    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown prior baselines {unknown}; known: {', '.join(BASELINES)}")
    majority, by_kind, by_cue = _answer_tables(questions)
    keyword, blind = KeywordAnswerer(), BlindAnswerer()
    out: dict[str, Predictor] = {}
    unavailable: dict[str, str] = {}

    def by_majority(q: Question, d: Diagram) -> Prediction:
        if q.type in READS_AS_ITS_FORM:
            return _score_canonical(q, by_kind.get(q.surface_kind), d)
        return _score_canonical(q, majority[q.type], d)

    def by_text_cue(q: Question, d: Diagram) -> Prediction:
        if q.kind != "bool":
            return by_majority(q, d)
        return _score_canonical(q, text_cue(q.text), d)

    def by_cue_majority(q: Question, d: Diagram) -> Prediction:
        if q.type in READS_AS_ITS_FORM:
            return by_majority(q, d)
        return _score_canonical(q, by_cue.get((q.type, cue_word(q.text)), majority[q.type]), d)

    builders: dict[str, Predictor] = {
        "majority": by_majority,
        "text-cue": by_text_cue,
        "cue-majority": by_cue_majority,
        "keyword": lambda q, d: _score_answer(q, keyword.answer(q, None), d, False),
        "keyword-nodes": lambda q, d: _score_answer(q, keyword.answer(q, nodes_only_context(d)), d, False),
        "blind": lambda q, d: _score_answer(q, blind.answer(q, None), d, False),
    }
    if any(n.startswith("llm") for n in names):
        try:
            from benchmark.answerers.llm import LLMAnswerer

            llm = LLMAnswerer(**dict(llm_options or {}))
        except StageUnavailable as exc:
            for n in names:
                if n.startswith("llm"):
                    unavailable[n] = f"llm: {exc}"
        else:
            builders["llm-question"] = lambda q, d: _score_answer(q, llm.answer(q, None), d, True)
            builders["llm-nodes"] = lambda q, d: _score_answer(q, llm.answer(q, nodes_only_context(d)), d, True)
    for n in names:
        if n in builders:
            out[n] = builders[n]
    return out, unavailable


# -- balance: what the answers give away -----------------------------------------------------------

#: the yes share that every yes/no type, and every (type, cue word) cell of at least :data:`MIN_CELL`
#: questions, must have
YES_SHARE = (0.4, 0.6)
#: how far a text-cue rule (``text-cue``, ``cue-majority``) may beat the majority baseline on yes/no
MAX_CUE_GAIN = 0.05


@dataclass(frozen=True)
class Balance:
    """Yes shares of the yes/no questions per type and per (type, :func:`cue_word`) cell, and the
    accuracy on them of the majority baseline and of the text-cue rules."""

    types: dict[str, tuple[int, int]]               # type -> (yes, questions)
    cells: dict[tuple[str, str], tuple[int, int]]   # (type, cue word) -> (yes, questions)
    majority: float | None                          # majority per type, on the yes/no questions
    cue_rules: dict[str, float | None]              # text-cue rule -> accuracy on the yes/no questions
    min_cell: int = MIN_CELL

    @property
    def cue_gain(self) -> float | None:
        """How far the best text-cue rule beats the majority baseline (accuracy points as a share)."""
        accs = [a for a in self.cue_rules.values() if a is not None]
        return None if not accs or self.majority is None else max(accs) - self.majority

    def problems(self) -> list[str]:
        """Every way the yes/no questions miss the balance targets, one line each (empty: balanced).

        >>> b = Balance({"reachable": (3, 4)}, {("reachable", "-"): (3, 4)}, 0.75, {"text-cue": 0.75})
        >>> b.problems()
        ['type reachable: 3 of 4 yes (75.0 %), outside 40-60 %']
        """
        lo, hi = YES_SHARE
        out = []
        for t, (yes, n) in self.types.items():
            if not lo <= yes / n <= hi:
                out.append(f"type {t}: {yes} of {n} yes ({100 * yes / n:.1f} %), outside {100 * lo:.0f}-{100 * hi:.0f} %")
        for (t, cue), (yes, n) in self.cells.items():
            if n >= self.min_cell and not lo <= yes / n <= hi:
                out.append(f"cell ({t}, {cue}): {yes} of {n} yes ({100 * yes / n:.1f} %), "
                           f"outside {100 * lo:.0f}-{100 * hi:.0f} %")
        gain = self.cue_gain
        if gain is not None and gain > MAX_CUE_GAIN + 1e-9:
            best = max((a, r) for r, a in self.cue_rules.items() if a is not None)[1]
            out.append(f"text cues: {best} beats the majority baseline by {100 * gain:.1f} points on yes/no "
                       f"(at most {100 * MAX_CUE_GAIN:.0f})")
        return out


def balance(questions: Sequence[Question], min_cell: int = MIN_CELL) -> Balance:
    """:class:`Balance` of the yes/no questions among ``questions`` (majority answers and cue cells
    taken over those same questions, as :func:`run_priors` takes them).

    >>> from benchmark.graph import Subgraph
    >>> qs = [Question(f"q{i}", "d", t, "reachable", (), a, Subgraph())
    ...       for i, (t, a) in enumerate([("A without B?", True)] * 5 + [("A to B?", False)] * 5)]
    >>> b = balance(qs)
    >>> b.types, b.majority, b.cue_rules["cue-majority"]
    ({'reachable': (5, 10)}, 0.5, 1.0)
    >>> b.problems()[0]
    'cell (reachable, -): 0 of 5 yes (0.0 %), outside 40-60 %'
    """
    bools = [q for q in questions if q.kind == "bool"]
    types: dict[str, list[int]] = {}
    cells: dict[tuple[str, str], list[int]] = {}
    for q in bools:
        for key, table in ((q.type, types), ((q.type, cue_word(q.text)), cells)):
            counts = table.setdefault(key, [0, 0])  # type: ignore[arg-type]
            counts[0] += q.answer is True
            counts[1] += 1
    majority = majority_answers(bools)
    by_cue = cue_majority_answers(bools, min_cell)

    def acc(guess: Callable[[Question], Any]) -> float | None:
        return sum(guess(q) == q.answer for q in bools) / len(bools) if bools else None

    return Balance(
        types={t: (y, n) for t, (y, n) in sorted(types.items())},
        cells={k: (y, n) for k, (y, n) in sorted(cells.items())},
        majority=acc(lambda q: majority[q.type]),
        cue_rules={"text-cue": acc(lambda q: text_cue(q.text)),
                   "cue-majority": acc(lambda q: by_cue.get((q.type, cue_word(q.text)), majority[q.type]))},
        min_cell=min_cell)


# -- grouping and the strongest baseline ------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """Accuracy of one baseline on one group of questions."""

    correct: int
    measured: int
    n: int

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.measured if self.measured else None

    def to_json(self) -> dict[str, Any]:
        return {"accuracy": self.accuracy, "correct": self.correct, "measured": self.measured, "n": self.n}


#: the groups every priors table has, in its order (a group per question type with questions follows)
FIXED_GROUPS = ("all", "counter-prior (annotated)", "yes/no", "yes/no, counter-prior (annotated)", "node")


def group_names(q: Question) -> list[str]:
    """The groups of the priors table that ``q`` is in: all, counter-prior as annotated, yes/no (all and
    annotated counter-prior), node answers, and its type.

    >>> from benchmark.graph import Subgraph
    >>> group_names(Question("q", "d", "t", "reachable", (), True, Subgraph(), counter_prior_annotated=True))
    ['all', 'counter-prior (annotated)', 'yes/no', 'yes/no, counter-prior (annotated)', 'type reachable']
    """
    out = ["all"]
    if q.counter_prior_annotated:
        out.append("counter-prior (annotated)")
    if q.kind == "bool":
        out.append("yes/no")
        if q.counter_prior_annotated:
            out.append("yes/no, counter-prior (annotated)")
    elif q.kind == "node":
        out.append("node")
    out.append(f"type {q.type}")
    return out


class _CellCounts:
    """The table's cells (:class:`Cell`) counted a question at a time: group -> each baseline's
    [correct, measured, questions]; a None result is unmeasured."""

    def __init__(self, baselines: Sequence[str]) -> None:
        self.baselines = list(baselines)
        self.counts: dict[str, list[list[int]]] = {}

    def add(self, q: Question, correct: Sequence[bool | None]) -> None:
        for g in group_names(q):
            row = self.counts.get(g)
            if row is None:
                row = self.counts[g] = [[0, 0, 0] for _ in self.baselines]
            for counts, c in zip(row, correct):
                counts[2] += 1
                if c is not None:
                    counts[1] += 1
                    counts[0] += int(c)

    def table(self) -> dict[str, dict[str, Cell]]:
        """group -> baseline -> cell: :data:`FIXED_GROUPS`, then each type with questions, in type order."""
        names = list(FIXED_GROUPS) + [f"type {t}" for t in QUESTION_TYPES if f"type {t}" in self.counts]
        empty = [[0, 0, 0]] * len(self.baselines)
        return {g: {b: Cell(*self.counts.get(g, empty)[i]) for i, b in enumerate(self.baselines)} for g in names}


def strongest(table: Mapping[str, Mapping[str, Cell]], group: str, order: Sequence[str]) -> str | None:
    """The baseline with the highest accuracy on ``group`` (ties: the first in ``order``); None when
    no baseline is measured there.

    >>> t = {"all": {"a": Cell(5, 10, 10), "b": Cell(7, 10, 10), "c": Cell(7, 10, 10)}}
    >>> strongest(t, "all", ["a", "b", "c"])
    'b'
    """
    cells = table.get(group, {})
    measured = [(cells[b].accuracy, -i, b) for i, b in enumerate(order) if b in cells and cells[b].accuracy is not None]
    return max(measured)[2] if measured else None


def measured_counter_prior(kind: str, basis_correct: bool | None) -> bool | None:
    """Measured counter-prior flag of a question of answer ``kind``: True when the basis baseline answers it
    wrongly (``basis_correct`` False); None when the kind is outside the definition (not yes/no, not a
    node) or the answer is unmeasured (or there is no basis).

    >>> measured_counter_prior("bool", False), measured_counter_prior("bool", None), measured_counter_prior("int", False)
    (True, None, None)
    """
    if kind not in COUNTER_PRIOR_KINDS or basis_correct is None:
        return None
    return not basis_correct


#: the table group whose strongest baseline is the basis of measured counter-prior, per answer kind
BASIS_GROUP = {"bool": "yes/no", "node": "node"}


@dataclass
class PriorsResult:
    """Everything ``diagqa priors`` reports; :meth:`to_json` is what it writes."""

    questions: list[Question]
    baselines: list[str]
    unavailable: dict[str, str]
    predictions: dict[str, dict[str, Prediction]]        # baseline -> question id -> prediction
    table: dict[str, dict[str, Cell]] = field(default_factory=dict)  # group -> baseline -> cell
    floor: str | None = None                              # strongest on all questions
    basis: dict[str, str | None] = field(default_factory=dict)  # answer kind -> strongest on that kind
    counter_prior: dict[str, bool | None] = field(default_factory=dict)
    #: how many questions ran (``questions`` is empty when the result keeps none: see :func:`run_priors`)
    n: int | None = None
    #: the measured counter-prior flag of every question, in the order the diagrams were worked on
    measured: list[bool | None] = field(default_factory=list, repr=False)
    #: the :data:`SET_FREE_BASELINES`' predictions without their raw answers (``run_priors(lean_known=True)``)
    known: dict[str, Mapping[str, Prediction]] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return len(self.questions) if self.n is None else self.n

    def accuracy_of(self, baseline: str | None, group: str = "all") -> float | None:
        cells = self.table.get(group, {})
        return cells[baseline].accuracy if baseline in cells else None

    def strongest_on(self, group: str) -> str | None:
        return strongest(self.table, group, self.baselines)

    def disagreements(self) -> list[dict[str, Any]]:
        """Questions whose annotated counter-prior flag (where the annotation has one) differs from the
        measured one (yes/no and node items), and annotated flags on kinds the definition leaves out
        (``measured`` None)."""
        out = []
        for q in self.questions:
            measured = self.counter_prior.get(q.id)
            annotated = q.counter_prior_annotated
            if q.kind not in COUNTER_PRIOR_KINDS:
                if annotated:
                    out.append({"question": q.id, "type": q.type, "annotated": True, "measured": None,
                                "why": f"{q.kind} answers are outside the definition"})
                continue
            if measured is None or annotated is None or measured == annotated:
                continue
            basis = self.basis[q.kind]
            pred = self.predictions[basis][q.id]  # type: ignore[index]
            out.append({"question": q.id, "type": q.type, "annotated": annotated, "measured": measured,
                        "why": f"{basis} answered {json.dumps(pred.raw, ensure_ascii=False)}, gold "
                               f"{json.dumps(answer_to_json(q.answer), ensure_ascii=False)}"})
        return out

    def to_json(self) -> dict[str, Any]:
        flagged = [q for q in self.questions if self.counter_prior.get(q.id)]
        defined = [q for q in self.questions if self.counter_prior.get(q.id) is not None]
        yes_no = self.strongest_on("yes/no")
        return {
            "questions": len(self.questions),
            "baselines": self.baselines,
            "unavailable": self.unavailable,
            "accuracy": {g: {b: c.to_json() for b, c in cells.items()} for g, cells in self.table.items()},
            "strongest": {"baseline": self.floor, "accuracy": self.accuracy_of(self.floor)},
            "yes/no": {"majority": self.accuracy_of("majority", "yes/no"), "strongest": yes_no,
                       "strongest_accuracy": self.accuracy_of(yes_no, "yes/no")},
            "counter_prior": {
                "definition": "a yes/no or node question that the strongest prior baseline on questions "
                              "of its answer kind answers wrongly",
                "basis": dict(self.basis), "measured": len(flagged), "defined_on": len(defined),
                "annotated": sum(1 for q in self.questions if q.counter_prior_annotated),
                "annotated_on": sum(1 for q in defined if q.counter_prior_annotated is not None),
                "agree": sum(1 for q in defined if self.counter_prior[q.id] == q.counter_prior_annotated),
                "disagreements": self.disagreements(),
            },
            "balance": {"types": {t: {"yes": y, "n": n} for t, (y, n) in balance(self.questions).types.items()},
                        "problems": balance(self.questions).problems()},
            "per_question": [{"question": q.id, "type": q.type, "gold": answer_to_json(q.answer),
                              "counter_prior_annotated": q.counter_prior_annotated,
                              "counter_prior_measured": self.counter_prior.get(q.id),
                              "answers": {b: self.predictions[b][q.id].to_json() for b in self.baselines}}
                             for q in self.questions],
        }


def every_baseline(progress: Progress, step: str) -> Progress:
    """A ``progress`` for :func:`run_priors` that tells ``progress``, as ``step``, how many questions every
    baseline has answered (each answers a diagram's questions in turn, so this is the least any has).

    >>> seen = []
    >>> each = every_baseline(lambda *a: seen.append(a), "priors")
    >>> each("majority", 2, 4); each("keyword", 2, 4); each("majority", 4, 4); each("keyword", 4, 4)
    >>> seen
    [('priors', 2, 4), ('priors', 2, 4), ('priors', 2, 4), ('priors', 4, 4)]
    """
    answered: dict[str, int] = {}

    def each(baseline: str, done: int, total: int) -> None:
        answered[baseline] = done
        progress(step, min(answered.values()), total)
    return each


def run_priors(ds: Dataset, names: Sequence[str] = NO_MODEL_BASELINES,
               llm_options: Mapping[str, Any] | None = None,
               progress: Progress | None = None,
               questions: Sequence[Question] | Mapping[str, Sequence[Question]] | None = None,
               known: Mapping[str, Mapping[str, Prediction]] | None = None,
               keep: bool = True, lean_known: bool = False) -> PriorsResult:
    """Run every available baseline of ``names`` on ``questions`` (default: every question of ``ds``,
    diagrams in id order); the majority answers are taken over the same questions. ``known``
    (baseline -> question id -> prediction, another result's ``predictions`` on the same dataset)
    gives the predictions of :data:`SET_FREE_BASELINES` that need not be made again.

    ``questions`` may also be given a diagram at a time (diagram id -> its questions). They are read a
    diagram at a time (twice: for the majority answers, then to predict), so questions held packed
    (:class:`~benchmark.dataset.PackedQuestions`, as a loaded dataset holds them) are never all objects at once. ``keep`` False keeps no question and no prediction in the result: only the table, the
    strongest baselines and ``measured`` (and, with ``lean_known``, ``known``: the set-free baselines'
    predictions without their raw answers, for another run on the same dataset)."""
    if questions is None:
        def diagrams() -> Iterator[tuple[str, Sequence[Question]]]:
            return ((did, ds.diagrams[did].questions) for did in sorted(ds.diagrams))
    elif isinstance(questions, Mapping):
        given = questions

        def diagrams() -> Iterator[tuple[str, Sequence[Question]]]:
            return iter(given.items())
    else:
        questions = list(questions)
        by_diagram: dict[str, list[Question]] = {}
        for q in questions:
            by_diagram.setdefault(q.diagram, []).append(q)

        def diagrams() -> Iterator[tuple[str, Sequence[Question]]]:
            return iter(by_diagram.items())
    total = sum(len(qs) for _, qs in diagrams())
    predictors, unavailable = make_baselines((q for _, qs in diagrams() for q in qs), llm_options, names)
    order = [n for n in names if n in predictors]
    reuse = {b: (known or {}).get(b, {}) if b in SET_FREE_BASELINES else {} for b in order}
    lean_ids = QuestionRows()   # question id -> row of the lean predictions (one set of ids for every baseline)
    lean = {b: LeanPredictions(lean_ids) for b in order if b in SET_FREE_BASELINES} if lean_known else {}
    counts = _CellCounts(order)
    kinds: list[str] = []            # each question's answer kind, in the order worked on
    results = bytearray()            # then each baseline's result on it: 0 wrong, 1 right, 2 unmeasured
    kept: dict[str, dict[str, Prediction]] = {b: {} for b in order}
    worked: list[Question] = []      # (kept only with ``keep``)
    done = [0] * len(order)
    # a diagram at a time, every baseline on its questions: one graph is made at a time (and let go after,
    # unless it was held before), not every graph of the dataset at once
    for did, qs in diagrams():
        qs = list(qs)
        d = ds.diagrams.get(did)
        made: list[list[Prediction]] = []
        with released([d] if d is not None else []):
            for j, b in enumerate(order):
                predict, per = predictors[b], []
                for q in qs:
                    try:
                        if q.id in reuse[b]:
                            p = reuse[b][q.id]
                        elif d is None:
                            raise KeyError(did)
                        else:
                            p = predict(q, d)
                    except Exception as exc:  # e.g. a diagram that does not parse: unmeasured, the rest still run
                        p = Prediction(None, None, f"{type(exc).__name__}: {exc}")
                    per.append(p)
                    done[j] += 1
                    if progress is not None:
                        progress(b, done[j], total)
                made.append(per)
        for i, q in enumerate(qs):
            row = [per[i] for per in made]
            counts.add(q, [p.correct for p in row])
            kinds.append(q.kind)
            results.extend(2 if p.correct is None else int(p.correct) for p in row)
            if keep:
                worked.append(q)
            for b, p in zip(order, row):
                if keep:
                    kept[b][q.id] = p
                if b in lean:
                    lean[b].add(q.id, p)
    given_list = keep and isinstance(questions, list)   # (then in the order given, else as worked on)
    res = PriorsResult(questions if given_list else worked, order, unavailable, {}, counts.table(), n=total,
                       known=lean)
    if keep:
        res.predictions = {b: {q.id: kept[b][q.id] for q in res.questions} for b in order}  # in the questions' order
    res.floor = res.strongest_on("all")
    res.basis = {kind: res.strongest_on(group) for kind, group in BASIS_GROUP.items()}
    at = {b: j for j, b in enumerate(order)}
    for i, kind in enumerate(kinds):
        basis = res.basis.get(kind)
        code = results[i * len(order) + at[basis]] if basis else 2
        res.measured.append(measured_counter_prior(kind, None if code == 2 else code == 1))
    if keep:
        flags = dict(zip((q.id for q in worked), res.measured))
        res.counter_prior = {q.id: flags[q.id] for q in res.questions}
    return res


class QuestionRows:
    """Question id -> row (the order the ids were put in), in little memory for a large dataset: the ids'
    UTF-8 bytes in one buffer with their ends, and a 64-bit digest of each, sorted when first read (about
    40 bytes an id, where a dict of the id strings took some 130 and scattered its strings among the
    objects a load frees). A digest shared by two ids is told apart by their bytes.

    >>> rows = QuestionRows()
    >>> rows.put(0, "q1"); rows.put(0, "q1"); rows.put(1, "вопрос-2")
    >>> rows.row("вопрос-2"), rows.row("q1"), len(rows), list(rows), "q3" in rows
    (1, 0, 2, ['q1', 'вопрос-2'], False)
    """

    __slots__ = ("_text", "_ends", "_digests", "_sorted")

    def __init__(self) -> None:
        self._text = bytearray()
        self._ends = array("Q")              # where each id's bytes end in ``_text``
        self._digests = array("q")
        self._sorted: tuple[Any, Any] | None = None   # (digests sorted, the row of each)

    def put(self, row: int, question_id: str) -> None:
        """Give ``question_id`` row ``row``: the next row, or the last again (every baseline run together puts
        each question, in the same order)."""
        data = question_id.encode()
        n = len(self._ends)
        if row == n:
            self._text += data
            self._ends.append(len(self._text))
            self._digests.append(id_digest(question_id))
            self._sorted = None
        elif not (row == n - 1 and self._bytes(row) == data):
            raise ValueError(f"question {question_id!r} put at row {row}, not the next ({n}) or the last")

    def _bytes(self, row: int) -> bytes:
        return bytes(self._text[self._ends[row - 1] if row else 0:self._ends[row]])

    def row(self, question_id: str) -> int:
        """The row of ``question_id`` (KeyError when it was never put)."""
        import numpy as np

        if self._sorted is None:
            digests = np.frombuffer(self._digests, np.int64) if len(self._digests) else np.zeros(0, np.int64)
            order = np.argsort(digests, kind="stable")
            self._sorted = (digests[order], order.astype(np.int32))
        digests, rows = self._sorted
        data = question_id.encode()
        h = id_digest(question_id)
        i = int(np.searchsorted(digests, h))
        while i < len(digests) and int(digests[i]) == h:
            if self._bytes(int(rows[i])) == data:
                return int(rows[i])
            i += 1
        raise KeyError(question_id)

    def __contains__(self, question_id: object) -> bool:
        try:
            self.row(str(question_id))
        except KeyError:
            return False
        return True

    def __len__(self) -> int:
        return len(self._ends)

    def __iter__(self) -> Iterator[str]:
        return (self._bytes(r).decode() for r in range(len(self._ends)))


class LeanPredictions(Mapping[str, Prediction]):
    """One set-free baseline's predictions without their raw answers (what the priors' table counts of each),
    question id -> prediction, as ``run_priors(lean_known=True)`` keeps them for a later run on the same
    dataset: a byte a question (right, wrong, unmeasured), the question ids held once by every baseline
    run together (``ids``, :class:`QuestionRows`) and the rare predictions with an error kept whole.

    >>> ids = QuestionRows()
    >>> kw, blind = LeanPredictions(ids), LeanPredictions(ids)
    >>> kw.add("q1", Prediction("yes", True)); blind.add("q1", Prediction("no", False))
    >>> kw.add("q2", Prediction(None, None, "ValueError: no graph")); blind.add("q2", Prediction("no", True))
    >>> kw["q1"], kw["q2"].error, blind["q2"].correct, sorted(blind), "q3" in kw, len(ids)
    (Prediction(raw=None, correct=True, error=None), 'ValueError: no graph', True, ['q1', 'q2'], False, 2)
    """

    __slots__ = ("_ids", "_codes", "_errors")

    #: a row's byte -> its prediction (the byte of a prediction with an error is ``len(_OUTCOMES)``)
    _OUTCOMES = (Prediction(None, False), Prediction(None, True), Prediction(None, None))

    def __init__(self, ids: QuestionRows) -> None:
        self._ids = ids                    # question id -> row (shared with the baselines run with this one)
        self._codes = bytearray()          # a row's outcome: 0 wrong, 1 right, 2 unmeasured, 3 an error
        self._errors: dict[int, Prediction] = {}

    def add(self, question_id: str, p: Prediction) -> None:
        """Keep ``p`` for the next row (every baseline sharing ``ids`` adds each question, in the same order)."""
        row = len(self._codes)
        self._ids.put(row, question_id)
        if p.error is not None:
            self._errors[row] = Prediction(None, p.correct, p.error)
            self._codes.append(len(self._OUTCOMES))
        else:
            self._codes.append(2 if p.correct is None else int(p.correct))

    def __getitem__(self, question_id: str) -> Prediction:
        row = self._ids.row(question_id)
        if row >= len(self._codes):
            raise KeyError(question_id)
        code = self._codes[row]
        return self._errors[row] if code == len(self._OUTCOMES) else self._OUTCOMES[code]

    def __iter__(self) -> Iterator[str]:
        return (qid for row, qid in enumerate(self._ids) if row < len(self._codes))

    def __len__(self) -> int:
        return min(len(self._codes), len(self._ids))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}"


def render_table(res: PriorsResult) -> str:
    """The accuracy table (percent; rows = question groups, columns = baselines) as markdown."""
    head = ["questions", "n"] + res.baselines
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for g, cells in res.table.items():
        n = next(iter(cells.values())).n if cells else 0
        lines.append("| " + " | ".join([g, str(n)] + [_pct(cells[b].accuracy) for b in res.baselines]) + " |")
    return "\n".join(lines) + "\n"


def render_summary(res: PriorsResult) -> str:
    """The table, the strongest baseline and the counter-prior comparison, as markdown."""
    data = res.to_json()
    cp, yn = data["counter_prior"], data["yes/no"]
    lines = [render_table(res)]
    lines.append(f"Strongest prior baseline (the guessability floor): **{res.floor}**, "
                 f"{_pct(res.accuracy_of(res.floor))} % of all {len(res.questions)} questions.")
    lines.append(f"Yes/no: majority {_pct(yn['majority'])} %, strongest {yn['strongest']} "
                 f"{_pct(yn['strongest_accuracy'])} %.")
    for b, why in res.unavailable.items():
        lines.append(f"Not run: {b} ({why}).")
    bal = balance(res.questions)
    shares = ", ".join(f"{t} {100 * y / n:.1f} % of {n}" for t, (y, n) in bal.types.items())
    problems = bal.problems()
    lines.append(f"Balance (yes share per yes/no type: {shares}): "
                 + ("every type and every (type, cue word) cell of 5 or more is 40-60 % yes, and no text-cue rule "
                    "is more than 5 points over the majority." if not problems else "; ".join(problems) + "."))
    basis = ", ".join(f"{k}: {v}" for k, v in cp["basis"].items())
    lines += ["", f"Counter-prior, measured ({cp['definition']}; basis {basis}): {cp['measured']} of "
                  f"{cp['defined_on']} yes/no and node questions. Annotated: {cp['annotated']} of "
                  f"{len(res.questions)} questions; annotation and measurement agree on {cp['agree']} of the "
                  f"{cp['annotated_on']} annotated; {len(cp['disagreements'])} disagreements (annotated flags on other "
                  f"answer kinds included):"]
    if cp["disagreements"]:
        lines += ["", "| question | type | annotated | measured | why |", "|---|---|---|---|---|"]
        for d in cp["disagreements"]:
            measured = "n/a" if d["measured"] is None else ("yes" if d["measured"] else "no")
            lines.append(f"| {d['question']} | {d['type']} | {'yes' if d['annotated'] else 'no'} | {measured} | {d['why']} |")
    return "\n".join(lines) + "\n"


def run_card_summary(res: PriorsResult) -> dict[str, Any]:
    """What a run records of its prior baselines (``run.json`` -> ``priors``) for the report: accuracy
    per baseline on every question group, the floor (the strongest on all questions) and the yes/no
    comparison with the majority baseline.

    >>> from benchmark.graph import Subgraph
    >>> r = PriorsResult([], ["majority"], {}, {"majority": {}}, {"all": {"majority": Cell(3, 4, 4)}}, "majority")
    >>> run_card_summary(r)["floor"]
    {'baseline': 'majority', 'accuracy': 0.75}
    """
    yes_no = res.strongest_on("yes/no")
    return {
        "questions": res.size,
        "baselines": list(res.baselines),
        "groups": list(res.table),   # the table's order (run.json is written with sorted keys)
        "accuracy": {g: {b: c.accuracy for b, c in cells.items()} for g, cells in res.table.items()},
        "n": {g: (next(iter(cells.values())).n if cells else 0) for g, cells in res.table.items()},
        "floor": {"baseline": res.floor, "accuracy": res.accuracy_of(res.floor)},
        "yes/no": {"majority": res.accuracy_of("majority", "yes/no"), "strongest": yes_no,
                   "strongest_accuracy": res.accuracy_of(yes_no, "yes/no")},
    }
