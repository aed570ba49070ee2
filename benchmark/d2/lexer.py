"""Character-level scanning of D2 text: positions, whitespace, strings and escapes.

D2 has no separate token stream: what a character means depends on where it is (a ``-``
is part of a key unless an arrow follows, ``$`` starts a substitution only in values).
:class:`Scanner` holds the cursor and reads the string forms (unquoted, double quoted,
single quoted, block strings); :mod:`benchmark.d2.parser` builds statements from them.
"""
from __future__ import annotations

import bisect

from benchmark.d2.errors import D2SyntaxError, D2UnsupportedError
from benchmark.d2.syntax import KeyPart, Scalar, Subst

ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
STOP_ANY = "\n;#{}[]"          # ends an unquoted string anywhere
STOP_KEY = ":.<>&"             # also ends it inside a key
EDGE_AFTER_DASH = "->*"        # '-' followed by one of these starts a connection
MAX_KEY_PARTS = 100


class Source:
    """The text being parsed and the file name used in error messages."""

    def __init__(self, text: str, filename: str, imported_at=None) -> None:
        self.text = text
        self.filename = filename
        self.imported_at = imported_at   # (Source, offset) of the import statement, if any
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based line and column of character offset ``pos``."""
        line = bisect.bisect_right(self._line_starts, pos) - 1
        return line + 1, pos - self._line_starts[line] + 1

    def error(self, pos: int, message: str, expected: str | None = None) -> D2SyntaxError:
        line, col = self.line_col(pos)
        return D2SyntaxError(message, file=self.filename, line=line, column=col, expected=expected)


class Scanner:
    """Cursor over a :class:`Source` with the string readers of the D2 grammar."""

    def __init__(self, source: Source) -> None:
        self.src = source
        self.text = source.text
        self.n = len(self.text)
        self.i = 0
        self.depth = 0            # map nesting, for the implicit indent of block strings
        self.in_edge_group = False
        self.star = False         # the last unquoted string held an unescaped '*'

    # -- cursor helpers -------------------------------------------------------------
    def fail(self, pos: int, message: str, expected: str | None = None):
        raise self.src.error(pos, message, expected)

    def unsupported(self, pos: int, message: str):
        line, col = self.src.line_col(pos)
        raise D2UnsupportedError(message, file=self.src.filename, line=line, column=col)

    def char(self, j: int | None = None) -> str:
        j = self.i if j is None else j
        return self.text[j] if j < self.n else ""

    def skip_space_any(self) -> None:
        """Skip all whitespace, newlines included."""
        while self.i < self.n and self.text[self.i].isspace():
            self.i += 1

    def peek_same_line(self) -> tuple[str, int]:
        """Next non-space character on this line and its offset ('' at a newline or EOF)."""
        j = self.i
        while j < self.n and self.text[j].isspace():
            if self.text[j] == "\n":
                return "", j
            j += 1
        return (self.text[j] if j < self.n else ""), j

    # -- substitutions ----------------------------------------------------------------
    def read_substitution(self, start: int) -> Subst | None:
        """After ``$`` (at ``start``): ``{a.b}``; ``None`` at end of line."""
        c, j = self.peek_same_line()
        if not c:
            return None
        if c != "{":
            self.fail(start, "expected '{' after '$' (substitutions are written ${name})",
                      expected="{")
        self.i = j + 1
        path = self.read_key_path()
        c, j = self.peek_same_line()
        if c != "}":
            self.fail(start, "expected '}' to close the substitution", expected="}")
        self.i = j + 1
        return Subst([p.value for p in path or []], start)

    # -- strings ------------------------------------------------------------------------
    def read_string(self, in_key: bool) -> Scalar | None:
        """A string at the cursor (after optional spaces on this line), or ``None``."""
        c, j = self.peek_same_line()
        if not c:
            return None
        self.i = j
        if c == '"':
            self.i += 1
            return self.read_double(j, in_key)
        if c == "'":
            self.i += 1
            return self.read_single(j)
        if c == "|":
            self.i += 1
            return self.read_block(j)
        return self.read_unquoted(in_key)

    def read_unquoted(self, in_key: bool) -> Scalar | None:
        start = self.i
        self.star = False
        if self.text.startswith("...@", start):
            self.fail(start, "unquoted strings cannot begin with ...@ as that's import spread "
                             "syntax")
        parts: list = []
        buf: list[str] = []
        text, n = self.text, self.n
        while self.i < n:
            c = text[self.i]
            if self.in_edge_group and c == ")":
                nxt, _ = self._peek_after(self.i + 1)
                if nxt in ("", "#", "{", "}", "[", "]", ":", "."):
                    break
                buf.append(c)
                self.i += 1
                continue
            if c in STOP_ANY:
                break
            if in_key:
                if c in STOP_KEY:
                    break
                if c == "-":
                    c2 = self.char(self.i + 1)
                    if c2 == "":
                        break
                    if c2 in STOP_ANY:
                        buf.append(c)
                        self.i += 1
                        break
                    if c2 in EDGE_AFTER_DASH:
                        break
                    buf.append(c)
                    self.i += 1
                    c = c2
            self.i += 1
            if not in_key and c == "$":
                sub = self.read_substitution(self.i - 1)
                if sub is not None:
                    _add_substitution(parts, buf, sub)
                continue
            if c != "\\":
                buf.append(c)
                if c == "*":
                    self.star = True   # an escaped '\\*' is a plain character, not a glob
                continue
            if self.i >= n:
                self.fail(self.i - 1, "unfinished escape sequence")
            c2 = text[self.i]
            self.i += 1
            if c2 == "\n":
                nxt, j = self.peek_same_line()
                if not nxt:
                    break
                self.i = j
                continue
            buf.append(ESCAPES.get(c2, c2))
        last = "".join(buf).rstrip()
        if last:
            parts.append(last)
        # give back trailing whitespace so positions after the string stay right
        while self.i > start and self.text[self.i - 1].isspace() and self.text[self.i - 1] != "\n":
            self.i -= 1
        if not parts:
            return None
        return Scalar("unquoted", parts, start)

    def _peek_after(self, j: int) -> tuple[str, int]:
        while j < self.n and self.text[j].isspace():
            if self.text[j] == "\n":
                return "", j
            j += 1
        return (self.text[j] if j < self.n else ""), j

    def read_double(self, start: int, in_key: bool) -> Scalar:
        parts: list = []
        buf: list[str] = []
        text, n = self.text, self.n
        while True:
            if self.i >= n or text[self.i] == "\n":
                self.fail(start, "expected '\"' to close the string opened here", expected='"')
            c = text[self.i]
            self.i += 1
            if not in_key and c == "$":
                sub = self.read_substitution(self.i - 1)
                if sub is not None:
                    _add_substitution(parts, buf, sub)
                    continue
            if c == '"':
                break
            if c != "\\":
                buf.append(c)
                continue
            if self.i >= n:
                self.fail(start, "expected '\"' to close the string opened here", expected='"')
            c2 = text[self.i]
            self.i += 1
            if c2 == "\n":
                continue
            buf.append(ESCAPES.get(c2, c2))
        if buf or not parts:
            parts.append("".join(buf))
        return Scalar("double", parts, start)

    def read_single(self, start: int) -> Scalar:
        buf: list[str] = []
        text, n = self.text, self.n
        while True:
            if self.i >= n or text[self.i] == "\n":
                self.fail(start, "expected \"'\" to close the string opened here", expected="'")
            c = text[self.i]
            self.i += 1
            if c == "'":
                if self.char() == "'":
                    self.i += 1
                    buf.append("'")
                    continue
                break
            if c == "\\" and self.char() == "\n":
                self.i += 1
                continue
            buf.append(c)
        return Scalar("single", ["".join(buf)], start)

    def read_block(self, start: int) -> Scalar:
        """After ``|``: optional extra quote characters, a tag, then text up to the closer."""
        text, n = self.text, self.n
        self.depth += 1
        try:
            quote = ""
            while self.i < n:
                c = text[self.i]
                if c.isspace() or c.isalpha() or c.isdigit() or c == "_":
                    break
                quote += c
                self.i += 1
            tag = ""
            while self.i < n and not text[self.i].isspace():
                tag += text[self.i]
                self.i += 1
            tag = tag or "md"
            closer = (quote[-1] + quote[1:] + "|") if quote else "|"
            prefix = ""
            while self.i < n:
                c = text[self.i]
                if not c.isspace():
                    prefix = " " * (self.depth * 2)
                    break
                self.i += 1
                if c == "\n":
                    break
            end = text.find(closer, self.i)
            if self.i >= n or end < 0:
                self.fail(start, f"expected '{quote}|' to close the block string opened here",
                          expected=quote + "|")
            body = prefix + text[self.i:end].replace("\r\n", "\n")   # CRLF lines end at \n
            self.i = end + len(closer)
        finally:
            self.depth -= 1
        return Scalar("block", [_trim_common_indent(_trim_after_last_newline(body))], start, tag=tag)

    # -- keys ---------------------------------------------------------------------------
    def read_key_path(self) -> list | None:
        """``a.b."c d"`` -> list of :class:`KeyPart`; ``None`` when there is no key."""
        parts = []
        while True:
            c, j = self.peek_same_line()
            if not c or c == "(" or c == ".":
                break
            s = self.read_string(in_key=True)
            if s is None:
                break
            value = s.parts[0] if s.parts else ""
            if s.kind == "unquoted" and value.startswith("@"):
                self.fail(s.pos, f"{value} is not a valid import, did you mean ...{value}?")
            glob = s.kind == "unquoted" and self.star
            parts.append(KeyPart(value, s.kind != "unquoted", s.pos, glob))
            if len(parts) > MAX_KEY_PARTS:
                self.unsupported(parts[0].pos, f"key paths longer than {MAX_KEY_PARTS} segments "
                                               "are unsupported")
            c, j = self.peek_same_line()
            if c != ".":
                break
            self.i = j + 1
        return parts or None


def _trim_after_last_newline(s: str) -> str:
    k = s.rfind("\n")
    if k < 0:
        return s.rstrip()
    last = s[k + 1:].rstrip()
    return s[:k] if not last else s[:k + 1] + last


def _split_indent(line: str) -> tuple[str, str]:
    k = 0
    while k < len(line) and line[k].isspace():
        k += 1
    return line[:k].replace("\t", "  "), line[k:]


def _trim_common_indent(s: str) -> str:
    common = None
    for line in s.split("\n"):
        if not line:
            continue
        indent, rest = _split_indent(line)
        if not indent:
            return s
        if not rest:
            continue
        if common is None or len(indent) < len(common):
            common = indent
    if not common:
        return s
    out = []
    for line in s.split("\n"):
        if line:
            width = 0
            k = 0
            while k < len(line) and line[k].isspace() and width < len(common):
                width += 2 if line[k] == "\t" else 1
                k += 1
            line = line[k:]
        out.append(line)
    return "\n".join(out)


def _add_substitution(parts: list, buf: list[str], sub: Subst) -> None:
    """The text gathered in ``buf`` (if any) and then the substitution ``sub`` become parts of a string;
    ``buf`` is emptied for what follows."""
    if buf:
        parts.append("".join(buf))
        buf.clear()
    parts.append(sub)
