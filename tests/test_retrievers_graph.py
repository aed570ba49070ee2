"""Graph-walking selectors: ``none``, ``full``, ``oracle``, ``khop<k>``, ``path``; the registry names."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmark.dataset import Diagram
from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.plugins import load_all
from benchmark.questions import Question
from benchmark.registry import UnknownNameError
from benchmark.solver import propose_certificate, question_proves
from benchmark.stages import SELECTORS

ROOT = Path(__file__).resolve().parent.parent
load_all()  # every selector module registers itself

# a -> b -> c -> d -> e, with x -> b (an in-edge) and c -- y (undirected), z alone
CHAIN = build_graph({
    "nodes": [{"id": n, "label": f"Step {n.upper()}"} for n in "abcdexyz"],
    "edges": [{"src": "a", "dst": "b"}, {"src": "b", "dst": "c", "label": "ok"}, {"src": "c", "dst": "d"},
              {"src": "d", "dst": "e"}, {"src": "x", "dst": "b"}, {"src": "c", "dst": "y", "arrow": "--"}],
})
STUB = SimpleNamespace(id="chain", source="")


def question(text, qtype, args, g, qid="q1", diagram="chain", language="en"):
    answer, cert = propose_certificate(qtype, args, g)
    return Question(id=qid, diagram=diagram, text=text, type=qtype, args=tuple(args.items()), answer=answer,
                    certificate=cert, language=language)


def bundled(name):
    return Diagram(id=name, d2_path=ROOT / "diagrams" / f"{name}.d2", png_path=ROOT / "diagrams" / f"{name}.png")


@pytest.mark.parametrize("name, cls_name", [
    ("none", "none"), ("full", "full"), ("oracle", "oracle"), ("khop2", "khop2"), ("khop0", "khop0"),
    ("path", "path"), ("bm25-8", "bm25-8"), ("dense-8", "dense-8"), ("d2chunks-5", "d2chunks-5"),
    ("d2chunks-3-w6s3", "d2chunks-3-w6s3"),
])
def test_every_name_pattern_resolves(name, cls_name):
    assert SELECTORS.create(name).name == cls_name


@pytest.mark.parametrize("bad,example", [("khop", "khop1"), ("bm25", "bm25-8"), ("d2chunks", "d2chunks-5")])
def test_a_sized_selector_without_its_size_says_how_to_write_it(bad, example):
    with pytest.raises(UnknownNameError) as exc:
        SELECTORS.create(bad)
    assert f"selector {bad} needs a size, e.g. {example}" in str(exc.value)
    assert SELECTORS.create(example) is not None


@pytest.mark.parametrize("bad", ["bm25-", "dense8", "khop-2", "random"])
def test_unknown_names_list_the_known_ones(bad):
    with pytest.raises(UnknownNameError) as exc:
        SELECTORS.create(bad)
    msg = str(exc.value)
    assert f"unknown selector {bad!r}" in msg
    for known in ("bm25", "d2chunks", "dense", "full", "khop", "none", "oracle", "path"):
        assert known in msg


def test_none_and_full():
    q = question("Does Step A reach Step E?", "reachable", {"source": "a", "target": "e"}, CHAIN)
    assert SELECTORS.create("none").select(q, CHAIN, STUB) == Subgraph()
    assert SELECTORS.create("full").select(q, CHAIN, STUB) == whole(CHAIN)


def test_khop2_is_exactly_the_two_hop_neighbourhood():
    q = question("What comes after Step B?", "successors", {"node": "b"}, CHAIN)
    sub = SELECTORS.create("khop2").select(q, CHAIN, STUB)
    # b; one hop: a, c, x; two hops: d, y (via c) -- not e (three hops) nor z (unconnected)
    assert sub.all_nodes == {"a", "b", "c", "d", "x", "y"}
    assert sub.edges == {Edge("a", "b"), Edge("b", "c", "ok"), Edge("c", "d"), Edge("x", "b"),
                         Edge("c", "y", directed=False)}
    assert question_proves(q, sub, CHAIN)
    one = SELECTORS.create("khop1").select(q, CHAIN, STUB)
    assert one.all_nodes == {"a", "b", "c", "x"}
    zero = SELECTORS.create("khop0").select(q, CHAIN, STUB)
    assert zero == Subgraph(frozenset({"b"}))


def test_khop_without_mentions_is_empty():
    q = question("What comes after the first box?", "successors", {"node": "b"}, CHAIN)
    assert SELECTORS.create("khop2").select(q, CHAIN, STUB) == Subgraph()


def test_path_finds_the_witness_path_both_directions():
    q = question("Can the flow get from Step E back to Step A?", "reachable", {"source": "e", "target": "a"}, CHAIN)
    sub = SELECTORS.create("path").select(q, CHAIN, STUB)
    # e cannot reach a, but a reaches e: that path is taken
    assert sub.edges == {Edge("a", "b"), Edge("b", "c", "ok"), Edge("c", "d"), Edge("d", "e")}
    q2 = question("Does Step X lead to Step D?", "reachable", {"source": "x", "target": "d"}, CHAIN)
    sub2 = SELECTORS.create("path").select(q2, CHAIN, STUB)
    assert sub2 == q2.certificate.normalized()
    assert question_proves(q2, sub2, CHAIN)


def test_path_keeps_unjoined_mentions_and_walks_undirected_edges():
    q = question("Is Step Z reachable from Step Y?", "reachable", {"source": "y", "target": "z"}, CHAIN)
    assert SELECTORS.create("path").select(q, CHAIN, STUB) == Subgraph(frozenset({"y", "z"}))
    q2 = question("Does Step Y reach Step D?", "reachable", {"source": "y", "target": "d"}, CHAIN)
    assert SELECTORS.create("path").select(q2, CHAIN, STUB).edges == {Edge("c", "y", directed=False), Edge("c", "d")}


def test_oracle_resolves_the_certificate_and_keeps_only_what_the_graph_has():
    q = question("Does Step A reach Step D?", "reachable", {"source": "a", "target": "d"}, CHAIN)
    sel = SELECTORS.create("oracle")
    assert sel.select(q, CHAIN, STUB) == q.certificate.normalized()
    # an extracted graph that missed node c: only the parts present remain
    partial = CHAIN.copy()
    partial.remove_node("c")
    assert sel.select(q, partial, STUB) == Subgraph.from_edges([Edge("a", "b")], ["d"])
    # an annotated certificate written against an undirected edge's other end resolves to the graph's edge
    q3 = Question(id="q3", diagram="chain", text="", type="edge_exists", args=(("source", "y"), ("target", "c")),
                  answer=True, certificate=Subgraph.from_edges([Edge("y", "c")]))
    assert sel.select(q3, CHAIN, STUB).edges == {Edge("c", "y", directed=False)}


def test_bundled_diagram_khop_and_path():
    d = bundled("arch_auth_cache_a")
    g = d.graph
    q = question("Can a customer's request reach the Orders DB without passing through the Auth Service?",
                 "reachable_avoiding", {"source": "user", "target": "orders_db", "avoid": "auth"}, g,
                 diagram=d.id)
    sub = SELECTORS.create("path").select(q, g, d)
    # the cache bypass: Customer -> CDN Edge -> Read Cache -> Orders DB
    assert {Edge("user", "cdn", "HTTPS"), Edge("cdn", "cache", "GET /orders"), Edge("cache", "orders_db", "on miss")} <= sub.edges
    assert question_proves(q, sub, g)
    k1 = SELECTORS.create("khop1").select(q, g, d)
    assert {"user", "orders_db", "auth", "cdn", "cache", "gateway", "users_db", "backend.api",
            "backend.worker"} == k1.all_nodes


def test_bundled_russian_diagram_links_inflected_labels():
    d = bundled("fin_loan_approval_ru")
    g = d.graph
    q = question("Можно ли попасть от Кредитного скоринга к Выдаче средств?", "reachable",
                 {"source": "skoring", "target": "vydacha"}, g, diagram=d.id, language="ru")
    sub = SELECTORS.create("path").select(q, g, d)
    assert question_proves(q, sub, g)
    assert {"skoring", "vydacha"} <= sub.all_nodes


@pytest.mark.parametrize("module", ["retrievers.text", "retrievers.linking", "retrievers.cache", "retrievers.khop",
                                    "retrievers.path", "retrievers.bm25", "retrievers.d2chunks"])
def test_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0 and result.attempted > 0
