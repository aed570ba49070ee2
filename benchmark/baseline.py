"""Baselines: a run's per-question results and summary in one small, committable JSON file, and the
regression gate that checks a new run against it.

A baseline keeps, per variant x answerer, each question's three gated outcomes: ``accuracy`` (1 right,
0 wrong, ``None`` unmeasured: the answerer failed), ``grounded_accuracy`` (1 when the guess class is
``grounded``) and ``faithfulness`` (the sample's share of supported claims, ``None`` when it made no
claim), with the means over the group. Nothing else of the run is kept: the file stays small enough to
commit next to the code it guards (:func:`record_baseline`).

The gate (:func:`check`) compares a run with a baseline on the questions both have, per variant x
answerer and metric. A metric **regresses** when its mean on the shared questions drops by more than
``max_drop`` *and* a paired test says the drop is real: McNemar's exact test for the 0/1 outcomes, the
paired cluster bootstrap (whole diagrams resampled) for faithfulness, Holm-corrected over the groups of
each metric (:mod:`benchmark.metrics.paired`). A drop beyond ``max_drop`` that the test cannot tell from
chance is reported, not failed. The gate also fails when the run does not cover the baseline: a
variant x answerer of the baseline missing from the run, or more than ``max_missing`` of a group's
measured baseline questions absent or unmeasured in the run (an outage is never scored as wrong, and
never passes for a run that held its ground either).

>>> base = {"format": FORMAT, "metrics": list(METRICS), "diagrams": {f"q{i}": f"d{i}" for i in range(12)},
...         "groups": [{"variant": "v", "answerer": "a", "questions": {f"q{i}": [1, 1, 1.0] for i in range(12)}}]}
>>> run = {("v", "a"): {f"q{i}": {"diagram": f"d{i}", "accuracy": int(i < 2), "grounded_accuracy": int(i < 2),
...                               "faithfulness": 1.0} for i in range(12)}}
>>> result = check(base, run, max_drop=0.05)
>>> result.passed, [(f.metric, round(f.drop, 3), f.regressed) for f in result.findings if f.metric != "faithfulness"]
(False, [('accuracy', 0.833, True), ('grounded_accuracy', 0.833, True)])
>>> result.findings[0].flipped[:3]
['q10', 'q11', 'q2']
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from benchmark.errors import DiagQAError
from benchmark.metrics.paired import holm, mcnemar, paired_bootstrap

#: the baseline file's format tag (bumped when its layout changes)
FORMAT = "diagqa-baseline/1"
#: the gated metrics: 0/1 outcomes (McNemar) and a share per sample (paired cluster bootstrap)
BINARY = ("accuracy", "grounded_accuracy")
METRICS = (*BINARY, "faithfulness")
#: defaults of the gate
MAX_DROP = 0.05
ALPHA = 0.05
MAX_MISSING = 0.05

PerQuestion = dict[str, dict[str, Any]]


def _num(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def outcomes(records: Iterable[Any]) -> dict[tuple[str, str], PerQuestion]:
    """(variant, answerer) -> question id -> ``{"diagram", "accuracy", "grounded_accuracy",
    "faithfulness"}`` from sample records (or their JSON dicts). Samples stopped by a stage error and
    answerer failures are unmeasured (``None``), never wrong.

    >>> outcomes([{"variant": "v", "answerer": "a", "question_id": "q", "diagram_id": "d",
    ...            "metrics": {"correct": True, "guess_class": "lucky_guess", "faithfulness": None}}])
    {('v', 'a'): {'q': {'diagram': 'd', 'accuracy': 1, 'grounded_accuracy': 0, 'faithfulness': None}}}
    """
    out: dict[tuple[str, str], PerQuestion] = {}
    for rec in records:
        r = rec if isinstance(rec, Mapping) else rec.to_json()
        m = r.get("metrics") or {}
        failed = r.get("error_stage") is not None or m.get("guess_class") in (None, "error") or m.get("correct") is None
        out.setdefault((r["variant"], r["answerer"]), {})[r["question_id"]] = {
            "diagram": r["diagram_id"],
            "accuracy": None if failed else int(bool(m["correct"])),
            "grounded_accuracy": None if failed else int(m["guess_class"] == "grounded"),
            "faithfulness": None if failed else _num(m.get("faithfulness")),
        }
    return out


def _mean(values: Iterable[Any]) -> float | None:
    xs = [v for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def summarise(questions: PerQuestion) -> dict[str, Any]:
    """A group's summary: questions, measured ones, and each metric's mean (``None`` when unmeasured)."""
    out: dict[str, Any] = {"questions": len(questions),
                           "measured": sum(1 for q in questions.values() if q["accuracy"] is not None)}
    for m in METRICS:
        mean = _mean(q[m] for q in questions.values())
        out[m] = None if mean is None else round(mean, 6)
    return out


def record_baseline(run_dir: Path) -> dict[str, Any]:
    """The baseline document of a run directory (its samples and run card)."""
    from benchmark.records import read_samples
    from benchmark.runner import SAMPLES

    card_path = run_dir / "run.json"
    card = json.loads(card_path.read_text(encoding="utf-8")) if card_path.exists() else {}
    groups, diagrams = [], {}
    for (variant, answerer), qs in outcomes(read_samples(run_dir / SAMPLES)).items():
        diagrams.update((q, v["diagram"]) for q, v in qs.items())
        groups.append({"variant": variant, "answerer": answerer, "summary": summarise(qs),
                       "questions": {q: [qs[q][m] for m in METRICS] for q in sorted(qs)}})
    if not groups:
        raise DiagQAError(f"{run_dir} has no samples: nothing to record")
    dataset = card.get("dataset") or {}
    return {"format": FORMAT, "run_id": card.get("run_id", run_dir.name), "started_utc": card.get("started_utc"),
            "config_hash": card.get("config_hash"), "dataset_hash": dataset.get("hash"), "seed": card.get("seed"),
            "metrics": list(METRICS), "diagrams": {q: diagrams[q] for q in sorted(diagrams)}, "groups": groups}


def expand(doc: dict[str, Any]) -> dict[tuple[str, str], PerQuestion]:
    """A baseline's groups in the form of :func:`outcomes`."""
    return {(g["variant"], g["answerer"]): {q: {"diagram": doc["diagrams"][q], **dict(zip(METRICS, v))}
                                             for q, v in g["questions"].items()} for g in doc["groups"]}


def dumps(doc: dict[str, Any]) -> str:
    """The baseline as text: one line per question, so that a diff of two baselines reads per question."""
    head = {k: v for k, v in doc.items() if k not in ("groups", "diagrams")}
    lines = ["{", *(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()),
             ' "diagrams": {', *(f"  {json.dumps(q)}: {json.dumps(d)}," for q, d in doc["diagrams"].items())]
    if doc["diagrams"]:
        lines[-1] = lines[-1][:-1]
    lines += [" },", ' "groups": [']
    for gi, g in enumerate(doc["groups"]):
        lines.append(f'  {{"variant": {json.dumps(g["variant"])}, "answerer": {json.dumps(g["answerer"])}, '
                     f'"summary": {json.dumps(g["summary"])}, "questions": {{')
        qs = list(g["questions"].items())
        for qi, (q, v) in enumerate(qs):
            lines.append(f"   {json.dumps(q)}: {json.dumps(v)}{',' if qi < len(qs) - 1 else ''}")
        lines.append("  }}" + ("," if gi < len(doc["groups"]) - 1 else ""))
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def load_baseline(path: Path) -> dict[str, Any]:
    """Read and check a baseline file; a clear error names the file and what is wrong."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DiagQAError(f"{path}: no such baseline (record one with `diagqa baseline record RUN --out {path}`)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DiagQAError(f"{path}: not a baseline file: {exc}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise DiagQAError(f"{path}: not a baseline of format {FORMAT!r} (got {got!r})")
    groups = doc.get("groups")
    if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("variant"), str) and isinstance(g.get("answerer"), str)
            and isinstance(g.get("questions"), dict) for g in groups):
        raise DiagQAError(f"{path}: 'groups' must be a list of {{variant, answerer, questions}}")
    diagrams = doc.get("diagrams")
    if doc.get("metrics") != list(METRICS) or not isinstance(diagrams, dict):
        raise DiagQAError(f"{path}: needs 'metrics' {list(METRICS)} and 'diagrams' (question id -> diagram id)")
    for g in groups:
        for q, v in g["questions"].items():
            if q not in diagrams or not isinstance(v, list) or len(v) != len(METRICS) or not all(
                    x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in v):
                raise DiagQAError(f"{path}: {g['variant']} x {g['answerer']}, question {q}: needs a diagram in "
                                  f"'diagrams' and [{', '.join(METRICS)}] as numbers or null")
    return doc


@dataclass
class Finding:
    """One metric of one variant x answerer: baseline and run means on the shared measured questions,
    the drop (baseline - run), the paired test's p-value (raw and Holm-corrected), and the questions
    that got worse (right -> wrong, grounded -> not, faithfulness lower) and better."""

    variant: str
    answerer: str
    metric: str
    pairs: int
    base: float | None
    run: float | None
    drop: float | None
    p: float | None
    p_holm: float | None = None
    regressed: bool = False
    flipped: list[str] = field(default_factory=list)
    improved: list[str] = field(default_factory=list)


@dataclass
class GateResult:
    max_drop: float
    alpha: float
    max_missing: float
    findings: list[Finding]
    #: (variant, answerer, why) for each baseline group the run does not cover
    uncovered: list[tuple[str, str, str]]

    @property
    def regressions(self) -> list[Finding]:
        return [f for f in self.findings if f.regressed]

    @property
    def passed(self) -> bool:
        return not self.regressions and not self.uncovered


def _finding(variant: str, answerer: str, metric: str, base: PerQuestion, run: PerQuestion, seed: int,
             n_boot: int) -> Finding:
    shared = sorted(q for q in set(base) & set(run) if base[q][metric] is not None and run[q][metric] is not None)
    xb = [base[q][metric] for q in shared]
    xr = [run[q][metric] for q in shared]
    mb, mr = _mean(xb), _mean(xr)
    if metric in BINARY:
        p = mcnemar(xb, xr).p
    else:
        p = paired_bootstrap(xb, xr, seed, n_boot, clusters=[base[q]["diagram"] for q in shared],
                             key=f"gate|{variant}|{answerer}|{metric}").p
    return Finding(variant, answerer, metric, len(shared), mb, mr, None if mb is None else mb - mr, p,
                   flipped=[q for q, b, r in zip(shared, xb, xr) if r < b],
                   improved=[q for q, b, r in zip(shared, xb, xr) if r > b])


def check(baseline: dict[str, Any], run: dict[tuple[str, str], PerQuestion], max_drop: float = MAX_DROP,
          alpha: float = ALPHA, max_missing: float = MAX_MISSING, seed: int = 0, n_boot: int = 2000) -> GateResult:
    """Gate ``run`` (:func:`outcomes` of a run) against ``baseline`` (see the module's text)."""
    if not 0 <= max_drop <= 1:
        raise DiagQAError(f"--max-drop must be in [0, 1], got {max_drop}")
    if not 0 < alpha < 1:
        raise DiagQAError(f"--alpha must be in (0, 1), got {alpha}")
    if not 0 <= max_missing <= 1:
        raise DiagQAError(f"--max-missing must be in [0, 1], got {max_missing}")
    findings: list[Finding] = []
    uncovered: list[tuple[str, str, str]] = []
    for key, base in expand(baseline).items():
        if key not in run:
            uncovered.append((*key, "not in the run"))
            continue
        mine = run[key]
        measured = [q for q, v in base.items() if v["accuracy"] is not None]
        lost = [q for q in measured if q not in mine or mine[q]["accuracy"] is None]
        if measured and len(lost) / len(measured) > max_missing:
            uncovered.append((*key, f"{len(lost)} of {len(measured)} measured baseline questions are missing or "
                                    f"unmeasured in the run (allowed: {max_missing:.0%}), e.g. {', '.join(sorted(lost)[:3])}"))
        findings.extend(_finding(*key, m, base, mine, seed, n_boot) for m in METRICS)
    for metric in METRICS:
        family = [f for f in findings if f.metric == metric]
        for f, p in zip(family, holm([f.p for f in family])):
            f.p_holm = p
            f.regressed = f.drop is not None and f.drop > max_drop and p is not None and p < alpha
    return GateResult(max_drop, alpha, max_missing, findings, uncovered)


def _fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def render(result: GateResult, baseline: str, run: str, show: int = 20) -> str:
    """The gate's verdict as text: one line per variant x answerer x metric, then what failed and the
    questions that flipped (at most ``show`` per finding)."""
    lines = [f"gate: {run} against baseline {baseline} (max drop {result.max_drop:g}, alpha {result.alpha:g} "
             f"after Holm, max missing {result.max_missing:.0%})",
             f"{'variant':<28} {'answerer':<10} {'metric':<18} {'pairs':>5} {'base':>6} {'run':>6} {'drop':>7} "
             f"{'p(Holm)':>8}  verdict"]
    for f in result.findings:
        big = f.drop is not None and f.drop > result.max_drop
        verdict = ("REGRESSION" if f.regressed else "drop not significant" if big else "ok")
        p = "–" if f.p_holm is None else "<0.001" if f.p_holm < 0.001 else f"{f.p_holm:.3f}"
        lines.append(f"{f.variant:<28} {f.answerer:<10} {f.metric:<18} {f.pairs:>5} {_fmt(f.base):>6} {_fmt(f.run):>6} "
                     f"{'–' if f.drop is None else f'{f.drop:+.3f}':>7} {p:>8}  {verdict}")
    for v, a, why in result.uncovered:
        lines.append(f"NOT COVERED: {v} x {a}: {why}")
    for f in result.regressions:
        more = f" (+{len(f.flipped) - show} more)" if len(f.flipped) > show else ""
        lines.append(f"REGRESSION: {f.variant} x {f.answerer} {f.metric} {_fmt(f.base)} -> {_fmt(f.run)}; "
                     f"{len(f.flipped)} questions got worse: {', '.join(f.flipped[:show])}{more}"
                     + (f"; {len(f.improved)} got better" if f.improved else ""))
    lines.append("gate: PASSED" if result.passed else
                 f"gate: FAILED ({len(result.regressions)} regressions, {len(result.uncovered)} groups not covered)")
    return "\n".join(lines)


def as_json(result: GateResult) -> dict[str, Any]:
    """The gate's result as plain JSON."""
    return {"passed": result.passed, "max_drop": result.max_drop, "alpha": result.alpha,
            "max_missing": result.max_missing,
            "uncovered": [{"variant": v, "answerer": a, "why": w} for v, a, w in result.uncovered],
            "findings": [vars(f) for f in result.findings]}
