"""Syntax tree -> intermediate board (:mod:`benchmark.d2.ir`).

Applies statements in order the way the d2 compiler does: key paths with ``_`` parent
references, connection chains, edge references ``(a -> b)[i]``, ``null`` deletion,
imports and ``suspend``. Globs live in :mod:`benchmark.d2.globs`.
"""
from __future__ import annotations

import os

from benchmark.d2.globs import GlobMixin, Rule, has_glob, same_edge
from benchmark.d2.ir import Field, IREdge, IRMap, Value, common_owner, field_key
from benchmark.d2.keywords import BOARD_KEYWORDS, RESERVED_KEYWORDS, is_reserved
from benchmark.d2.lexer import Source
from benchmark.d2.parser import Parser
from benchmark.d2.syntax import Array, Import, Key, KeyPart, Map, Scalar

MAX_IMPORT_DEPTH = 32


class Compiler(GlobMixin):
    """Compiles one board; ``compile_text`` is the entry point."""

    def __init__(self) -> None:
        self.root = IRMap()
        self.seq = 0
        self.edges: list[IREdge] = []
        self.applying = 0
        self.active: list[Rule] = []
        self.pending: list[Field] = []
        self.ast_stack: list[Map] = []
        self.ast_seen: list[Map] = []
        self.open_trees: set[int] = set()
        self.ctx = 0          # the statement being compiled (see Field.refs / IREdge.refs)
        self.changes = 0      # fields and connections made or removed so far
        self.rules: list[Rule] = []
        self.ctx_seq = 0
        self.import_stack: list[str] = []

    # -- entry ----------------------------------------------------------------------
    def compile_text(self, text: str, filename: str, base_dir: str | None) -> IRMap:
        source = Source(text, filename)
        tree = Parser(source).parse_file()
        self.compile_map(tree, self.root, source, base_dir)
        return self.root

    def assign_value(self, target: Field | IREdge, primary, value, scope, source: Source, base_dir) -> None:
        """Give a field or an edge the statement's primary value and its value (scalar, array, map, import)."""
        if primary is not None:
            target.primary = Value(primary, scope, source)
        if isinstance(value, Scalar):
            target.primary = Value(value, scope, source)
        elif isinstance(value, Array):
            target.array = Value(value, scope, source)   # an earlier primary still wins
        elif isinstance(value, Map):
            self.compile_map(value, target.ensure_map(), source, base_dir)
        elif isinstance(value, Import):
            self.value_import(value, target.ensure_map(), source, base_dir)

    def compile_map(self, tree: Map, m: IRMap, source: Source, base_dir) -> None:
        self.ast_stack.append(tree)
        self.ast_seen.append(tree)   # keeps ids in rule signatures unique
        self.open_trees.add(id(tree))
        try:
            self._compile_nodes(tree, m, source, base_dir)
        finally:
            self.ast_stack.pop()
            self.open_trees.discard(id(tree))

    def _compile_nodes(self, tree: Map, m: IRMap, source: Source, base_dir) -> None:
        for stmt in tree.nodes:
            if isinstance(stmt, Import):
                self.spread_import(stmt, m, source, base_dir)
            elif stmt.ampersand or stmt.not_ampersand:
                if not self.applying:
                    raise source.error(stmt.pos, "glob filters cannot be used outside globs")
            else:
                self.compile_key(stmt, m, source, base_dir)

    def compile_key(self, stmt: Key, m: IRMap, source: Source, base_dir) -> None:
        self.ctx_seq += 1
        outer, self.ctx = self.ctx, self.ctx_seq
        changes = self.changes
        try:
            self._compile_key(stmt, m, source, base_dir)
        finally:
            self.ctx = outer
        if self.changes != changes and not self.applying:
            self.rerun_globs()   # like d2: a statement that added or removed something

    def _compile_key(self, stmt: Key, m: IRMap, source: Source, base_dir) -> None:
        if stmt.key is not None and stmt.edges:
            # x.(a -> b)[0]: the connection lives in x's map
            m = self.resolve(m, stmt.key, source).ensure_map()
        if stmt.edge_group and stmt.edge_index is not None:
            self.compile_edge_ref(stmt, m, source, base_dir)
        elif stmt.edges:
            if m.in_edge():
                raise source.error(stmt.edges[0].src[0].pos, "cannot create edge inside edge")
            if m.owner is not None and m.owner.keyword and m.owner.name.lower() == "classes":
                raise source.error(stmt.edges[0].src[0].pos, "classes cannot contain an edge")
            for edge in stmt.edges:
                self.ctx_seq += 1
                self.ctx = self.ctx_seq   # d2 keeps one reference context per connection
                if has_glob(edge.src) or has_glob(edge.dst):
                    rule = self.add_rule(m, Rule("edge", stmt, source, edge=edge), base_dir)
                    if rule is not None:
                        self.apply_edge_rule(rule, m)
                elif _is_null(stmt.value):
                    # `a -> b: null` deletes the first such connection and creates nothing
                    src = self.resolve(m, edge.src, source, create=False)
                    dst = self.resolve(m, edge.dst, source, create=False)
                    for e in self.edges:
                        if src and dst and not e.deleted and same_edge(e, src, dst, edge.arrow):
                            self.delete_edge(e)
                            break
                else:
                    src, dst = self.resolve_ends(m, edge.src, edge.dst, source)
                    e = self.new_edge(src, dst, edge.arrow, (source, edge.src[0].pos))
                    self.apply_edge_value(e, stmt, m, source, base_dir, creating=True)
        elif stmt.key is not None:
            self.compile_path(m, stmt.key, stmt, source, base_dir)
        self.flush_created()

    # -- keys -----------------------------------------------------------------------
    def compile_path(self, m: IRMap, parts: list[KeyPart], stmt: Key, source, base_dir) -> None:
        for i, part in enumerate(parts):
            if part.value == "_" and not part.quoted:
                if m.parent is None:
                    raise source.error(part.pos, "'_' refers to the parent of the root map")
                m = m.parent
                continue
            if part.glob:
                rule = self.add_rule(m, Rule("key", stmt, source, parts=parts[i:]), base_dir)
                for f in list(self.glob_fields(m, part)) if rule is not None else ():
                    self.apply_key_rule(rule, f)
                return
            if part.value.lower() in BOARD_KEYWORDS and not part.quoted:
                if m.parent is not None:
                    raise source.error(part.pos, f"{part.value.lower()} must be declared at a "
                                                 "board root scope")
                return  # layers / scenarios / steps: only the root board is compiled
            if i == len(parts) - 1 and _is_null(stmt.value):
                self.flush_created()  # d2 makes the parents before it deletes the last key
            f = self.ensure_field(m, part.value, part.quoted, (source, part.pos))
            if i == len(parts) - 1:
                if isinstance(stmt.value, Map) and _declares_children(stmt.value):
                    f.declared_container = True
                self.flush_created()
                self.apply_field_value(f, stmt, m, source, base_dir)
            else:
                m = f.ensure_map()

    def apply_field_value(self, f: Field, stmt: Key, scope: IRMap, source, base_dir) -> None:
        value = stmt.value
        if isinstance(value, Scalar) and value.kind == "null":
            self.delete_field(f)
            return
        for v in (stmt.primary, value):
            if isinstance(v, Scalar) and v.kind in ("suspend", "unsuspend"):
                f.suspended = v.kind == "suspend"
                return
        self.assign_value(f, stmt.primary, value, scope, source, base_dir)

    def ensure_field(self, m: IRMap, name: str, quoted: bool = False, origin=None) -> Field:
        """Field ``name`` of ``m``, created when missing; ``origin`` is (source, offset)."""
        f = m.get(name, quoted)
        if f is not None:
            f.refs.add(self.ctx)
            return f
        if name.lower() == "null":
            name = "null"   # d2 spells a key named null in lower case, quoted or not
        self.seq += 1
        f = Field(name, m, self.seq, quoted)
        f.origin = origin
        f.refs.add(self.ctx)
        self.changes += 1
        m.fields[field_key(name, quoted)] = f
        f.created_by = {id(r.done) for r in self.active}
        if not f.keyword:
            self.pending.append(f)
        return f

    def flush_created(self) -> None:
        """Run lazy globs for the fields a whole key path created (d2 looks at them only
        once the path is complete, so ``a.b`` makes ``a`` a container first)."""
        while self.pending:
            created, self.pending = self.pending, []
            for f in created:
                self.field_created(f)

    def delete_field(self, f: Field) -> None:
        """Remove ``f`` and, like d2, the connections made by a statement that also named
        ``f`` (a glob's connections to keys it did not name survive and bring them back),
        and those inside ``f``."""
        f.parent.fields.pop(field_key(f.name, not f.keyword), None)
        self.changes += 1
        for e in self.edges:
            if not e.deleted and ((e.refs & f.refs) or _inside(e.owner, f)):
                self.delete_edge(e)

    def resolve_ends(self, m: IRMap, src: list[KeyPart], dst: list[KeyPart], source):
        """Both ends of a connection. Like d2, the container path the two ends share is made
        first (``a.x -> a.y`` makes ``a``, then ``x`` and ``y``), which lazy globs can see."""
        n = 0
        while (n < len(src) - 1 and n < len(dst) - 1 and not src[n].glob
               and src[n].value.lower() == dst[n].value.lower() and src[n].value != "_"
               and src[n].quoted == dst[n].quoted):
            n += 1
        if n:
            m = self.resolve(m, src[:n], source).ensure_map()
        return self.resolve(m, src[n:], source), self.resolve(m, dst[n:], source)

    def resolve(self, m: IRMap, parts: list[KeyPart], source, create: bool = True) -> Field | None:
        """Field at key path ``parts`` from map ``m`` (created when ``create``)."""
        f = None
        for part in parts:
            if not part.quoted and is_reserved(part.value) and part.value != "_":
                raise source.error(part.pos, "reserved keywords are prohibited in edges")
            if part.value == "_" and not part.quoted:
                if f is not None or m.parent is None:
                    raise source.error(part.pos, "'_' can only start a path and needs a parent map")
                m = m.parent
                continue
            if f is not None:
                m = f.ensure_map() if create else f.map
                if m is None:
                    return None
            f = (self.ensure_field(m, part.value, part.quoted, (source, part.pos)) if create
                 else m.get(part.value, part.quoted))
            if f is None:
                return None
        if f is None:
            raise source.error(parts[0].pos, "a connection needs an object at each end")
        self.flush_created()
        return f

    # -- connections ----------------------------------------------------------------
    def new_edge(self, src: Field, dst: Field, arrow: str, origin=None) -> IREdge:
        e = IREdge(common_owner(src, dst), src, dst, arrow)
        e.origin = origin
        e.refs.add(self.ctx)
        self.changes += 1
        e.owner.edges.append(e)
        self.edges.append(e)
        self.edge_created(e)
        return e

    def delete_edge(self, e: IREdge) -> None:
        self.changes += 1
        e.deleted = True
        if e in e.owner.edges:
            e.owner.edges.remove(e)

    def apply_edge_value(self, e: IREdge, stmt: Key, scope: IRMap, source, base_dir,
                         key: list[KeyPart] | None = None, creating: bool = False) -> None:
        """Set what ``stmt`` gives a connection. A statement that creates connections does
        not suspend them (d2 suspends only through references and globs of references)."""
        value = stmt.value
        if key:
            m = e.ensure_map()
            self.compile_path(m, key, stmt, source, base_dir)
            return
        if isinstance(value, Scalar) and value.kind == "null":
            self.delete_edge(e)
            return
        for v in (stmt.primary, value):
            if isinstance(v, Scalar) and v.kind in ("suspend", "unsuspend"):
                if not creating:
                    e.suspended = v.kind == "suspend"
                return
        self.assign_value(e, stmt.primary, value, scope, source, base_dir)

    def compile_edge_ref(self, stmt: Key, m: IRMap, source, base_dir) -> None:
        if len(stmt.edges) != 1:
            raise source.error(stmt.pos, "a connection reference names exactly one connection")
        edge = stmt.edges[0]
        if has_glob(edge.src) or has_glob(edge.dst) or stmt.edge_index == "*":
            rule = self.add_rule(m, Rule("ref", stmt, source, edge=edge), base_dir)
            for e in list(self.edges) if rule is not None else ():
                if not e.deleted:
                    self.apply_ref_rule(rule, m, e)
            return
        src = self.resolve(m, edge.src, source, create=False)
        dst = self.resolve(m, edge.dst, source, create=False)
        found = [e for e in self.edges if not e.deleted and same_edge(e, src, dst, edge.arrow)
                 ] if src and dst else []
        if stmt.edge_index >= len(found):
            raise source.error(stmt.pos, f"no connection ({_text(edge)})[{stmt.edge_index}] "
                                         "to refer to")
        e = found[stmt.edge_index]
        self.apply_edge_value(e, stmt, m, source, base_dir, key=stmt.edge_key)

    # -- imports ----------------------------------------------------------------------
    def read_import(self, imp: Import, source: Source, base_dir):
        base = base_dir if base_dir is not None else os.getcwd()
        path = imp.path if imp.path.endswith(".d2") else imp.path + ".d2"
        full = os.path.normpath(os.path.join(base, path))
        if full in self.import_stack or len(self.import_stack) > MAX_IMPORT_DEPTH:
            raise source.error(imp.pos, f"import cycle through {path}")
        try:
            with open(full, encoding="utf-8") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise source.error(imp.pos, f"cannot import {path}: {reason}") from None
        sub = Source(text, os.path.join(os.path.dirname(source.filename), path)
                     if source.filename != "<string>" else path, imported_at=(source, imp.pos))
        return Parser(sub).parse_file(), sub, os.path.dirname(full), full

    def spread_import(self, imp: Import, m: IRMap, source: Source, base_dir) -> None:
        self._import_into(imp, m, source, base_dir)

    def value_import(self, imp: Import, m: IRMap, source: Source, base_dir) -> None:
        self._import_into(imp, m, source, base_dir)

    def _import_into(self, imp: Import, m: IRMap, source: Source, base_dir) -> None:
        tree, sub, sub_dir, full = self.read_import(imp, source, base_dir)
        self.import_stack.append(full)
        try:
            self.compile_map(tree, m, sub, sub_dir)
        finally:
            self.import_stack.pop()


def _declares_children(tree: Map) -> bool:
    """Whether a written map names objects or connections (d2's container test)."""
    for node in tree.nodes:
        if isinstance(node, Import):
            return True
        if node.edges or (node.key and node.key[0].value not in RESERVED_KEYWORDS):
            return True
    return False


def _inside(m: IRMap, f: Field) -> bool:
    """Whether map ``m`` lies inside field ``f``."""
    return any(x.owner is not None and x.owner.within(f) for x in m.ancestors())


def _is_null(value) -> bool:
    return isinstance(value, Scalar) and value.kind == "null"


def _text(edge) -> str:
    return (".".join(p.value for p in edge.src) + f" {edge.arrow} "
            + ".".join(p.value for p in edge.dst))


__all__ = ["Compiler"]
