"""A SQLite cache of chat replies keyed by a hash of (model, messages, params).

Re-runs read replies from here instead of calling the endpoint again, so an interrupted run
resumes where it stopped. Only replies that parsed are stored (a failed call, an empty or
unparsable reply is asked again next time), and only what the endpoint replied, with any echo of
the key scrubbed -- never credentials. The file lives in ``$DIAGQA_CACHE`` (default
``~/.cache/diagqa``), not in the working directory, so runs from any directory share it. Safe to
share between threads (one short-lived connection per call) and processes (SQLite locking).

>>> import tempfile, pathlib
>>> c = ReplyCache(pathlib.Path(tempfile.mkdtemp()) / "llm.sqlite")
>>> k = request_key("m", [{"role": "user", "content": "hi"}], {"temperature": 0})
>>> c.get(k) is None
True
>>> c.put(k, "m", "hello", {"total_tokens": 3}, 0.25)
>>> c.get(k)["content"], len(c)
('hello', 1)
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, content TEXT NOT NULL,
    usage TEXT NOT NULL, latency_s REAL, created REAL NOT NULL)"""


def cache_dir() -> Path:
    """``$DIAGQA_CACHE`` when set, else ``$XDG_CACHE_HOME/diagqa`` or ``~/.cache/diagqa`` (absolute).

    >>> import os; os.environ["DIAGQA_CACHE"] = "/tmp/x"; str(cache_dir())
    '/tmp/x'
    >>> del os.environ["DIAGQA_CACHE"]
    """
    env = os.environ.get("DIAGQA_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return (Path(base).expanduser() / "diagqa").resolve()


def cache_file(path: str | Path | None, name: str = "llm.sqlite") -> Path:
    """Where a cache lives: ``path`` when absolute, else under :func:`cache_dir` (``name`` when None)."""
    p = Path(path).expanduser() if path else Path(name)
    return p if p.is_absolute() else cache_dir() / p


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of one request (model, messages, sampling params).

    >>> request_key("m", [], {"a": 1, "b": 2}) == request_key("m", [], {"b": 2, "a": 1})
    True
    """
    blob = json.dumps({"model": model, "messages": messages, "params": params}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ReplyCache:
    """``key -> {content, usage, model, latency_s}`` in one SQLite file."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, timeout=30)
        if not self._ready:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute(_SCHEMA)
            con.commit()
            self._ready = True
        return con

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            con = self._connect()
            try:
                row = con.execute("SELECT content, usage, model, latency_s FROM replies WHERE key = ?", (key,)).fetchone()
            finally:
                con.close()
        if row is None:
            return None
        return {"content": row[0], "usage": json.loads(row[1]), "model": row[2], "latency_s": row[3]}

    def put(self, key: str, model: str, content: str, usage: dict[str, Any], latency_s: float | None) -> None:
        with self._lock:
            con = self._connect()
            try:
                con.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                            (key, model, content, json.dumps(usage, sort_keys=True), latency_s, time.time()))
                con.commit()
            finally:
                con.close()

    def delete(self, key: str) -> None:
        with self._lock:
            con = self._connect()
            try:
                con.execute("DELETE FROM replies WHERE key = ?", (key,))
                con.commit()
            finally:
                con.close()

    def __len__(self) -> int:
        with self._lock:
            con = self._connect()
            try:
                return int(con.execute("SELECT COUNT(*) FROM replies").fetchone()[0])
            finally:
                con.close()
