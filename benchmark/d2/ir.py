"""Intermediate form of a D2 board: a tree of fields, each with an optional primary value
and map, plus connections owned by the map of their endpoints' common container.

This mirrors what the d2 compiler builds before it turns fields into objects: keywords are
still plain fields here (``style``, ``label``), and field names are matched without regard
to case, keeping the first spelling.
"""
from __future__ import annotations

from dataclasses import dataclass

from benchmark.d2.keywords import is_reserved
from benchmark.d2.syntax import Scalar


def field_key(name: str, quoted: bool = False) -> str:
    """Lookup key of a field: names match without case; a quoted keyword is a plain name."""
    low = name.lower()
    return '"' + low if quoted and is_reserved(low) else low


@dataclass
class Value:
    """A primary value and the map it was written in (the scope for ``${vars}``)."""
    node: object          # Scalar or Array
    scope: "IRMap"
    source: object = None  # the lexer.Source it was read from, for error positions


class IRMap:
    """Ordered fields (by lower-cased name) and the connections this map owns."""

    __slots__ = ("fields", "edges", "parent", "owner", "rules", "edge", "globs_then")

    def __init__(self, parent: "IRMap | None" = None, owner: "Field | None" = None,
                 edge: "IREdge | None" = None) -> None:
        self.fields: dict[str, Field] = {}
        self.edges: list[IREdge] = []
        self.parent = parent
        self.owner = owner
        self.edge = edge          # the connection whose map this is, if any
        self.rules: list = []
        # (rules made so far, maps being read) when its last block was read (compiler)
        self.globs_then: tuple | None = None

    def get(self, name: str, quoted: bool = False) -> "Field | None":
        return self.fields.get(field_key(name, quoted))

    def path(self) -> list[str]:
        out = []
        m = self
        while m.owner is not None:
            out.append(m.owner.name)
            m = m.parent
        return out[::-1]

    def ancestors(self):
        """This map, then each enclosing map up to the root."""
        m = self
        while m is not None:
            yield m
            m = m.parent

    def in_edge(self) -> bool:
        """True inside the map of a connection (at any depth)."""
        return any(m.edge is not None for m in self.ancestors())

    def objects(self):
        """Fields that are objects (not keywords), in order."""
        return [f for f in self.fields.values() if not f.keyword]


class Field:
    __slots__ = ("name", "parent", "primary", "array", "map", "suspended", "seq", "created_by",
                 "keyword", "declared_container", "origin", "refs", "at_file_root", "last_key")

    def __init__(self, name: str, parent: IRMap, seq: int, quoted: bool = False) -> None:
        self.name = name
        self.keyword = not quoted and is_reserved(name)
        self.parent = parent
        self.primary: Value | None = None
        self.array: Value | None = None
        self.map: IRMap | None = None
        self.suspended: bool | None = None
        self.seq = seq
        self.created_by: set = set()
        self.declared_container = False  # a map written for it names objects or connections
        self.origin = None               # (lexer.Source, offset) of its first mention
        self.refs: set[int] = set()      # statements whose key paths named it
        # written at the top level of a file (an imported one too): d2 compiles an imported
        # file as a board of its own, so its `classes` / `layers` are allowed there
        self.at_file_root = False
        self.last_key = None             # (lexer.Source, offset) of the last key that set it

    def ensure_map(self) -> IRMap:
        if self.map is None:
            self.map = IRMap(self.parent, self)
        return self.map

    def path(self) -> list[str]:
        return self.parent.path() + [self.name]

    def is_leaf(self) -> bool:
        """No children, as d2's ``**`` in a connection sees it: once the field has a map,
        what was written for it counts too, even before that map is compiled."""
        if self.map is None:
            return True
        return not (self.map.objects() or self.map.edges or self.declared_container)

    def within_map(self, m: "IRMap") -> bool:
        """True when this field lies somewhere inside map ``m``."""
        return any(x is m for x in self.parent.ancestors())

    def within(self, other: "Field") -> bool:
        """True when this field is ``other`` or lies inside it."""
        f = self
        while f is not None:
            if f is other:
                return True
            f = f.parent.owner
        return False

    def text_of(self, key: str) -> str | None:
        """Literal text of keyword ``key`` set in this field's map, if any."""
        sub = self.map.get(key) if self.map else None
        if sub is None or sub.primary is None or not isinstance(sub.primary.node, Scalar):
            return None
        return sub.primary.node.text


class IREdge:
    __slots__ = ("owner", "src", "dst", "arrow", "primary", "array", "map", "suspended",
                 "deleted", "refs", "origin")

    def __init__(self, owner: IRMap, src: Field, dst: Field, arrow: str) -> None:
        self.owner = owner
        self.src = src
        self.dst = dst
        self.arrow = arrow
        self.primary: Value | None = None
        self.array: Value | None = None
        self.map: IRMap | None = None
        self.suspended: bool | None = None
        self.deleted = False
        self.refs: set[int] = set()   # statements that made or named it
        self.origin = None            # (lexer.Source, offset) of the statement that made it

    def ensure_map(self) -> IRMap:
        if self.map is None:
            self.map = IRMap(self.owner, None, self)
        return self.map

    def rel(self, f: Field) -> list[str]:
        """Path of endpoint ``f`` relative to the owning map."""
        return f.path()[len(self.owner.path()):]


def common_owner(src: Field, dst: Field) -> IRMap:
    """The deepest map that contains both endpoints (not as the endpoint itself)."""
    chain = list(src.parent.ancestors())
    for m in dst.parent.ancestors():
        if m in chain:
            return m
    return chain[-1]
