"""Long-context selector: seeded, evidence at the asked position, lengths nest, distractors never
collide with the question's diagram, and the solver answers as on the base selection alone."""
from __future__ import annotations

import pytest

from benchmark.answerers.solver import SolverAnswerer
from benchmark.context import context_text, make_context
from benchmark.dataset import load_dataset
from benchmark.graph import node_label
from benchmark.plugins import load_all
from benchmark.records import context_from_json, context_to_json
from benchmark.stages import SELECTORS
from retrievers.longctx import SEP, LongContextSelector, estimate_tokens


@pytest.fixture(scope="module")
def ds():
    load_all()
    return load_dataset(strict=False)[0]


def _q(ds, i=0):
    qs = [q for q in ds.questions if q.certificate.edges]
    return qs[i]


def test_registered_by_name(ds):
    sel = SELECTORS.create("long2k-end-khop2")
    assert isinstance(sel, LongContextSelector) and sel.name == "long2k-end-khop2"
    assert (sel.kilotokens, sel.position, sel.base.name) == (2, "end", "khop2")
    with pytest.raises(ValueError):
        SELECTORS.create("long2k-end-long1k-start-oracle")


@pytest.mark.parametrize("position", ["start", "middle", "end"])
def test_evidence_block_at_position(ds, position):
    q = _q(ds, 3)
    d = ds.diagrams[q.diagram]
    g = d.graph
    sub = SELECTORS.create(f"long1k-{position}-oracle").select(q, g, d)
    evidence = context_text(SELECTORS.create("oracle").select(q, g, d), g).split("\n")
    lines = make_context(d.id, sub, g).text.split("\n")
    k = len(evidence)
    starts = [i for i in range(len(lines) - k + 1) if lines[i:i + k] == evidence]
    assert len(starts) == 1
    i = starts[0]
    n_distractors = len(lines) - k
    assert i == {"start": 0, "middle": n_distractors // 2, "end": n_distractors}[position]
    assert estimate_tokens("\n".join(lines)) >= 1000


def test_seeded_and_lengths_nest(ds):
    q = _q(ds, 5)
    d = ds.diagrams[q.diagram]
    a1 = SELECTORS.create("long1k-middle-oracle").select(q, d.graph, d)
    a1_again = SELECTORS.create("long1k-middle-oracle").select(q, d.graph, d)
    a4 = SELECTORS.create("long4k-start-oracle").select(q, d.graph, d)
    other_seed = LongContextSelector(1, "middle", "oracle", seed=7).select(q, d.graph, d)
    assert a1 == a1_again and a1.context_text == a1_again.context_text
    assert a1.edges < a4.edges                                # a longer context extends a shorter one
    assert other_seed.edges != a1.edges
    assert estimate_tokens(a4.context_text) >= 4000 > estimate_tokens(a1.context_text)


def test_distractors_never_share_labels_or_twin(ds):
    twinned = next(d for d in ds.diagrams.values() if d.twin and d.questions)
    q = twinned.questions[0]
    g = twinned.graph
    sub = SELECTORS.create("long8k-middle-oracle").select(q, g, twinned)
    ctx = make_context(twinned.id, sub, g)
    own = {" ".join(node_label(g, n).split()).casefold() for n in g.nodes}
    foreign = [n for n in ctx.graph.nodes if SEP in n]
    assert foreign
    assert not any(n.split(SEP)[0] in (twinned.id, twinned.twin) for n in foreign)
    assert not any(node_label(ctx.graph, n).casefold() in own for n in foreign)
    assert all(node_label(ctx.graph, n) != n for n in foreign)  # foreign nodes keep their labels
    # the stored form keeps the order and the labels
    back = context_from_json(context_to_json(ctx))
    assert back.text == ctx.text and set(back.graph.nodes) == set(ctx.graph.nodes)


@pytest.mark.parametrize("base", ["oracle", "khop2"])
def test_solver_unaffected(ds, base):
    solver = SolverAnswerer()
    plain = SELECTORS.create(base)
    padded = [SELECTORS.create(f"long{k}k-{p}-{base}") for k, p in ((1, "start"), (4, "middle"), (8, "end"))]
    questions = ds.questions[::6]
    assert len(questions) >= 60
    for q in questions:
        d = ds.diagrams[q.diagram]
        ref = solver.answer(q, make_context(d.id, plain.select(q, d.graph, d), d.graph))
        for sel in padded:
            ctx = context_from_json(context_to_json(make_context(d.id, sel.select(q, d.graph, d), d.graph)))
            got = solver.answer(q, ctx)
            assert (got.raw, got.error) == (ref.raw, ref.error), (q.id, sel.name)


# -- the analysis section ---------------------------------------------------------------------------

def _rec(answerer, selector, correct, text="x" * 400, grounded=None, faith=None):
    return {"answerer": answerer, "selector": selector, "finder": "oracle", "source": "d2",
            "answer": {"raw": "yes"}, "context": {"text": text},
            "metrics": {"correct": correct, "faithfulness": faith,
                        "guess_class": ("grounded" if correct else "misread") if grounded is None else grounded}}


def test_long_context_section_rows_and_gap():
    from benchmark.long_context import long_context_section, long_context_table

    recs = [_rec("kw", "oracle", True), _rec("kw", "oracle", True),
            _rec("kw", "long1k-start-oracle", True), _rec("kw", "long1k-start-oracle", True),
            _rec("kw", "long1k-middle-oracle", False, faith=0.5), _rec("kw", "long1k-middle-oracle", True, faith=1.0),
            _rec("kw", "long1k-end-oracle", True, text="x" * 4000), _rec("kw", "long1k-end-oracle", None),
            _rec("kw", "khop2", False)]           # another selector: neither base nor padded
    table = long_context_table(recs)
    cells = table[("kw", "oracle")]
    assert cells["base"]["n"] == 2 and cells["base"]["accuracy"] == 1.0
    assert cells[(1, "middle")]["accuracy"] == 0.5 and cells[(1, "middle")]["faithfulness"] == 0.75
    assert cells[(1, "end")]["measured"] == 1 and cells[(1, "end")]["tokens"] == 550
    md = long_context_section(recs)
    assert "| 1k | middle | 2 | 100 | 50.0 % | 50.0 % | 75.0 % |" in md
    assert "1k -50.0 pts" in md
    assert "khop2" not in md

