"""Syntax tree of a D2 text, as produced by :mod:`benchmark.d2.parser`.

Plain dataclasses, no behaviour. Positions are 0-based character offsets into the text;
:class:`benchmark.d2.lexer.Source` turns them into line and column.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Subst:
    """``${a.b}`` inside a value."""
    path: list[str]
    pos: int


@dataclass
class Scalar:
    """A scalar value.

    ``kind`` is one of ``unquoted``, ``double``, ``single``, ``block``, ``null``, ``bool``,
    ``number``, ``suspend``, ``unsuspend``. ``parts`` holds literal strings and
    :class:`Subst` in order (one plain string when there is no substitution);
    ``tag`` is the language of a block string (``md``, ``json``, ...).
    """
    kind: str
    parts: list
    pos: int
    tag: str | None = None

    @property
    def text(self) -> str:
        """Literal text, substitutions left as ``${...}``."""
        return "".join(p if isinstance(p, str) else "${" + ".".join(p.path) + "}"
                       for p in self.parts)


@dataclass
class KeyPart:
    """One segment of a key path. ``glob`` when an unquoted segment contains ``*``."""
    value: str
    quoted: bool
    pos: int
    glob: bool = False


@dataclass
class Edge:
    """``src -> dst``: ``src_arrow`` is ``<`` or ``''``, ``dst_arrow`` is ``>`` or ``''``."""
    src: list[KeyPart]
    dst: list[KeyPart]
    src_arrow: str
    dst_arrow: str
    pos: int

    @property
    def arrow(self) -> str:
        if self.src_arrow and self.dst_arrow:
            return "<->"
        if self.src_arrow:
            return "<-"
        if self.dst_arrow:
            return "->"
        return "--"


@dataclass
class Import:
    """``@file`` (a value) or ``...@file`` (a spread statement)."""
    spread: bool
    path: str
    pos: int


@dataclass
class Spread:
    """``...${a.b}`` as a statement: the fields and connections of variable ``a.b`` are
    spread into the map (d2 does this once the whole board is read)."""
    path: list[str]
    pos: int


@dataclass
class Array:
    items: list
    pos: int


@dataclass
class Map:
    nodes: list
    pos: int


@dataclass
class Key:
    """One statement of a map: a key or edges, optional edge index and edge key, values.

    ``edge_index`` is an ``int``, ``"*"`` or ``None``; ``edge_group`` is true for
    ``(a -> b)[i]`` references. ``primary`` is the scalar before a map value
    (``a: label {...}``); ``value`` is a :class:`Scalar`, :class:`Map`, :class:`Array`,
    :class:`Import` or ``None``.
    """
    pos: int
    key: list[KeyPart] | None = None
    edges: list[Edge] = field(default_factory=list)
    edge_group: bool = False
    edge_index: int | str | None = None
    edge_key: list[KeyPart] | None = None
    ampersand: bool = False
    not_ampersand: bool = False
    primary: Scalar | None = None
    value: object = None
    end: int = 0
