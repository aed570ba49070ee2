"""Public entry points: D2 text or file -> the graph's JSON form."""
from __future__ import annotations

import os

from benchmark.d2.compiler import Compiler
from benchmark.d2.errors import D2SyntaxError, D2UnsupportedError
from benchmark.d2.graph import GraphBuilder


def parse_text(text: str, filename: str = "<string>", base_dir: str | None = None) -> dict:
    """Compile D2 ``text``; imports resolve against ``base_dir`` (default: the cwd)."""
    if not isinstance(text, str):
        raise D2SyntaxError("D2 text must be a string", file=filename)
    if "\x00" in text:
        raise D2SyntaxError("NUL character in D2 text", file=filename)
    try:
        compiler = Compiler()
        root = compiler.compile_text(text, filename, base_dir)
        return GraphBuilder(root, filename).build(compiler.edges)
    except RecursionError:
        raise D2UnsupportedError("nesting this deep is unsupported", file=filename) from None


def parse_file(path: str | os.PathLike) -> dict:
    """Read and compile a ``.d2`` file; imports resolve relative to its folder."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise D2SyntaxError(f"cannot read: {reason}", file=path) from None
    return parse_text(text, filename=path, base_dir=os.path.dirname(os.path.abspath(path)))
