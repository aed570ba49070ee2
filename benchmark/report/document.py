"""The report as a document: sections of paragraphs, tables and plots, built once from the
aggregated numbers and rendered by :mod:`benchmark.report.markdown` and :mod:`benchmark.report.html`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

from benchmark.report import aggregate as agg
from benchmark.report import comparison, sections
from benchmark.report.rows import present
from benchmark.report.tables import Table, fmt, fmt_ci, short

#: lucky guesses listed per answerer (all are counted)
LUCKY_LISTED = 15
#: diagram id -> node id -> label
Labels = dict[str, dict[str, str]]


@dataclass(frozen=True)
class Plot:
    name: str        # file name under plots/
    caption: str


@dataclass
class Section:
    title: str
    blocks: list[Any] = field(default_factory=list)   # str (a paragraph), Table or Plot


@dataclass
class Analysis:
    """Every aggregated table of a run (the report's numbers)."""

    samples: pd.DataFrame
    summary: pd.DataFrame
    guess: dict[str, pd.DataFrame]
    lucky: pd.DataFrame
    by_type: pd.DataFrame
    by_prior: pd.DataFrame
    twins: pd.DataFrame
    faith: pd.DataFrame
    buckets: pd.DataFrame
    claim: dict[str, Any]
    floor: dict[str, Any] | None
    finding: pd.DataFrame = field(default_factory=pd.DataFrame)
    sources: pd.DataFrame = field(default_factory=pd.DataFrame)
    ranking: pd.DataFrame = field(default_factory=pd.DataFrame)
    costs: pd.DataFrame = field(default_factory=pd.DataFrame)
    sensitivity: dict[str, Any] = field(default_factory=dict)
    priors: dict[str, Any] | None = None    # the run card's prior baselines (benchmark.priors.run_card_summary)
    pairs: dict[str, str] = field(default_factory=dict)   # counterfactual pairs run (original id -> counterfactual id)
    #: lucky guesses per answerer (:func:`~benchmark.report.aggregate.lucky_counts`), when ``lucky`` lists only the
    #: first of each; ``None``: ``lucky`` holds every one
    lucky_counts: dict[Any, int] | None = None

    @property
    def floor_accuracy(self) -> float | None:
        """The guessability floor: the strongest prior baseline's accuracy when the run recorded the
        priors, else (an older run) the ``blind`` answerer's accuracy, which only bounds it from below."""
        if self.priors and self.priors.get("floor", {}).get("accuracy") is not None:
            return self.priors["floor"]["accuracy"]
        return self.floor.get("accuracy") if self.floor else None


def analyse(records: list[Any], seed: int = 0, n_boot: int = 1000,
            ready: Callable[[str, Any], Any] | None = None) -> Analysis:
    """Every table of the report; ``ready(name, table)`` is called as each table a plot is drawn from
    (see :data:`benchmark.report.PLOT_TABLES`) comes to exist, first the ones the slowest plots need."""
    def made(name: str, value: Any) -> Any:
        if ready is not None:
            ready(name, value)
        return value

    df = made("samples", agg.frame(records))
    guess = made("guess", agg.guess_tables(df))
    summary = agg.summary_table(df, seed, n_boot)
    floor = made("floor", agg.blind_floor(df, seed, n_boot))
    made("summary", summary)
    buckets = made("buckets", agg.srr_buckets(df))
    costs = made("costs", comparison.costs(df))
    return Analysis(df, summary, guess, agg.lucky_guesses(df, LUCKY_LISTED), agg.breakdown(df, "qtype"),
                    agg.breakdown(df, "counter_prior"), agg.twin_consistency(df),
                    agg.faithfulness_table(df, seed, n_boot), buckets, agg.claim_check(df, summary),
                    floor, agg.finding(df), agg.source_comparison(summary), comparison.ranking(df, seed, n_boot),
                    costs, comparison.sensitivity(df, seed, n_boot), lucky_counts=agg.lucky_counts(df))


HOW_TO_READ = [
    "Each **sample** is one question answered by one answerer from the context one retriever variant "
    "(`finder+source+selector`) gave it. The question's **gold certificate** is the smallest part of the diagram "
    "that proves its answer. **SRR** is the share of the certificate's *edges* that reached the answerer (edges "
    "compared in flow direction; an undirected edge matches its two nodes either way; labels count only for "
    "questions about a label); **node SRR**, reported beside it, the share of its nodes. A certificate without "
    "edges is scored on its nodes. Where several certificates are valid (several shortest paths) the one that best "
    "matches the context is used. **Precision** is the share of the retrieved edges that are in that certificate "
    "(unmeasured when no edge was retrieved, with the reason given); **F1** their harmonic mean, 0 when nothing "
    "was retrieved.",
    "A context is **sufficient** when the reference solver, run on it *as the answerer received it*, proves the gold "
    "answer — exact, not a threshold on SRR. An answerer that receives no context (`blind`) never has a sufficient "
    "one; an extracted context is judged as extracted.",
    "A correct answer from a sufficient context is **grounded**; from an insufficient one it is a **lucky guess**. "
    "A wrong answer from a sufficient context is a **misread**; from an insufficient one a **retrieval miss**, or an "
    "**extraction error** when the context proves the answer once its edges are aligned to the D2 (the image was "
    "misread, not the context). An **abstention** (\"the context does not determine the answer\") is its own "
    "outcome: *appropriate* on an insufficient context, a *miss* on a sufficient one; it is not correct. An answerer "
    "**error** (timeout, HTTP error, unparsable reply) is unmeasured: counted and listed, never wrong.",
    "**Accuracy** is over every measured answer (abstentions count as not correct); **accuracy attempted** over the "
    "answers that did not abstain; **coverage** the share that did not abstain — read them together, so that an "
    "answerer that abstains when it cannot know is not ranked below one that guesses. **Guess rate** = lucky "
    "guesses / correct answers; **accuracy inflation** = accuracy − grounded accuracy. **Faithfulness** is the share "
    "of the claims an answer rests on (cited edges, stated relations) that hold in its context; an answer without "
    "claims has no faithfulness (unmeasured, shown as –).",
    "For **successors, predecessors, count_in and count_out** the certificate *is* the answer (the node, its "
    "neighbours on one side and those edges): a context that holds it spells the answer out, so *grounded* there "
    "cannot tell reading the structure from copying it. Judge reading on the other types, on the counter-prior "
    "slice and on counterfactual pairs.",
    "**Controls** (selectors `none`, `full`, `oracle`) bound what retrieval can do; they are shown apart and never "
    "picked by a headline. **Candidates** are ranked per answerer with paired tests on the same questions.",
    "Intervals are 95 % percentile-bootstrap intervals over samples (seeded) in the main tables, and over whole "
    "diagrams (cluster bootstrap) in the ranking. `–` is an unmeasured value; where some samples of a group are "
    "unmeasured their number is given.",
]


def _answer_text(value: Any, qtype: str = "", labels: dict[str, str] | None = None) -> str:
    """A gold answer as a reader writes it: yes/no, node ids as their labels, lists joined, paths with arrows."""
    from benchmark.report.explorer import gold_text

    return gold_text(value, qtype, labels or {}) if value is not None else fmt(value)


def _simple(df: pd.DataFrame, caption: str, columns: list[tuple[str, str]]) -> Table:
    rows = [[fmt(r[c]) for c, _ in columns] for _, r in df.iterrows()]
    return Table(caption, [h for _, h in columns], rows,
                 align=["r" if df[c].map(lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)).any()
                        else "l" for c, _ in columns] if len(df) else [])


def _claim_section(a: Analysis) -> Section:
    c = a.claim
    sec = Section("The claim under test")
    sec.blocks.append("Claim: *answer accuracy is a less sensitive signal of retrieval quality than SRR, and "
                      f"faithfulness is nearly always ≥ {agg.FAITHFUL} above SRR {agg.SRR_HIGH}, while right answers "
                      "below it are often unfaithful.*")
    if a.sensitivity:
        sec.blocks.extend(sections.sensitivity_section(a.sensitivity))
    sec.blocks.append("Per-sample separation of sufficient from insufficient contexts (all variants; descriptive: "
                      "an SRR of 1 is close to what sufficiency means, so the AUC of SRR is high almost by "
                      "construction):")
    sens = c["sensitivity"]
    sec.blocks.append(Table(
        "Separating sufficient from insufficient contexts (AUC over samples; descriptive)",
        ["answerer", "samples", "AUC of accuracy", "AUC of SRR"],
        [[r["answerer"], fmt(r["n"]), fmt(r["auc_accuracy"]), fmt(r["auc_srr"])] for r in sens],
        align=["l"] + ["r"] * 3))
    hi, lo = c["faithful_above"], c["unfaithful_right_below"]
    sec.blocks.append(
        f"Above SRR {agg.SRR_HIGH}: {fmt(hi['share_faithful'])} of {hi['n']} answers with claims have faithfulness ≥ "
        f"{agg.FAITHFUL} ({hi['unmeasured']} answers there state no claims). Below it: {fmt(lo['share_unfaithful'])} "
        f"of {lo['n']} right answers with claims have faithfulness < {agg.FAITHFUL} ({lo['unmeasured']} right answers "
        f"there state no claims).")
    sec.blocks.append(Table(
        f"Part 2 per answerer (faithful: ≥ {agg.FAITHFUL}; line: SRR {agg.SRR_HIGH})",
        ["answerer", "answers with claims above", "share faithful", "no claims above", "right answers with claims below",
         "share unfaithful", "no claims below", "holds"],
        [[r["answerer"], fmt(r["faithful_above"]["n"]), fmt(r["faithful_above"]["share_faithful"]),
          fmt(r["faithful_above"]["unmeasured"]), fmt(r["unfaithful_right_below"]["n"]),
          fmt(r["unfaithful_right_below"]["share_unfaithful"]), fmt(r["unfaithful_right_below"]["unmeasured"]),
          fmt(r["faithfulness_holds"])] for r in c.get("faithfulness_by_answerer", [])],
        align=["l"] + ["r"] * 7))
    h = c["faithfulness_holds"]
    sec.blocks.append("**Part 2, over all answerers, " + ("is unmeasured** (no answers with claims on one side)." if h is None else
                                     "holds** (≥ 0.90 above, ≥ 0.50 below)." if h else
                                     "does not hold** by the thresholds used here (≥ 0.90 of answers faithful above "
                                     "the SRR line, ≥ 0.50 of right answers unfaithful below it)."))
    return sec


def _headline(a: Analysis) -> list[str]:
    """A few sentences computed from the main table: the floor, then -- among the candidates only, never
    a control -- the most inflated and the best grounded cells, and the lucky guesses over the grid."""
    if not len(a.summary):
        return []
    s = a.summary[~a.summary["control"].astype(bool)]
    lines = []
    if a.priors and a.priors.get("floor", {}).get("accuracy") is not None:
        f = a.priors["floor"]
        lines.append(f"Without the diagram, the strongest prior baseline (`{f['baseline']}`) is right on "
                     f"**{fmt(f['accuracy'])}** of the questions: the guessability floor.")
    elif a.floor and a.floor.get("accuracy") is not None:
        lines.append(f"A guesser with no context (`blind`) is right on **{fmt(a.floor['accuracy'])}** of the questions "
                     "(the run recorded no prior baselines; the strongest one is higher).")
    if not len(s):
        lines.append("This run has only controls (selectors none, full, oracle): no candidate retriever to single out.")
    infl = s[s["accuracy_inflation"].notna()]
    if len(infl):
        r = infl.loc[infl["accuracy_inflation"].astype(float).idxmax()]
        lines.append(f"The most inflated accuracy among the candidates: `{r['variant']}` × `{r['answerer']}` scores "
                     f"{fmt(r['accuracy'])} but only {fmt(r['grounded_accuracy'])} grounded — "
                     f"{fmt(r['accuracy_inflation'])} of its answers are right without the structure that proves them.")
    grounded = s[s["grounded_accuracy"].notna()]
    if len(grounded):
        r = grounded.loc[grounded["grounded_accuracy"].astype(float).idxmax()]
        lines.append(f"The best grounded accuracy among the candidates: `{r['variant']}` × `{r['answerer']}`, "
                     f"{fmt(r['grounded_accuracy'])} (accuracy {fmt(r['accuracy'])}, SRR {fmt(r['srr'])}, "
                     f"sufficiency {fmt(r['sufficiency'])}); see the paired ranking for whether it is ahead.")
    whole = a.summary
    lucky = int(whole["lucky_guess"].sum()) if "lucky_guess" in whole else 0
    right = lucky + (int(whole["grounded"].sum()) if "grounded" in whole else 0)
    if right:
        lines.append(f"Over the whole grid (candidates and controls), {lucky} of {right} right answers "
                     f"({fmt(lucky / right)}) were lucky guesses.")
    return [" ".join(lines)] if lines else []


def build_sections(a: Analysis, card: dict[str, Any], plots: dict[str, bytes],
                   labels: "Labels | Callable[[set[str]], Labels] | None" = None) -> list[Section]:
    """The whole report, in reading order; ``labels`` (diagram -> node id -> label, or a function giving
    that mapping for the diagrams asked for: only those of the lucky guesses listed are read) writes gold
    answers with the diagram's labels, as answers are written."""
    out: list[Section] = []
    ds = card.get("dataset", {})
    head = Section("How to read this", list(HOW_TO_READ))
    head.blocks.append(f"Run `{card.get('run_id')}`: {card.get('samples', len(a.samples))} samples "
                       f"({card.get('sample_errors', 0)} with a stage error) over {ds.get('questions_run', '–')} "
                       f"questions of {ds.get('diagrams', '–')} diagrams; dataset hash `{str(ds.get('hash', ''))[:12]}`; "
                       f"seed {card.get('seed', 0)}. Samples: `samples.jsonl`; configuration and versions: `run.json`.")
    out.append(head)

    headline = _headline(a)
    if headline:
        out.append(Section("Headline", headline))

    main = Section("Accuracy against grounded accuracy", list(sections.main_tables(a.summary)))
    if "accuracy_grounded.png" in plots:
        main.blocks.append(Plot("accuracy_grounded.png", "Green: grounded answers; orange: lucky guesses; "
                                                         "dashed: the guessability floor (the strongest prior "
                                                         "baseline's accuracy)."))
    out.append(main)

    rank = Section("Choosing a retriever: paired ranking of the candidates", sections.ranking_section(a.ranking))
    if len(a.costs):
        rank.blocks.append(sections.cost_table(a.costs))
    if "grounded_tokens.png" in plots:
        rank.blocks.append(Plot("grounded_tokens.png", "Grounded accuracy against context size: filled points are "
                                                       "candidates, hollow ones controls (95 % intervals)."))
    out.append(rank)

    if len(a.finding):
        find = Section("Finding the diagram")
        find.blocks.append("For variants whose finder is not the oracle, how often the question's own diagram came "
                           "first; a context from another diagram counts as no gold structure at all.")
        find.blocks.append(_simple(a.finding, "Finder per variant", [("variant", "variant"), ("questions", "questions"),
                                                                      ("at_1", "recall@1"), ("at_5", "recall@5"),
                                                                      ("mrr", "MRR"), ("not_ranked", "not ranked"),
                                                                      ("twin_questions", "questions on twins"),
                                                                      ("twin_found", "twin returned first")]))
        skipped = [s for s in card.get("skipped", []) if str(s.get("component", "")).startswith("finder ")]
        if skipped:
            find.blocks.append("Skipped (no samples): " + "; ".join(
                f"`{s.get('variant', s['component'])}` — {s.get('reason', '')}" for s in skipped))
        out.append(find)

    if len(a.sources):
        comp = Section("Text path against image path")
        comp.blocks.append("The same selector on the graph parsed from the D2 text (`oracle+d2+X`), on the graph "
                           "extracted from the PNG (`oracle+ocr+X`) and with the diagram found by image or text "
                           "search (`<finder>+ocr+X`): what extraction and finding lose shows up as lower SRR and "
                           "sufficiency.")
        comp.blocks.append(_simple(a.sources, "Per selector and answerer",
                                   [("selector", "selector"), ("answerer", "answerer"), ("variant", "variant"),
                                    ("accuracy", "accuracy"), ("grounded_accuracy", "grounded acc."),
                                    ("srr", "SRR"), ("sufficiency", "sufficiency")]))
        out.append(comp)

    out.append(floor_section(a))

    guess = Section("Guess tables")
    guess.blocks.append("Counts over every variant of each answerer: rows correct / wrong, columns sufficient / "
                        "insufficient context.")
    for name, t in a.guess.items():
        guess.blocks.append(Table(f"{name}", ["", "sufficient context", "insufficient context"],
                                  [[idx] + [fmt(int(v)) for v in row] for idx, row in zip(t.index, t.to_numpy())],
                                  align=["l", "r", "r"]))
    if "guess_tables.png" in plots:
        guess.blocks.append(Plot("guess_tables.png", "Guess tables as shares of each answerer's samples."))
    guess.blocks.append("Extraction errors, abstentions and answerer errors are outside the four cells; every class "
                        "is counted below.")
    if len(a.summary):
        guess.blocks.append(sections.outcomes_table(a.summary))
    out.append(guess)

    lucky = Section("Lucky guesses")
    counts = a.lucky_counts
    if counts is None:   # (every lucky guess listed in a.lucky)
        counts = agg.answerer_counts(a.lucky["answerer"])
    if sum(counts.values()):
        lucky.blocks.append(f"{sum(counts.values())} lucky guesses in all; here up to the first {LUCKY_LISTED} of each "
                            "answerer, with the context the answerer saw. Every one of them is in report.html's sample "
                            "explorer (class: lucky guess), with its diagram.")
        heads = {answerer: g.head(LUCKY_LISTED) for answerer, g in a.lucky.groupby("answerer", sort=False)}
        listed = [(answerer, counts[answerer], heads[answerer]) for answerer in counts if answerer in heads]
        diagram_of = ({q: d for _, _, h in listed for q, d in zip(h["question_id"], h["diagram_id"])}
                      if labels else {})
        found = labels(set(diagram_of.values())) if callable(labels) else (labels or {})
        for answerer, n, head in listed:
            rows = [[r["variant"], r["question_id"], short(r["question_text"], 90),
                     short(_answer_text(r["gold"], r["qtype"], found.get(diagram_of.get(r["question_id"]))), 30),
                     short(r["answer_raw"], 40), fmt(r["srr"]), short(r["context_text"] or "(empty)", 140)]
                    for _, r in head.iterrows()]
            lucky.blocks.append(Table(f"{answerer}: {n} lucky guesses",
                                      ["variant", "question", "text", "gold", "answer", "SRR", "context"], rows))
    else:
        lucky.blocks.append("No lucky guesses in this run.")
    out.append(lucky)

    slices = Section("By question type, counter-prior flag and twin pairs")
    slices.blocks.append(_simple(a.by_type, "By question type (all variants)",
                                 [("answerer", "answerer"), ("qtype", "type"), ("n", "n"), ("accuracy", "accuracy"),
                                  ("grounded_accuracy", "grounded acc."), ("sufficiency", "sufficiency"),
                                  ("lucky_guesses", "lucky guesses")]))
    slices.blocks.append(_simple(a.by_prior, "By counter-prior flag (all variants)",
                                 [("answerer", "answerer"), ("counter_prior", "counter-prior"), ("n", "n"),
                                  ("accuracy", "accuracy"), ("grounded_accuracy", "grounded acc."),
                                  ("sufficiency", "sufficiency"), ("lucky_guesses", "lucky guesses")]))
    slices.blocks.append("Twin questions have opposite gold answers on two diagrams that differ only in the "
                         "structure they turn on; answering both alike is guessing. The finder's part and the "
                         "answerer's are apart: *finder gave one diagram* counts the pairs for which the finder "
                         "returned the same diagram for both twins (no answerer can tell those apart); *answered "
                         "differently* is over the pairs whose twins each reached the answerer as their own diagram.")
    slices.blocks.append(_simple(a.twins, "Twin-pair consistency",
                                 [("variant", "variant"), ("answerer", "answerer"), ("pairs", "pairs"),
                                  ("finder_same", "finder gave one diagram"), ("own_pairs", "pairs on own diagrams"),
                                  ("answered_differently", "answered differently (own diagrams)"),
                                  ("answered_differently_all", "answered differently (all)"),
                                  ("both_correct", "both correct"), ("unmeasured", "unmeasured")]))
    out.append(slices)

    if a.pairs:
        from benchmark.report.pairs import pairs_section

        out.append(pairs_section(pair_records(a.samples, a.pairs), a.pairs))

    faith = Section("Faithfulness")
    rows = [[r["variant"], r["answerer"], fmt_ci(r, "faithfulness"), fmt(r["with_claims"]), fmt(r["unmeasured"]),
             fmt(r["share_unsupported"]), fmt(r["share_fabricated"])] for _, r in a.faith.iterrows()]
    faith.blocks.append(Table("Faithfulness per variant × answerer (answers without claims are unmeasured)",
                              ["variant", "answerer", "faithfulness", "with claims", "unmeasured",
                               "with unsupported claim", "with fabricated claim"], rows,
                              align=["l", "l"] + ["r"] * 5))
    if "faithfulness_srr.png" in plots:
        faith.blocks.append(Plot("faithfulness_srr.png", "Each dot one answer with claims."))
    out.append(faith)

    srr = Section("Accuracy vs SRR")
    srr.blocks.append(_simple(a.buckets, "By SRR bucket (all variants)",
                              [("answerer", "answerer"), ("srr_bucket", "SRR"), ("n", "n"), ("accuracy", "accuracy"),
                               ("sufficiency", "sufficiency"), ("faithfulness", "faithfulness"),
                               ("faithfulness_unmeasured", "faithfulness unmeasured")]))
    for name, cap in (("accuracy_srr.png", "Accuracy per SRR bucket."),
                      ("srr_accuracy_variants.png", "One point per variant × answerer.")):
        if name in plots:
            srr.blocks.append(Plot(name, cap))
    out.append(srr)
    out.append(_claim_section(a))

    unmeasured = Section("Unmeasured values and why", sections.unmeasured_section(a.samples))
    out.append(unmeasured)

    health = Section("Errors and skipped stages")
    skipped = card.get("skipped") or []
    if skipped:
        health.blocks.append(Table("Skipped (unavailable) stages", ["what", "component", "reason"],
                                   [[s.get("variant") or s.get("answerer") or (f"{s.get('samples')} samples"
                                                                               if s.get("samples") else "–"),
                                     s["component"], short(s["reason"], 160)] for s in skipped]))
    else:
        health.blocks.append("No stage was skipped.")
    errs = a.samples[agg.matching(a.samples, "error_stage", present)]
    if len(errs):
        counts = errs.groupby(["error_stage", "variant", "answerer"], sort=True).size().reset_index(name="n")
        health.blocks.append(Table("Samples with a stage error (recorded in samples.jsonl; left out of the rates)",
                                   ["stage", "variant", "answerer", "samples"],
                                   [[r["error_stage"], r["variant"], r["answerer"], fmt(int(r["n"]))]
                                    for _, r in counts.iterrows()]))
    else:
        health.blocks.append("No sample had a stage error.")
    problems = ds.get("problems") or []
    if problems:
        health.blocks.append(Table(f"Dataset problems ({len(problems)}; these questions were left out)",
                                   ["file", "line", "question", "problem"],
                                   [[str(p.get("file") or "–"), fmt(p.get("line")), str(p.get("question") or "–"),
                                     short(p.get("message"), 160)] for p in problems[:50]]))
    out.append(health)
    return out


def floor_section(a: Analysis) -> Section:
    """The guessability floor: the prior baselines the run recorded (accuracy without the diagram's edges,
    per question group), the strongest of them, and the ``blind`` answerer as run."""
    sec = Section("Guessability floor (strongest prior baseline)")
    p = a.priors
    if p:
        f, yn = p["floor"], p.get("yes/no") or {}
        sec.blocks.append(
            f"Prior baselines answer the {p['questions']} questions of this run without the diagram's edges: the "
            f"majority answer of the question's type, text-cue rules, `keyword` with no context or with the node "
            f"labels only, and `blind`. How guessable the questions are is the accuracy of the **strongest** of them, "
            f"not of the weakest: **`{f['baseline']}`, {fmt(f['accuracy'])}**. On yes/no questions the majority "
            f"baseline scores {fmt(yn.get('majority'))} and the strongest, `{yn.get('strongest')}`, "
            f"{fmt(yn.get('strongest_accuracy'))}. A question is *counter-prior* when the strongest prior on its "
            f"answer kind gets it wrong (yes/no and node answers only; computed when the dataset loads).")
        baselines = list(p["baselines"])
        sec.blocks.append(Table("Prior baselines: accuracy per question group", ["questions", "n"] + baselines,
                                [[g, fmt(p["n"].get(g))] + [fmt(p["accuracy"][g].get(b)) for b in baselines]
                                 # in the recorded order: a report made again from run.json (written with
                                 # sorted keys) lists the groups as the run's own report did
                                 for g in p.get("groups") or p["accuracy"]],
                                align=["l"] + ["r"] * (len(baselines) + 1)))
    else:
        sec.blocks.append("This run recorded no prior baselines (an older run card): the floor below is the `blind` "
                          "answerer's, which only bounds guessability from below.")
    if a.floor:
        fl = a.floor
        sec.blocks.append(f"The `blind` answerer as run (one fixed set of priors, no context): **{fmt_ci(fl, 'accuracy')}** "
                          f"over {fl['questions']} questions; counter-prior questions {fmt(fl['counter_prior'].get('True'))}, "
                          f"others {fmt(fl['counter_prior'].get('False'))}.")
        sec.blocks.append(Table("Blind accuracy by question type", ["type", "accuracy"],
                                [[t, fmt(v)] for t, v in fl["by_type"].items()], align=["l", "r"]))
    else:
        sec.blocks.append("The `blind` answerer was not part of this run.")
    return sec


def pair_records(samples: pd.DataFrame, pairs: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The samples frame as the records :func:`benchmark.metrics.pairs.pair_table` reads; with ``pairs``
    (original question id -> counterfactual one), only the samples of questions on either side of a pair."""
    names = ("variant", "answerer", "question_id", "answer_value", "correct", "answer_raw")
    if pairs is not None:
        samples = samples.loc[samples["question_id"].isin({*pairs, *pairs.values()}), list(names)]
    cols = [samples[c].tolist() for c in names]
    return [{"variant": v, "answerer": an, "question_id": q, "metrics": {"answer_value": av, "correct": c},
             "answer": {"raw": raw}} for v, an, q, av, c, raw in zip(*cols)]
