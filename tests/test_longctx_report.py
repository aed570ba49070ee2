"""Long context to 16k tokens, the models' context windows, and the long-context section of the default
report: 16k contexts hold the evidence at the stated position, the solver (the control) answers as on
the base selection, a prompt over the llm's window is an error (never sent, never a wrong answer),
and the report's table and plot data are right on constructed samples and present after a real run."""
from __future__ import annotations

import dataclasses
import json

import pandas as pd
import pytest

from benchmark.answerers.llm import CONTEXT_TOO_LONG, prompt_tokens
from benchmark.answerers.solver import SolverAnswerer
from benchmark.context import context_text, make_context
from benchmark.dataset import load_dataset
from benchmark.long_context import BASE, frame_records, long_context_blocks, long_context_table
from benchmark.metrics import score_sample
from benchmark.plugins import load_all
from benchmark.records import context_from_json, context_to_json
from benchmark.report import LONG_CONTEXT_PLOT, long_context_section
from benchmark.report.rows import FRAME_COLUMNS
from benchmark.runner import run
from benchmark.stages import SELECTORS
from llm_server import LLMServer
from retrievers.longctx import SEP, estimate_tokens
from test_answerers_llm import CTX, GOOD, G, Q, answerer_for  # noqa: F401 - answerer_for is a fixture
from test_runner import tiny_spec


@pytest.fixture(scope="module")
def ds():
    load_all()
    return load_dataset(strict=False)[0]


def _q(ds, i):
    return [q for q in ds.questions if q.certificate.edges][i]


# -- 16k contexts -----------------------------------------------------------------------------------

@pytest.mark.parametrize("position", ["start", "middle", "end"])
def test_16k_context_holds_the_evidence_at_its_position(ds, position):
    q = _q(ds, 3)
    d = ds.diagrams[q.diagram]
    sub = SELECTORS.create(f"long16k-{position}-oracle").select(q, d.graph, d)
    evidence = context_text(SELECTORS.create("oracle").select(q, d.graph, d), d.graph).split("\n")
    lines = make_context(d.id, sub, d.graph).text.split("\n")
    assert 16000 <= estimate_tokens("\n".join(lines)) < 16000 + 50     # the asked length, not the 8k of real edges
    k = len(evidence)
    starts = [i for i in range(len(lines) - k + 1) if lines[i:i + k] == evidence]
    assert len(starts) == 1
    n_distractors = len(lines) - k
    assert starts[0] == {"start": 0, "middle": n_distractors // 2, "end": n_distractors}[position]
    e8 = SELECTORS.create(f"long8k-{position}-oracle").select(q, d.graph, d)
    assert set(make_context(d.id, e8, d.graph).text.split("\n")) <= set(lines)   # 16k extends 8k
    selector = SELECTORS.create(f"long16k-{position}-oracle")
    real = {line for _, line, _ in selector.distractors(q, d.graph, d, SELECTORS.create("oracle").select(q, d.graph, d))}
    recombined = [x for x in lines if x not in real and x not in evidence]
    assert len(real) < len(lines) - k     # the real edges of the other diagrams do not fill 16k ...
    assert len(recombined) > 100 and len(set(recombined)) == len(recombined)   # ... recombined ones do, none twice


def test_16k_extends_8k_with_recombined_edges_of_two_other_diagrams(ds):
    q = _q(ds, 5)
    d = ds.diagrams[q.diagram]
    e8 = SELECTORS.create("long8k-end-oracle").select(q, d.graph, d).edges
    e16 = SELECTORS.create("long16k-end-oracle").select(q, d.graph, d).edges
    assert e8 < e16
    extra = [e for e in e16 - e8 if e.src.split(SEP)[0] != e.dst.split(SEP)[0]]
    assert extra                                                          # recombined: ends in two diagrams
    own = set(d.graph.nodes)
    assert all(SEP in n and n.split(SEP)[0] not in (d.id, d.twin) for e in extra for n in (e.src, e.dst))
    assert not any(n in own for e in extra for n in (e.src, e.dst))
    again = SELECTORS.create("long16k-middle-oracle").select(q, d.graph, d).edges
    assert again == e16                                                   # the three positions hold the same lines


def test_solver_unaffected_at_16k(ds):
    solver = SolverAnswerer()
    questions = ds.questions[::20]
    assert len(questions) >= 20
    for q in questions:
        d = ds.diagrams[q.diagram]
        ref = solver.answer(q, make_context(d.id, SELECTORS.create("oracle").select(q, d.graph, d), d.graph))
        for pos in ("start", "middle", "end"):
            sub = SELECTORS.create(f"long16k-{pos}-oracle").select(q, d.graph, d)
            ctx = context_from_json(context_to_json(make_context(d.id, sub, d.graph)))
            got = solver.answer(q, ctx)
            assert (got.raw, got.error) == (ref.raw, ref.error), (q.id, pos)


# -- context windows ----------------------------------------------------------------------------------

def test_a_prompt_over_the_window_is_an_error_and_never_sent(answerer_for):  # noqa: F811
    long_ctx = dataclasses.replace(CTX, text=CTX.text + "\nUser -> Cache" * 300)   # about 1,200 tokens
    with LLMServer(responder=lambda req: GOOD) as server:
        a = answerer_for(server, context_window=1000, max_tokens=128, breaker_after=1)
        too_long = a.answer(Q, long_ctx)
        fits = a.answer(Q, CTX)
        assert server.calls == 1                                           # only the one that fits went out
    assert too_long.raw is None and too_long.error_kind == CONTEXT_TOO_LONG and "1000" in too_long.error
    assert fits.error is None and fits.raw == "yes"                        # the breaker (after 1) did not open
    m = score_sample(Q, G, long_ctx.subgraph, long_ctx, too_long)
    assert m["correct"] is None and m["error"] == CONTEXT_TOO_LONG         # unmeasured, not wrong


def test_a_server_refusing_the_length_gives_the_same_kind(answerer_for):  # noqa: F811
    refusal = {"status": 400, "body": json.dumps({"error": {
        "message": "the request exceeds the available context size, try increasing it", "type": "invalid_request_error"}})}
    with LLMServer(script=[refusal, refusal]) as server:
        a = answerer_for(server, breaker_after=1)
        first, second = a.answer(Q, CTX), a.answer(Q, CTX)
        assert server.calls == 2                                           # not retried, breaker not tripped
    assert first.error_kind == second.error_kind == CONTEXT_TOO_LONG


def test_window_option_is_checked(answerer_for):  # noqa: F811
    from benchmark.errors import DiagQAError

    with LLMServer() as server:
        with pytest.raises(DiagQAError, match="context_window"):
            answerer_for(server, context_window="4k")
    assert prompt_tokens([{"role": "user", "content": "x" * 3000}]) == 1008


# -- the report's section on constructed samples ---------------------------------------------------

def _row(answerer, selector, correct, faith=None, tokens=100, error=None, stage=None):
    r = dict.fromkeys(FRAME_COLUMNS)
    r.update(answerer=answerer, selector=selector, finder="oracle", source="d2", correct=correct,
             guess_class=None if correct is None else ("grounded" if correct else "misread"),
             faithfulness=faith, context_tokens=tokens, error=error, error_stage=stage)
    return r


class _A:
    def __init__(self, rows):
        self.samples = pd.DataFrame(rows, columns=list(FRAME_COLUMNS)).astype(object)


def test_report_section_numbers_and_plot_data():
    rows = [_row("solver", "oracle", True, 1.0, 20), _row("solver", "long16k-middle-oracle", True, 1.0, 16000),
            _row("solver", "long1k-middle-oracle", True, 1.0, 1000),
            _row("llm", "oracle", True, 1.0, 20), _row("llm", "oracle", False, 0.5, 20),
            _row("llm", "long1k-start-oracle", True, 1.0, 1000), _row("llm", "long1k-middle-oracle", False, 0.0, 1000),
            _row("llm", "long1k-end-oracle", True, 1.0, 1000),
            _row("llm", "long16k-middle-oracle", None, None, 16000, error=CONTEXT_TOO_LONG),
            _row("llm", "long16k-middle-oracle", None, None, None, stage="select"),   # a stage error: left out
            _row("llm", "khop2", False)]                                           # neither base nor padded
    table = long_context_table(frame_records(_A(rows).samples))
    llm = table[("llm", "oracle")]
    assert llm[BASE]["accuracy"] == 0.5 and llm[BASE]["faithfulness"] == 0.75
    assert llm[(1, "middle")]["accuracy"] == 0.0 and llm[(1, "start")]["grounded_accuracy"] == 1.0
    cell16 = llm[(16, "middle")]
    assert (cell16["n"], cell16["measured"], cell16["errors"], cell16["too_long"], cell16["accuracy"]) == (1, 0, 1, 1, None)
    assert cell16["tokens"] == 16000
    solver = table[("solver", "oracle")]
    assert {c: s["accuracy"] for c, s in solver.items()} == {BASE: 1.0, (16, "middle"): 1.0, (1, "middle"): 1.0}
    figs: dict[str, bytes] = {}
    sec = long_context_section(_A(rows), figs)
    assert sec.title == "Long-context faithfulness" and figs[LONG_CONTEXT_PLOT].startswith(b"\x89PNG")
    tables = [b for b in sec.blocks if hasattr(b, "rows")]
    llm_table = next(t for t in tables if t.caption.startswith("llm"))
    assert ["16k", "middle", "1", "16000", "–", "–", "–", "1", "1"] in llm_table.rows
    assert "1k -100.0 pts" in llm_table.note
    assert long_context_section(_A([_row("solver", "oracle", True)]), {}) is None   # no long variant: no section
    assert long_context_blocks({}) == ["No sample of this run uses a `long<n>k-<position>-<base>` selector."]


def test_default_report_has_the_section_and_the_solver_control_is_flat(tmp_path):
    variants = ("oracle+d2+oracle", "oracle+d2+long1k-start-oracle", "oracle+d2+long1k-middle-oracle",
                "oracle+d2+long1k-end-oracle", "oracle+d2+long2k-middle-oracle")
    result = run(tiny_spec(tmp_path, variants=variants, answerers=("solver", "keyword")), progress=False, quiet=True)
    md = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Long-context faithfulness" in md and "(plots/long_context.png)" in md
    assert (result.run_dir / "plots" / LONG_CONTEXT_PLOT).read_bytes().startswith(b"\x89PNG")
    assert "Long-context faithfulness" in (result.run_dir / "report.html").read_text(encoding="utf-8")
    recs = [json.loads(x) for x in (result.run_dir / "samples.jsonl").read_text().splitlines()]
    solver = long_context_table(recs)[("solver", "oracle")]
    assert len(solver) == 5 and len({s["accuracy"] for s in solver.values()}) == 1   # the control does not move
