"""Image hygiene: empty, oversized, 16-bit, JPEG-named-PNG and shapeless images, on real files
read by the real decoder and tesseract; never a traceback and never a silent empty graph."""
from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from benchmark.cli import main
from benchmark.errors import InputError
from benchmark.extract.ocr import tesseract_available
from benchmark.render import render_file

FIXTURES = Path(__file__).parent / "fixtures" / "extract"

needs_tesseract = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def bomb_png(side: int) -> bytes:
    """A real, valid grey PNG of side x side white pixels (a few hundred kilobytes on disk)."""
    comp = zlib.compressobj(9)
    row = b"\x00" + b"\xff" * side
    data = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", data) + _png_chunk(b"IEND", b"")


@pytest.fixture(scope="module")
def ru_png(tmp_path_factory) -> Path:
    png = tmp_path_factory.mktemp("ru") / "ru.png"
    render_file(FIXTURES / "ru.d2", png)
    return png


def test_empty_png_is_a_clear_error_naming_the_file(tmp_path, capsys):
    from benchmark.extract.raster import load_rgb

    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"empty\.png: an empty file \(0 bytes\)"):
        load_rgb(empty)
    assert main(["extract", str(empty), "--cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "empty.png" in err and "0 bytes" in err and "Traceback" not in err


def test_decompression_bomb_is_refused_before_decoding(tmp_path):
    import time

    from benchmark.extract.raster import load_rgb

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(bomb_png(20000))
    assert bomb.stat().st_size < 2_000_000
    t0 = time.perf_counter()
    with pytest.raises(InputError, match=r"bomb\.png: image of 20000x20000 = 400,000,000 pixels is larger than"):
        load_rgb(bomb)
    assert time.perf_counter() - t0 < 5  # refused from the header, not after decoding 400 MB


def test_pixel_limit_can_be_set(tmp_path, monkeypatch):
    from benchmark.extract.raster import load_rgb

    small = tmp_path / "small.png"
    small.write_bytes(bomb_png(100))
    assert load_rgb(small).shape == (100, 100, 3)
    monkeypatch.setenv("DIAGQA_MAX_PIXELS", "5000")
    with pytest.raises(InputError, match="10,000 pixels is larger than the limit of 5,000"):
        load_rgb(small)


def test_16_bit_png_is_scaled_not_wrapped(ru_png, tmp_path):
    import cv2

    from benchmark.extract.raster import load_rgb

    eight = cv2.imread(str(ru_png), cv2.IMREAD_UNCHANGED)
    sixteen = tmp_path / "ru16.png"
    cv2.imwrite(str(sixteen), eight.astype(np.uint16) * 257)
    assert cv2.imread(str(sixteen), cv2.IMREAD_UNCHANGED).dtype == np.uint16
    assert np.array_equal(load_rgb(sixteen), load_rgb(ru_png))


@needs_tesseract
def test_16_bit_png_extracts_like_the_8_bit_one(ru_png, tmp_path):
    import cv2

    from benchmark.extract.pipeline import extract

    sixteen = tmp_path / "ru16.png"
    cv2.imwrite(str(sixteen), cv2.imread(str(ru_png), cv2.IMREAD_UNCHANGED).astype(np.uint16) * 257)
    got = extract(sixteen)
    assert got == extract(ru_png)
    assert len(got["nodes"]) == 5 and len(got["edges"]) == 5


def test_jpeg_named_png_is_refused_with_a_message(ru_png, tmp_path, capsys):
    import cv2

    fake = tmp_path / "photo.png"
    fake.write_bytes(cv2.imencode(".jpg", cv2.imread(str(ru_png)))[1].tobytes())
    assert main(["extract", str(fake), "--cache", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "photo.png: a JPEG image, not a PNG" in err and "export the diagram as PNG" in err


@needs_tesseract
def test_text_without_shapes_warns_and_exits_non_zero(tmp_path, capsys):
    import cv2

    img = np.full((300, 900, 3), 255, np.uint8)
    for i, words in enumerate(("Orders Service", "Payment Gateway", "Audit Log")):
        cv2.putText(img, words, (40, 70 + 90 * i), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3, cv2.LINE_AA)
    png = tmp_path / "plain.png"
    cv2.imwrite(str(png), img)
    assert main(["extract", str(png), "--format", "json", "--cache", str(tmp_path / "c")]) == 1
    out, err = capsys.readouterr()
    graph = json.loads(out)
    assert graph["nodes"] == [] and graph["coverage"]["ocr_words"] >= 4
    assert graph["warnings"] and "no shapes found, although OCR read" in graph["warnings"][0]
    assert "warning: " in err and "plain.png" in err and "no shapes found" in err


@needs_tesseract
def test_a_good_render_has_full_coverage_and_no_warning(ru_png, tmp_path, capsys):
    assert main(["extract", str(ru_png), "--format", "json", "--cache", str(tmp_path / "c")]) == 0
    out, err = capsys.readouterr()
    graph = json.loads(out)
    assert graph["warnings"] == [] and "warning" not in err
    assert graph["coverage"]["label_words"] == graph["coverage"]["ocr_words"] == 10


@needs_tesseract
def test_one_empty_png_does_not_stop_the_ocr_finders(ru_png, tmp_path, monkeypatch):
    from benchmark.finders.ocr_text import ocr_texts

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    empty, bomb = tmp_path / "empty.png", tmp_path / "bomb.png"
    empty.write_bytes(b"")
    bomb.write_bytes(bomb_png(20000))
    got = ocr_texts([empty, ru_png, bomb], workers=2, progress=False)
    assert isinstance(got[empty], InputError) and "0 bytes" in str(got[empty]) and "empty.png" in str(got[empty])
    assert isinstance(got[bomb], InputError) and "pixels is larger than" in str(got[bomb])
    assert "Проверка" in got[ru_png]


@needs_tesseract
def test_a_text_mosaic_taller_than_tesseract_takes_is_read_in_bands(monkeypatch):
    # tesseract refuses an image with a side over 32 767 pixels ("Image too large"): a Mermaid drawing
    # read in d2's colours made patches as large as the drawing, and its whole extraction failed. The
    # mosaic is read in bands of rows; here with the limit lowered to a few rows of patches
    from benchmark.dataset import DEFAULT_ROOT
    from benchmark.extract import ocr
    from benchmark.extract.raster import load_rgb, make_raster

    r = make_raster(load_rgb(DEFAULT_ROOT / "diagrams" / "net_office.png"))
    whole = sorted(w.text for w in ocr.read_words(r))
    img, slots = ocr.text_image(r)
    monkeypatch.setattr(ocr, "TESSERACT_MAX_SIDE", img.shape[1])   # the mosaic's width: it is taller
    assert len(ocr.mosaic_bands(slots, img.shape[0])) >= 3
    banded = sorted(w.text for w in ocr.read_words(r))
    assert len(whole) > 100
    assert banded == whole
