"""Intermediate board -> objects and connections, the public JSON form.

Follows the d2 compiler's second stage: per map, classes first, then ``shape``, then the
fields in order (keywords set attributes, other fields become child objects), then the
map's connections. Sequence diagrams reuse an actor of the diagram when a group names it;
``sql_table`` / ``class`` children are columns, not objects; suspended fields and
connections are left out.
"""
from __future__ import annotations

from benchmark.d2.errors import D2SyntaxError
from benchmark.d2.ir import Field, IREdge, IRMap
from benchmark.d2.keywords import BOARD_KEYWORDS, SHAPES, STYLE_KEYWORDS, TEXT_LANGUAGES
from benchmark.d2.syntax import Array, Scalar, Subst

KEY_SPECIALS = set("#;\n\\{}[]'\"|:.-<>*&()@")
TABLE_SHAPES = ("sql_table", "class")


def format_segment(s: str) -> str:
    """One id segment as d2 prints it: bare, or quoted when it holds special characters."""
    if s == "":
        return '""'
    if s[0].isspace() or s[-1].isspace():
        return _quoted(s)
    for i, c in enumerate(s):
        if c == "-" and i + 1 < len(s) and s[i + 1] != "-":
            continue
        if c in KEY_SPECIALS:
            return _quoted(s)
    if s.lower() == "null":
        return "'" + s + "'"
    return s


def _quoted(s: str) -> str:
    """Double quotes, unless the text holds a double quote (then single, if it can)."""
    if '"' not in s or "\n" in s:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return "'" + s.replace("'", "''") + "'"


def _suspended(f: Field) -> bool:
    """Whether the field or one of its containers was left suspended: as in d2, a suspended
    container goes with everything inside it, even what was unsuspended there."""
    while f is not None:
        if f.suspended:
            return True
        f = f.parent.owner
    return False


def _text_position(origin) -> tuple:
    """(line, column) of a key in its file, after the place of the import that read the file;
    unknown places sort last, in creation order."""
    if origin is None:
        return (float("inf"),)
    source, pos = origin
    outer = _text_position(source.imported_at) if source.imported_at else ()
    return outer + source.line_col(pos)


class Obj:
    """An object of the graph: a node of the output, or the root board (``parent`` None)."""

    __slots__ = ("name", "parent", "children", "label", "shape", "column", "origin",
                 "shape_origin", "icon", "style_3d", "scopes_message")

    def __init__(self, name: str, parent: "Obj | None") -> None:
        self.name = name
        self.parent = parent
        self.children: dict[str, Obj] = {}
        self.label = name
        self.shape = "rectangle"
        self.column = False    # a sql_table / class row, not an object of its own
        self.origin = None     # (lexer.Source, offset) where it was first written
        self.shape_origin = None
        self.icon = False
        self.style_3d = None   # (source, offset) of the key that set style.3d, if any
        self.scopes_message = False  # a connection written in its map joins objects outside it

    def within(self, other: "Obj") -> bool:
        o = self
        while o is not None:
            if o is other:
                return True
            o = o.parent
        return False

    def ident(self) -> str:
        parts = []
        o = self
        while o.parent is not None:
            parts.append(format_segment(o.name))
            o = o.parent
        return ".".join(reversed(parts))

    def outer_sequence(self) -> "Obj | None":
        o = self.parent
        while o is not None:
            if o.shape == "sequence_diagram":
                return o
            o = o.parent
        return None


class GraphBuilder:
    """Builds the objects and connections of one board from its intermediate form."""

    def __init__(self, root: IRMap, filename: str) -> None:
        self.ir_root = root
        self.filename = filename
        self.root = Obj("", None)
        self.objects: list[Obj] = []
        self.edges: list[dict] = []
        self.visible_cache: dict[int, bool] = {}
        self.hidden: list[Field] | None = None      # suspended keys left out
        self.hidden_refs: set[int] = set()

    # -- values -----------------------------------------------------------------------
    def error(self, value, message: str) -> D2SyntaxError:
        """An error at ``value`` (a :class:`~benchmark.d2.ir.Value`) when its place is known."""
        source = getattr(value, "source", None)
        pos = getattr(getattr(value, "node", None), "pos", None)
        if source is not None and pos is not None:
            return source.error(pos, message)
        return D2SyntaxError(message, file=self.filename)

    def array_items(self, node: Array, scope: IRMap, source=None, depth: int = 0) -> list[tuple]:
        """The items of an array as (item, scope), ``...${arr}`` items replaced by the
        items of array variable ``arr`` (like d2)."""
        out = []
        for x in node.items:
            sub = _spread_item(x)
            if sub is None:
                out.append((x, scope))
                continue
            var = self.find_var(sub, scope)
            problem = None
            if depth > 20 or var is None:
                problem = f'could not resolve variable "{".".join(sub.path)}"'
            elif var.array is None:
                problem = ("cannot spread non-composite" if var.map is None
                           else "cannot spread non-array into array")
            if problem:
                if source is not None:
                    raise source.error(x.pos, problem)
                raise D2SyntaxError(problem, file=self.filename)
            out.extend(self.array_items(var.array.node, var.array.scope, var.array.source,
                                        depth + 1))
        return out

    def find_var(self, sub: Subst, scope: IRMap, with_value: bool = False) -> Field | None:
        """The nearest ``vars`` field named by ``sub`` (with ``with_value``: the nearest that has a value)."""
        for m in scope.ancestors():
            vars_field = m.get("vars")
            if vars_field is None or vars_field.map is None:
                continue
            f: Field | None = vars_field
            for name in sub.path:
                f = f.map.get(name) if f is not None and f.map is not None else None
            if f is not None and (not with_value or f.primary is not None):
                return f
        return None

    def text(self, value, scope: IRMap, depth: int = 0) -> str:
        node = value.node if hasattr(value, "node") else value
        if isinstance(node, Array):
            items = self.array_items(node, scope, getattr(value, "source", None))
            return ", ".join(self.text(x, sc, depth) for x, sc in items)
        out = []
        for part in node.parts:
            if isinstance(part, Subst):
                try:
                    out.append(self.lookup_var(part, scope, depth))
                except D2SyntaxError as exc:
                    if exc.line is None and getattr(value, "source", None) is not None:
                        raise value.source.error(part.pos, exc.detail) from None
                    raise
            else:
                out.append(part)
        return "".join(out)

    def lookup_var(self, sub: Subst, scope: IRMap, depth: int) -> str:
        if depth > 20:
            raise D2SyntaxError(f"variable ${{{'.'.join(sub.path)}}} refers to itself",
                                file=self.filename)
        f = self.find_var(sub, scope, with_value=True)
        if f is not None:
            return self.text(f.primary, f.primary.scope, depth + 1)
        raise D2SyntaxError(f'could not resolve variable "{".".join(sub.path)}"',
                            file=self.filename)

    # -- visibility (suspend) -----------------------------------------------------------
    def field_visible(self, f: Field) -> bool:
        """Shown unless it or a container of it is suspended (an unsuspended connection
        unsuspends its ends and their containers when it is read, see the compiler)."""
        key = id(f)
        if key not in self.visible_cache:
            self.visible_cache[key] = not _suspended(f)
        return self.visible_cache[key]

    def dropped_with_suspended(self, e: IREdge) -> bool:
        """A suspended key leaves like a deleted one: with the connections written in a
        statement that named it, and those inside it. Others (made by a glob) stay and
        bring it back."""
        if self.hidden is None:
            self.hidden = []
            stack = list(self.ir_root.objects())
            while stack:
                f = stack.pop()
                if not self.field_visible(f):
                    self.hidden.append(f)
                elif f.map is not None:
                    stack.extend(f.map.objects())
            self.hidden_refs = set().union(*(f.refs for f in self.hidden))
        if e.refs & self.hidden_refs:
            return True
        owners = [m.owner for m in e.owner.ancestors() if m.owner is not None]
        return any(o is f for o in owners for f in self.hidden)

    # -- objects ----------------------------------------------------------------------
    def ensure_child(self, obj: Obj, name: str) -> Obj:
        """Child ``name`` of ``obj``, created when missing.

        Inside a sequence diagram a name that is already an actor of the diagram means that
        actor. Like d2, this compares the actor's printed id with the raw name, exactly: an
        actor that needs quotes, or a different case, is not matched.
        """
        seq = obj.outer_sequence()
        low = name.lower()
        if seq is not None and format_segment(obj.name) != name and any(
                format_segment(c.name) == name for c in seq.children.values()):
            obj = seq
        child = obj.children.get(low)
        if child is None:
            child = Obj(name, obj)
            obj.children[low] = child
            self.objects.append(child)
        return child

    def ensure_path(self, obj: Obj, names: list[str]) -> Obj:
        """Object at ``names`` below ``obj``; each step may resolve to a sequence actor."""
        for name in names:
            obj = self.ensure_child(obj, name)
        while obj.column and obj.parent is not None:
            obj = obj.parent
        return obj

    def compile_map(self, obj: Obj, m: IRMap) -> None:
        """Classes, then ``shape``, then fields in order, then the map's connections."""
        for name in self.class_names(m.get("class")):
            cmap = self.class_map(name)
            if cmap is not None:
                self.compile_map(obj, cmap)
        shape = m.get("shape")
        if shape is not None and shape.primary is not None:
            obj.shape = self.text(shape.primary, shape.primary.scope).lower()
            obj.shape_origin = shape.origin
            if obj.shape not in SHAPES:
                raise self.error(shape.primary, f'unknown shape "{obj.shape}"')
        for f in list(m.fields.values()):
            if f.keyword:
                self.compile_keyword(obj, f)
                continue
            if not self.field_visible(f):
                continue
            child = self.ensure_child(obj, f.name)
            child.origin = child.origin or f.origin
            if f.primary is not None:
                self.set_label(child, f)
            if f.map is not None:
                self.compile_map(child, f.map)
        if obj.shape in TABLE_SHAPES:
            for child in obj.children.values():
                child.column = True
                for grandchild in child.children.values():
                    what = "sql_table columns" if obj.shape == "sql_table" else "class fields"
                    raise self.error_at(grandchild.origin, f"{what} cannot have children")
        for e in m.edges:
            self.compile_edge(obj, e)

    def compile_keyword(self, obj: Obj, f: Field) -> None:
        """A keyword field of ``obj``'s map: set the attribute, or report d2's error."""
        low = f.name.lower()
        if low == "classes" and obj is not self.root and not f.at_file_root:
            raise self.error_at(f.origin, "classes must be declared at a board root scope")
        if low in STYLE_KEYWORDS:
            raise self.error_at(f.origin, f"{low} must be style.{low}")
        if low in ("source-arrowhead", "target-arrowhead"):
            raise self.error_at(f.origin, f'"{low}" can only be used on connections')
        if low == "constraint" and (obj.parent is None or obj.parent.shape != "sql_table"):
            raise self.error_at(f.origin,
                                '"constraint" keyword can only be used in "sql_table" shapes')
        if low == "label" and f.primary is not None:
            self.set_label(obj, f)
        elif low == "icon" and f.primary is not None:
            obj.icon = True
        elif low == "style":
            if f.primary is not None or f.map is None or not f.map.fields:
                raise self.error_at(f.origin, '"style" expected to be set to a map of key-values, '
                                              'or contain an additional keyword like '
                                              '"style.opacity: 0.4"')
            self.validate_style(f)
            three_d = f.map.get("3d")
            if three_d is not None:
                obj.style_3d = three_d.last_key or three_d.origin

    def error_at(self, origin, message: str) -> D2SyntaxError:
        """An error at ``origin`` ((source, offset) of a key), or naming only the file."""
        if origin is not None:
            source, pos = origin
            return source.error(pos, message)
        return D2SyntaxError(message, file=self.filename)

    def set_label(self, obj: Obj, f: Field) -> None:
        node = f.primary.node
        if isinstance(node, Scalar) and node.kind == "block" and not node.text.strip():
            raise self.error(f.primary, "block string cannot be empty")
        obj.label = self.text(f.primary, f.primary.scope)
        if isinstance(node, Scalar) and node.kind == "block":
            obj.shape = "text" if node.tag in TEXT_LANGUAGES else "code"

    def class_names(self, cls: Field | None) -> list[str]:
        """``class: name`` or ``class: [a; b]``; a scalar wins over an array, like d2."""
        if cls is None:
            return []
        if cls.primary is not None:
            return [self.text(cls.primary, cls.primary.scope)]
        if cls.array is not None:
            return [self.text(x, scope) for x, scope in
                    self.array_items(cls.array.node, cls.array.scope, cls.array.source)]
        return []

    def class_map(self, name: str) -> IRMap | None:
        classes = self.ir_root.get("classes")
        if classes is None or classes.map is None:
            return None
        f = classes.map.get(name)
        return f.map if f is not None else None

    def validate_style(self, style: Field) -> None:
        for f in style.map.fields.values() if style.map is not None else ():
            if f.name in STYLE_KEYWORDS:
                continue
            message = (f"unknown style key: {f.name}" if f.name.lower() in STYLE_KEYWORDS
                       else f'invalid style keyword: "{f.name}"')
            raise self.error_at(f.origin, message)

    def validate_config(self) -> None:
        """Every key under ``vars.d2-config`` needs a value."""
        vars_field = self.ir_root.get("vars")
        config = vars_field.map.get("d2-config") if vars_field and vars_field.map else None
        stack = list(config.map.fields.values()) if config and config.map else []
        while stack:
            f = stack.pop(0)
            if f.primary is None and f.array is None and f.map is None:
                raise self.error_at(f.origin, f'"{f.name}" needs a value')
            if f.map is not None:
                stack.extend(f.map.fields.values())

    def validate_classes(self) -> None:
        """Class definitions hold only keywords, and never ``class`` itself."""
        classes = self.ir_root.get("classes")
        for cls in classes.map.fields.values() if classes and classes.map else ():
            for f in cls.map.fields.values() if cls.map else ():
                if f.keyword and f.name.lower() == "class":
                    raise self.error_at(f.origin,
                                        '"class" cannot appear within "classes"')
                if not f.keyword:
                    raise self.error_at(f.origin,
                                        f"{f.name} is an invalid class field, must be reserved keyword")

    def validate_shapes(self) -> None:
        """d2's checks on shapes: ``style.3d`` only on rectangles, squares and hexagons; an
        actor of a sequence diagram (a direct child that is not a group, i.e. no message
        written in it reaches outside it) cannot itself be a sequence diagram."""
        for o in self.objects:
            if o.column:
                continue
            if o.style_3d is not None and o.shape not in ("rectangle", "square", "hexagon"):
                raise self.error_at(o.style_3d, 'key "3d" can only be applied to squares, '
                                                'rectangles, and hexagons')
            if (o.shape == "sequence_diagram" and o.parent is not None
                    and o.parent.shape == "sequence_diagram" and not o.scopes_message):
                # d2 reports this from its layout, without a position
                raise D2SyntaxError("actors in sequence diagrams cannot themselves be sequence "
                                    f"diagrams: {format_segment(o.name)}", file=self.filename)

    def validate_images(self) -> None:
        """``shape: image`` needs an icon and cannot contain objects (d2's checks)."""
        for o in [self.root] + self.objects:
            if o.shape != "image" or o.column:
                continue
            for child in o.children.values():
                raise self.error_at(child.origin, "image shapes cannot have children.")
            if not o.icon:
                raise self.error_at(o.shape_origin or o.origin,
                                    'image shape must include an "icon" field')

    # -- connections ------------------------------------------------------------------
    def compile_edge(self, obj: Obj, e: IREdge) -> None:
        if e.deleted or e.suspended or self.dropped_with_suspended(e):
            return
        for f in e.map.fields.values() if e.map is not None else ():
            if f.keyword and f.name.lower() == "style":
                self.validate_style(f)
            if f.keyword and f.name.lower() in ("source-arrowhead", "target-arrowhead"):
                for sub in f.map.fields.values() if f.map is not None else ():
                    if not sub.keyword:
                        raise self.error_at(sub.origin, "source-arrowhead/target-arrowhead map "
                                                        "keys must be reserved keywords")
            if not f.keyword:
                raise self.error_at(f.origin,
                                    "edge map keys must be reserved keywords")
        src = self.ensure_path(obj, e.rel(e.src))
        dst = self.ensure_path(obj, e.rel(e.dst))
        if not (src.within(obj) and dst.within(obj)):
            obj.scopes_message = True   # in a sequence diagram this makes obj a group
        label = None
        classes: list[str] = []
        if e.primary is not None:
            label = self.text(e.primary, e.primary.scope)
        if e.map is not None:
            classes = self.class_names(e.map.get("class"))
            for name in classes:
                cmap = self.class_map(name)
                lab = cmap.get("label") if cmap is not None else None
                if lab is not None and lab.primary is not None:
                    label = self.text(lab.primary, lab.primary.scope)
            lab = e.map.get("label")
            if lab is not None and lab.primary is not None:
                label = self.text(lab.primary, lab.primary.scope)
        # an empty label draws nothing: the connection is unlabelled
        self.edges.append({"src": src, "dst": dst, "label": label or None, "arrow": e.arrow,
                           "classes": classes, "origin": e.origin})

    # -- entry --------------------------------------------------------------------------
    def build(self, ir_edges: list[IREdge]) -> dict:
        self.validate_classes()
        self.validate_config()
        self.compile_map(self.root, self.ir_root)
        self.validate_images()
        self.validate_shapes()
        # like d2, objects and connections are ordered by where they first appear in the text
        nodes = []
        for o in sorted(self.objects, key=lambda o: _text_position(o.origin)):
            if o.column:
                continue
            nodes.append({"id": o.ident(), "label": o.label, "shape": o.shape,
                          "parent": o.parent.ident() if o.parent is not self.root else None})
        edges = []
        for e in sorted(self.edges, key=lambda e: _text_position(e["origin"])):
            edge = {"src": e["src"].ident(), "dst": e["dst"].ident(), "label": e["label"],
                    "directed": e["arrow"] in ("->", "<-"), "arrow": e["arrow"]}
            if e["classes"]:  # the edge's kind (benchmark.graph.edge_kind) and fork marks
                edge["classes"] = e["classes"]
            edges.append(edge)
        return {"nodes": nodes, "edges": edges}


def _spread_item(node) -> Subst | None:
    """The variable of an array item written ``...${name}``, else ``None``."""
    if (isinstance(node, Scalar) and node.kind == "unquoted" and len(node.parts) == 2
            and node.parts[0] == "..." and isinstance(node.parts[1], Subst)):
        return node.parts[1]
    return None
