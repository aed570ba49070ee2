"""The offline reference answerers: solver (a perfect reader), keyword (bag of words), blind (priors)."""
import dataclasses

import pytest

from benchmark.answerers.blind import BlindAnswerer, names_in
from benchmark.answerers.keyword import KeywordAnswerer
from benchmark.answerers.solver import SolverAnswerer
from benchmark.context import make_context
from benchmark.dataset import load_dataset
from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.metrics import score_sample
from benchmark.metrics.sample import gold_subgraph
from benchmark.plugins import load_all
from benchmark.questions import Question
from benchmark.stages import ANSWERERS

# the cache bypasses auth
G = build_graph({
    "nodes": [{"id": "user", "label": "User"}, {"id": "auth", "label": "Auth Service"}, {"id": "cache", "label": "Cache"},
              {"id": "db", "label": "Orders DB"}, {"id": "a.db", "label": "Orders DB"}],
    "edges": [{"src": "user", "dst": "auth"}, {"src": "auth", "dst": "db", "label": "SQL"},
              {"src": "user", "dst": "cache"}, {"src": "cache", "dst": "db"}, {"src": "db", "dst": "a.db", "label": "replicates"}],
})
FULL = make_context("d", whole(G), G)


def question(qtype, text, answer=None, language="en", **args):
    """Questions built without gold answer and certificate: answerers must not need them."""
    return Question("q", "d", text, qtype, tuple(args.items()), answer, None, language=language)


@pytest.fixture(scope="module")
def dataset():
    ds, problems = load_dataset(strict=False)
    assert ds.questions, "the bundled dataset has questions"
    return ds


def test_answerers_are_registered_by_name():
    load_all()
    assert {"solver", "keyword", "blind", "llm"} <= set(ANSWERERS.names())
    assert ANSWERERS.create("solver").name == "solver" and ANSWERERS.create("blind").name == "blind"


def test_solver_reads_only_the_context():
    q = question("reachable_avoiding", "Can User reach Orders DB without Auth Service?", source="user", target="db", avoid="auth")
    assert SolverAnswerer().answer(q, FULL).raw == "yes"
    only_auth = make_context("d", Subgraph.from_edges([Edge("user", "auth"), Edge("auth", "db", "SQL")]), G)
    a = SolverAnswerer().answer(q, only_auth)
    assert a.raw == "no"                                  # the context hides the bypass
    assert set(a.evidence) <= {("User", "Auth Service"), ("Auth Service", "db")}


def test_solver_writes_labels_and_ids_only_where_labels_clash():
    q = question("successors", "What comes after Cache?", node="cache")
    assert SolverAnswerer().answer(q, FULL).raw == ["db"]                    # two nodes are labelled "Orders DB"
    small = make_context("d", Subgraph.from_edges([Edge("cache", "db")]), G)
    assert SolverAnswerer().answer(q, small).raw == ["Orders DB"]            # unambiguous in its context
    q = question("edge_label", "What is on the arrow from Auth Service to Orders DB?", source="auth", target="db")
    a = SolverAnswerer().answer(q, FULL)
    assert a.raw == "SQL" and a.evidence == (("Auth Service", "db"),)


def test_solver_says_when_the_context_does_not_determine_the_answer():
    q = question("path", "Which steps lead from User to Orders DB?", source="user", target="db")
    a = SolverAnswerer().answer(q, make_context("d", Subgraph(), G))
    assert a.raw is None and a.error is None and a.meta["abstained"] is True   # an abstention, not an error
    assert "does not determine" in a.explanation


def test_solver_answers_russian_yes_no():
    q = question("edge_exists", "Есть ли стрелка от User к Cache?", language="ru", source="user", target="cache")
    assert SolverAnswerer().answer(q, FULL).raw == "да"


def test_solver_is_a_perfect_reader_on_the_bundled_dataset(dataset):
    solver = SolverAnswerer()
    for d in dataset.diagrams.values():
        g = d.graph
        for q in d.questions:
            for sub in (whole(g), gold_subgraph(q, g)):
                ctx = make_context(d.id, sub, g)
                blindfolded = dataclasses.replace(q, answer=None, certificate=None)
                s = score_sample(q, g, sub, ctx, solver.answer(blindfolded, ctx))
                assert s["correct"] and s["guess_class"] == "grounded", (q.id, s["answer_reason"])
                assert s["faithfulness"] in (1.0, None), (q.id, s["claims"])


def test_keyword_is_blind_to_direction():
    q = question("count_out", "How many nodes come directly after Auth Service?", node="auth")
    a = KeywordAnswerer().answer(q, FULL)
    assert a.raw == 2                                    # counts User -> Auth Service too: wrong (1)
    assert a.evidence == (("Auth Service", "Orders DB"), ("Auth Service", "User"))   # cited the way the question reads
    s = score_sample(dataclasses.replace(q, answer=1, certificate=Subgraph()), G, whole(G), FULL, a)
    assert [c["verdict"] for c in s["claims"]] == ["supported", "fabricated"]
    q = question("predecessors", "Which nodes lead into Cache?", node="cache")
    assert KeywordAnswerer().answer(q, FULL).raw == ["Orders DB", "User"]


def test_keyword_negation_cue_and_empty_context():
    q = question("reachable_avoiding", "Can User reach Orders DB without Auth Service?", source="user", target="db", avoid="auth")
    assert KeywordAnswerer().answer(q, FULL).raw == "no"           # Auth Service is in the text: guessed in the way
    no_auth = make_context("d", Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")]), G)
    assert KeywordAnswerer().answer(q, no_auth).raw == "yes"
    empty = KeywordAnswerer().answer(question("reachable", "Can User reach Cache?", source="user", target="cache"),
                                     make_context("d", Subgraph(), G))
    assert empty.raw == "no" and empty.evidence == ()


def test_keyword_states_the_relations_it_assumes():
    q = question("reachable", "Can Auth Service reach Cache?", source="auth", target="cache")
    a = KeywordAnswerer().answer(q, FULL)
    s = score_sample(dataclasses.replace(q, answer=False, certificate=Subgraph()), G, whole(G), FULL, a)
    assert a.raw == "yes" and "Auth Service → Cache" in a.explanation
    assert s["claims_fabricated"] == 2 and s["faithfulness"] == 0.5 and s["guess_class"] == "misread"


def test_blind_priors():
    b = BlindAnswerer()
    assert b.answer(question("reachable", "Can User reach Orders DB?"), None).raw == "yes"
    assert b.answer(question("reachable", "Can User reach Orders DB while bypassing Auth Service?"), None).raw == "no"
    assert b.answer(question("reachable_avoiding", "Может ли User попасть в Orders DB минуя Auth Service?", language="ru"), None).raw == "нет"
    assert b.answer(question("count_in", "How many nodes lead into Cache?"), None).raw == 1
    assert b.answer(question("decision_outcome", "Where does Check go when Approved?"), None).raw == "Approved"
    assert b.answer(question("edge_label", "What is on the arrow from A to B?"), None).raw == "yes"
    assert b.answer(question("path", "Which steps lead from User to Orders DB?"), None).raw == ["User", "Orders DB"]


def test_blind_ignores_context_and_its_claims_are_never_supported():
    q = question("reachable_avoiding", "Can User reach Orders DB without passing Auth Service?", answer=True,
                 source="user", target="db", avoid="auth")
    a, again = BlindAnswerer().answer(q, None), BlindAnswerer().answer(q, FULL)
    assert a == dataclasses.replace(again, meta=a.meta)
    q = dataclasses.replace(q, certificate=Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")]))
    s = score_sample(q, G, Subgraph(), make_context("d", Subgraph(), G), a)
    assert s["correct"] is False and s["guess_class"] == "retrieval_miss"
    # "User → Auth Service → Orders DB": both hold in the diagram, neither was given
    assert (s["n_claims"], s["claims_unsupported"], s["faithfulness"]) == (2, 2, 0.0)
    q = question("reachable_avoiding", "Can User reach Orders DB without passing the Firewall?", source="user",
                 target="db", avoid="auth")
    s = score_sample(dataclasses.replace(q, answer=True, certificate=Subgraph()), G, whole(G), FULL,
                     BlindAnswerer().answer(q, FULL))
    assert (s["n_claims"], s["claims_fabricated"], s["faithfulness"]) == (2, 2, 0.0)   # no Firewall in the diagram


def test_blind_reads_names_from_the_text_only():
    assert names_in("Can the User reach «Orders DB»?") == ["Orders DB"]
    assert names_in("Is there an arrow from API Gateway to Billing?") == ["API Gateway", "Billing"]


def test_reference_answerers_are_deterministic(dataset):
    d = sorted(dataset.diagrams.values(), key=lambda d: d.id)[0]
    g = d.graph
    ctx = make_context(d.id, whole(g), g)
    for answerer in (SolverAnswerer(), KeywordAnswerer(), BlindAnswerer()):
        first = [answerer.answer(q, ctx).to_json() for q in d.questions]
        # the gold answer and certificate make no difference to what an answerer says
        again = [answerer.answer(dataclasses.replace(q, answer="nonsense", certificate=Subgraph()), ctx).to_json()
                 for q in d.questions]
        strip = lambda xs: [{k: v for k, v in x.items() if k != "meta"} for x in xs]  # noqa: E731
        assert strip(first) == strip(again)


def test_guessers_score_below_the_reader_on_counter_prior_questions(dataset):
    """Counter-prior questions defeat priors: the blind floor stays under the reader there."""
    correct = {"solver": 0, "keyword": 0, "blind": 0}
    n = 0
    for d in dataset.diagrams.values():
        g = d.graph
        for q in (q for q in d.questions if q.counter_prior):
            n += 1
            ctx = make_context(d.id, whole(g), g)
            for answerer in (SolverAnswerer(), KeywordAnswerer(), BlindAnswerer()):
                correct[answerer.name] += score_sample(q, g, whole(g), ctx, answerer.answer(q, ctx))["correct"]
    assert n > 0 and correct["solver"] == n
    assert correct["blind"] < n / 2 and correct["keyword"] < n


@pytest.mark.parametrize("name", ["solver", "keyword", "blind", "cache", "llm"])
def test_doctests_of_answerer_modules(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"benchmark.answerers.{name}"))
    assert result.attempted > 0 and result.failed == 0


def test_solver_never_misreads_a_sufficient_context(dataset):
    """Sufficient context => the perfect reader is right: the solver and the sufficiency metric agree."""
    import random

    rng = random.Random(0)
    solver = SolverAnswerer()
    classes = set()
    for d in sorted(dataset.diagrams.values(), key=lambda d: d.id):
        g = d.graph
        edges = sorted(whole(g).edges)
        for q in d.questions:
            for share in (0.5, 0.8):
                sub = Subgraph.from_edges([e for e in edges if rng.random() < share])
                ctx = make_context(d.id, sub, g)
                s = score_sample(q, g, sub, ctx, solver.answer(q, ctx))
                assert s["guess_class"] != "misread", (q.id, s["answer_reason"])
                assert s["faithfulness"] in (1.0, None)
                classes.add(s["guess_class"])
    assert {"grounded", "lucky_guess", "retrieval_miss"} <= classes
