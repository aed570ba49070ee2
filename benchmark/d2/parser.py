"""D2 text -> syntax tree (:mod:`benchmark.d2.syntax`).

A recursive-descent reader of the D2 grammar: maps of statements separated by newlines
or ``;``, keys and connection chains, edge references ``(a -> b)[0].key``, primary values
followed by maps, arrays, imports, comments and block comments. The first error stops
the parse with a :class:`~benchmark.d2.errors.D2SyntaxError` naming file, line and column.
"""
from __future__ import annotations

import re

from benchmark.d2.lexer import Scanner, Source
from benchmark.d2.syntax import Array, Edge, Import, Key, Map, Scalar, Spread

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$|[+-]?\d+/\d+$")
_KEYWORD_VALUES = {"null": "null", "suspend": "suspend", "unsuspend": "unsuspend",
                   "true": "bool", "false": "bool"}
MAX_DEPTH = 100          # nesting of maps / arrays, and segments in one key path


def parse(text: str, filename: str = "<string>") -> Map:
    """Parse a whole D2 file into its root :class:`Map`."""
    return Parser(Source(text, filename)).parse_file()


class Parser(Scanner):
    """Builds the syntax tree; see :func:`parse`."""

    def parse_file(self) -> Map:
        if self.text.startswith("\ufeff"):
            self.i = 1
        return self.parse_map(is_file=True, open_pos=0)

    # -- maps ---------------------------------------------------------------------------
    def parse_map(self, is_file: bool, open_pos: int) -> Map:
        m = Map([], open_pos)
        if not is_file:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                self.unsupported(open_pos, f"maps nested deeper than {MAX_DEPTH} levels are unsupported")
        while True:
            self.skip_space_any()
            if self.i >= self.n:
                if not is_file:
                    line, col = self.src.line_col(open_pos)
                    self.fail(self.i, f"expected '}}' to close the map opened at {line}:{col}",
                              expected="}")
                return m
            c = self.text[self.i]
            if c == ";":
                self.i += 1
                continue
            if c == "}":
                if is_file:
                    self.fail(self.i, "unexpected '}': no map is open here")
                self.i += 1
                self.depth -= 1
                return m
            node, what = self.parse_map_node()
            if node is not None:
                m.nodes.append(node)
            if what == "block comment":
                continue
            self.expect_statement_end(what)

    def expect_statement_end(self, what: str) -> None:
        c, j = self.peek_same_line()
        if c in ("", ";", "}", "#"):
            return
        if what == "nothing":
            self.fail(j, f"unexpected character {c!r}: expected a key", expected="key")
        self.fail(j, f"unexpected text after {what}: expected a newline or ';'",
                  expected="newline")

    def parse_map_node(self):
        text, i = self.text, self.i
        if text[i] == "#":
            k = text.find("\n", i)
            self.i = self.n if k < 0 else k
            return None, "comment"
        if text.startswith('"""', i):
            k = text.find('"""', i + 3)
            if k < 0:
                self.fail(i, "expected '\"\"\"' to close the block comment opened here",
                          expected='"""')
            self.i = k + 3
            return None, "block comment"
        if text.startswith("...@", i):
            self.i = i + 4
            return self.parse_import(spread=True, start=i), "import"
        if text.startswith("...$", i):
            self.i = i + 4
            sub = self.read_substitution(i + 3)
            if sub is None:
                self.fail(i + 3, "expected '{' after '$' (substitutions are written ${name})",
                          expected="{")
            return Spread(sub.path, i), "spread"
        key = self.parse_map_key()
        if key is None:
            return None, "nothing"
        key.end = self.i
        return key, _describe(key)

    # -- statements ---------------------------------------------------------------------
    def parse_map_key(self) -> Key | None:
        mk = Key(self.i)
        if self.text.startswith("!&", self.i):
            mk.not_ampersand = True
            self.i += 2
        elif self.char() == "&":
            mk.ampersand = True
            self.i += 1
        if self.char() == "(":
            self.i += 1
            self.parse_edge_group(mk)
            return mk if mk.edges else None
        mk.key = self.read_key_path()
        c, j = self.peek_same_line()
        if c == "(":
            self.i = j + 1
            self.parse_edge_group(mk)
            return mk if mk.edges or mk.key else None
        if c in ("<", ">", "-"):
            src, mk.key = mk.key, None
            self.parse_edges(mk, src)
            self.parse_key_value(mk)
            return mk
        if mk.key is None:
            if c == ":":
                self.fail(mk.pos, "map value without key", expected="key")
            return None   # d2 also ignores a lone '&' or '!&'
        self.parse_key_value(mk)
        return mk

    def parse_edge_group(self, mk: Key) -> None:
        mk.edge_group = True
        self.in_edge_group = True
        try:
            src = self.read_key_path()
            self.parse_edges(mk, src)
        finally:
            self.in_edge_group = False
        c, j = self.peek_same_line()
        if not c:
            return  # d2 reads an unclosed "(a -> b" at the end of a line as a connection
        if c != ")":
            self.fail(j, "expected ')' to close the connection reference", expected=")")
        self.i = j + 1
        c, j = self.peek_same_line()
        if c == "[":
            self.i = j + 1
            mk.edge_index = self.parse_edge_index(j)
            c, j = self.peek_same_line()
        if c == ".":
            self.i = j + 1
            mk.edge_key = self.read_key_path()
            if mk.edge_key is None:
                self.fail(j + 1, "expected a key after '.'", expected="key")
        self.parse_key_value(mk)

    def parse_edge_index(self, start: int):
        c, j = self.peek_same_line()
        if c == "*":
            self.i = j + 1
            value = "*"
        elif c.isdigit():
            k = j
            while k < self.n and self.text[k].isdigit():
                k += 1
            value = int(self.text[j:k])
            self.i = k
        else:
            self.fail(j, "expected a number or '*' in the connection index", expected="index")
        c, j = self.peek_same_line()
        if c != "]":
            self.fail(j, "expected ']' to close the connection index", expected="]")
        self.i = j + 1
        return value

    def parse_edges(self, mk: Key, src) -> None:
        while True:
            c, j = self.peek_same_line()
            if c not in ("<", "-", "*"):
                return
            if src is None:
                self.fail(j, "connection missing source", expected="key")
            start = j
            src_arrow = ""
            if c in "<*":
                src_arrow = c
                j += 1
            dst_arrow = ""
            while True:
                c = self.char(j)
                if c == "":
                    self.fail(start, "unterminated connection", expected="key")
                if c in ">*":
                    dst_arrow = c
                    j += 1
                    break
                if c == "-":
                    j += 1
                    continue
                if c == "\\":
                    self.i = j + 1
                    nxt, k = self.peek_same_line()
                    if nxt:
                        self.fail(start, "only newline escapes are allowed in connections")
                    k += 1
                    while k < self.n and self.text[k].isspace() and self.text[k] != "\n":
                        k += 1
                    j = k
                    continue
                break
            if "*" in (src_arrow, dst_arrow):
                self.unsupported(start, "'*' arrowheads in connections are unsupported")
            self.i = j
            dst = self.read_key_path()
            if dst is None:
                self.fail(src[0].pos, "connection missing destination", expected="key")
            mk.edges.append(Edge(src, dst, src_arrow, dst_arrow, start))
            src = dst

    def parse_key_value(self, mk: Key) -> None:
        c, j = self.peek_same_line()
        if c == "{":
            if mk.key is None and not mk.edges:
                return
        elif c == ":":
            if mk.key is None and not mk.edges:
                self.fail(mk.pos, "map value without key", expected="key")
            self.i = j + 1
        else:
            return
        colon = j
        value = self.parse_value()
        if value is None:
            self.fail(colon, "missing value after colon", expected="value")
        mk.value = value
        if isinstance(value, Scalar):
            c, j = self.peek_same_line()
            if c == "{":
                mk.primary = value
                mk.value = self.parse_value()

    # -- values -------------------------------------------------------------------------
    def parse_value(self):
        c, j = self.peek_same_line()
        if not c:
            return None
        if c == "[":
            self.i = j + 1
            return self.parse_array(j)
        if c == "{":
            self.i = j + 1
            return self.parse_map(is_file=False, open_pos=j)
        if c == "@":
            self.i = j + 1
            return self.parse_import(spread=False, start=j)
        s = self.read_string(in_key=False)
        if s is None or s.kind != "unquoted":
            return s
        if len(s.parts) == 1 and isinstance(s.parts[0], str):
            raw = s.parts[0]
            kind = _KEYWORD_VALUES.get(raw.lower())
            if kind:
                s.kind = kind
                if kind == "bool":
                    s.parts = [raw.lower()]
            elif _NUMBER.match(raw):
                s.kind = "number"
        return s

    def parse_array(self, start: int) -> Array:
        arr = Array([], start)
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.unsupported(start, f"arrays nested deeper than {MAX_DEPTH} levels are unsupported")
        while True:
            self.skip_space_any()
            if self.i >= self.n:
                line, col = self.src.line_col(start)
                self.fail(self.i, f"expected ']' to close the array opened at {line}:{col}",
                          expected="]")
            c = self.text[self.i]
            if c == ";":
                self.i += 1
                continue
            if c == "]":
                self.i += 1
                self.depth -= 1
                return arr
            if c == "#":
                k = self.text.find("\n", self.i)
                self.i = self.n if k < 0 else k
                continue
            value = self.parse_value()
            if value is None:
                self.fail(self.i, f"unexpected character {c!r} in array", expected="value")
            arr.items.append(value)
            c, j = self.peek_same_line()
            if c not in ("", ";", "]", "#"):
                self.fail(j, "unexpected text after array item", expected="]")

    def parse_import(self, spread: bool, start: int) -> Import:
        k = self.i
        while k < self.n and self.text[k] in "./":
            k += 1
        pre = self.text[self.i:k]
        self.i = k
        path = self.read_key_path()
        if not path:
            self.fail(start, "imports must specify a path to import", expected="file")
        names = [p.value for p in path]
        if len(names) > 1 and not path[1].quoted and names[1] == "d2":
            del names[1]
        if len(names) > 1:
            self.unsupported(start, "importing a key out of a file (@file.key) is unsupported")
        return Import(spread, pre + names[0], start)


def _describe(key: Key) -> str:
    if key.value is not None:
        return {"Map": "map", "Array": "array", "Import": "import"}.get(
            type(key.value).__name__, "value")
    return "connection" if key.edges else "key"
