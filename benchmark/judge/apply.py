"""The judge and self-check pass over a finished run: ``judge.jsonl``, ``selfcheck.jsonl``, ``judge.json``.

:func:`judge_run` reads the run's ``samples.jsonl`` once, and

* with a ``judge`` configuration, judges the chosen samples (:class:`~benchmark.judge.llm_judge.LLMJudge`)
  and writes one row per sample to ``judge.jsonl``;
* with a ``selfcheck`` configuration, asks the chosen answerers' questions again
  (:mod:`benchmark.judge.selfcheck`) and writes ``selfcheck.jsonl``;
* always counts the citation check per answerer (:mod:`benchmark.metrics.citations`);

then writes the summary of all three to ``judge.json`` -- what the report's section
(:mod:`benchmark.judge.section`) reads -- and that section alone to ``judge.md``. A part that was
not configured keeps what an earlier pass wrote (its file and its part of the summary).

``judge`` holds the endpoint's options (those of the ``llm`` answerer: ``model``, ``base_url``,
``api_key_env``, ``concurrency``, ``deadline_s``, ...), the judge's ``repairs``, and which samples to
judge: ``answerers`` (default all), ``max_samples`` (a seeded random subset of that many; default all)
and ``seed``.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmark.errors import DiagQAError

JUDGE_ROWS = "judge.jsonl"
SELFCHECK_ROWS = "selfcheck.jsonl"
SUMMARY = "judge.json"
SECTION = "judge.md"
#: keys of a ``judge:`` mapping that choose samples (the others configure the endpoint)
PASS_KEYS = ("answerers", "max_samples", "seed")


def choose(records: Sequence[dict[str, Any]], answerers: Sequence[str] | None, max_samples: int | None,
           seed: int) -> list[dict[str, Any]]:
    """The records to judge: of ``answerers`` (all when None), at most ``max_samples`` drawn with ``seed``,
    in the run's order.

    >>> recs = [{"sample_id": str(i), "answerer": "llm" if i % 2 else "solver"} for i in range(10)]
    >>> [r["sample_id"] for r in choose(recs, ["llm"], None, 0)]
    ['1', '3', '5', '7', '9']
    >>> choose(recs, None, 3, 0) == choose(recs, None, 3, 0), len(choose(recs, None, 3, 0))
    (True, 3)
    """
    pool = [r for r in records if answerers is None or r.get("answerer") in answerers]
    if max_samples is not None and len(pool) > max_samples:
        keep = set(random.Random(seed).sample(range(len(pool)), max_samples))
        pool = [r for i, r in enumerate(pool) if i in keep]
    return pool


def split_judge_options(raw: dict[str, Any], where: str = "judge") -> tuple[dict[str, Any], dict[str, Any]]:
    """(endpoint options, sample choice) of a ``judge:`` mapping; bad choice values are errors naming the key.

    >>> split_judge_options({"model": "m", "answerers": ["llm"], "max_samples": 50})
    ({'model': 'm'}, {'answerers': ['llm'], 'max_samples': 50, 'seed': None})
    """
    if not isinstance(raw, dict):
        raise DiagQAError(f"{where} must be a mapping of options (model, base_url, ...)")
    opts = {k: v for k, v in raw.items() if k not in PASS_KEYS}
    answerers, max_samples, seed = raw.get("answerers"), raw.get("max_samples"), raw.get("seed")
    if answerers is not None and not (isinstance(answerers, list) and all(isinstance(a, str) for a in answerers)):
        raise DiagQAError(f"{where}.answerers must be a list of answerer names, got {answerers!r}")
    if max_samples is not None and (isinstance(max_samples, bool) or not isinstance(max_samples, int) or max_samples < 1):
        raise DiagQAError(f"{where}.max_samples must be a whole number of at least 1, got {max_samples!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise DiagQAError(f"{where}.seed must be an integer, got {seed!r}")
    return opts, {"answerers": answerers, "max_samples": max_samples, "seed": seed}


def citation_summary(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per answerer: answers that cite edges, cited edges in and outside the context, not in the diagram,
    answers that pass and fail the citation check (:func:`benchmark.metrics.citations.citation_check`).

    >>> recs = [{"answerer": "llm", "metrics": {"claims": [{"kind": "edge", "verdict": "supported"}]}},
    ...         {"answerer": "llm", "metrics": {"claims": [{"kind": "edge", "verdict": "fabricated"}]}},
    ...         {"answerer": "llm", "metrics": {"claims": []}}]
    >>> citation_summary(recs)["llm"]
    {'answers': 3, 'citing': 2, 'cited': 2, 'in_context': 1, 'outside_context': 1, 'not_in_diagram': 1, 'failing': 1}
    """
    from benchmark.metrics.citations import citation_check

    out: dict[str, dict[str, Any]] = {}
    for r in records:
        m = r.get("metrics")
        if not m:
            continue
        c = citation_check(m.get("claims") or ())
        s = out.setdefault(str(r.get("answerer")), {"answers": 0, "citing": 0, "cited": 0, "in_context": 0,
                                                    "outside_context": 0, "not_in_diagram": 0, "failing": 0})
        s["answers"] += 1
        s["citing"] += c["cited"] > 0
        for k in ("cited", "in_context", "outside_context", "not_in_diagram"):
            s[k] += c[k]
        s["failing"] += c["passes"] is False
    return dict(sorted(out.items()))


def _write_rows(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    from benchmark.rundir import write_atomic

    write_atomic(path, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rows))


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``judge.jsonl`` or ``selfcheck.jsonl`` (none when absent); a bad line is an error
    naming file and line."""
    from benchmark.errors import InputError

    if not Path(path).exists():
        return []
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"not JSON ({exc.msg})", file=str(path), line=n) from None
            if not isinstance(row, dict):
                raise InputError("not a JSON object", file=str(path), line=n)
            rows.append(row)
    return rows


def read_summary(run_dir: Path) -> dict[str, Any] | None:
    """``judge.json`` of a run, or None when the run has none."""
    p = Path(run_dir) / SUMMARY
    if not p.exists():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def judge_run(run_dir: Path, judge: dict[str, Any] | None = None, selfcheck: dict[str, Any] | None = None, *,
              seed: int = 0, resamples: int = 1000, make_answerer: Callable[[str], Any] | None = None,
              say: Callable[[str], None] = lambda msg: None) -> dict[str, Any]:
    """The pass of the module doc over the run in ``run_dir``; returns the summary written to ``judge.json``."""
    from benchmark.judge.agreement import summarise
    from benchmark.judge.selfcheck import SelfCheckConfig, selfcheck_records, summarise_selfcheck
    from benchmark.rundir import write_atomic
    from benchmark.samples import load_samples

    run_dir = Path(run_dir)
    judge_parts = split_judge_options(judge) if judge is not None else None   # bad options fail before any request
    sc_cfg = SelfCheckConfig.from_mapping(selfcheck, seed=seed) if selfcheck is not None else None
    run = load_samples(run_dir)
    for p in run.problems:
        say(f"skipped {p}")
    card = _card(run_dir)
    summary = read_summary(run_dir) or {}
    summary["run_id"] = card.get("run_id", run_dir.name)
    summary["citations"] = citation_summary(run.records)
    if judge is not None:
        from benchmark.judge.llm_judge import LLMJudge

        opts, pick = judge_parts
        judge_seed = pick["seed"] if pick["seed"] is not None else seed
        chosen = choose(run.records, pick["answerers"], pick["max_samples"], judge_seed)
        j = LLMJudge(**opts)
        say(f"judging {len(chosen)} samples with {j.model}")
        rows = j.judge_many(chosen)
        _write_rows(run_dir / JUDGE_ROWS, rows)
        summary["judge"] = {"model": j.model, "config": j.config, "choice": dict(pick, seed=judge_seed),
                            "seed": seed, **summarise(rows, seed, resamples)}
    if sc_cfg is not None:
        cfg = sc_cfg
        graphs = _graphs(run_dir)
        make = make_answerer or _answerer_factory(card)
        say(f"self-check: {cfg.k} repeats at temperature {cfg.temperature:g} for {', '.join(cfg.answerers)}")
        rows = selfcheck_records(run.records, cfg, make, graphs)
        _write_rows(run_dir / SELFCHECK_ROWS, rows)
        summary["selfcheck"] = {"k": cfg.k, "temperature": cfg.temperature, "seeds": cfg.seeds(),
                                "answerers": list(cfg.answerers), **summarise_selfcheck(rows)}
    write_atomic(run_dir / SUMMARY, json.dumps(summary, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    from benchmark.judge.section import judge_markdown

    write_atomic(run_dir / SECTION, judge_markdown(summary))
    return summary


def _card(run_dir: Path) -> dict[str, Any]:
    p = run_dir / "run.json"
    try:
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}
    except ValueError:
        return {}


def _graphs(run_dir: Path) -> dict[str, Any]:
    from benchmark.records import graph_from_json

    p = run_dir / "graphs.json"
    if not p.exists():
        raise DiagQAError(f"{run_dir} has no graphs.json: the self-check scores repeats against the run's diagrams")
    return {did: graph_from_json(g) for did, g in json.loads(p.read_text(encoding="utf-8")).items()}


def _answerer_factory(card: dict[str, Any]) -> Callable[[str], Any]:
    """Builds an answerer of the run with the run's own options for it (from its run card)."""
    def make(name: str) -> Any:
        from benchmark.plugins import load_all
        from benchmark.stages import ANSWERERS

        load_all()
        options = ((card.get("config") or {}).get("options") or {}).get(name) or {}
        return ANSWERERS.create(name, **dict(options))

    return make


def stored_or_asked(run_dir: Path, judge: dict[str, Any] | None = None,
                    say: Callable[[str], None] = lambda msg: None) -> Callable[[Sequence[dict[str, Any]]], list[Any]]:
    """What the decision layer consults (:data:`benchmark.decision.apply.Judge`): each record's row of the
    run's ``judge.jsonl``; a record without one is judged by ``judge`` (when given), only then, and its
    row is added to ``judge.jsonl``. None for a record neither has."""
    run_dir = Path(run_dir)
    stored = {r.get("sample_id"): r for r in read_rows(run_dir / JUDGE_ROWS)}

    def rows_for(records: Sequence[dict[str, Any]]) -> list[Any]:
        missing = [r for r in records if r.get("sample_id") not in stored]
        if missing and judge is not None:
            from benchmark.judge.llm_judge import LLMJudge

            opts, _ = split_judge_options(judge)
            j = LLMJudge(**opts)
            say(f"asking the judge {j.model} about {len(missing)} uncertain samples")
            for row in j.judge_many(missing):
                stored[row.get("sample_id")] = row
            _write_rows(run_dir / JUDGE_ROWS, list(stored.values()))
        return [stored.get(r.get("sample_id")) for r in records]

    return rows_for
