"""Text-ranking selectors: ``bm25-<k>`` over edge texts and ``d2chunks-<k>`` over D2 source lines."""
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmark.dataset import Diagram
from benchmark.graph import Edge, Subgraph, build_graph, whole
from benchmark.questions import Question
from benchmark.solver import propose_certificate, question_proves
from benchmark.stages import SELECTORS
from retrievers.bm25 import BM25Selector
from retrievers.d2chunks import D2ChunksSelector, cut, match_line, snippet
from retrievers.text import words

ROOT = Path(__file__).resolve().parent.parent

SHOP = build_graph({
    "nodes": [{"id": "user", "label": "Customer"}, {"id": "gw", "label": "API Gateway"},
              {"id": "auth", "label": "Auth Service"}, {"id": "db", "label": "Users DB"},
              {"id": "pay", "label": "Payment Processor"}, {"id": "mail", "label": "Email Sender"},
              {"id": "audit", "label": "Audit Trail"}],
    "edges": [{"src": "user", "dst": "gw", "label": "HTTPS"}, {"src": "gw", "dst": "auth", "label": "verify token"},
              {"src": "auth", "dst": "db", "label": "lookup session"}, {"src": "gw", "dst": "pay", "label": "charge card"},
              {"src": "pay", "dst": "mail", "label": "send receipt"}],
})
STUB = SimpleNamespace(id="shop", source="")


def q(text, language="en"):
    return SimpleNamespace(text=text, language=language, type="edge_exists", args=())


def bundled(name):
    return Diagram(id=name, d2_path=ROOT / "diagrams" / f"{name}.d2", png_path=ROOT / "diagrams" / f"{name}.png")


def question(text, qtype, args, g, diagram, language="en"):
    answer, cert = propose_certificate(qtype, args, g)
    return Question(id="q", diagram=diagram, text=text, type=qtype, args=tuple(args.items()), answer=answer,
                    certificate=cert, language=language)


# -- bm25 -------------------------------------------------------------------------------------------

def test_bm25_ranks_the_edge_with_the_question_words_first():
    sel = BM25Selector(1)
    assert sel.select(q("Does the Auth Service look up sessions in the Users DB?"), SHOP, STUB).edges == {
        Edge("auth", "db", "lookup session")}
    assert sel.select(q("Who sends the receipt email?"), SHOP, STUB).edges == {Edge("pay", "mail", "send receipt")}


def test_bm25_top_k_only_documents_sharing_a_word_and_lone_nodes():
    sel = BM25Selector(8)
    sub = sel.select(q("Where does the payment go?"), SHOP, STUB)
    assert sub.edges == {Edge("gw", "pay", "charge card"), Edge("pay", "mail", "send receipt")}
    assert sel.select(q("Is there an audit trail?"), SHOP, STUB) == Subgraph(frozenset({"audit"}))
    assert sel.select(q("What about quantum flux?"), SHOP, STUB) == Subgraph()


def test_bm25_is_deterministic_and_breaks_ties_by_sorted_edge():
    g = build_graph({"nodes": [{"id": n, "label": f"Queue {n}"} for n in "cab"],
                     "edges": [{"src": "c", "dst": "a"}, {"src": "b", "dst": "a"}, {"src": "a", "dst": "c"}]})
    first = BM25Selector(1).select(q("Which queue?"), g, STUB)
    assert first.edges == {Edge("a", "c")}
    assert all(BM25Selector(2).select(q("Which queue?"), g, STUB) == BM25Selector(2).select(q("Which queue?"), g, STUB)
               for _ in range(3))


def test_bm25_russian_inflections_meet():
    g = build_graph({"nodes": [{"id": "auth", "label": "Сервис авторизации"}, {"id": "db", "label": "База данных"},
                               {"id": "gw", "label": "Шлюз"}, {"id": "log", "label": "Журнал"}],
                     "edges": [{"src": "gw", "dst": "auth", "label": "проверка"}, {"src": "auth", "dst": "db"},
                               {"src": "gw", "dst": "log", "label": "запись"}]})
    sub = BM25Selector(1).select(q("Куда ведёт сервис авторизации после проверки?", "ru"), g, STUB)
    assert sub.edges == {Edge("gw", "auth", "проверка")}
    assert words("Базы данных") == words("база данные")


def test_bm25_index_is_built_once_per_diagram_graph():
    sel = BM25Selector(2)
    for text in ("auth", "payment", "email"):
        sel.select(q(text), SHOP, STUB)
    assert len(sel._indexes) == 1
    other = SHOP.copy()
    other.add_edge("auth", "audit", label="log", directed=True, arrow="->")
    sel.select(q("audit"), other, STUB)
    assert len(sel._indexes) == 2  # same diagram id, different graph (another graph source): its own index


# -- d2chunks -----------------------------------------------------------------------------------------

SRC = """# shop
direction: right
user: Customer
backend: Orders Backend {
  api: Orders API
  worker: Invoice Worker
  api -> worker: enqueue invoice
}
db: Orders DB {shape: cylinder}
note: |md
  # Invoices
  stored nightly -> archive
|
backend.worker -> db: store invoice
user -> backend.api: place order
mail: Mailer
db <- mail: bounces
"""


def test_scan_and_cut_keep_strings_and_blocks_whole():
    script = cut(SRC, window=2, stride=1)
    lines = script.lines
    assert lines[4].ancestors == (3,) and lines[3].opens == 1 and lines[7].ancestors == (3,)
    # the markdown block is one unit: its "->" is not an edge
    assert [9, 10, 11, 12] in script.units
    assert all(not lines[n].is_blank for u in script.units for n in u)
    assert len(script.windows) == len(script.units) - 1


def test_snippet_reopens_containers_and_drops_the_rest():
    script = cut(SRC, window=4, stride=2)
    text = snippet(script, {6})
    assert text == "backend: Orders Backend {\n  api -> worker: enqueue invoice\n}\n"


def test_d2chunks_selects_the_lines_mentioning_the_asked_nodes():
    d = SimpleNamespace(id="shop", source=SRC)
    from benchmark.d2 import parse_text

    g = build_graph(parse_text(SRC))
    sel = D2ChunksSelector(1, window=1, stride=1)
    lines = sel.selected_lines(q("Does the worker store the invoice in the DB?"), g, d)
    assert lines == [13]
    sub = sel.select(q("Does the worker store the invoice in the DB?"), g, d)
    assert sub.edges == {Edge("backend.worker", "db", "store invoice")}
    # a line inside a container: ids come out absolute, and the container itself is not selected
    sub = sel.select(q("Who enqueues the invoice?"), g, d)
    assert sub == Subgraph.from_edges([Edge("backend.api", "backend.worker", "enqueue invoice")])
    # "<-" keeps the flow direction
    assert sel.select(q("Where do bounces go?"), g, d).edges == {Edge("mail", "db", "bounces")}


def test_d2chunks_all_lines_give_the_whole_graph_on_bundled_diagrams():
    for name in ("arch_auth_cache_a", "fin_loan_approval_ru", "ops_db_failover"):
        d = bundled(name)
        sel = D2ChunksSelector(1000)
        sub = sel.select(q(" ".join(open(d.d2_path, encoding="utf-8").read().split())), d.graph, d)
        assert sub == whole(d.graph)


def test_d2chunks_on_a_bundled_diagram_finds_the_certificate():
    d = bundled("arch_auth_cache_a")
    qq = question("Does the Invoice Worker write to the Orders DB?", "edge_exists",
                  {"source": "backend.worker", "target": "orders_db"}, d.graph, d.id)
    sub = SELECTORS.create("d2chunks-2").select(qq, d.graph, d)
    assert Edge("backend.worker", "orders_db", "store invoice") in sub.edges
    assert question_proves(qq, sub, d.graph)


def test_fallback_line_matching_resolves_containers_and_arrows():
    from benchmark.d2 import parse_text

    g = build_graph(parse_text(SRC))
    assert match_line(g, "  api -> worker: enqueue invoice", ["backend"]).edges == {
        Edge("backend.api", "backend.worker", "enqueue invoice")}
    assert match_line(g, "db <- mail: bounces", []).edges == {Edge("mail", "db", "bounces")}
    assert match_line(g, "mail: Mailer", []) == Subgraph(frozenset({"mail"}))
    assert match_line(g, "direction: right", []) == Subgraph()


def test_d2chunks_falls_back_when_the_snippet_does_not_compile(monkeypatch):
    import benchmark.d2

    from benchmark.d2 import D2SyntaxError, parse_text

    g = build_graph(parse_text(SRC))
    d = SimpleNamespace(id="shop", source=SRC)

    def broken(*a, **k):
        raise D2SyntaxError("cannot compile")

    reparsed = D2ChunksSelector(1, window=1, stride=1).select(q("Who enqueues the invoice?"), g, d)
    monkeypatch.setattr(benchmark.d2, "parse_text", broken)
    fresh = D2ChunksSelector(1, window=1, stride=1)  # nothing cached: the lines are matched one by one
    assert fresh.select(q("Who enqueues the invoice?"), g, d) == reparsed
    assert fresh.select(q("Where do bounces go?"), g, d).edges == {Edge("mail", "db", "bounces")}


@pytest.mark.parametrize("k, window, stride", [(0, 4, 2), (1, 0, 2), (1, 4, 0)])
def test_d2chunks_rejects_bad_parameters(k, window, stride):
    with pytest.raises(ValueError):
        D2ChunksSelector(k, window=window, stride=stride)


SRC2 = """Tok's Data: {
  a -> b: sync
}
explain: |md
  # Notes {
  text
| {
  inner -> other: note link
}
"""


def test_apostrophes_in_keys_and_maps_opened_after_a_block_string():
    from benchmark.d2 import parse_text

    g = build_graph(parse_text(SRC2))
    script = cut(SRC2, window=1, stride=1)
    assert script.lines[1].ancestors == (0,)
    assert script.lines[7].ancestors == (6,) and [3, 4, 5, 6] in script.units
    # the map opened after the block string brings the whole block string with it
    assert snippet(script, {7}).splitlines()[:4] == ["explain: |md", "  # Notes {", "  text", "| {"]
    d = SimpleNamespace(id="x", source=SRC2)
    sel = D2ChunksSelector(1, window=1, stride=1)
    assert sel.select(q("Where does the note link go?"), g, d).edges == {Edge("explain.inner", "explain.other", "note link")}
    synced = sel.select(q("What is synced?"), g, d).edges
    assert len(synced) == 1 and {e.label for e in synced} == {"sync"} and all("Tok's Data" in e.src for e in synced)
