"""Sufficiency, guess classes, aggregation and the flat per-sample score dict."""
import json
import math

import pytest

from benchmark.answers import Answer
from benchmark.context import make_context
from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.metrics import (accuracy_inflation, bootstrap_ci, guess_class, guess_rate, is_sufficient, mean,
                               score_sample)
from benchmark.questions import Question

# the cache bypasses auth: User -> Cache -> DB as well as User -> Auth -> DB
G = build_graph({
    "nodes": [{"id": "user", "label": "User"}, {"id": "auth", "label": "Auth"}, {"id": "cache", "label": "Cache"},
              {"id": "db", "label": "DB"}, {"id": "log", "label": "Log"}],
    "edges": [{"src": "user", "dst": "auth"}, {"src": "auth", "dst": "db", "label": "SQL"},
              {"src": "user", "dst": "cache"}, {"src": "cache", "dst": "db"}, {"src": "db", "dst": "log", "arrow": "--"}],
})


def question(qtype, answer, cert, **args):
    return Question("q1", "d1", "text", qtype, tuple(args.items()), answer, cert)


BYPASS = question("reachable_avoiding", True, Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")]),
                  source="user", target="db", avoid="auth")


def test_positive_question_needs_a_witness_path_not_the_annotated_one():
    assert is_sufficient(BYPASS, Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")]), G)
    assert not is_sufficient(BYPASS, Subgraph.from_edges([Edge("user", "auth"), Edge("auth", "db", "SQL")]), G)
    assert not is_sufficient(BYPASS, Subgraph(frozenset({"user", "cache", "db"})), G)


def test_negative_question_needs_the_closed_set():
    q = question("reachable", False, Subgraph(), source="log", target="user")
    closed = Subgraph.from_edges([Edge("db", "log", directed=False)])
    # log's closure: log -- db, db -> log; nothing reaches user
    assert is_sufficient(q, closed, G)
    assert not is_sufficient(q, Subgraph(frozenset({"log", "user"})), G)   # solver says no, but not proven


def test_a_directed_context_edge_along_an_undirected_diagram_edge_proves_it():
    q = question("edge_exists", True, Subgraph(), source="log", target="db")
    assert is_sufficient(q, Subgraph.from_edges([Edge("log", "db")]), G)


def test_guess_classes_and_rates():
    assert guess_class(True, False) == "lucky_guess" and guess_class(False, True) == "misread"
    classes = ["grounded", "lucky_guess", "retrieval_miss", "misread", None]
    assert guess_rate(classes) == 0.5
    assert accuracy_inflation(classes) == pytest.approx(0.25)
    assert guess_rate([None]) is None and accuracy_inflation([None]) is None


def test_bootstrap_is_seeded_and_counts_missing():
    values = [1, 0, 1, 1, 0, None, 1, None, 0, 1]
    a, b = bootstrap_ci(values, seed=7), bootstrap_ci(values, seed=7)
    assert a == b and a.n == 8 and a.missing == 2
    low, high = a
    assert low < 5 / 8 < high and 0.0 <= low and high <= 1.0
    assert bootstrap_ci([1, 1, 1], seed=1) == (1.0, 1.0)
    assert mean([None, None]).value is None and mean([None, None]).missing == 2


def test_score_sample_is_flat_json_ready_and_complete():
    r = Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db"), Edge("user", "auth")])
    ctx = make_context("d1", r, G)
    ans = Answer("solver", "Yes", evidence=(("User", "Cache"), ("Cache", "DB")), explanation="User → Cache → DB")
    s = score_sample(BYPASS, G, r, ctx, ans)
    json.dumps(s)  # JSON-ready
    assert all(not isinstance(v, dict) for v in s.values())
    assert s["srr"] == 1.0 and s["precision"] == pytest.approx(2 / 3) and s["f1"] == pytest.approx(0.8)
    assert s["node_srr"] == 1.0 and s["node_precision"] == pytest.approx(3 / 4)
    assert s["abstained"] is False and s["error"] is None
    assert s["sufficient"] is True and s["correct"] is True and s["guess_class"] == "grounded"
    assert s["answer_value"] is True and s["answer_reason"] is None
    assert s["faithfulness"] == 1.0 and s["n_claims"] == 4 and s["claims_supported"] == 4
    assert not any(isinstance(v, float) and math.isnan(v) for v in s.values())


def test_lucky_guess_from_an_empty_context():
    ctx = make_context("d1", Subgraph(), G)
    blind = Answer("blind", "yes", explanation="User → Firewall → DB")
    s = score_sample(BYPASS, G, Subgraph(), ctx, blind)
    assert s["correct"] and not s["sufficient"] and s["guess_class"] == "lucky_guess"
    assert s["precision"] is None and s["precision_reason"] == "empty context"
    assert s["faithfulness"] == 0.0 and s["claims_fabricated"] == 2


def test_error_answer_is_unmeasured_with_its_kind_never_wrong():
    ctx = make_context("d1", whole(G), G)
    s = score_sample(BYPASS, G, whole(G), ctx, Answer("llm", None, error="timeout after 3 attempts"))
    assert s["correct"] is None and s["guess_class"] == "error" and s["error"] == "timeout"
    assert "timeout" in s["answer_reason"] and s["abstained"] is False
    assert s["faithfulness"] is None and s["faithfulness_reason"] and s["n_claims"] == 0


def test_abstention_is_its_own_outcome():
    full, empty = make_context("d1", whole(G), G), make_context("d1", Subgraph(), G)
    said = Answer("llm", "The context does not determine the answer.")
    on_empty = score_sample(BYPASS, G, Subgraph(), empty, said)
    on_full = score_sample(BYPASS, G, whole(G), full, said)
    assert on_empty["abstained"] and on_empty["correct"] is False and on_empty["guess_class"] == "abstained_appropriate"
    assert on_full["abstained"] and on_full["guess_class"] == "abstained_miss"
    flagged = score_sample(BYPASS, G, Subgraph(), empty, Answer("solver", None, meta={"abstained": True}))
    assert flagged["guess_class"] == "abstained_appropriate" and flagged["error"] is None
    # runs written before abstentions were flagged: the reference answerers' messages
    old = score_sample(BYPASS, G, Subgraph(), empty, Answer("keyword", None, error="no name in the context to answer with"))
    assert old["abstained"] and old["correct"] is False and old["error"] is None


def test_blind_receives_nothing_and_is_never_grounded():
    from benchmark.answerers.blind import BlindAnswerer

    q = question("reachable", True, Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")]),
                 source="user", target="db")
    ans = BlindAnswerer().answer(q, None)
    s = score_sample(q, G, whole(G), None, ans)   # whatever was selected, nothing reached it
    assert s["correct"] and s["sufficient"] is False and s["guess_class"] == "lucky_guess"
    assert s["srr"] == 0.0 and s["f1"] == 0.0


def test_sufficiency_is_judged_as_given_and_an_extraction_error_is_not_a_misread():
    # the diagram's edge carries a label the question turns on; the extracted context lost it
    g = build_graph({"edges": [{"src": "gate", "dst": "pay", "label": "yes"}, {"src": "gate", "dst": "stop", "label": "no"}]})
    q = question("decision_outcome", "pay", Subgraph.from_edges([Edge("gate", "pay", "yes")]), node="gate", branch="yes")
    extracted = Subgraph.from_edges([Edge("gate", "pay"), Edge("gate", "stop", "no")])
    ctx = make_context("d1", extracted, g)
    s = score_sample(q, g, extracted, ctx, Answer("solver", None, meta={"abstained": True}))
    assert s["sufficient"] is False and s["sufficient_if_aligned"] is True
    wrong = score_sample(q, g, extracted, ctx, Answer("llm", "stop"))
    assert wrong["guess_class"] == "extraction_error"
    assert not is_sufficient(q, extracted, g)


def test_labels_count_only_for_questions_that_depend_on_them():
    g = build_graph({"edges": [{"src": "a", "dst": "b", "label": "errors > 1%"}]})
    q = question("successors", frozenset({"b"}), Subgraph.from_edges([Edge("a", "b", "errors > 1%")]), node="a")
    ctx_sub = Subgraph.from_edges([Edge("a", "b", "errors")])
    s = score_sample(q, g, ctx_sub, make_context("d1", ctx_sub, g), Answer("solver", ["b"]))
    assert s["sufficient"] and s["srr"] == 1.0 and s["guess_class"] == "grounded"


@pytest.mark.parametrize("src,dst", [("a", "b"), ("b", "a")])
def test_undirected_context_edges_are_judged_alike_whatever_the_ids_sort(src, dst):
    g = build_graph({"edges": [{"src": src, "dst": dst}]})
    q = question("edge_exists", True, Subgraph.from_edges([Edge(src, dst)]), source=src, target=dst)
    ctx_sub = Subgraph.from_edges([Edge(src, dst, directed=False)])
    m = score_sample(q, g, ctx_sub, make_context("d1", ctx_sub, g), Answer("solver", "yes"))
    assert (m["srr"], m["sufficient"]) == (1.0, True)


def test_rescoring_from_stored_json_gives_the_same_metrics():
    r = Subgraph.from_edges([Edge("user", "auth"), Edge("auth", "db", "SQL")])
    ctx = make_context("d1", r, G)
    ans = Answer("keyword", "no", evidence=(("User", "Auth"),), explanation="Auth → DB")
    first = score_sample(BYPASS, G, r, ctx, ans)
    again = score_sample(BYPASS, G, r, ctx, Answer.from_json(json.loads(json.dumps(ans.to_json()))))
    assert first == again and first["guess_class"] == "retrieval_miss"
    assert first["srr"] == 0.0 and first["node_srr"] == pytest.approx(2 / 3)


def test_an_edge_of_the_diagram_is_kept_as_it_is_beside_an_undirected_twin():
    g = build_graph({"nodes": [{"id": n} for n in "acd"],
                     "edges": [{"src": "c", "dst": "d", "arrow": "--"}, {"src": "d", "dst": "c"}]})
    q = question("common_downstream", False, Subgraph(), first="a", second="c", target="a")
    assert is_sufficient(q, whole(g), g)
