"""Reading D2 files safely: size limits, regular files only, imports kept inside a folder.

A diagram and every file it imports are read through :func:`read_d2`: at most
``Limits.max_file_bytes`` each, ``Limits.max_total_bytes`` for a diagram and all its
imports together, and only regular files (a link to ``/dev/zero`` or a pipe is refused,
not read without end). Text is decoded as UTF-8 with line endings kept as written: d2
ends a line only at ``\\n``, so a bare ``\\r`` is ordinary whitespace (``\\r\\n`` works as
a line end because the ``\\r`` is trailing space).

When a ``root`` folder is given, :func:`outside_root` says whether a path (symbolic links
resolved) leaves it; the parser then refuses the file or import.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Bounds on what one diagram may make the parser read and build.

    ``max_nodes`` and ``max_edges`` count the objects and connections made while compiling
    (a glob such as ``* -> *`` over 1,000 objects would make a million connections).
    """
    max_file_bytes: int = 4 * MIB
    max_total_bytes: int = 16 * MIB
    max_nodes: int = 10_000
    max_edges: int = 50_000


DEFAULT_LIMITS = Limits()


class ReadRefused(Exception):
    """A file that is not read: too large, or not a regular file. ``str()`` says why."""


def read_d2(path: str, max_bytes: int) -> str:
    """Text of the D2 file at ``path``; :class:`ReadRefused`, ``OSError`` or
    ``UnicodeDecodeError`` when it cannot be read."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ReadRefused("not a regular file")
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ReadRefused(f"larger than the {_size(max_bytes)} limit for a D2 file")
    return data.decode("utf-8")


def readable(path: str, max_bytes: int) -> bool:
    """Whether :func:`read_d2` would read ``path`` rather than refuse it (a regular file
    within the size limit; it may still fail to open or decode)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size <= max_bytes


def outside_root(path: str, root: str) -> str | None:
    """Where ``path`` really is (symbolic links resolved) when that is not inside folder
    ``root``; ``None`` when it is inside."""
    real = os.path.realpath(path)
    base = os.path.realpath(root)
    return real if os.path.commonpath([real, base]) != base else None


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n} bytes"
