"""Bytes kept on disk instead of in memory: written once to an unnamed temporary file, read back by position.

A run holds some things for every sample or every diagram from the moment they are made until the end (the
report's coded rows, each diagram's packed questions and parsed form). Packed, they are small, but a run a
hundred times as large holds a hundred times as many; in a :class:`Spill` they take disk instead, and memory
holds only where each lies (a :class:`Blob`, a few dozen bytes). The file has no name (the system removes it
when the last process holding it closes it or ends) and is read with ``pread``, which moves no shared file
position, so a forked process reads the blobs it inherited while its parent goes on writing; a process
that was forked writes to a file of its own.

>>> import pickle
>>> spill = Spill()
>>> a, b = spill.put(b"first"), spill.put(b"second")
>>> a.read(), b.read(), len(b), spill.size, pickle.loads(pickle.dumps(b)), pickle.loads(pickle.dumps(spill)).size
(b'first', b'second', 6, 11, b'second', 0)
"""
from __future__ import annotations

import gzip
import io
import os
import pickle
import tempfile
import threading
import zlib
from typing import Any


class Blob:
    """Where one piece of bytes lies in a :class:`Spill`'s file: read it with :meth:`read`."""

    __slots__ = ("_file", "_at", "_n")

    def __init__(self, file: Any, at: int, n: int) -> None:
        self._file, self._at, self._n = file, at, n

    def read(self) -> bytes:
        data = os.pread(self._file.fileno(), self._n, self._at)
        while len(data) < self._n:   # a short read of a regular file: read on from where it stopped
            more = os.pread(self._file.fileno(), self._n - len(data), self._at + len(data))
            if not more:
                raise OSError(f"spilled bytes: {self._n} at {self._at}, the file ends after {len(data)}")
            data += more
        return data

    def __len__(self) -> int:
        return self._n

    def __reduce__(self) -> Any:   # to another process (a worker, a pickle): the bytes themselves
        return (bytes, (self.read(),))


def keep(data: bytes, spill: "Spill | None") -> "bytes | Blob":
    """``data`` written to ``spill`` (where it lies), or ``data`` itself to keep in memory when there is none."""
    return data if spill is None else spill.put(data)


def read(data: "bytes | Blob") -> bytes:
    """The bytes :func:`keep` kept: ``data`` itself, or read back from its spill file.

    >>> read(b"x"), read(keep(b"y", None)), read(keep(b"z", Spill()))
    (b'x', b'y', b'z')
    """
    return data if type(data) is bytes else data.read()


def pack(value: Any) -> bytes:
    """``value`` pickled and deflated (level 1, in gzip's framing, which :func:`unpack` reads as a stream): a
    diagram's questions or finders' results take under a tenth of their memory as live objects this way, and
    a worker's finished samples a tenth of their pickle on the way back to the run.

    >>> unpack(pack({"q1": {"diagram": "d", "rank": 1}}))["q1"]["rank"], unpack(keep(pack([1, 2]), Spill()))
    (1, [1, 2])
    """
    return zlib.compress(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), 1, wbits=31)


def unpack(data: "bytes | Blob") -> Any:
    """What :func:`pack` packed (the bytes, or where :func:`keep` kept them), inflated a piece at a time as it
    is unpickled (the pickle's frames, about 64 KB each), never the whole pickle at once: a diagram's samples
    pickle to some MB (2.8 MB the median of the bundled diagrams, 8.8 MB the most), and a buffer that size
    made and freed for each diagram raises glibc's threshold for serving allocations by ``mmap``, after which
    such buffers are carved from the heap and leave it fragmented: the run's peak memory was 1.13x what it is
    this way (bundled data, 1x)."""
    with gzip.GzipFile(fileobj=io.BytesIO(read(data))) as f:
        return pickle.load(f)


class Spill:
    """An append-only temporary file of :class:`Blob` s (see the module's text). Thread-safe. Its file is closed
    once neither the spill nor any of its blobs is referenced; pickled (to a worker), it is a new, empty spill."""

    def __init__(self, prefix: str = "diagqa-") -> None:
        self._prefix = prefix
        self._file: Any = None
        self._pid = 0
        self._end = 0
        self._lock = threading.Lock()

    def put(self, data: bytes) -> Blob:
        """Write ``data`` at the file's end; where it lies."""
        with self._lock:
            if self._file is None or self._pid != os.getpid():   # a forked process writes to a file of its own
                self._file = tempfile.TemporaryFile(prefix=self._prefix, buffering=0)
                self._pid, self._end = os.getpid(), 0
            at, view = self._end, memoryview(data)
            while view:
                view = view[os.pwrite(self._file.fileno(), view, at + len(data) - len(view)):]
            self._end += len(data)
            return Blob(self._file, at, len(data))

    def __reduce__(self) -> Any:
        return (Spill, (self._prefix,))

    @property
    def size(self) -> int:
        """Bytes this process wrote to its file."""
        return self._end

    def close(self) -> None:
        """Close this process's file (its blobs cannot be read from then on)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file, self._end = None, 0
