"""``dense-<k>``: MiniLM similarity between the question and each edge's text (real model)."""
from types import SimpleNamespace

import pytest

from benchmark import embeddings
from benchmark.errors import StageUnavailable
from benchmark.graph import Edge, build_graph
from benchmark.stages import SELECTORS
from retrievers.dense import DenseSelector

G = build_graph({
    "nodes": [{"id": "user", "label": "Customer"}, {"id": "gw", "label": "API Gateway"},
              {"id": "auth", "label": "Auth Service"}, {"id": "db", "label": "Users DB"},
              {"id": "pay", "label": "Payment Processor"}, {"id": "mail", "label": "Email Sender"},
              {"id": "cdn", "label": "CDN Edge"}],
    "edges": [{"src": "user", "dst": "gw", "label": "HTTPS"}, {"src": "gw", "dst": "auth", "label": "verify token"},
              {"src": "auth", "dst": "db", "label": "lookup session"}, {"src": "gw", "dst": "pay", "label": "charge card"},
              {"src": "pay", "dst": "mail", "label": "send receipt"}, {"src": "user", "dst": "cdn", "label": "static files"}],
})
DIAGRAM = SimpleNamespace(id="shop", source="")


def q(text):
    return SimpleNamespace(text=text, language="en", type="edge_exists", args=())


def test_paraphrase_ranks_first_and_k_bounds_the_edges(tmp_path):
    sel = DenseSelector(1, cache_dir=tmp_path)
    # no word in common with "charge card" / "Payment Processor"
    sub = sel.select(q("Which component bills the client's credit card?"), G, DIAGRAM)
    assert sub.edges == {Edge("gw", "pay", "charge card")}
    sub3 = DenseSelector(3, cache_dir=tmp_path).select(q("Who emails the buyer a confirmation?"), G, DIAGRAM)
    assert len(sub3.edges) == 3 and Edge("pay", "mail", "send receipt") in sub3.edges
    # same question, same answer; the diagram's edges were embedded once
    assert sel.select(q("Which component bills the client's credit card?"), G, DIAGRAM) == sub
    assert len(sel._indexes) == 1


def test_registered_and_unavailable_without_the_package(monkeypatch):
    assert SELECTORS.create("dense-4").name == "dense-4"
    monkeypatch.setattr(embeddings, "MODEL_PACKAGE", "no_such_minilm_package")
    with pytest.raises(StageUnavailable):
        SELECTORS.create("dense-4")


def test_prepared_texts_are_selected_from_the_cache_without_the_model(tmp_path, monkeypatch):
    """``prepare`` embeds every graph's edge texts and its diagram's questions across diagrams, a batch of
    ``PREPARE_BATCH`` distinct texts at a time, into the cache on disk: a selector in a process that never
    loads the model then selects from it what a selector that embedded the texts itself selects."""
    import retrievers.dense as dense

    questions = [q("Which component bills the client's credit card?"), q("Who emails the buyer a confirmation?")]
    shop = SimpleNamespace(id="shop", questions=questions)
    other = build_graph({"nodes": [{"id": "a", "label": "Order queue"}, {"id": "b", "label": "Invoice worker"}],
                         "edges": [{"src": "a", "dst": "b", "label": "consume"}]})
    back = SimpleNamespace(id="back", questions=[q("What reads the order queue?")])
    expected = {(d.id, x.text): DenseSelector(2, cache_dir=tmp_path / "own").select(x, g, d)
                for d, g in ((shop, G), (back, other)) for x in d.questions}

    calls = []
    real = embeddings.encode
    monkeypatch.setattr(embeddings, "encode", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    monkeypatch.setattr(dense, "PREPARE_BATCH", 4)
    monkeypatch.setattr(embeddings, "_memory", {})
    n = DenseSelector(2, cache_dir=tmp_path / "prepared").prepare([(shop, G), (back, other)])
    assert n == 6 + 2 + 1 + 1 and sum(calls) == n and len(calls) == 2   # (7 nodes, 6 edges: every node has one)

    monkeypatch.setattr(embeddings, "_memory", {})
    monkeypatch.setattr(embeddings, "load_model", lambda: pytest.fail("the model was loaded"))
    fresh = DenseSelector(2, cache_dir=tmp_path / "prepared")
    for d, g in ((shop, G), (back, other)):
        for x in d.questions:
            assert fresh.select(x, g, d) == expected[(d.id, x.text)]
