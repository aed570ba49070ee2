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
