"""Globs: ``*`` / ``**`` in keys, ``* -> *`` connections, ``(** -> **)[*]`` references.

A glob statement is kept as a :class:`Rule` on the map it was written in. It applies at
once to what exists, and again to every field or connection created later within its
reach (d2's globs are lazy), never twice to the same target. ``**`` in a connection picks
only leaves; filters (``&src``, ``&dst``, ``&shape``, ...) restrict where a glob applies.
"""
from __future__ import annotations

import contextlib
import fnmatch

from benchmark.d2.errors import D2UnsupportedError
from benchmark.d2.ir import Field, IREdge, IRMap
from benchmark.d2.keywords import RESERVED_KEYWORDS
from benchmark.d2.lexer import Source
from benchmark.d2.parser import Parser
from benchmark.d2.syntax import Key, KeyPart, Map, Scalar


class Rule:
    """A glob statement kept on the map it was written in, applied to later fields too."""

    def __init__(self, kind: str, stmt: Key, source: Source, parts=None, edge=None) -> None:
        self.kind = kind          # "key", "edge" or "ref"
        self.stmt = stmt
        self.source = source
        self.parts = parts        # remaining key parts (kind "key")
        self.edge = edge          # syntax Edge (kinds "edge" and "ref")
        self.done: set = set()
        self.base_dir = None
        self.signature: tuple = ()
        self.tree: int | None = None    # id of the written map it was declared in
        self.map: IRMap | None = None   # the map it applies in
        self.home: IRMap | None = None  # the map its statement was written in
        # points where a connection glob applied again so far (see GlobMixin.rerun_point)
        self.reruns = 0
        self.counted_in: int | None = None  # the statement whose point was counted last
        self.statement: int | None = None   # the statement that wrote it
        # d2 suspends and unsuspends only what exists when the glob is read
        self.lazy = not any(isinstance(v, Scalar) and v.kind in ("suspend", "unsuspend")
                            for v in (stmt.primary, stmt.value))


class GlobMixin:
    """Glob handling for :class:`benchmark.d2.compiler.Compiler`.

    Laziness is lexical, as in d2: a glob reaches what is created later only while the map
    it was written in (``a { ... }``, or the whole file at the top) is still being read.
    """

    def add_rule(self, m: IRMap, rule: Rule, base_dir) -> Rule | None:
        """Keep a glob on its map; ``None`` when the same glob statement was already written
        in this map (d2 treats the repeat as the same glob, which has done its work)."""
        rule.base_dir = base_dir
        rule.statement = self.stmt_id
        sig = (rule.kind, id(self.ast_stack[-1]) if self.ast_stack else None,
               rule.source.text[rule.stmt.pos:rule.stmt.end].strip(),
               rule.stmt.edges.index(rule.edge) if rule.edge is not None else None)
        if any(other.signature == sig for other in m.rules):
            return None
        rule.signature = sig
        rule.tree = id(self.ast_stack[-1]) if self.ast_stack else None
        rule.map = m
        # a glob made while another applies (`*.*.label` in each `*`) belongs to that map
        rule.home = m if self.applying else getattr(self, "stmt_map", None)
        m.rules.append(rule)
        self.rules.append(rule)
        if rule.kind == "edge":
            self.unsettled.append(rule)
        return rule

    def rerun_point(self, post: bool = False) -> None:
        """A point where d2 applies the lazy globs in reach again: after each key path a
        plain statement names (each end of a connection too), after each connection it
        makes, and after any statement (a glob one too, ``post``) that made fields or
        connections. Only the first such point after a connection glob matters: what the
        glob makes there still counts as made by its own statement, so it goes when a key
        the glob names (``n1`` in ``** -> n1``) is suspended or deleted; what it makes later
        stays (the binary showed this)."""
        if self.applying or (self.glob_stmt and not post) or not self.unsettled:
            return
        keep = []
        for rule in self.unsettled:
            if rule.tree not in self.open_trees:
                continue   # out of reach for good: its map has been read
            if rule.statement != self.stmt_id and not (post and rule.counted_in == self.stmt_id):
                rule.reruns += 1
                rule.counted_in = self.stmt_id
            if rule.reruns < 2:
                keep.append(rule)
        self.unsettled = keep   # each glob is looked at a bounded number of times

    def glob_fields(self, m: IRMap, part: KeyPart, leaves: bool = False,
                    keyword_names: bool = False):
        """Fields of ``m`` matching one glob segment (``**``: at any depth). As in d2, a
        field named like a keyword (quoted) is never matched by ``*``, and by ``**`` only
        in connections (``keyword_names``); ``**`` ending a connection picks ``leaves``."""
        if part.value == "**":
            stack = list(m.objects())
            while stack:
                f = stack.pop(0)
                if ((keyword_names or f.name not in RESERVED_KEYWORDS)
                        and (not leaves or f.is_leaf())):
                    yield f
                if f.map is not None:
                    stack[0:0] = f.map.objects()
            return
        for f in m.objects():
            if segment_matches(part, f):
                yield f

    def reaches(self, m: IRMap, parts: list[KeyPart], f: Field, in_edge: bool) -> bool | None:
        """Whether :meth:`expand` of ``parts`` from ``m`` would name field ``f``, found
        from ``f``'s own path instead of listing every candidate; ``None`` when the path
        holds ``_`` (then only :meth:`expand` can tell)."""
        chain: list[Field] = []
        x = f
        while x.parent is not m:
            if x.parent.owner is None:
                return False
            chain.append(x)
            x = x.parent.owner
        chain.append(x)
        chain.reverse()
        if any(p.value == "_" and not p.quoted for p in parts):
            return None

        def match(i: int, j: int) -> bool:
            if i == len(parts) or j == len(chain):
                return i == len(parts) and j == len(chain)
            part, here, last = parts[i], chain[j], i == len(parts) - 1
            if part.glob and part.value == "**":
                for k in range(j, len(chain)):
                    if chain[k].keyword:
                        return False
                    if last:
                        if k == len(chain) - 1 and (not in_edge or chain[k].is_leaf()):
                            return True
                    elif match(i + 1, k + 1):
                        return True
                return False
            if part.glob:
                return not here.keyword and segment_matches(part, here) and match(i + 1, j + 1)
            return here.parent.get(part.value, part.quoted) is here and match(i + 1, j + 1)

        return match(0, 0)

    def expand(self, m: IRMap, parts: list[KeyPart], source, in_edge: bool) -> list[Field]:
        """All fields a (possibly glob) key path names from ``m``; no new globbed fields."""
        current: list = [m]
        fields: list[Field] = []
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            fields = []
            for mm in current:
                if part.value == "_" and not part.quoted:
                    if mm.parent is None:
                        raise source.error(part.pos, "'_' refers to the parent of the root map")
                    fields.append(("up", mm.parent))
                elif part.glob:
                    fields.extend(self.glob_fields(mm, part, leaves=in_edge and last,
                                                   keyword_names=True))
                else:
                    fields.append(self.ensure_field(mm, part.value, part.quoted,
                                                    (source, part.pos)))
            if fields and isinstance(fields[0], tuple):
                current = [x[1] for x in fields]
                fields = []
                continue
            if not last:
                current = [f.ensure_map() for f in fields]
        return fields

    def apply_key_rule(self, rule: Rule, f: Field) -> None:
        key = tuple(f.path())   # by path: a key deleted and made again is not redone
        if key in rule.done:
            return
        rule.done.add(key)
        if not self.passes_filters(rule, f):
            return
        with self.running(rule):
            rest = rule.parts[1:]
            if rest:
                self.compile_path(f.ensure_map(), rest, rule.stmt, rule.source, rule.base_dir)
            else:
                self.apply_field_value(f, rule.stmt, f.parent, rule.source, rule.base_dir)

    def apply_edge_rule(self, rule: Rule, m: IRMap, new: Field | None = None) -> None:
        """Make the glob's connections that do not exist yet. With ``new`` (a field just
        made), only pairs with that field can be new: the others are not looked at again,
        so a glob over n objects costs O(n) per object added, not O(n^2)."""
        as_src = as_dst = None
        if new is not None:
            as_src = self.reaches(m, rule.edge.src, new, True)
            as_dst = self.reaches(m, rule.edge.dst, new, True)
            if as_src is False and as_dst is False:
                return
        with self.running(rule):
            srcs = ([new] if as_src and as_dst is False
                    else self.expand(m, rule.edge.src, rule.source, True))
            dsts = ([new] if as_dst and as_src is False
                    else self.expand(m, rule.edge.dst, rule.source, True))
            paths: dict[int, tuple] = {}
            new_dst = new is not None and any(d is new for d in dsts)
            for s in srcs:
                for d in (dsts if new is None or s is new else (new,) if new_dst else ()):
                    # by path as spelled: a deleted and re-declared key is not linked twice
                    for x in (s, d):
                        if id(x) not in paths:
                            paths[id(x)] = tuple(x.path())
                    key = (paths[id(s)], paths[id(d)])
                    if s is d or key in rule.done:
                        continue
                    rule.done.add(key)
                    if (self.glob_stmt and rule.counted_in != self.stmt_id
                            and rule.statement != self.stmt_id):
                        # made while another glob statement is read: d2 makes it when that
                        # statement is done, one of the points where globs apply again
                        rule.reruns += 1
                        rule.counted_in = self.stmt_id
                    e = self.new_edge(s, d, rule.edge.arrow, (rule.source, rule.edge.src[0].pos))
                    if rule.reruns > 1:
                        # made by a later re-application: no statement that named its ends
                        self.ctx_seq += 1
                        e.refs = {self.ctx_seq}
                    self.apply_edge_value(e, rule.stmt, m, rule.source, rule.base_dir,
                                          key=rule.stmt.edge_key, creating=True)

    def apply_ref_rule(self, rule: Rule, m: IRMap, e: IREdge) -> None:
        if id(e) in rule.done:
            return
        if any(p.value == "**" for p in rule.edge.src + rule.edge.dst) and _under_star(e.owner, m):
            return   # as in d2, `**` does not find connections inside a key holding a `*`
        with self.running(rule):
            srcs = self.expand(m, rule.edge.src, rule.source, False)
            dsts = self.expand(m, rule.edge.dst, rule.source, False)
        if not names_edge(e, srcs, dsts, rule.edge.arrow):
            return
        rule.done.add(id(e))
        if not self.passes_filters(rule, e, m):
            return
        with self.running(rule):
            self.apply_edge_value(e, rule.stmt, m, rule.source, rule.base_dir,
                                  key=rule.stmt.edge_key)

    @contextlib.contextmanager
    def running(self, rule: Rule):
        """While a glob applies, what it creates is not fed back to that same glob."""
        self.applying += 1
        self.active.append(rule)
        outer, self.ctx = self.ctx, id(rule.done)   # every application is that statement's
        try:
            yield
        finally:
            self.ctx = outer
            self.active.pop()
            self.applying -= 1

    def rerun_globs(self) -> None:
        """Apply every glob still in reach again (what it already did is not repeated):
        removing a key can turn its container into a leaf for ``**``."""
        for kind in ("key", "edge", "ref"):
            for rule in list(self.rules):
                if (rule.kind != kind or rule.tree not in self.open_trees or rule in self.active
                        or not rule.lazy):
                    continue
                if kind == "key":
                    for f in list(self.glob_fields(rule.map, rule.parts[0])):
                        self.apply_key_rule(rule, f)
                elif kind == "edge":
                    self.apply_edge_rule(rule, rule.map)
                else:
                    for e in list(self.edges):
                        if not e.deleted:
                            self.apply_ref_rule(rule, rule.map, e)

    def field_created(self, f: Field) -> None:
        """Apply the lazy glob rules that reach a newly created field: key globs first,
        then connection globs (which then see what the key globs added)."""
        for kind in ("key", "edge"):
            for depth, m in enumerate(f.parent.ancestors()):
                for rule in list(m.rules):
                    if (rule.kind != kind or rule in self.active or id(rule.done) in f.created_by
                            or rule.tree not in self.open_trees or not rule.lazy):
                        continue
                    if kind == "edge":
                        self.apply_edge_rule(rule, m, new=f)
                    elif (rule.parts[0].value == "**" and f.name not in RESERVED_KEYWORDS) or (
                            depth == 0 and segment_matches(rule.parts[0], f)):
                        self.apply_key_rule(rule, f)

    def edge_created(self, e: IREdge) -> None:
        for m in e.owner.ancestors():
            for rule in list(m.rules):
                if (rule.kind == "ref" and rule not in self.active and rule.lazy
                        and rule.tree in self.open_trees):
                    self.apply_ref_rule(rule, m, e)

    def passes_filters(self, rule: Rule, target, scope: IRMap | None = None) -> bool:
        value = rule.stmt.value
        if not isinstance(value, Map):
            return True
        for stmt in value.nodes:
            if not isinstance(stmt, Key) or not (stmt.ampersand or stmt.not_ampersand):
                continue
            ok = self.filter_matches(rule, stmt, target, scope)
            if ok == stmt.not_ampersand:
                return False
        return True

    def filter_matches(self, rule: Rule, stmt: Key, target, scope) -> bool:
        src = rule.source
        if stmt.key is None or len(stmt.key) != 1 or not isinstance(stmt.value, Scalar):
            line, col = src.line_col(stmt.pos)
            raise D2UnsupportedError("this kind of glob filter is unsupported",
                                     file=src.filename, line=line, column=col)
        name = stmt.key[0].value.lower()
        want = stmt.value.text
        if isinstance(target, IREdge) and name in ("src", "dst"):
            sub = Parser(Source(want, src.filename))
            path = sub.read_key_path() or []
            end = self.resolve(scope, path, src, create=False) if path else None
            return end is (target.src if name == "src" else target.dst)
        if isinstance(target, Field) and name in ("shape", "label", "near", "icon", "class"):
            have = target.text_of(name)
            if name == "label" and have is None and target.primary is not None:
                node = target.primary.node
                have = node.text if isinstance(node, Scalar) else None
            if name == "shape" and have is None:
                have = "rectangle"
            return have is not None and have.lower() == want.lower()
        line, col = src.line_col(stmt.pos)
        raise D2UnsupportedError(f"the glob filter &{name} is unsupported",
                                 file=src.filename, line=line, column=col)


REVERSED = {"->": "<-", "<-": "->", "<->": "<->", "--": "--"}


def same_edge(e: IREdge, src: Field, dst: Field, arrow: str) -> bool:
    """``(src arrow dst)`` names ``e`` as written or mirrored (``(d -> c)`` is ``c <- d``)."""
    if e.src is src and e.dst is dst and e.arrow == arrow:
        return True
    return e.src is dst and e.dst is src and e.arrow == REVERSED[arrow]


def names_edge(e: IREdge, srcs: list[Field], dsts: list[Field], arrow: str) -> bool:
    """Whether ``same_edge(e, s, d, arrow)`` for some ``s`` of ``srcs`` and ``d`` of ``dsts``: looked up
    by identity in one pass over each list, not pair by pair (a ``(** -> **)`` glob on a diagram of
    90 objects would try 8 100 pairs for every connection)."""
    if e.arrow == arrow and any(s is e.src for s in srcs) and any(d is e.dst for d in dsts):
        return True
    return e.arrow == REVERSED[arrow] and any(d is e.src for d in dsts) and any(s is e.dst for s in srcs)


def _under_star(inner: IRMap, outer: IRMap) -> bool:
    """Whether a key between map ``outer`` and map ``inner`` (inside it) has a ``*`` in its
    name (a quoted or escaped one: ``"T*"``, ``T\\*``)."""
    for x in inner.ancestors():
        if x is outer or x.owner is None:
            return False
        if "*" in x.owner.name:
            return True
    return False


def segment_matches(part: KeyPart, f: Field) -> bool:
    """Whether glob segment ``part`` (not ``**``) names object ``f`` of its map. As in d2,
    ``*`` never matches a keyword's name, even a quoted one."""
    if f.keyword or f.name in RESERVED_KEYWORDS:
        return False
    return fnmatch.fnmatchcase(f.name.lower(), part.value.lower().replace("[", "[[]"))


def has_glob(parts: list[KeyPart]) -> bool:
    return any(p.glob for p in parts)
