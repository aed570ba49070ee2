"""The question kinds over several decisions, every path, the whole graph, containers and absent names:
solver answers and certificates on tiny graphs, the validator's verdicts, answerers and scoring."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.answerers.blind import BlindAnswerer
from benchmark.answerers.keyword import KeywordAnswerer
from benchmark.answerers.llm import answer_schema, build_messages, parse_reply
from benchmark.answerers.solver import SolverAnswerer
from benchmark.answers import Answer
from benchmark.context import make_context
from benchmark.dataset import Diagram, load_annotation_file, load_dataset
from benchmark.graph import Edge, Subgraph, build_graph, restrict, whole
from benchmark.metrics.sample import score_sample
from benchmark.questions import Question
from benchmark.solver import droppable, propose_certificate, proves, solve
from benchmark.validate import NOT_CLOSED, NOT_PROVING, validate_question


def graph(*edges, nodes=()):
    """``(src, dst[, label])`` edges; ``nodes`` as ``(id, parent)`` or ids."""
    return build_graph({"nodes": [{"id": n, "parent": None} if isinstance(n, str) else
                                  {"id": n[0], "parent": n[1], "label": n[2] if len(n) > 2 else None} for n in nodes],
                        "edges": [{"src": e[0], "dst": e[1], "label": e[2] if len(e) > 2 else ""} for e in edges]})


@pytest.fixture
def refund():
    """request -> receipt?; yes -> amount?, no -> reject; amount? small -> issue, large -> manager;
    manager approved -> issue, rejected -> reject; issue -> notify; reject -> notify; notify -> closed;
    issue -> ledger (a fork, no labels)."""
    return graph(("request", "receipt"), ("receipt", "amount", "yes"), ("receipt", "reject", "no"),
                 ("amount", "issue", "small"), ("amount", "manager", "large"), ("manager", "issue", "approved"),
                 ("manager", "reject", "rejected"), ("issue", "notify"), ("issue", "ledger"), ("reject", "notify"),
                 ("notify", "closed"))


def E(*pairs):
    return frozenset(Edge(*p) for p in pairs)


# ---------------------------------------------------------------- scenario

def test_scenario_follows_the_branches_in_order(refund):
    args = {"start": "request", "branches": "yes; large; rejected"}
    assert solve("scenario", args, refund) == "closed"
    # the walk stops at a node with several ways out once the branches are used up (here a fork)
    assert solve("scenario", {"start": "request", "branches": "yes; small"}, refund) == "issue"
    assert solve("scenario", {"start": "request", "branches": "yes"}, refund) == "amount"
    # a label that is not there, or a branch left over at an end, leaves it undetermined
    assert solve("scenario", {"start": "request", "branches": "yes; medium"}, refund) is None
    assert solve("scenario", {"start": "request", "branches": "no; again"}, refund) is None


def test_scenario_loop_is_undetermined():
    g = graph(("a", "b"), ("b", "a"))
    assert solve("scenario", {"start": "a", "branches": "x"}, g) is None


def test_scenario_certificate_is_every_way_out_of_the_walked_nodes(refund):
    args = {"start": "request", "branches": "yes; large; rejected"}
    answer, cert = propose_certificate("scenario", args, refund)
    assert answer == "closed"
    assert {(e.src, e.dst) for e in cert.edges} == {
        ("request", "receipt"), ("receipt", "amount"), ("receipt", "reject"), ("amount", "issue"),
        ("amount", "manager"), ("manager", "issue"), ("manager", "reject"), ("reject", "notify"), ("notify", "closed")}
    assert droppable("scenario", args, answer, cert, refund) == []
    # without the branch not taken, "large" would look like the only way on: not a proof
    smaller = Subgraph(cert.nodes, frozenset(e for e in cert.edges if (e.src, e.dst) != ("amount", "issue")))
    assert not proves("scenario", args, answer, smaller, refund)
    # the walked path alone does not prove it either (the closed set is missing)
    path = E(("request", "receipt", ""), ("receipt", "amount", "yes"), ("amount", "manager", "large"),
             ("manager", "reject", "rejected"), ("reject", "notify", ""), ("notify", "closed", ""))
    assert not proves("scenario", args, answer, Subgraph.from_edges(path), refund)


def test_scenario_labels_count_in_the_certificate(refund):
    args = {"start": "request", "branches": "yes; large; rejected"}
    answer, cert = propose_certificate("scenario", args, refund)
    relabelled = frozenset(Edge(e.src, e.dst, "approved" if e.label == "rejected" else
                                "rejected" if e.label == "approved" else e.label) for e in cert.edges)
    assert not proves("scenario", args, answer, Subgraph(cert.nodes, relabelled), refund)


# ---------------------------------------------------------------- necessary

def test_necessary_steps_and_their_certificate(refund):
    args = {"source": "request", "target": "closed"}
    assert solve("necessary", args, refund) == frozenset({"receipt", "notify"})
    answer, cert = propose_certificate("necessary", args, refund)
    assert droppable("necessary", args, answer, cert, refund) == []
    # one witness path does not show that the other steps are avoidable: it makes every step necessary
    path = Subgraph.from_edges(E(("request", "receipt"), ("receipt", "reject", "no"), ("reject", "notify"),
                                 ("notify", "closed")))
    assert solve("necessary", args, restrict(refund, path)) != answer and not proves("necessary", args, answer, path, refund)


def test_necessary_needs_the_closed_set_of_each_step():
    # a -> b -> d; a -> c; c -> x (x goes nowhere): b is necessary, and the proof must show c's dead end
    g = graph(("a", "b"), ("b", "d"), ("a", "c"), ("c", "x"))
    args = {"source": "a", "target": "d"}
    assert solve("necessary", args, g) == frozenset({"b"})
    path_only = Subgraph.from_edges(E(("a", "b"), ("b", "d")))
    assert solve("necessary", args, restrict(g, path_only)) == frozenset({"b"})     # the right set ...
    assert not proves("necessary", args, frozenset({"b"}), path_only, g)  # ... but not proven: c may lead on
    answer, cert = propose_certificate("necessary", args, g)
    assert {(e.src, e.dst) for e in cert.edges} == {("a", "b"), ("b", "d"), ("a", "c"), ("c", "x")}


def test_necessary_empty_when_two_routes_and_none_without_a_route(refund):
    args = {"source": "receipt", "target": "notify"}
    answer, cert = propose_certificate("necessary", args, refund)
    assert answer == frozenset() and droppable("necessary", args, answer, cert, refund) == []
    pairs = {(e.src, e.dst) for e in cert.edges}   # both routes out of Receipt valid?, down to Notify customer
    assert {("receipt", "reject"), ("reject", "notify"), ("receipt", "amount"), ("issue", "notify")} <= pairs
    one_way = Subgraph.from_edges(E(("receipt", "reject", "no"), ("reject", "notify")))
    assert not proves("necessary", args, frozenset(), one_way, refund)   # it shows Reject refund on every path
    assert solve("necessary", {"source": "closed", "target": "request"}, refund) is None
    assert solve("necessary", {"source": "request", "target": "request"}, refund) is None


# ---------------------------------------------------------------- graph_count

def test_graph_counts(refund):
    g = graph(*[(e.src, e.dst, e.label) for e in whole(refund).edges], nodes=["legend"])
    assert solve("graph_count", {"what": "end_states"}, g) == 2        # closed, ledger; not the free legend
    assert solve("graph_count", {"what": "decisions"}, g) == 3         # receipt, amount, manager; not the fork


def test_graph_count_certificates_are_universal(refund):
    for what, n in (("end_states", 2), ("decisions", 3)):
        args = {"what": what}
        answer, cert = propose_certificate("graph_count", args, refund)
        assert answer == n and cert.all_nodes == frozenset(refund.nodes)
        assert droppable("graph_count", args, answer, cert, refund) == []
    # every end state proven but one node left out: a reader cannot know it is no end state
    answer, cert = propose_certificate("graph_count", {"what": "end_states"}, refund)
    missing = Subgraph(cert.nodes - {"request"}, frozenset(e for e in cert.edges if "request" not in (e.src, e.dst)))
    assert solve("graph_count", {"what": "end_states"}, restrict(refund, missing)) == 2
    assert not proves("graph_count", {"what": "end_states"}, 2, missing, refund)


def test_graph_count_decisions_need_every_labelled_arrow_of_the_others():
    g = graph(("d", "x", "yes"), ("d", "y", "no"), ("s", "x", "only"))
    answer, cert = propose_certificate("graph_count", {"what": "decisions"}, g)
    assert answer == 1 and Edge("s", "x", "only") in cert.edges
    assert not proves("graph_count", {"what": "decisions"}, 1,
                      Subgraph(cert.nodes, cert.edges - {Edge("s", "x", "only")}), g)


# ---------------------------------------------------------------- inside

@pytest.fixture
def nested():
    return graph(("lb", "vpc.sub.app"), nodes=["vpc", ("vpc.sub", "vpc"), ("vpc.sub.app", "vpc.sub"), "lb"])


def test_inside_any_depth(nested):
    assert solve("inside", {"container": "vpc", "node": "vpc.sub.app"}, nested) is True
    assert solve("inside", {"container": "vpc.sub", "node": "vpc.sub.app"}, nested) is True
    assert solve("inside", {"container": "vpc", "node": "lb"}, nested) is False
    assert solve("inside", {"container": "vpc.sub", "node": "vpc"}, nested) is False


def test_inside_certificates(nested):
    args = {"container": "vpc", "node": "vpc.sub.app"}
    answer, cert = propose_certificate("inside", args, nested)
    assert answer is True and cert == Subgraph(frozenset({"vpc", "vpc.sub", "vpc.sub.app"}))
    # the middle container left out: the chain is broken and the answer undetermined
    assert solve("inside", args, restrict(nested, Subgraph(frozenset({"vpc", "vpc.sub.app"})))) is None
    assert not proves("inside", args, True, Subgraph(frozenset({"vpc", "vpc.sub.app"})), nested)
    no = {"container": "lb", "node": "vpc.sub.app"}
    answer, cert = propose_certificate("inside", no, nested)
    assert answer is False and cert == Subgraph(frozenset({"vpc", "vpc.sub", "vpc.sub.app"}))
    assert not proves("inside", no, False, Subgraph(frozenset({"vpc.sub.app"})), nested)


def test_inside_shows_in_the_context_text(nested):
    ctx = make_context("d", Subgraph(frozenset({"vpc", "vpc.sub", "vpc.sub.app"})), nested)
    assert "app is inside sub" in ctx.text.splitlines() and "sub is inside vpc" in ctx.text.splitlines()


# ---------------------------------------------------------------- absent

def test_absent_abstains_only_when_nothing_is_named_so(refund):
    assert solve("absent", {"entity": "Fraud check", "form": "bool"}, refund) == "abstain"
    assert solve("absent", {"entity": "the manager", "form": "node"}, refund) == "manager"
    answer, cert = propose_certificate("absent", {"entity": "Fraud check", "form": "bool"}, refund)
    assert cert == Subgraph(frozenset(refund.nodes))
    # a part of the diagram never shows that something is absent from all of it
    assert not proves("absent", {"entity": "Fraud check", "form": "bool"}, "abstain",
                      Subgraph(frozenset({"request", "receipt"})), refund)


# ---------------------------------------------------------------- validator

def diagram_of(g) -> Diagram:
    d = Diagram(id="d", d2_path=Path("d.d2"), png_path=Path("d.png"))
    d.__dict__["graph"] = g
    return d


def question(qtype, args, answer, cert, qid="d-q1", text="?"):
    return Question(qid, "d", text, qtype, tuple(args.items()), answer, cert, file="d.yaml", line=3)


@pytest.mark.parametrize("qtype, args", [
    ("scenario", {"start": "request", "branches": "yes; large; rejected"}),
    ("necessary", {"source": "request", "target": "closed"}),
    ("graph_count", {"what": "decisions"}),
    ("absent", {"entity": "Fraud check", "form": "int"}),
])
def test_validator_accepts_proposed_and_rejects_wrong_gold_or_certificate(refund, qtype, args):
    d = diagram_of(refund)
    answer, cert = propose_certificate(qtype, args, refund)
    assert validate_question(question(qtype, args, answer, cert), d) == []
    wrong = {"scenario": "issue", "necessary": frozenset({"receipt"}), "graph_count": 2, "absent": "abstain"}[qtype]
    if qtype != "absent":
        problems = validate_question(question(qtype, args, wrong, cert), d)
        assert len(problems) == 1 and "the solver computes" in str(problems[0]) and problems[0].line == 3
    dropped = Subgraph(cert.nodes - {"closed"}, frozenset(e for e in cert.edges if "closed" not in (e.src, e.dst)))
    problems = validate_question(question(qtype, args, answer, dropped), d)
    assert len(problems) == 1 and (NOT_CLOSED in str(problems[0]) or NOT_PROVING in str(problems[0]))
    bigger = cert.union(Subgraph.from_edges(E(("request", "receipt"), ("issue", "ledger"))))
    if bigger != cert:
        problems = validate_question(question(qtype, args, answer, bigger), d)
        assert len(problems) == 1 and "not minimal" in str(problems[0])


def test_validator_rejects_an_absent_question_about_a_node_that_is_there(refund):
    args = {"entity": "Manager", "form": "bool"}
    problems = validate_question(question("absent", args, "abstain", Subgraph(frozenset(refund.nodes))), diagram_of(refund))
    assert len(problems) == 1 and "'manager'" in str(problems[0])


def test_loader_reads_branch_lists_and_refuses_bad_args(tmp_path):
    base = {"diagram": "d", "title": "t", "domain": "business-process", "language": "en", "questions": [
        {"id": "d-q1", "text": "Where does it end?", "type": "scenario",
         "args": {"start": "request", "branches": ["yes", "large"]}, "answer": "manager",
         "certificate": {"nodes": [], "edges": []}, "counter_prior": False, "rationale": ""},
        {"id": "d-q2", "text": "How many?", "type": "graph_count", "args": {"what": "loops"}, "answer": 1,
         "certificate": {"nodes": [], "edges": []}, "counter_prior": False, "rationale": ""},
        {"id": "d-q3", "text": "Is X there?", "type": "absent", "args": {"entity": "X", "form": "maybe"},
         "answer": "abstain", "certificate": {"nodes": [], "edges": []}, "counter_prior": False, "rationale": ""},
        {"id": "d-q4", "text": "Is X there?", "type": "absent", "args": {"entity": "X", "form": "bool"},
         "answer": "no", "certificate": {"nodes": [], "edges": []}, "counter_prior": False, "rationale": ""},
    ]}
    path = tmp_path / "d.yaml"
    path.write_text(json.dumps(base), encoding="utf-8")
    d, errors = load_annotation_file(path, tmp_path)
    assert [q.id for q in d.questions] == ["d-q1"] and d.questions[0].arg["branches"] == "yes; large"
    assert [e.question for e in errors] == ["d-q2", "d-q3", "d-q4"]
    assert "what must be one of end_states, decisions" in str(errors[0])
    assert "form must be one of" in str(errors[1]) and "abstain" in str(errors[2])


# ---------------------------------------------------------------- answerers and scoring

def absent_q(form="bool"):
    return question("absent", {"entity": "Fraud check", "form": form}, "abstain", Subgraph(),
                    text="Does Fraud check come before Manager approval?")


def test_abstaining_on_an_absent_question_is_correct_and_answering_is_wrong(refund):
    q = absent_q()
    full = make_context("d", Subgraph(frozenset(refund.nodes)), refund)
    part = make_context("d", Subgraph(frozenset({"request", "receipt"})), refund)
    solver = SolverAnswerer()
    a = solver.answer(q, full)
    assert a.meta.get("abstained") and a.raw is None
    s = score_sample(q, refund, full.subgraph, full, a)
    assert s["correct"] is True and s["abstained"] is True and s["sufficient"] is True and s["guess_class"] == "grounded"
    s = score_sample(q, refund, part.subgraph, part, solver.answer(q, part))   # right, but could not know
    assert s["correct"] is True and s["sufficient"] is False and s["guess_class"] == "lucky_guess"
    for raw in ("no", "yes", "Manager approval"):
        s = score_sample(q, refund, full.subgraph, full, Answer("llm", raw))
        assert s["correct"] is False and s["abstained"] is False and s["guess_class"] == "misread"
    s = score_sample(q, refund, full.subgraph, full, Answer("llm", "cannot tell"))
    assert s["correct"] is True and s["abstained"] is True
    s = score_sample(q, refund, full.subgraph, full, Answer("llm", None, error="timeout after 3 attempt(s)"))
    assert s["correct"] is None and s["guess_class"] == "error"


def test_abstaining_elsewhere_stays_not_correct(refund):
    q = question("scenario", {"start": "request", "branches": "no"}, "closed", Subgraph())
    ctx = make_context("d", whole(refund), refund)
    s = score_sample(q, refund, ctx.subgraph, ctx, Answer("llm", "cannot tell"))
    assert s["correct"] is False and s["abstained"] is True and s["guess_class"] == "abstained_miss"


def test_guessers_answer_the_form_an_absent_question_reads_as(refund):
    ctx = make_context("d", whole(refund), refund)
    for form, check in (("bool", lambda r: r in ("yes", "no")), ("int", lambda r: isinstance(r, int)),
                        ("nodes", lambda r: isinstance(r, list))):
        q = absent_q(form)
        for answerer in (KeywordAnswerer(), BlindAnswerer()):
            a = answerer.answer(q, ctx if answerer.name == "keyword" else None)
            assert check(a.raw), (answerer.name, form, a.raw)
            assert score_sample(q, refund, ctx.subgraph, ctx, a)["correct"] is False


def test_llm_prompt_reads_as_the_form_and_offers_abstention_to_every_question():
    absent = build_messages(absent_q("int"), "A -> B")
    count = build_messages(question("count_in", {"node": "a"}, 1, Subgraph(), text="How many?"), "A -> B")
    assert absent[0] == count[0] and 'answer "cannot tell"' in absent[0]["content"]
    assert absent[1]["content"].endswith("answer: an integer") and count[1]["content"].endswith("answer: an integer")
    schema = answer_schema("int")["properties"]["answer"]
    assert {"type": "integer"} in schema["anyOf"] and {"type": "string", "enum": ["cannot tell"]} in schema["anyOf"]
    assert parse_reply('{"answer": "cannot tell", "evidence": []}')[0] == "cannot tell"


def test_solver_answers_every_new_kind_on_its_gold_certificate():
    """The bundled questions of the new kinds: the solver answerer on the oracle context is right and grounded."""
    ds, _ = load_dataset()
    kinds = {"scenario", "necessary", "graph_count", "inside", "absent"}
    qs = [q for q in ds.questions if q.type in kinds]
    assert {q.type for q in qs} == kinds and all(sum(q.type == k for q in qs) >= 20 for k in kinds)
    solver = SolverAnswerer()
    for q in qs:
        g = ds.diagrams[q.diagram].graph
        ctx = make_context(q.diagram, q.certificate, g)
        s = score_sample(q, g, ctx.subgraph, ctx, solver.answer(q, ctx))
        assert s["correct"] is True and s["guess_class"] == "grounded", q.id


def test_new_types_walk_flow_edges_only():
    """An edge the graph marks as data (a feed, a read) is drawn but no step follows it."""
    g = graph(("a", "d"), ("d", "x", "yes"), ("d", "y", "no"), ("erp", "inv"))
    g.add_edge("y", "inv", label="", directed=True, kind="data")
    g.add_edge("inv", "x", label="stock", directed=True, kind="data")
    assert solve("scenario", {"start": "a", "branches": "no"}, g) == "y"            # y has no flow way out
    assert solve("necessary", {"source": "a", "target": "x"}, g) == frozenset({"d"})
    assert solve("necessary", {"source": "y", "target": "x"}, g) is None            # only through the data feed
    assert solve("graph_count", {"what": "end_states"}, g) == 3                     # x, y and inv
    answer, cert = propose_certificate("graph_count", {"what": "end_states"}, g)
    assert all((e.src, e.dst) not in {("y", "inv"), ("inv", "x")} for e in cert.edges)


def test_labelled_parallel_branches_are_no_decision():
    g = graph(("s", "pay", "invoice"), ("s", "recv", "delivery"), ("d", "x", "yes"), ("d", "y", "no"))
    assert solve("graph_count", {"what": "decisions"}, g) == 2
    for _, _, data in g.out_edges("s", data=True):
        data["parallel"] = True
    assert solve("graph_count", {"what": "decisions"}, g) == 1
    answer, cert = propose_certificate("graph_count", {"what": "decisions"}, g)
    assert answer == 1 and {(e.src, e.dst) for e in cert.edges} == {("d", "x"), ("d", "y")}


def test_propose_command_for_the_new_types(capsys):
    from benchmark.cli import main as cli_main

    assert cli_main(["propose", "biz_refund_a", "scenario", "start=customer", "branches=yes; no; rejected"]) == 0
    out = capsys.readouterr().out
    assert "answer: closed" in out and "[manager, reject, rejected]" in out
    assert cli_main(["propose", "biz_refund_a", "absent", "entity=Fraud screening", "form=bool"]) == 2
    assert "has a node named like 'Fraud screening': fraud" in capsys.readouterr().err


def test_long_context_pads_whole_diagram_questions_with_nothing_foreign():
    from benchmark.plugins import load_all
    from benchmark.stages import SELECTORS
    from retrievers.longctx import SEP

    load_all()
    ds, _ = load_dataset()
    sel = SELECTORS.create("long8k-middle-khop2")
    for qid in ("algo_retry_backoff-q13", "algo_retry_backoff-q12", "algo_retry_backoff-q15"):
        q = next(q for q in ds.questions if q.id == qid)
        d = ds.diagrams[q.diagram]
        foreign = [n for n in sel.select(q, d.graph, d).all_nodes if SEP in n]
        assert bool(foreign) == (q.type not in ("graph_count", "absent")), qid
