"""A run directory kept safe: its name, its lock, atomic files, and the append-only sample log.

* :func:`run_dir_for` -- ``<out>/<run-id>``, refusing ids that would leave ``out`` (``../x``, ``/tmp/x``) or
  clobber the ``LATEST`` / ``latest`` pointers.
* :class:`RunLock` -- ``<run dir>/.lock`` holds the PID of the one process writing the directory. The lock
  is an ``flock`` on that file, so the kernel frees it when its process dies however it dies; a file left
  behind by a dead process is a stale lock and is taken over (the PID it names is reported).
* :func:`write_atomic` -- a file written next to its final name, flushed to disk, then renamed over it:
  a reader sees the old file or the new one, never half of one.
* :class:`SampleLog` -- ``samples.jsonl`` opened for appending; every batch of lines is flushed as it
  is written, so a killed run keeps every sample it finished. :func:`scan_samples` reads such a log
  back for a resume: a last line cut short by the kill is dropped (and cut from the file), a
  duplicated sample or a bad line elsewhere is an error naming file and line.
"""
from __future__ import annotations

import errno
import fcntl
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from benchmark.errors import DiagQAError, InputError

#: names in the results directory that are not runs
RESERVED = frozenset({"LATEST", "latest"})
LOCK = ".lock"


def check_run_id(run_id: str) -> str:
    """``run_id`` when it names a directory directly inside the results directory; a clear error otherwise.

    >>> check_run_id("20260301T101500Z-3fa2c1d0")
    '20260301T101500Z-3fa2c1d0'
    >>> check_run_id("../x")
    Traceback (most recent call last):
    ...
    benchmark.errors.DiagQAError: run id '../x' is not a plain directory name (no '/', '..' or leading '.'): a run stays inside its results directory
    """
    text = str(run_id)
    plain = (text and text == text.strip() and "/" not in text and "\\" not in text and "\0" not in text
             and not text.startswith(".") and (os.altsep is None or os.altsep not in text))
    if not plain:
        raise DiagQAError(f"run id {text!r} is not a plain directory name (no '/', '..' or leading '.'): "
                          "a run stays inside its results directory")
    if text in RESERVED:
        raise DiagQAError(f"run id {text!r} is reserved: results/{text} names the newest run")
    return text


def run_dir_for(out_dir: Path | str, run_id: str) -> Path:
    """``out_dir / run_id`` after :func:`check_run_id`; also refused when it resolves outside ``out_dir``
    (``out_dir/run_id`` is a symlink elsewhere)."""
    out = Path(out_dir)
    path = out / check_run_id(run_id)
    if path.is_symlink() and not path.resolve().is_relative_to(out.resolve()):
        raise DiagQAError(f"{path} links outside {out}: a run stays inside its results directory")
    return path


# -- atomic files ----------------------------------------------------------------------------------

def write_atomic(path: Path, data: str | bytes | Iterable[str | bytes]) -> None:
    """Write ``data`` (text, bytes, or pieces of either written one after another) to ``path`` through
    ``<path>.tmp-<pid>`` + rename (with fsync): all or nothing."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    pieces = [data] if isinstance(data, (str, bytes)) else data
    try:
        with tmp.open("wb") as fh:
            for piece in pieces:
                fh.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def move_into(src_dir: Path, dst_dir: Path) -> list[Path]:
    """Rename every file under ``src_dir`` to the same place under ``dst_dir`` (one atomic rename per
    file: each is the old file or the new one), then remove ``src_dir``; returns the new paths."""
    moved = []
    for path in sorted(p for p in Path(src_dir).rglob("*") if p.is_file()):
        target = Path(dst_dir) / path.relative_to(src_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
        moved.append(target)
    for d in sorted((p for p in Path(src_dir).rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
        d.rmdir()
    Path(src_dir).rmdir()
    return moved


# -- the lock ----------------------------------------------------------------------------------------

def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (``kill(pid, 0)``).

    >>> pid_alive(os.getpid())
    True
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True


class RunLock:
    """The one process allowed to write a run directory (see module doc). Use as a context manager.

    :attr:`stale_pid` is the PID a dead process left in the lock file, when one was taken over.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK
        self.fd: int | None = None
        self.stale_pid: int | None = None

    def _holder(self) -> int | None:
        try:
            return int(self.path.read_text(encoding="utf-8").split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def acquire(self) -> "RunLock":
        for _ in range(100):  # retried only when another process removed the file between open and lock
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                pid = self._holder()
                who = f"process {pid}" if pid is not None else "another process"
                raise DiagQAError(f"{self.path.parent} is being written by {who} (lock {self.path}); "
                                  "wait for it or choose another --run-id") from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:  # the file we locked was removed by its previous holder: lock the new one
                os.close(fd)
                continue
            old = os.read(fd, 64).decode("ascii", "replace").split()
            if old and old[0].isdigit() and int(old[0]) != os.getpid():
                self.stale_pid = int(old[0])  # its process is gone (else the flock would be held)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            self.fd = fd
            return self
        raise DiagQAError(f"cannot lock {self.path}: it keeps being replaced")

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink()  # removed while still held, so no other process can lock the old file
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc: Any) -> None:
        self.release()


# -- the sample log ------------------------------------------------------------------------------------

class SampleLog:
    """``samples.jsonl`` opened for appending; :meth:`write` flushes each batch to the operating system
    (so it survives the process) and fsyncs at most every ``sync_s`` seconds (so a crash of the machine
    loses at most that much); :meth:`close` fsyncs."""

    def __init__(self, path: Path, sync_s: float = 5.0) -> None:
        self.path = Path(path)
        self.fh = self.path.open("a", encoding="utf-8")
        self.sync_s = sync_s
        self._synced = time.monotonic()
        self.written = 0

    def write(self, lines: list[str]) -> None:
        if not lines:
            return
        self.fh.write("".join(line + "\n" for line in lines))
        self.fh.flush()
        self.written += len(lines)
        if time.monotonic() - self._synced >= self.sync_s:
            self.sync()

    def sync(self) -> None:
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self._synced = time.monotonic()

    def close(self) -> None:
        if not self.fh.closed:
            self.sync()
            self.fh.close()

    def __enter__(self) -> "SampleLog":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def scan_samples(path: Path, loads: Callable[[bytes], Any], repair: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed record)`` for every line of a sample log, in order, read as a stream.

    A last line without its newline that does not parse was being written when the run was killed:
    it is dropped, and with ``repair`` the file is cut back to the end of the line before it (so that
    appending goes on after a whole line). Any other line that does not parse is an :class:`InputError`
    naming the file and line, raised there; a ``sample_id`` seen twice is one naming the line it is seen
    again on, raised once every line is read (the file is not repaired then).

    What the scan holds is 8 bytes per line (a hash of its sample id), not the ids: only when two hashes
    are equal is the file read again to find the line whose id is really a repeat.
    """
    from array import array

    path = Path(path)
    if not path.exists():
        return
    hashes = array("q")   # (str hashes are this process's own: the scan never outlives it)
    good_end = 0
    with path.open("rb") as fh:
        for i, raw in enumerate(fh, 1):
            if not raw.strip():
                good_end += len(raw)
                continue
            try:
                rec = loads(raw)
                hashes.append(hash(rec["sample_id"]))
            except (ValueError, TypeError, KeyError) as exc:
                if not raw.endswith(b"\n") and not fh.read(1):
                    break  # the cut-off last line of a killed run
                raise InputError(f"not a sample record: {exc}", file=str(path), line=i) from exc
            if not raw.endswith(b"\n"):  # whole record, newline lost: give it one before appending
                if repair:
                    with path.open("ab") as out:
                        out.write(b"\n")
                raw += b"\n"
            good_end += len(raw)
            yield i, rec
    _no_repeated_id(path, hashes, loads)
    if repair and path.stat().st_size > good_end:
        os.truncate(path, good_end)


def _no_repeated_id(path: Path, hashes: Any, loads: Callable[[bytes], Any]) -> None:
    """Raise :class:`InputError` at the first line of ``path`` whose sample id an earlier line has, when
    ``hashes`` (of every record's id, in order) holds a value more than once: only the records whose hash
    is shared are read again, and their ids compared."""
    from benchmark.dataset import recurring

    suspects = set(recurring(hashes).tolist())   # (records by their place among records)
    if not suspects:
        return
    seen: set[Any] = set()
    record = -1
    with path.open("rb") as fh:
        for i, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            record += 1
            if record not in suspects:
                continue
            sid = loads(raw)["sample_id"]
            if sid in seen:
                raise InputError(f"sample {sid} is in the file twice", file=str(path), line=i)
            seen.add(sid)
