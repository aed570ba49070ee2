"""Properties of the metrics over random graphs and subgraphs (hypothesis)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.metrics import guess_class, is_sufficient, overlap
from benchmark.questions import QUESTION_TYPES, Question
from benchmark.solver import propose_certificate

NODES = ["a", "b", "c", "d", "e"]
edges = st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.sampled_from(["->", "<-", "--"]),
                           st.sampled_from(["", "x"])), max_size=9)
subgraphs = st.builds(lambda ns, es: Subgraph.from_edges([Edge(s, d, lab) for s, d, lab in es], ns),
                      st.frozensets(st.sampled_from(NODES), max_size=3),
                      st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.sampled_from(["", "x"])), max_size=5))


def graph_of(es):
    return build_graph({"nodes": [{"id": n} for n in NODES],
                        "edges": [{"src": s, "dst": d, "arrow": a, "label": lab} for s, d, a, lab in es]})


undirected_subgraphs = st.builds(
    lambda ns, es: Subgraph.from_edges([Edge(s, d, lab, directed) for s, d, lab, directed in es], ns),
    st.frozensets(st.sampled_from(NODES), max_size=3),
    st.lists(st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.sampled_from(["", "x"]), st.booleans()),
             max_size=5))


@given(undirected_subgraphs, undirected_subgraphs, st.booleans())
def test_overlap_values_are_shares_and_f1_lies_between(r, g, with_label):
    o = overlap(r, g, with_label)
    for v in (o.srr, o.precision, o.node_srr, o.node_precision, o.f1):
        assert v is None or 0.0 <= v <= 1.0
    if o.precision is not None:
        assert min(o.srr, o.precision) - 1e-12 <= o.f1 <= max(o.srr, o.precision) + 1e-12
    if o.srr == 0.0 or r.normalized().is_empty():
        assert o.f1 == 0.0
    assert o.f1 is not None   # F1 is always measured: 0 when nothing (or nothing of G) was retrieved
    if g.edges:
        assert (o.precision is None) == (not r.edges)
    else:
        assert o.srr == o.node_srr and (o.precision is None) == r.normalized().is_empty()


#: renames the nodes so that their ids sort the other way round
REVERSED = {n: m for n, m in zip(NODES, reversed(NODES))}


def _renamed(sub):
    return Subgraph(frozenset(REVERSED[n] for n in sub.nodes),
                    frozenset(Edge(REVERSED[e.src], REVERSED[e.dst], e.label, e.directed) for e in sub.edges))


@given(undirected_subgraphs, undirected_subgraphs, st.booleans())
def test_overlap_does_not_depend_on_how_node_ids_sort(r, g, with_label):
    assert overlap(r, g, with_label) == overlap(_renamed(r), _renamed(g), with_label)


@given(subgraphs)
def test_a_subgraph_fully_recalls_and_is_precise_on_itself(g):
    o = overlap(g, g, with_label=True)
    assert o.srr == 1.0 and o.precision in (1.0, None)


@settings(max_examples=60, deadline=None)
@given(edges, st.sampled_from(sorted(QUESTION_TYPES)), st.lists(st.sampled_from(NODES), min_size=3, max_size=3))
def test_whole_diagram_and_proposed_certificate_are_sufficient(es, qtype, picks):
    g = graph_of(es)
    t = QUESTION_TYPES[qtype]
    args = {}
    for name, node in zip(t.args, picks):
        args[name] = "x" if name == "branch" else node
    answer, cert = propose_certificate(qtype, args, g)
    if answer is None:
        return
    q = Question("q", "d", "t", qtype, tuple(args.items()), answer, cert)
    assert is_sufficient(q, whole(g), g)
    assert is_sufficient(q, cert, g)
    assert guess_class(True, is_sufficient(q, Subgraph(), g)) in ("grounded", "lucky_guess")
