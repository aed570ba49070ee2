"""Syntax tree -> intermediate board (:mod:`benchmark.d2.ir`).

Applies statements in order the way the d2 compiler does: key paths with ``_`` parent
references, connection chains, edge references ``(a -> b)[i]``, ``null`` deletion,
imports, spread substitutions ``...${var}`` and ``suspend``; the limits of
:class:`~benchmark.d2.files.Limits`. Globs live in :mod:`benchmark.d2.globs`.
"""
from __future__ import annotations

import os

from benchmark.d2.errors import D2LimitError, D2UnsupportedError
from benchmark.d2.files import DEFAULT_LIMITS, Limits, ReadRefused, outside_root, read_d2
from benchmark.d2.globs import GlobMixin, Rule, has_glob, same_edge, segment_matches
from benchmark.d2.ir import Field, IREdge, IRMap, Value, common_owner, field_key
from benchmark.d2.keywords import BOARD_KEYWORDS, RESERVED_KEYWORDS, is_reserved
from benchmark.d2.lexer import Source
from benchmark.d2.parser import Parser
from benchmark.d2.syntax import Array, Import, Key, KeyPart, Map, Scalar, Spread

MAX_IMPORT_DEPTH = 32


class Compiler(GlobMixin):
    """Compiles one board; ``compile_text`` is the entry point."""

    def __init__(self, root: str | None = None, limits: Limits = DEFAULT_LIMITS) -> None:
        self.confine_to = root      # imports must stay inside this folder (None: anywhere)
        self.limits = limits
        self.bytes_read = 0         # the diagram's text and every import read so far
        self.n_fields = 0           # objects made so far (keywords aside)
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
        self.changes = 0      # fields and connections removed so far
        self.rules: list[Rule] = []
        self.ctx_seq = 0
        self.import_stack: list[str] = []
        self.file_roots: list[IRMap] = [self.root]   # the map each file being read starts in
        # (map, Spread, source, written map, keys before it, maps being read then)
        self.spreads: list[tuple] = []
        self.stmt_map: IRMap | None = None   # the map the statement being compiled is in
        self.stmt_count = 0                  # statements read so far (not glob applications)
        self.stmt_id = 0                     # the one being read
        self.glob_stmt = False               # whether it is a glob statement
        self.unsettled: list[Rule] = []      # connection globs not yet applied again twice

    # -- entry ----------------------------------------------------------------------
    def compile_text(self, text: str, filename: str, base_dir: str | None) -> IRMap:
        source = Source(text, filename)
        tree = Parser(source).parse_file()
        self.compile_map(tree, self.root, source, base_dir)
        self.expand_spreads()
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
            # the globs in reach at the end of the map's last block: d2 applies these
            # to what a spread copies into the map
            m.globs_then = (len(self.rules), frozenset(self.open_trees))
            self.ast_stack.pop()
            self.open_trees.discard(id(tree))

    def _compile_nodes(self, tree: Map, m: IRMap, source: Source, base_dir) -> None:
        for stmt in tree.nodes:
            if isinstance(stmt, Import):
                self.spread_import(stmt, m, source, base_dir)
            elif isinstance(stmt, Spread):
                # like d2, resolved once the whole board is read (a later `vars` counts)
                self.spreads.append((m, stmt, source, tree, list(m.fields),
                                     frozenset(self.open_trees)))
            elif stmt.ampersand or stmt.not_ampersand:
                if not self.applying:
                    raise source.error(stmt.pos, "glob filters cannot be used outside globs")
            else:
                self.compile_key(stmt, m, source, base_dir)

    def compile_key(self, stmt: Key, m: IRMap, source: Source, base_dir) -> None:
        self.ctx_seq += 1
        outer, self.ctx = self.ctx, self.ctx_seq
        outer_map, self.stmt_map = self.stmt_map, m
        changes = self.changes
        outer_stmt = (self.stmt_id, self.glob_stmt)
        made = (self.seq, len(self.edges))
        if not self.applying:
            self.stmt_count += 1
            self.stmt_id = self.stmt_count
            self.glob_stmt = (has_glob(stmt.key or []) or stmt.edge_index == "*"
                              or any(has_glob(e.src) or has_glob(e.dst) for e in stmt.edges))
        try:
            self._compile_key(stmt, m, source, base_dir)
            if (self.seq, len(self.edges)) != made:
                self.rerun_point(post=True)
        finally:
            self.ctx = outer
            self.stmt_map = outer_map
            if not self.applying:
                self.stmt_id, self.glob_stmt = outer_stmt
        if self.changes != changes and not self.applying:
            self.rerun_globs()   # like d2: a statement that removed something

    def _compile_key(self, stmt: Key, m: IRMap, source: Source, base_dir) -> None:
        if stmt.key is not None and stmt.edges:
            if has_glob(stmt.key):
                line, col = source.line_col(stmt.key[0].pos)
                raise D2UnsupportedError("a glob in the key before connections is unsupported",
                                         file=source.filename, line=line, column=col)
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
                    # `(a -> b).style.stroke: red` makes a connection and sets its key path
                    self.apply_edge_value(e, stmt, m, source, base_dir, key=stmt.edge_key,
                                          creating=True)
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
            at_file_root = m is self.file_roots[-1]
            if part.value.lower() in BOARD_KEYWORDS and not part.quoted:
                if not at_file_root:
                    raise source.error(part.pos, f"{part.value.lower()} must be declared at a "
                                                 "board root scope")
                return  # layers / scenarios / steps: only the root board is compiled
            if i == len(parts) - 1 and _is_null(stmt.value):
                self.flush_created()  # d2 makes the parents before it deletes the last key
            f = self.ensure_field(m, part.value, part.quoted, (source, part.pos))
            if at_file_root and f.keyword:
                f.at_file_root = True
            if i == len(parts) - 1:
                f.last_key = (source, stmt.key[0].pos if stmt.key else part.pos)
                if isinstance(stmt.value, Map) and _declares_children(stmt.value):
                    f.declared_container = True
                self.rerun_point()
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
        m.fields[field_key(name, quoted)] = f
        f.created_by = {id(r.done) for r in self.active}
        if not f.keyword:
            self.n_fields += 1
            if self.n_fields > self.limits.max_nodes:
                self.over_limit(origin, f"more than {self.limits.max_nodes} objects in one "
                                        "diagram (the parser's limit)")
            self.pending.append(f)
        return f

    def over_limit(self, origin, message: str):
        """Stop with a :class:`D2LimitError` at ``origin`` ((source, offset)) if known."""
        if origin is not None:
            source, pos = origin
            line, col = source.line_col(pos)
            raise D2LimitError(message, file=source.filename, line=line, column=col)
        raise D2LimitError(message)

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
        if create:
            self.rerun_point()
        self.flush_created()
        return f

    # -- connections ----------------------------------------------------------------
    def new_edge(self, src: Field, dst: Field, arrow: str, origin=None) -> IREdge:
        if len(self.edges) >= self.limits.max_edges:
            self.over_limit(origin, f"more than {self.limits.max_edges} connections in one "
                                    "diagram (the parser's limit)")
        e = IREdge(common_owner(src, dst), src, dst, arrow)
        e.origin = origin
        e.refs.add(self.ctx)
        e.owner.edges.append(e)
        self.edges.append(e)
        self.edge_created(e)
        self.rerun_point()
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
                    if not e.suspended:
                        # like d2, then and there: its ends and their containers are
                        # unsuspended too (a later `b: suspend` still wins)
                        for f in (e.src, e.dst):
                            while f is not None:
                                f.suspended = False
                                f = f.parent.owner
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
        # like d2, the reference names the connection and its ends: removing (or suspending)
        # an end later removes the connection too
        for x in (e, src, dst):
            x.refs.add(self.ctx)
        self.apply_edge_value(e, stmt, m, source, base_dir, key=stmt.edge_key)

    # -- spread substitutions ---------------------------------------------------------
    def expand_spreads(self) -> None:
        """``...${d}``: the fields of variable ``d`` are copied into the map where the spread
        was written, at its place (a field already there is overlaid: a value replaces, maps
        merge), then its connections are added (an existing one is overlaid), as d2 does."""
        for m, spread, source, tree, before, open_then in self.spreads:
            var = self.find_var(m, spread.path)
            if var is None:
                raise source.error(tree.pos, "could not resolve variable "
                                             f'"{".".join(spread.path)}"')
            if var.map is None and var.array is None:
                raise source.error(spread.pos, "cannot spread non-composite")
            if var.map is None:
                continue   # an array spread into a map adds nothing
            keys = set(before)
            order = list(m.fields)
            at = max((i + 1 for i, k in enumerate(order) if k in keys), default=0)
            copies: list[Field] = []
            added = self.overlay_map(m, var.map, (source, spread.pos), copies)
            self.glob_copies(m, copies, open_then)
            if added:
                rest = [k for k in order[at:] if k not in added]
                for k in rest:   # move what followed the spread after the copies
                    m.fields[k] = m.fields.pop(k)
        self.flush_created()

    def find_var(self, m: IRMap, path: list[str]) -> Field | None:
        """The ``vars`` field at ``path`` seen from map ``m`` (innermost ``vars`` first)."""
        for mm in m.ancestors():
            f = mm.get("vars")
            for name in path:
                f = f.map.get(name) if f is not None and f.map is not None else None
            if f is not None and not (f.primary is not None and _is_null(f.primary.node)):
                return f
        return None

    def glob_copies(self, m: IRMap, copies: list[Field], open_then: frozenset) -> None:
        """Which globs reach the fields a spread copied into ``m``, as the binary showed:
        key globs written for ``m`` itself (in any of its blocks, or reached through an outer
        glob such as ``*.*.label``) and ``**`` key globs of the maps around it; connection
        globs in reach when the last block written for ``m`` was read (written in it, or
        before it in a block around it still being read), or, when ``m`` had no block of its
        own, those of ``m`` and the maps around it whose block was still being read at the
        spread. A key glob written outside through a path (``x.*.label``) does not."""
        if not copies:
            return
        outer = set(map(id, m.ancestors()))
        then = m.globs_then
        for i, rule in enumerate(list(self.rules)):
            if not rule.lazy or rule in self.active:
                continue
            home = rule.home if rule.home is not None else rule.map
            if rule.kind == "key":
                reach = home is m or (id(home) in outer and rule.parts[0].value == "**")
            elif then is not None:
                reach = i < then[0] and rule.tree in then[1]
            else:
                reach = id(home) in outer and rule.tree in open_then
            if not reach:
                continue
            if rule.kind == "edge":
                self.apply_edge_rule(rule, rule.map)
            elif rule.kind == "key":
                for f in copies:
                    if f.keyword:
                        continue
                    if (rule.parts[0].value == "**" and f.within_map(rule.map)) or (
                            f.parent is rule.map and segment_matches(rule.parts[0], f)):
                        self.apply_key_rule(rule, f)
            else:
                for e in list(self.edges):
                    if not e.deleted:
                        self.apply_ref_rule(rule, rule.map, e)

    def overlay_map(self, m: IRMap, src: IRMap, origin, copies: list | None = None) -> set[str]:
        """Copy or overlay ``src``'s fields and connections onto ``m``; the keys added
        (``copies`` gathers every field made, nested ones too)."""
        added = set()
        for key, of in list(src.fields.items()):
            bf = m.fields.get(key)
            if bf is None:
                m.fields[key] = self.copy_field(of, m, origin, copies)
                added.add(key)
            else:
                self.overlay_field(bf, of, origin, copies)
        for oe in list(src.edges):
            if oe.deleted:
                continue
            s, d = self.counterpart(m, src, oe.src), self.counterpart(m, src, oe.dst)
            same = [e for e in m.edges if not e.deleted and same_edge(e, s, d, oe.arrow)]
            e = same[0] if same else self.new_edge(s, d, oe.arrow, oe.origin)
            if oe.primary is not None:
                e.primary = oe.primary
            if oe.array is not None:
                e.array = oe.array
            if oe.map is not None:
                self.overlay_map(e.ensure_map(), oe.map, origin)
        return added

    def overlay_field(self, bf: Field, of: Field, origin, copies: list | None = None) -> None:
        if of.primary is not None:
            bf.primary = of.primary
        if of.array is not None:
            bf.array = of.array
        if of.map is not None:
            self.overlay_map(bf.ensure_map(), of.map, origin, copies)

    def copy_field(self, of: Field, parent: IRMap, origin, copies: list | None = None) -> Field:
        self.seq += 1
        f = Field(of.name, parent, self.seq)
        f.keyword = of.keyword
        f.primary, f.array, f.suspended = of.primary, of.array, of.suspended
        f.declared_container = of.declared_container
        f.origin = origin
        f.last_key = of.last_key
        if not f.keyword:
            self.n_fields += 1
            if self.n_fields > self.limits.max_nodes:
                self.over_limit(origin, f"more than {self.limits.max_nodes} objects in one "
                                        "diagram (the parser's limit)")
        if copies is not None:
            copies.append(f)
        if of.map is not None:
            self.overlay_map(f.ensure_map(), of.map, origin, copies)
        return f

    def counterpart(self, m: IRMap, src: IRMap, f: Field) -> Field:
        """The field of ``m`` at the path ``f`` has below ``src`` (made when missing)."""
        chain = []
        while f.parent is not src:
            chain.append(f)
            f = f.parent.owner
        chain.append(f)
        for x in reversed(chain):
            key = field_key(x.name, not x.keyword)
            g = m.fields.get(key)
            if g is None:
                g = m.fields[key] = self.copy_field(x, m, x.origin)
                g.map = None
            f = g
            m = f.ensure_map()
        return f

    # -- imports ----------------------------------------------------------------------
    def read_import(self, imp: Import, source: Source, base_dir):
        base = base_dir if base_dir is not None else os.getcwd()
        path = imp.path if imp.path.endswith(".d2") else imp.path + ".d2"
        full = os.path.normpath(os.path.join(base, path))
        if full in self.import_stack or len(self.import_stack) > MAX_IMPORT_DEPTH:
            raise source.error(imp.pos, f"import cycle through {path}")
        real = outside_root(full, self.confine_to) if self.confine_to is not None else None
        if real is not None:
            self.over_limit((source, imp.pos), f"cannot import {path}: it is {real}, outside "
                                               f"{self.confine_to}, the folder imports are "
                                               "confined to")
        try:
            text = read_d2(full, self.limits.max_file_bytes)
        except ReadRefused as exc:
            self.over_limit((source, imp.pos), f"cannot import {path}: {exc}")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise source.error(imp.pos, f"cannot import {path}: {reason}") from None
        self.bytes_read += len(text.encode("utf-8", "surrogatepass"))
        if self.bytes_read > self.limits.max_total_bytes:
            self.over_limit((source, imp.pos), f"cannot import {path}: the diagram and its "
                                               "imports pass the limit of "
                                               f"{self.limits.max_total_bytes} bytes read")
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
        self.file_roots.append(m)
        try:
            self.compile_map(tree, m, sub, sub_dir)
        finally:
            self.file_roots.pop()
            self.import_stack.pop()


def _declares_children(tree: Map) -> bool:
    """Whether a written map names objects or connections (d2's container test)."""
    for node in tree.nodes:
        if isinstance(node, (Import, Spread)):
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
