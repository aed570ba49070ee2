"""Text finders (d2-bm25, ocr-bm25, dense), OCR text caching and finder evaluation on a tiny dataset.

The dataset is written to a temporary folder and rendered by the real d2 binary; OCR runs the real
tesseract on those PNGs.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from benchmark.dataset import Dataset, load_dataset
from benchmark.errors import StageUnavailable
from benchmark.extract import ocr as extract_ocr
from benchmark.finders import ocr_text as ocr_mod
from benchmark.finders.d2_bm25 import D2BM25Finder
from benchmark.finders.d2_text import d2_words
from benchmark.finders.evaluate import evaluate_finder, finder_table
from benchmark.finders.ocr_bm25 import OCRBM25Finder
from benchmark.finders.ocr_text import ocr_text
from benchmark.questions import Question
from benchmark.render import render_file

DIAGRAMS = {
    "auth_cache": """
        user: User
        gw: API Gateway
        auth: Auth Service
        cache: Session Cache
        db: Orders DB {shape: cylinder}
        user -> gw: HTTPS
        gw -> auth: verify token
        auth -> db: reads
        gw -> cache: lookup
        cache -> db: bypass
        """,
    "auth_nocache": """
        user: User
        gw: API Gateway
        auth: Auth Service
        cache: Session Cache
        db: Orders DB {shape: cylinder}
        user -> gw: HTTPS
        gw -> auth: verify token
        auth -> db: reads
        gw -> cache: lookup
        """,
    "order_flow": """
        recv: Заказ получен
        paid: Оплата прошла? {shape: diamond}
        ship: Отправить товар
        cancel: Отменить заказ
        recv -> paid
        paid -> ship: да
        paid -> cancel: нет
        """,
    "ci_pipeline": """
        commit: Commit pushed
        build: Build image
        test: Run tests
        deploy: Deploy to staging
        notify: Notify Slack
        commit -> build -> test -> deploy
        test -> notify: on failure
        """,
}

ANNOTATIONS = {
    "auth_cache": """
        diagram: auth_cache
        language: en
        twin: auth_nocache
        questions:
          - id: ac_cache_db
            text: Does the Session Cache reach the Orders DB directly?
            type: edge_exists
            args: {source: cache, target: db}
            answer: yes
            certificate: {nodes: [cache, db], edges: [[cache, db]]}
            counter_prior: true
            rationale: the cache bypasses auth
        """,
    "auth_nocache": """
        diagram: auth_nocache
        language: en
        twin: auth_cache
        questions:
          - id: an_cache_db
            text: Does the Session Cache reach the Orders DB directly?
            type: edge_exists
            args: {source: cache, target: db}
            answer: no
            certificate: {nodes: [cache, db], edges: []}
            counter_prior: false
            rationale: only auth reads the DB
        """,
    "order_flow": """
        diagram: order_flow
        language: ru
        questions:
          - id: of_unpaid
            text: Куда идёт заказ, если оплата не прошла?
            type: decision_outcome
            args: {node: paid, branch: нет}
            answer: cancel
            certificate: {nodes: [paid, cancel], edges: [[paid, cancel, нет]]}
            counter_prior: false
            rationale: the "нет" branch
        """,
    "ci_pipeline": """
        diagram: ci_pipeline
        language: en
        questions:
          - id: ci_notify
            text: Is Slack notified when the tests fail?
            type: edge_exists
            args: {source: test, target: notify}
            answer: yes
            certificate: {nodes: [test, notify], edges: [[test, notify]]}
            counter_prior: false
            rationale: on failure
          - id: ci_after_build
            text: Which step comes after Build image?
            type: successors
            args: {node: build}
            answer: [test]
            certificate: {nodes: [build, test], edges: [[build, test]]}
            counter_prior: false
            rationale: one edge
        """,
}


def write_dataset(root: Path, diagrams: dict[str, str] = DIAGRAMS, annotations: dict[str, str] = ANNOTATIONS) -> Path:
    """A dataset folder with D2 files, PNGs rendered by d2, and annotations."""
    (root / "diagrams").mkdir(parents=True, exist_ok=True)
    (root / "annotations").mkdir(parents=True, exist_ok=True)
    for did, src in diagrams.items():
        d2 = root / "diagrams" / f"{did}.d2"
        d2.write_text(textwrap.dedent(src).strip() + "\n", encoding="utf-8")
        render_file(d2, root / "diagrams" / f"{did}.png")
    for did, text in annotations.items():
        (root / "annotations" / f"{did}.yaml").write_text(textwrap.dedent(text).strip() + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def cache_env(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIAGQA_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, cache_env):
    ds, problems = load_dataset(write_dataset(tmp_path_factory.mktemp("data")))
    assert problems == []
    return ds


def query(text: str, diagram: str = "") -> Question:
    from benchmark.graph import Subgraph

    return Question(id="q", diagram=diagram, text=text, type="edge_exists", args=(), answer=None, certificate=Subgraph())


def ranks_by_question(finder, ds) -> dict[str, list[str]]:
    return {q.id: [d for d, _ in finder.rank(q)] for q in ds.questions}


def test_d2_words_keeps_labels_and_ids_drops_settings():
    text = d2_words('# comment\ndirection: right\nordersDb: Orders DB {shape: cylinder; style.fill: "#fee"}\n'
                    'a.b -> ordersDb: "reads, writes"\nx: {label: Кэш сессий}\n')
    assert text.split() == ["orders", "Db", "Orders", "DB", "a", "b", "orders", "Db", "reads", "writes",
                            "x", "Кэш", "сессий"]


def test_d2_bm25_finds_the_right_diagram(dataset):
    finder = D2BM25Finder()
    finder.fit(dataset)
    order = ranks_by_question(finder, dataset)
    assert order["of_unpaid"][0] == "order_flow"  # Russian, inflected forms meet
    assert order["ci_notify"][0] == "ci_pipeline"
    assert order["ci_after_build"][0] == "ci_pipeline"
    # the twins share every word of the question: both ahead of the unrelated diagrams
    assert set(order["ac_cache_db"][:2]) == {"auth_cache", "auth_nocache"}
    ranking = finder.rank(dataset.questions[0])
    assert [d for d, _ in ranking] == sorted(dataset.diagrams, key=lambda d: (-dict(ranking)[d], d))
    assert finder.rank(query("")) == [(d, 0.0) for d in sorted(dataset.diagrams)]  # no words: id order


def test_ocr_text_reads_labels_from_the_png(dataset):
    text = ocr_text(dataset.diagrams["auth_cache"].png_path)
    for label in ("Session Cache", "Orders DB", "API Gateway", "bypass"):
        assert label in text
    ru = ocr_text(dataset.diagrams["order_flow"].png_path)
    assert "Заказ получен" in ru and "Отменить заказ" in ru


def test_ocr_text_is_cached_by_image_content(dataset, tmp_path, monkeypatch):
    png = dataset.diagrams["ci_pipeline"].png_path
    first = ocr_text(png, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.json"))) == 1  # the image's words, stored once

    def no_tesseract(*a, **k):
        raise AssertionError("tesseract ran although the text was cached")

    monkeypatch.setattr(extract_ocr, "read_words", no_tesseract)
    copy = tmp_path / "copy.png"  # same bytes under another name: still a cache hit
    copy.write_bytes(png.read_bytes())
    assert ocr_text(copy, cache_dir=tmp_path) == first
    other = tmp_path / "other.png"  # different bytes: a miss, so tesseract would run
    other.write_bytes(dataset.diagrams["order_flow"].png_path.read_bytes())
    with pytest.raises(AssertionError, match="tesseract ran"):
        ocr_text(other, cache_dir=tmp_path)


def test_cached_texts_read_each_image_once(dataset, tmp_path, monkeypatch):
    """``ocr_texts`` of images whose words are stored reads (and hashes) each image once, and gives the text
    ``ocr_text`` gives; an entry that cannot be read is read again by tesseract, as a missing one is."""
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path))
    pngs = [dataset.diagrams[d].png_path for d in ("ci_pipeline", "order_flow")]
    expected = {p: ocr_text(p) for p in pngs}   # (stored now)
    reads = []
    real = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self) or real(self))
    monkeypatch.setattr(extract_ocr, "read_words", lambda *a, **k: pytest.fail("tesseract ran on stored words"))
    assert ocr_mod.ocr_texts(pngs, progress=False) == expected
    assert sorted(reads) == sorted(pngs)
    broken = extract_ocr.words_entry(real(pngs[0]))
    broken.write_text("not json", encoding="utf-8")
    monkeypatch.setattr(extract_ocr, "read_words", lambda *a, **k: [])
    assert ocr_mod.ocr_texts(pngs, progress=False, workers=1) == {pngs[0]: "", pngs[1]: expected[pngs[1]]}


def test_ocr_text_missing_image_names_the_file(tmp_path):
    from benchmark.errors import InputError

    with pytest.raises(InputError, match="nowhere.png"):
        ocr_text(tmp_path / "nowhere.png", cache_dir=tmp_path)


def test_ocr_bm25_finds_diagrams_and_survives_a_missing_png(dataset, tmp_path):
    finder = OCRBM25Finder()
    finder.fit(dataset)
    order = ranks_by_question(finder, dataset)
    assert order["of_unpaid"][0] == "order_flow"
    assert order["ci_notify"][0] == "ci_pipeline"
    assert set(order["ac_cache_db"][:2]) == {"auth_cache", "auth_nocache"}

    broken, _ = load_dataset(dataset.root)
    broken.diagrams["ci_pipeline"].png_path = tmp_path / "gone.png"
    finder.fit(broken)
    assert any("gone.png" in p for p in finder.problems)
    order = ranks_by_question(finder, broken)
    assert order["of_unpaid"][0] == "order_flow"
    assert finder.texts["ci_pipeline"] == "" and order["ci_notify"][0] != "ci_pipeline"
    assert dict(finder.rank(broken.questions[-1]))["ci_pipeline"] == 0.0


def test_evaluate_counts_twins_and_ranks(dataset):
    result = evaluate_finder(D2BM25Finder(), dataset)
    s = result.scores
    assert s.n_questions == 5 and s.n_twin_questions == 2
    assert s.recall_at_5 == 1.0
    # the twins tie on the shared question, so exactly one of the two questions sees its twin first
    assert s.twin_tied == 2 and s.twin_above == 1 and s.twin_at_first == 1
    assert result.ranks["ac_cache_db"] == 1 and result.ranks["an_cache_db"] == 2  # ties go to the lower id
    assert s.recall_at_1 == pytest.approx(4 / 5)
    assert s.mrr == pytest.approx((1 + 0.5 + 1 + 1 + 1) / 5)


def test_finder_table_reports_unavailable_finders(dataset, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    monkeypatch.delenv("DIAGQA_CLIP_PRETRAINED", raising=False)
    rows = finder_table(dataset, ["oracle", "d2-bm25", "clip"])
    by = {r["finder"]: r for r in rows}
    assert by["oracle"]["recall@1"] == 1.0 and by["oracle"]["MRR"] == 1.0 and by["oracle"]["twin_confusions"] == 0
    assert by["d2-bm25"]["status"] == "ok" and by["d2-bm25"]["twin_confusions"] == 1
    assert by["clip"]["status"] == "unavailable" and by["clip"]["recall@1"] is None
    assert "laion2b_s34b_b79k" in by["clip"]["reason"] and "empty-hub" in by["clip"]["reason"]


def test_tesseract_missing_is_stage_unavailable(monkeypatch):
    import pytesseract

    ocr_mod.tesseract_version.cache_clear()
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    try:
        with pytest.raises(StageUnavailable, match="tesseract"):
            OCRBM25Finder().fit(Dataset(root=Path("."), diagrams={}))
    finally:
        ocr_mod.tesseract_version.cache_clear()


def test_dense_ranks_by_meaning_of_ocr_text(dataset):
    from benchmark.finders.dense import DenseFinder

    finder = DenseFinder()
    finder.fit(dataset)
    order = ranks_by_question(finder, dataset)
    assert order["ci_notify"][0] == "ci_pipeline"
    assert order["of_unpaid"][0] == "order_flow"
    assert set(order["ac_cache_db"][:2]) == {"auth_cache", "auth_nocache"}
    ranking = finder.rank(query("deploy the built image to staging"))
    assert ranking[0][0] == "ci_pipeline"
    assert all(-1.0 <= s <= 1.0 for _, s in ranking)
    assert finder.rank(query("deploy the built image to staging")) == ranking  # deterministic


def test_dense_ranks_many_questions_as_it_ranks_each(dataset, tmp_path, monkeypatch):
    """The run ranks every question at once (one embedding batch): the same diagrams in the same order,
    the same scores to the sixth place, as one question at a time (each embedded on its own, from an
    empty cache). Twins' equal labels tie whatever the batch: the diagram id orders them."""
    from benchmark import embeddings
    from benchmark.finders.dense import DenseFinder
    from benchmark.finders.ranking import rank_each

    finder = DenseFinder()
    finder.fit(dataset)
    calls: list[int] = []
    real = embeddings.encode
    monkeypatch.setattr(embeddings, "encode", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    many = [r for r, _ in rank_each(finder, dataset.questions)]
    assert calls == [len(dataset.questions)]
    assert [r for r, _ in rank_each(finder, dataset.questions, chunk=2)] == many and calls[1:] == [2, 2, 1]
    monkeypatch.setattr(embeddings, "_memory", {})
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "fresh"))
    one = [finder.rank(q) for q in dataset.questions]
    assert [[d for d, _ in r] for r in many] == [[d for d, _ in r] for r in one]
    assert all(abs(a - b) <= 1e-6 for r, o in zip(many, one) for (_, a), (_, b) in zip(r, o))
    assert many[0][:2] == sorted(many[0][:2]) and many[0][0][1] == many[0][1][1]


def test_a_batch_given_as_a_sequence_is_read_one_ranking_at_a_time(dataset):
    """A ``rank_many`` that gives a sequence (the ``dense`` finder's makes each ranking when it is read) is read a
    ranking at a time, as the caller takes them: a batch's rankings of every diagram are never all held at
    once. A ranking that fails when read costs only its question, ranked alone."""
    from collections.abc import Sequence

    from benchmark.finders.dense import DenseFinder
    from benchmark.finders.ranking import rank_each

    read: list[int] = []

    class Lazy(Sequence):
        def __init__(self, finder, questions):
            self.finder, self.questions = finder, questions

        def __len__(self):
            return len(self.questions)

        def __getitem__(self, i):
            read.append(i)
            if self.questions[i].id == "of_unpaid":
                raise ValueError("cannot rank this one in the batch")
            return D2BM25Finder.rank(self.finder, self.questions[i])

    class Batched(D2BM25Finder):
        def rank_many(self, questions):
            return Lazy(self, questions)

    finder, plain = Batched(), D2BM25Finder()
    finder.fit(dataset)
    plain.fit(dataset)
    each = rank_each(finder, dataset.questions, chunk=4)
    first, _ = next(each)
    assert read == [0] and first == plain.rank(dataset.questions[0])
    rest = [r for r, _ in each]
    n = len(dataset.questions)
    assert n > 4 and read == [i for at in range(0, n, 4) for i in range(min(4, n - at))]
    assert [first] + rest == [plain.rank(q) for q in dataset.questions]   # of_unpaid ranked alone, by rank()
    assert "of_unpaid" in [q.id for q in dataset.questions]

    dense = DenseFinder()
    dense.fit(dataset)
    batch = dense.rank_many(dataset.questions[:3])
    assert isinstance(batch, Sequence) and len(batch) == 3 and batch[-1] == batch[2]
    assert [[d for d, _ in r] for r in batch[:2]] == [[d for d, _ in dense.rank(q)] for q in dataset.questions[:2]]
    with pytest.raises(IndexError):
        batch[3]


def test_a_failing_batch_is_ranked_question_by_question(dataset):
    """When ``rank_many`` raises, each question is ranked on its own: the bad one gets its error, the
    others their rankings; ``evaluate_finder`` counts it as a miss and names it."""
    from benchmark.finders.ranking import rank_each

    class Picky(D2BM25Finder):
        def rank_many(self, questions):
            return [self.rank(q) for q in questions]

        def rank(self, question):
            if question.id == "of_unpaid":
                raise ValueError("cannot read this question")
            return super().rank(question)

    finder = Picky()
    finder.fit(dataset)
    out = list(rank_each(finder, dataset.questions, chunk=2))
    bad = [q.id for q, (r, _) in zip(dataset.questions, out) if isinstance(r, Exception)]
    assert bad == ["of_unpaid"]
    assert all(isinstance(r, list) and r for q, (r, _) in zip(dataset.questions, out) if q.id != "of_unpaid")
    result = evaluate_finder(Picky(), dataset)
    assert result.ranks["of_unpaid"] is None and result.ranks["ci_notify"] == 1
    assert any("[of_unpaid]" in p and "cannot read" in p for p in result.problems)

    class Short(D2BM25Finder):   # a batch that drops a question: which ranking is whose is unknown
        def rank_many(self, questions):
            return [self.rank(q) for q in questions[1:]]

    short = Short()
    short.fit(dataset)
    plain = D2BM25Finder()
    plain.fit(dataset)
    assert [r for r, _ in rank_each(short, dataset.questions, chunk=2)] == [plain.rank(q) for q in dataset.questions]


def test_find_command_eval_and_query(dataset, capsys, monkeypatch, tmp_path):
    from benchmark.cli import main

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.delenv("DIAGQA_CLIP_PRETRAINED", raising=False)
    assert main(["find", "--eval", "--finders", "oracle,d2-bm25", "clip", "--data", str(dataset.root)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    # status, questions, recall@1, recall@5, MRR, recall@1 counting the twin as found
    assert lines["d2-bm25"][1:7] == ["ok", "5", "0.8", "1.0", "0.9", "1.0"]
    assert lines["d2-bm25"][7:11] == ["2", "1", "1", "2"]  # twin questions, twin above, twin first, ties
    assert lines["clip"][1] == "unavailable" and "clip: weights for ViT-B-32/laion2b_s34b_b79k" in out

    assert main(["find", "Куда идёт заказ после оплаты?", "--finders", "d2-bm25", "-k", "2", "--json",
                 "--data", str(dataset.root)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [r["diagram"] for r in found["d2-bm25"]][0] == "order_flow" and len(found["d2-bm25"]) == 2

    assert main(["find", "--eval", "--finders", "ocr-bm25", "--json", "--images", str(tmp_path),
                 "--data", str(dataset.root)]) == 0  # no PNGs there: every diagram reported, none found
    row = json.loads(capsys.readouterr().out.split("\n\n")[0])[0]
    assert row["reason"].count(str(tmp_path)) == 4
    assert row["recall@1"] == pytest.approx(1 / 5)  # all score 0, id order: only auth_cache's question hits

    assert main(["find", "--data", str(dataset.root)]) == 2  # neither a text nor --eval
    assert "either a question text or --eval" in capsys.readouterr().err
    assert main(["find", "--eval", "--finders", "bm42", "--data", str(dataset.root)]) == 2
    assert "unknown finder 'bm42'" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["cache", "clip", "d2_text", "dense", "metrics", "oracle", "ranking"])
def test_module_doctests(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"benchmark.finders.{module}"))
    assert result.attempted > 0 and result.failed == 0
