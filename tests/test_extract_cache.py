"""The extraction cache: keyed by the image's bytes, a second call never runs tesseract."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file

FIXTURES = Path(__file__).parent / "fixtures" / "extract"

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


@pytest.fixture()
def counted(monkeypatch):
    """Count calls to tesseract (the real one still runs)."""
    import pytesseract

    calls = []
    real = pytesseract.image_to_data

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(pytesseract, "image_to_data", counting)
    return calls


def test_second_call_is_served_from_the_cache(tmp_path, counted):
    from benchmark.extract.cache import cache_path, cached_extract, image_hash

    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    cache = tmp_path / "cache"
    first = cached_extract(png, cache_dir=cache)
    assert len(counted) == 1
    entry = cache_path(png, cache)
    assert entry.name == f"{image_hash(png)}.json" and entry.exists()
    second = cached_extract(png, cache_dir=cache)
    assert len(counted) == 1
    assert second == first
    # the same bytes under another name are the same entry
    copy = tmp_path / "copy.png"
    copy.write_bytes(png.read_bytes())
    assert cached_extract(copy, cache_dir=cache) == first and len(counted) == 1


def test_entry_of_another_extractor_version_or_language_is_recomputed(tmp_path, counted):
    from benchmark.extract.cache import cache_path, cached_extract

    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    cache = tmp_path / "cache"
    cached_extract(png, cache_dir=cache)
    entry = cache_path(png, cache)
    data = json.loads(entry.read_text(encoding="utf-8"))
    data["version"] = "0-old"
    data["graph"] = {"nodes": [], "edges": []}
    entry.write_text(json.dumps(data), encoding="utf-8")
    again = cached_extract(png, cache_dir=cache)
    # recomputed from the image's stored words (its one OCR pass): tesseract does not run again
    assert len(counted) == 1 and again["nodes"]
    cached_extract(png, lang="rus", cache_dir=cache)  # other languages: other words
    assert len(counted) == 2


def test_a_damaged_entry_is_recomputed(tmp_path, counted):
    from benchmark.extract.cache import cache_path, cached_extract

    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    cache = tmp_path / "cache"
    cache_path(png, cache).parent.mkdir(parents=True)
    cache_path(png, cache).write_text("{not json", encoding="utf-8")
    assert cached_extract(png, cache_dir=cache)["edges"]
    assert len(counted) == 1


def test_cache_folder_follows_diagqa_cache(tmp_path, monkeypatch, counted):
    from benchmark.extract.cache import cached_extract, image_hash

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "elsewhere"))
    png = tmp_path / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    cached_extract(png)
    cached_extract(png)
    assert (tmp_path / "elsewhere" / "extract" / f"{image_hash(png)}.json").exists()
    assert len(counted) == 1
