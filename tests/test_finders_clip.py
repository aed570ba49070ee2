"""The ``clip`` finder end to end with a tiny randomly initialised open_clip model on PNGs rendered by d2.

The model comes from ``tests/fixtures/tiny_clip.json`` (registered with ``open_clip.add_model_config``)
and is seeded, so every number here is reproducible without any downloaded weights.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmark.dataset import load_dataset
from benchmark.errors import StageUnavailable
from benchmark.finders.clip import ClipFinder, locate_weights
from benchmark.graph import Subgraph
from benchmark.questions import Question
from benchmark.render import render_file

TINY = Path(__file__).parent / "fixtures" / "tiny_clip.json"
REPO = Path(__file__).resolve().parent.parent

SOURCES = {
    "gateway": "user: User\ngw: API Gateway\ndb: Orders DB {shape: cylinder}\nuser -> gw -> db\n",
    "pipeline": "a: Commit\nb: Build\nc: Test\nd: Deploy\na -> b -> c -> d\nc -> a: retry\n",
    "order": "r: Заказ получен\np: Оплата прошла? {shape: diamond}\nr -> p\np -> s: да\np -> x: нет\n",
}


def tiny(**kw) -> ClipFinder:
    kw.setdefault("config", TINY)
    return ClipFinder("tiny_clip", kw.pop("pretrained", None), **kw)


def question(text: str, diagram: str = "gateway") -> Question:
    return Question(id="q", diagram=diagram, text=text, type="edge_exists", args=(), answer=None, certificate=Subgraph())


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("clipdata")
    (root / "diagrams").mkdir()
    (root / "annotations").mkdir()
    for did, src in SOURCES.items():
        (root / "diagrams" / f"{did}.d2").write_text(src, encoding="utf-8")
        render_file(root / "diagrams" / f"{did}.d2", root / "diagrams" / f"{did}.png")
        (root / "annotations" / f"{did}.yaml").write_text(f"diagram: {did}\nquestions: []\n", encoding="utf-8")
    ds, problems = load_dataset(root)
    assert problems == [] and sorted(ds.diagrams) == sorted(SOURCES)
    return ds


@pytest.fixture(scope="module")
def fitted(dataset, tmp_path_factory):
    finder = tiny(cache_dir=tmp_path_factory.mktemp("clipcache"), batch_size=2)
    finder.fit(dataset)
    return finder


def reference_scores(dataset, text: str, seed: int = 0) -> dict[str, float]:
    """Cosine similarities computed straight with open_clip, independently of the finder's code."""
    import open_clip
    import torch
    from PIL import Image, ImageOps

    open_clip.add_model_config(TINY)
    torch.manual_seed(seed)
    model, _, preprocess = open_clip.create_model_and_transforms("tiny_clip", pretrained=None)
    model.eval()
    tok = open_clip.get_tokenizer("tiny_clip")
    out = {}
    with torch.no_grad():
        t = model.encode_text(tok([text]))
        t = t / t.norm(dim=-1, keepdim=True)
        for did, d in dataset.diagrams.items():
            img = Image.open(d.png_path).convert("RGB")
            side = max(img.size)
            img = ImageOps.pad(img, (side, side), color=(255, 255, 255))
            v = model.encode_image(preprocess(img).unsqueeze(0))
            v = v / v.norm(dim=-1, keepdim=True)
            out[did] = float((v @ t.T).item())
    return out


def test_rank_is_cosine_similarity_of_normalised_embeddings(dataset, fitted):
    text = "Which service reads the Orders DB?"
    ranking = fitted.rank(question(text))
    assert sorted(d for d, _ in ranking) == sorted(dataset.diagrams)
    assert [s for _, s in ranking] == sorted((s for _, s in ranking), reverse=True)
    for did in dataset.diagrams:
        assert np.linalg.norm(fitted.image_embedding(did)) == pytest.approx(1.0, abs=1e-5)
    expected = reference_scores(dataset, text)
    for did, score in ranking:
        assert score == pytest.approx(expected[did], abs=1e-3)


def test_same_seed_same_ranking_and_batching_does_not_change_embeddings(dataset, fitted, tmp_path):
    other = tiny(cache_dir=tmp_path, batch_size=1)
    other.fit(dataset)
    for did in dataset.diagrams:
        np.testing.assert_allclose(other.image_embedding(did), fitted.image_embedding(did), atol=1e-5)
    q = question("Оплата прошла?")
    assert [d for d, _ in other.rank(q)] == [d for d, _ in fitted.rank(q)]


def test_image_embeddings_are_cached_by_png_content(dataset, tmp_path, monkeypatch):
    first = tiny(cache_dir=tmp_path)
    first.fit(dataset)
    entries = sorted(tmp_path.rglob("*.npy"))
    assert len(entries) == 3
    assert {p.stem for p in entries} == {__import__("hashlib").sha256(d.png_path.read_bytes()).hexdigest()
                                         for d in dataset.diagrams.values()}

    second = tiny(cache_dir=tmp_path)
    encoded: list[int] = []
    real = ClipFinder.encode_images
    monkeypatch.setattr(ClipFinder, "encode_images", lambda self, imgs: encoded.append(len(imgs)) or real(self, imgs))
    second.fit(dataset)
    assert encoded == []  # everything came from the cache
    q = question("API Gateway")
    assert second.rank(q) == first.rank(q)

    changed, _ = load_dataset(dataset.root)  # a re-rendered, different PNG for one diagram is encoded again
    png = tmp_path / "gateway2.png"
    src = tmp_path / "gateway2.d2"
    src.write_text(SOURCES["gateway"] + "gw -> cache\n", encoding="utf-8")
    render_file(src, png)
    changed.diagrams["gateway"].png_path = png
    second.fit(changed)
    assert encoded == [1]


def test_local_checkpoint_file_is_loaded(dataset, fitted, tmp_path):
    import torch

    ckpt = tmp_path / "tiny.pt"
    torch.save(fitted._model.state_dict(), ckpt)
    loaded = tiny(pretrained=str(ckpt), seed=123, cache_dir=tmp_path / "c1")
    loaded.fit(dataset)
    random123 = tiny(seed=123, cache_dir=tmp_path / "c2")
    random123.fit(dataset)
    for did in dataset.diagrams:
        np.testing.assert_allclose(loaded.image_embedding(did), fitted.image_embedding(did), atol=1e-5)
    assert not np.allclose(random123.image_embedding("gateway"), fitted.image_embedding("gateway"), atol=1e-3)


def test_missing_png_ranks_last_and_is_reported(dataset, tmp_path):
    broken, _ = load_dataset(dataset.root)
    broken.diagrams["order"].png_path = tmp_path / "gone.png"
    finder = tiny(cache_dir=tmp_path)
    finder.fit(broken)
    assert any("gone.png" in p for p in finder.problems)
    assert finder.rank(question("Заказ"))[-1] == ("order", -2.0)

    garbage = tmp_path / "garbage.png"  # present but not an image: isolated, the others still encoded
    garbage.write_bytes(b"not a png")
    broken.diagrams["order"].png_path = garbage
    finder = tiny(cache_dir=tmp_path / "c")
    finder.fit(broken)
    assert any("garbage.png" in p and "not a readable image" in p for p in finder.problems)
    ranking = finder.rank(question("Заказ"))
    assert ranking[-1] == ("order", -2.0) and {d for d, _ in ranking[:2]} == {"gateway", "pipeline"}


def test_default_model_without_weights_is_unavailable_fast(tmp_path):
    """In a fresh interpreter: one line, in well under a second, with torch and open_clip never imported."""
    code = textwrap.dedent("""
        import json, sys, time
        from benchmark.stages import FINDERS
        import benchmark.finders.clip
        from benchmark.errors import StageUnavailable
        t = time.perf_counter()
        try:
            FINDERS.create("clip")
            msg = None
        except StageUnavailable as exc:
            msg = str(exc)
        print(json.dumps({"s": time.perf_counter() - t, "msg": msg,
                          "heavy": sorted(m for m in ("torch", "open_clip") if m in sys.modules)}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("DIAGQA_CLIP")}
    env["HF_HUB_CACHE"] = str(tmp_path / "hub")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["msg"] is not None and "\n" not in res["msg"]
    assert "ViT-B-32/laion2b_s34b_b79k" in res["msg"] and str(tmp_path / "hub") in res["msg"]
    assert res["s"] < 1.0
    assert res["heavy"] == []


def test_weights_are_found_in_the_local_hub_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    repo = tmp_path / "models--laion--CLIP-ViT-B-32-laion2B-s34B-b79K"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    weights = repo / "snapshots" / "abc123" / "open_clip_pytorch_model.bin"
    weights.write_bytes(b"not really weights")
    assert locate_weights("ViT-B-32", "laion2b_s34b_b79k").path == weights


def test_environment_chooses_model_and_checkpoint(monkeypatch, tmp_path):
    monkeypatch.setenv("DIAGQA_CLIP_MODEL", "ViT-B-16")
    monkeypatch.setenv("DIAGQA_CLIP_PRETRAINED", str(tmp_path / "missing.pt"))
    with pytest.raises(StageUnavailable, match="missing.pt does not exist"):
        ClipFinder()
    monkeypatch.setenv("DIAGQA_CLIP_PRETRAINED", "no_such_tag")
    with pytest.raises(StageUnavailable, match="no pretrained weights tagged 'no_such_tag' for model 'ViT-B-16'"):
        ClipFinder()


def test_model_loads_with_the_hub_offline(dataset, tmp_path, monkeypatch):
    import open_clip

    seen = []
    real = open_clip.create_model_and_transforms

    def spy(*a, **k):
        seen.append((os.environ.get("HF_HUB_OFFLINE"), k.get("pretrained")))
        return real(*a, **k)

    monkeypatch.setattr(open_clip, "create_model_and_transforms", spy)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    finder = tiny(cache_dir=tmp_path)
    finder.fit(dataset)
    assert seen == [("1", None)]
    assert "HF_HUB_OFFLINE" not in os.environ  # restored after loading
