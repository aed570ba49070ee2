"""Extraction over a whole dataset: render in a style when asked, extract (cached), score.

Diagrams are spread over a process pool (one worker per core by default); each worker returns
a :class:`~benchmark.extract.evaluate.DiagramScore`, and a diagram that fails is recorded with
its error instead of stopping the others.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchmark.extract.evaluate import DiagramScore, failed, score_diagram
from benchmark.extract.ocr import LANG


@dataclass(frozen=True)
class EvalJob:
    diagram: str
    d2_path: Path
    png_path: Path
    style: str
    lang: str
    cache_dir: Path | None


def style_png(d2_path: Path, style: str, out_dir: Path) -> Path:
    """The render of ``d2_path`` in ``style`` under ``out_dir`` (made when missing or stale)."""
    import hashlib

    from benchmark.render import render_file, sha256_file, style_version

    stamp = sha256_file(d2_path)[:16] + "-" + hashlib.sha256(style_version(style).encode()).hexdigest()[:12]
    png = out_dir / style / f"{d2_path.stem}-{stamp}.png"
    if not png.exists():
        tmp = png.with_suffix(f".{os.getpid()}.png")
        render_file(d2_path, tmp, style=style)
        os.replace(tmp, png)
    return png


def run_job(job: EvalJob) -> DiagramScore:
    """Extract and score one diagram; errors become a failed record."""
    from benchmark.d2 import parse_file
    from benchmark.extract.cache import cached_extract, default_cache_dir

    try:
        png = job.png_path
        if job.style != "default":
            png = style_png(job.d2_path, job.style, (job.cache_dir or default_cache_dir()) / "renders")
        if not png.exists():
            return failed(job.diagram, f"{png} is missing (run: diagqa render)")
        reference = parse_file(job.d2_path)
        extracted = cached_extract(png, lang=job.lang, cache_dir=job.cache_dir)
        return score_diagram(job.diagram, extracted, reference)
    except Exception as exc:  # one bad diagram never loses the rest
        return failed(job.diagram, f"{type(exc).__name__}: {exc}")


def eval_dataset(data_dir: Path, style: str = "default", workers: int | None = None, lang: str = LANG,
                 cache_dir: Path | None = None, ids: list[str] | None = None) -> list[DiagramScore]:
    """Scores for every diagram of ``data_dir/diagrams`` (sorted by id)."""
    ddir = Path(data_dir) / "diagrams"
    names = ids or sorted(p.stem for p in ddir.glob("*.d2"))
    jobs = [EvalJob(n, ddir / f"{n}.d2", ddir / f"{n}.png", style, lang, cache_dir) for n in names]
    workers = workers or min(len(jobs), os.cpu_count() or 1) or 1
    if workers <= 1:
        return [run_job(j) for j in jobs]
    from benchmark.extract.threads import limit_image_threads

    # one tesseract and one OpenCV thread per process: the processes already keep the cores busy
    with ProcessPoolExecutor(max_workers=workers, initializer=limit_image_threads) as pool:
        return list(pool.map(run_job, jobs))
