"""Claims read from answers, and faithfulness of those claims to the context."""
import pytest

from benchmark.answers import Answer, Claim
from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.metrics.claims import extract_claims
from benchmark.metrics.faithfulness import faithfulness

G = build_graph({
    "nodes": [{"id": "user", "label": "User"}, {"id": "auth", "label": "Auth Service"},
              {"id": "cache", "label": "Cache"}, {"id": "db", "label": "Orders DB"},
              {"id": "svc", "label": "Сервис заказов"}, {"id": "log", "label": "Журнал"}],
    "edges": [{"src": "user", "dst": "auth"}, {"src": "auth", "dst": "db"}, {"src": "user", "dst": "cache"},
              {"src": "cache", "dst": "db"}, {"src": "svc", "dst": "log"}, {"src": "db", "dst": "log", "arrow": "--"}],
})


def pairs(text, evidence=()):
    return [(c.src, c.dst) for c in extract_claims(Answer("t", "x", evidence=evidence, explanation=text), G)]


@pytest.mark.parametrize("text,expected", [
    ("User → Auth Service", [("User", "Auth Service")]),
    ("User -> Auth Service -> Orders DB.", [("User", "Auth Service"), ("Auth Service", "Orders DB")]),
    ("The User calls the Auth Service.", [("User", "Auth Service")]),
    ("Cache sends data to Orders DB", [("Cache", "Orders DB")]),
    ("Cache sends the cached orders to the Orders DB", [("Cache", "Orders DB")]),
    ("The flow goes from User to Cache.", [("User", "Cache")]),
    ("Orders DB <- Cache", [("Cache", "Orders DB")]),
    ("Сервис заказов → Журнал", [("Сервис заказов", "Журнал")]),
    ("Сервис заказов передаёт в Журнал данные.", [("Сервис заказов", "Журнал")]),
    ("User → Firewall → Orders DB", [("User", "Firewall"), ("Firewall", "Orders DB")]),
    ("There is no arrow here; it is secure.", []),
    ("it goes -> somewhere", []),
])
def test_relations_read_from_explanations(text, expected):
    assert pairs(text) == expected


def test_evidence_comes_first_and_repeats_are_dropped():
    claims = extract_claims(Answer("t", "yes", evidence=(("User", "Cache"), ("User", "Cache")),
                                   explanation="User -> Cache. User -> Cache."), G)
    assert [(c.kind, c.src, c.dst) for c in claims] == [("edge", "User", "Cache"), ("relation", "User", "Cache")]


def test_verdicts_supported_unsupported_fabricated():
    ctx = Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")])
    claims = [Claim("edge", "User", "Cache", ""),            # in the context
              Claim("edge", "cache", "orders db", ""),       # ids/labels in any case
              Claim("relation", "User", "Auth Service", ""),  # in the diagram, not in the context
              Claim("relation", "Orders DB", "Cache", ""),    # reversed: not in the diagram
              Claim("relation", "User", "Firewall", "")]      # unknown node
    f = faithfulness(claims, ctx, G)
    assert f.verdicts == ("supported", "supported", "unsupported", "fabricated", "fabricated")
    assert (f.supported, f.unsupported, f.fabricated, f.n_claims) == (2, 1, 2, 5)
    assert f.score == pytest.approx(0.4)


def test_undirected_edges_support_claims_either_way():
    ctx = Subgraph.from_edges([Edge("db", "log", directed=False)])
    f = faithfulness([Claim("relation", "Журнал", "Orders DB", ""), Claim("relation", "Orders DB", "Журнал", "")], ctx, G)
    assert f.verdicts == ("supported", "supported")


def test_no_claims_is_unmeasured_not_zero_or_one():
    f = faithfulness([], whole(G), G)
    assert f.score is None and f.n_claims == 0


def test_reader_and_guesser_separate():
    """A reader cites the context; a guesser states common-sense relations outside it."""
    ctx = Subgraph.from_edges([Edge("user", "cache"), Edge("cache", "db")])
    reader = Answer("r", "yes", evidence=(("User", "Cache"), ("Cache", "Orders DB")), explanation="User → Cache → Orders DB")
    guesser = Answer("g", "no", explanation="User → Auth Service → Orders DB; nothing skips the Firewall → Orders DB")
    assert faithfulness(extract_claims(reader, G), ctx, G).score == 1.0
    fg = faithfulness(extract_claims(guesser, G), ctx, G)
    assert fg.score == 0.0 and fg.unsupported == 2 and fg.fabricated == 1


def test_labels_holding_connectives_or_question_marks_are_not_split():
    g = build_graph({"nodes": [{"id": "h", "label": "Handle calls"}, {"id": "e", "label": "Range empty?"},
                               {"id": "m", "label": "Set high to mid minus 1"}, {"id": "c", "label": "Compute mid index"}],
                     "edges": [{"src": "m", "dst": "e"}, {"src": "e", "dst": "c"}, {"src": "h", "dst": "e"}]})
    got = extract_claims(Answer("t", "x", explanation="Set high to mid minus 1 → Range empty? → Compute mid index. "
                                                       "Handle calls → Range empty?"), g)
    assert [(c.src, c.dst) for c in got] == [("Set high to mid minus 1", "Range empty"),  # end punctuation dropped
                                             ("Range empty", "Compute mid index"), ("Handle calls", "Range empty")]
    assert faithfulness(got, whole(g), g).score == 1.0


def test_from_to_followed_by_a_chain():
    assert pairs("The request goes from User to Cache → Orders DB.") == [("User", "Cache"), ("Cache", "Orders DB")]


def test_pronouns_are_not_names():
    assert pairs("It calls Orders DB. This -> Cache. Then → Cache.") == []


def test_a_context_from_another_graph_source_is_read_through_its_own_labels():
    """An OCR context: one node aligned to its D2 id, one with an id of its own and a misread label."""
    from benchmark.context import make_context

    ocr = build_graph({"nodes": [{"id": "user", "label": "User"}, {"id": "ocr:7", "label": "Cach"}],
                       "edges": [{"src": "user", "dst": "ocr:7"}, {"src": "ocr:7", "dst": "user"}]})
    ctx = make_context("d", whole(ocr), ocr)
    claims = [Claim("edge", "User", "Cach", ""),       # as the context reads: supported
              Claim("edge", "Cach", "User", ""),       # in the context, wrong about the diagram: still supported
              Claim("edge", "User", "Auth Service", "")]  # in the diagram only: unsupported
    assert faithfulness(claims, ctx.subgraph, G, ctx.graph).verdicts == ("supported", "supported", "unsupported")
    assert faithfulness(claims, ctx.subgraph, G).verdicts[1] == "fabricated"   # without the context's labels


def test_a_cited_name_with_the_context_lines_edge_label_is_the_node():
    """An answerer copying "Auth Service [issue token]" from a context line cites Auth Service: the
    claim is supported, as evidence attribution counts it, not fabricated."""
    from benchmark.metrics.evidence import cite_edges

    ctx = Subgraph.from_edges([Edge("user", "auth")])
    claims = [Claim("edge", "User", "Auth Service [issue token]", "")]
    f = faithfulness(claims, ctx, G)
    assert (f.score, f.supported, f.fabricated) == (1.0, 1, 0)
    assert cite_edges([("User", "Auth Service [issue token]")], G).unmapped == 0
    # a name that is not a node stays fabricated with or without a suffix
    f = faithfulness([Claim("edge", "User", "Firewall [deny]", "")], ctx, G)
    assert (f.fabricated, f.supported) == (1, 0)
