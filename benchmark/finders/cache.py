"""Where finders keep what they computed once: OCR text and image embeddings, keyed by content hash.

The cache lives in ``.cache/`` at the repository root, or under ``$DIAGQA_CACHE`` when set.
Entries are named by the SHA-256 of the input bytes, so an edited PNG is never served stale text.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from benchmark.dataset import DEFAULT_ROOT


def cache_root() -> Path:
    """The cache folder (not created here)."""
    env = os.environ.get("DIAGQA_CACHE")
    return Path(env) if env else DEFAULT_ROOT / ".cache"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``.

    >>> sha256_bytes(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file, so a reader never sees half an entry."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
