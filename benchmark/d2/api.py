"""Public entry points: D2 text or file -> the graph's JSON form."""
from __future__ import annotations

import os

from benchmark.d2.compiler import Compiler
from benchmark.d2.errors import D2LimitError, D2SyntaxError, D2UnsupportedError
from benchmark.d2.files import DEFAULT_LIMITS, Limits, ReadRefused, outside_root, read_d2
from benchmark.d2.graph import GraphBuilder


def parse_text(text: str, filename: str = "<string>", base_dir: str | None = None, *,
               root: str | os.PathLike | None = None, limits: Limits = DEFAULT_LIMITS) -> dict:
    """Compile D2 ``text``; imports resolve against ``base_dir`` (default: the cwd).

    With ``root``, an import that leaves that folder (``@../x``, an absolute path, a
    symbolic link out) is refused with a :class:`D2LimitError` at the import; ``limits``
    bounds file sizes and the objects and connections made.
    """
    if not isinstance(text, str):
        raise D2SyntaxError("D2 text must be a string", file=filename)
    if "\x00" in text:
        raise D2SyntaxError("NUL character in D2 text", file=filename)
    try:
        compiler = Compiler(root=os.fspath(root) if root is not None else None, limits=limits)
        compiler.bytes_read = len(text.encode("utf-8", "surrogatepass"))
        root_map = compiler.compile_text(text, filename, base_dir)
        return GraphBuilder(root_map, filename).build(compiler.edges)
    except RecursionError:
        raise D2UnsupportedError("nesting this deep is unsupported", file=filename) from None


def parse_file(path: str | os.PathLike, *, root: str | os.PathLike | None = None,
               limits: Limits = DEFAULT_LIMITS) -> dict:
    """Read and compile a ``.d2`` file; imports resolve relative to its folder.

    With ``root`` the file itself and every import must lie inside that folder.
    """
    path = os.fspath(path)
    real = outside_root(path, os.fspath(root)) if root is not None else None
    if real is not None:
        raise D2LimitError(f"the diagram is {real}, outside {os.fspath(root)}, the folder it "
                           "is confined to", file=path)
    try:
        text = read_d2(path, limits.max_file_bytes)
    except ReadRefused as exc:
        raise D2LimitError(f"cannot read: {exc}", file=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise D2SyntaxError(f"cannot read: {reason}", file=path) from None
    return parse_text(text, filename=path, base_dir=os.path.dirname(os.path.abspath(path)),
                      root=root, limits=limits)
