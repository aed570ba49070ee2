"""Counterfactual pairs: for a question, a minimally edited diagram on which its answer flips.

An *edit* changes one edge of the diagram (or the labels of two branches of one decision, or the
place of one node):

=================  ===========================================================================
``remove``         the edge is deleted from the D2 text (its nodes stay)
``reverse``        the arrow is turned round in place (``a -> b`` becomes ``a <- b``)
``swap_labels``    two labelled edges leaving the same node trade labels (a decision's branches)
``relabel``        the edge takes the label of another edge of the diagram (``edge_label`` only)
``add``            a new unlabelled arrow between two existing nodes (appended to the D2 text);
                   tried only when no edit of the kinds above flips the answer (a "no" answer,
                   whose closed set no removal can open)
``move``           a node that has no children is moved out of a container (to the container's
                   parent) or into one (``inside`` questions only); its id changes with its place
                   (``vpc.web`` becomes ``web``), so the question's args name the new id
=================  ===========================================================================

:func:`flipping_edits` tries every edit on the diagram's graph and keeps those on which the
reference solver's answer differs from the question's (and is defined). :func:`choose_edit`
prefers edits on the question's certificate (the *pivotal* edge), then edits that leave no node
without the arrows it had into it or out of it (no visible scar), and picks among the equally
good ones with a generator seeded by the seed and the question id. When none of the edits of
existing edges flips the answer, :func:`add_edits` proposes new arrows: into the question's target
from a node of its certificate (or from its source), and for a path a shortcut from the source. :func:`realise` makes the
edit in the D2 text (the smallest change of the source) and checks, with the project's parser,
that the text gives exactly the edited graph. An ``inside`` question (is the node nested in the
container?) is flipped by :func:`move_edit` alone: no edge says where a node is drawn. An ``absent``
question has no pair: it names something the diagram lacks, and adding a node of that name would not
make the diagram answer what the question asks about it. :mod:`benchmark.commands.perturb` writes the split.

>>> parsed = {"nodes": [{"id": n, "label": n, "shape": "rectangle", "parent": None} for n in "abc"],
...           "edges": [{"src": "a", "dst": "b", "label": None, "directed": True, "arrow": "->"},
...                     {"src": "b", "dst": "c", "label": None, "directed": True, "arrow": "->"}]}
>>> [e.kind for e in flipping_edits("reachable", {"source": "a", "target": "c"}, True, parsed)]
['remove', 'reverse', 'remove', 'reverse']
>>> realise("a -> b\\nb -> c\\n", parsed, Edit("reverse", (1,)))
'a -> b\\nb <- c\\n'
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import networkx as nx

from benchmark.d2 import parse_text
from benchmark.d2.errors import D2SyntaxError
from benchmark.d2.parser import parse
from benchmark.d2.syntax import Key, Map
from benchmark.graph import Subgraph, build_graph, in_edges, out_edges
from benchmark.questions import Question
from benchmark.solver import answers_match, resolve_certificate, solve

EDIT_KINDS = ("remove", "reverse", "swap_labels", "relabel", "add", "move")
_ARROW = re.compile(r"<?-+>?")


@dataclass(frozen=True, order=True)
class Edit:
    """One edit of a diagram: ``kind`` and the indices of the edges it touches (in the parser's
    edge order); ``label`` is the new label of a ``relabel``."""

    kind: str
    edges: tuple[int, ...]
    label: str | None = None
    ends: tuple[str, str] | None = None   # the new arrow's (source, target) of an ``add``; (old id, new id) of a ``move``

    def describe(self, parsed: dict[str, Any]) -> dict[str, Any]:
        """JSON form naming the edges by their flow-view ends and labels."""
        if self.kind == "add":
            return {"kind": "add", "edges": [list(self.ends or ())]}
        if self.kind == "move":
            return {"kind": "move", "edges": [], "node": list(self.ends or ())}
        out: dict[str, Any] = {"kind": self.kind, "edges": [_edge_json(parsed["edges"][i]) for i in self.edges]}
        if self.label is not None:
            out["label"] = self.label
        return out


def _edge_json(e: dict[str, Any]) -> list:
    src, dst = (e["dst"], e["src"]) if e.get("arrow") == "<-" else (e["src"], e["dst"])
    return [src, dst] + ([e["label"]] if e.get("label") else [])


def _flow_source(e: dict[str, Any]) -> str:
    return e["dst"] if e.get("arrow") == "<-" else e["src"]


_FLIP = {"->": "<-", "<-": "->"}


def apply_edit(parsed: dict[str, Any], edit: Edit) -> dict[str, Any]:
    """The parser's JSON form of the diagram after ``edit`` (nodes unchanged)."""
    edges = [dict(e) for e in parsed["edges"]]
    if edit.kind == "remove":
        edges = [e for i, e in enumerate(edges) if i != edit.edges[0]]
    elif edit.kind == "reverse":
        e = edges[edit.edges[0]]
        e["arrow"] = _FLIP[e["arrow"]]
    elif edit.kind == "swap_labels":
        i, j = edit.edges
        edges[i]["label"], edges[j]["label"] = edges[j]["label"], edges[i]["label"]
    elif edit.kind == "relabel":
        edges[edit.edges[0]]["label"] = edit.label
    elif edit.kind == "add":
        src, dst = edit.ends  # type: ignore[misc]
        edges.append({"src": src, "dst": dst, "label": None, "directed": True, "arrow": "->"})
    elif edit.kind == "move":
        old, new = edit.ends  # type: ignore[misc]
        nodes = [dict(n) for n in parsed["nodes"]]
        for n in nodes:
            if n["id"] == old:
                n["id"], n["parent"] = new, (new.rsplit(".", 1)[0] if "." in new else None)
        for e in edges:
            e["src"], e["dst"] = (new if e["src"] == old else e["src"]), (new if e["dst"] == old else e["dst"])
        return {"nodes": nodes, "edges": edges}
    else:
        raise ValueError(f"unknown edit kind {edit.kind!r}")
    return {"nodes": [dict(n) for n in parsed["nodes"]], "edges": edges}


def move_edit(args: dict[str, str], parsed: dict[str, Any]) -> Edit | None:
    """The ``move`` that flips an ``inside`` question: a node nested in the container goes to the
    container's parent, any other node goes into the container; None when the node has children, is
    the container or one around it, or its new id is taken.

    >>> parsed = {"nodes": [{"id": "vpc", "parent": None}, {"id": "vpc.web", "parent": "vpc"},
    ...                     {"id": "lb", "parent": None}], "edges": []}
    >>> move_edit({"container": "vpc", "node": "vpc.web"}, parsed).ends, move_edit({"container": "vpc", "node": "lb"}, parsed).ends
    (('vpc.web', 'web'), ('lb', 'vpc.lb'))
    """
    box, node = args.get("container"), args.get("node")
    ids = {n["id"] for n in parsed["nodes"]}
    if box not in ids or node not in ids or node == box or box.startswith(node + "."):
        return None
    if any(i.startswith(node + ".") for i in ids):
        return None
    name = node.rsplit(".", 1)[-1]
    if node.startswith(box + "."):
        new = (box.rsplit(".", 1)[0] + "." + name) if "." in box else name
    else:
        new = box + "." + name
    return None if new in ids else Edit("move", (), ends=(node, new))


def edit_args(edit: Edit, args: dict[str, str]) -> dict[str, str]:
    """The question's args on the edited diagram: a moved node is named by its new id."""
    if edit.kind != "move":
        return dict(args)
    old, new = edit.ends  # type: ignore[misc]
    return {k: (new if v == old else v) for k, v in args.items()}


def candidate_edits(qtype: str, parsed: dict[str, Any]) -> list[Edit]:
    """Every single edit of the diagram, in a fixed order: remove and reverse each directed edge,
    swap the labels of two differently labelled edges leaving one node, and (for ``edge_label``
    questions) give an edge the label of another edge."""
    edges = parsed["edges"]
    out: list[Edit] = []
    for i, e in enumerate(edges):
        out.append(Edit("remove", (i,)))
        if e.get("arrow") in _FLIP:
            out.append(Edit("reverse", (i,)))
    for i, a in enumerate(edges):
        for j in range(i + 1, len(edges)):
            b = edges[j]
            if (a.get("label") and b.get("label") and a.get("arrow") in _FLIP and b.get("arrow") in _FLIP
                    and _flow_source(a) == _flow_source(b) and _norm(a["label"]) != _norm(b["label"])):
                out.append(Edit("swap_labels", (i, j)))
    if qtype == "edge_label":
        labels = sorted({e["label"] for e in edges if e.get("label")})
        for i, e in enumerate(edges):
            for label in labels:
                if _norm(label) != _norm(e.get("label") or ""):
                    out.append(Edit("relabel", (i,), label))
    return out


def _adjacent(parsed: dict[str, Any], src: str, dst: str) -> bool:
    """Is there already an arrow that can be walked from ``src`` to ``dst`` (flow view)?"""
    for e in parsed["edges"]:
        a, b = (e["dst"], e["src"]) if e.get("arrow") == "<-" else (e["src"], e["dst"])
        if (a, b) == (src, dst) or (e.get("arrow") in ("<->", "--") and (b, a) == (src, dst)):
            return True
    return False


def add_edits(qtype: str, args: dict[str, str], parsed: dict[str, Any], certificate: Subgraph) -> list[Edit]:
    """New arrows worth trying for a question (sorted, none that exists already): into its target from
    its source and from every node of its certificate; for a path also a shortcut from the source to
    each node two or more steps along the certificate's path.

    >>> parsed = {"nodes": [{"id": n} for n in "abcd"],
    ...           "edges": [{"src": "a", "dst": "b", "arrow": "->"}, {"src": "c", "dst": "d", "arrow": "->"}]}
    >>> [e.ends for e in add_edits("reachable", {"source": "a", "target": "d"}, parsed, Subgraph(frozenset("ab")))]
    [('a', 'd'), ('b', 'd')]
    """
    target = args.get("target")
    if target is None:
        return []
    froms = set(certificate.all_nodes) | ({args["source"]} if "source" in args else set())
    froms |= {args[k] for k in ("first", "second") if k in args}
    pairs = {(u, target) for u in froms if u != target and u != args.get("avoid")}
    if qtype == "path" and "source" in args:
        pairs |= {(args["source"], v) for v in certificate.all_nodes if v != args["source"]}
    return [Edit("add", (), ends=p) for p in sorted(pairs) if not _adjacent(parsed, *p)]


def _norm(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def flips(qtype: str, args: dict[str, str], answer: Any, g: nx.MultiDiGraph) -> Any:
    """The solver's answer on ``g`` when it is defined and ``answer`` is not a right answer there, else None."""
    new = solve(qtype, args, g)
    if new is None or answers_match(qtype, args, answer, new, g):
        return None
    return new


def flipping_edits(qtype: str, args: dict[str, str], answer: Any, parsed: dict[str, Any]) -> list[Edit]:
    """The edits of :func:`candidate_edits` on which the solver's answer flips."""
    return [e for e in candidate_edits(qtype, parsed)
            if flips(qtype, args, answer, build_graph(apply_edit(parsed, e))) is not None]


def _scars(before: nx.MultiDiGraph, after: nx.MultiDiGraph) -> int:
    """Nodes that had arrows in (or out) before the edit and have none after: a visible trace of it."""
    n = 0
    for node in before.nodes:
        for side in (in_edges, out_edges):
            if any(True for _ in side(before, node)) and not any(True for _ in side(after, node)):
                n += 1
    return n


def pivotal(edit: Edit, parsed: dict[str, Any], certificate: Subgraph) -> bool:
    """Does ``edit`` touch an edge of ``certificate`` (the question's proof, resolved on the diagram)?"""
    # a new arrow out of the proof's nodes, or one of them moved, changes what the proof shows
    if edit.kind in ("add", "move"):
        return bool(edit.ends) and edit.ends[0] in certificate.all_nodes
    keys = {(e.src, e.dst) for e in certificate.edges} | {(e.dst, e.src) for e in certificate.edges if not e.directed}
    return any(tuple(_edge_json(parsed["edges"][i])[:2]) in keys for i in edit.edges)


def _odd(edit: Edit, parsed: dict[str, Any]) -> int:
    """1 for a reversed labelled edge: a decision's branch label would then point into the decision."""
    return int(edit.kind == "reverse" and bool(parsed["edges"][edit.edges[0]].get("label")))


def _pick(ranked: list[tuple[tuple, Edit]], rng: random.Random, usable: Callable[[Edit], bool] | None) -> Edit | None:
    while ranked:
        best = ranked[0][0]
        tier = [e for pref, e in ranked if pref == best]
        pick = tier[rng.randrange(len(tier))]
        if usable is None or usable(pick):
            return pick
        ranked = [(pref, e) for pref, e in ranked if e != pick]
    return None


def rank_edits(q: Question, parsed: dict[str, Any], g: nx.MultiDiGraph, edits: Iterable[Edit]) -> list[tuple[tuple, Edit]]:
    """``(preference, edit)`` for each edit, best first: pivotal before not, then fewer scars, then
    no reversed branch label."""
    cert, _ = resolve_certificate(q.certificate, g)
    ranked = []
    for e in edits:
        after = build_graph(apply_edit(parsed, e))
        ranked.append(((0 if pivotal(e, parsed, cert) else 1, _scars(g, after), _odd(e, parsed)), e))
    return sorted(ranked)


def choose_edit(q: Question, parsed: dict[str, Any], g: nx.MultiDiGraph, seed: int,
                usable: Callable[[Edit], bool] | None = None) -> Edit | None:
    """The edit to make for ``q``: among the flipping edits of the best preference that ``usable``
    accepts, one picked by ``random.Random(f"{seed}:{q.id}")``; when no edit of an existing edge
    flips the answer, the same among the flipping :func:`add_edits`; None when nothing flips it.
    An ``inside`` question gets its :func:`move_edit` (when that flips it and ``usable`` accepts it),
    an ``absent`` one nothing."""
    if q.type == "absent":
        return None
    if q.type == "inside":
        move = move_edit(q.arg, parsed)
        if move is None or flips(q.type, edit_args(move, q.arg), q.answer, build_graph(apply_edit(parsed, move))) is None:
            return None
        return move if usable is None or usable(move) else None
    ranked = rank_edits(q, parsed, g, flipping_edits(q.type, q.arg, q.answer, parsed))
    rng = random.Random(f"{seed}:{q.id}")
    pick = _pick(ranked, rng, usable)
    if pick is not None:
        return pick
    cert, _ = resolve_certificate(q.certificate, g)
    adds = [e for e in add_edits(q.type, q.arg, parsed, cert)
            if flips(q.type, q.arg, q.answer, build_graph(apply_edit(parsed, e))) is not None]
    return _pick(rank_edits(q, parsed, g, adds), rng, usable)


def has_pair(q: Question, parsed: dict[str, Any], g: nx.MultiDiGraph, text: str,
             realised: dict[Edit, bool] | None = None,
             edited: dict[Edit, nx.MultiDiGraph] | None = None) -> bool:
    """Does :func:`choose_edit` find an edit for ``q`` that the D2 ``text`` can carry? The same answer,
    found sooner: edits on the certificate are tried first, and the first that flips and is made in
    the text ends the search (the d2 binary is not asked; ``diagqa perturb`` is). ``realised`` keeps,
    across the questions of one diagram, which edits the text can carry, and ``edited`` the graph each
    edit makes (the questions of one diagram try many of the same edits; the solver reads a graph and
    never changes it)."""
    seen: dict[Edit, bool] = {} if realised is None else realised
    graphs: dict[Edit, nx.MultiDiGraph] = {} if edited is None else edited

    def graph_of(e: Edit) -> nx.MultiDiGraph:
        if e not in graphs:
            graphs[e] = build_graph(apply_edit(parsed, e))
        return graphs[e]

    def usable(e: Edit) -> bool:
        if e not in seen:
            try:
                realise(text, parsed, e)
                seen[e] = True
            except NotRealisable:
                seen[e] = False
        return seen[e]

    if q.type in ("absent", "inside"):
        return choose_edit(q, parsed, g, 0, usable) is not None
    cert, _ = resolve_certificate(q.certificate, g)
    edits = sorted(candidate_edits(q.type, parsed), key=lambda e: not pivotal(e, parsed, cert))
    for group in (edits, add_edits(q.type, q.arg, parsed, cert)):
        for e in group:
            if flips(q.type, q.arg, q.answer, graph_of(e)) is not None and usable(e):
                return True
    return False


# -- the edit in the D2 text --------------------------------------------------------------------

class NotRealisable(Exception):
    """The edit cannot be made in this D2 text by a local change that the parser confirms."""


@dataclass(frozen=True)
class _Link:
    """One connection of a statement: the statement, its index in a chain, the arrow's span."""

    stmt: Key
    index: int
    arrow_start: int
    arrow_end: int
    src: str
    dst: str


def _links(text: str) -> list[_Link]:
    """The connections of the D2 text in text order, with absolute ids (containers followed)."""
    out: list[_Link] = []

    def walk(m: Map, prefix: tuple[str, ...]) -> None:
        for node in m.nodes:
            if not isinstance(node, Key):
                continue
            if node.edges and node.edge_group and node.edge_index is not None:
                continue  # `(a -> b)[0].style...` styles connections made elsewhere and makes none
            if node.edges:
                if node.edge_group or node.key is not None or node.edge_key is not None:
                    raise NotRealisable("edge references and keyed edges are not edited")
                for k, e in enumerate(node.edges):
                    if any(p.glob or p.value == "_" for p in e.src + e.dst):
                        raise NotRealisable("globs and parent references are not edited")
                    m_arrow = _ARROW.match(text, e.pos)
                    if m_arrow is None:
                        raise NotRealisable(f"no arrow at offset {e.pos}")
                    out.append(_Link(node, k, e.pos, m_arrow.end(), ".".join(prefix + tuple(p.value for p in e.src)),
                                     ".".join(prefix + tuple(p.value for p in e.dst))))
            elif isinstance(node.value, Map) and node.key is not None:
                walk(node.value, prefix + tuple(p.value for p in node.key))

    walk(parse(text), ())
    return out


def _statement_parts(text: str, stmt: Key) -> tuple[list[str], list[str], str]:
    """(node texts, arrow texts, suffix from the ``:`` on) of a connection statement."""
    first = stmt.primary if stmt.primary is not None else stmt.value
    if first is not None:
        # `a -> b: label {class: data}` has its suffix from the colon; `a -> b {class: data}`, from the map
        colon = text.rfind(":", stmt.pos, first.pos)
        head, suffix = (text[stmt.pos:colon], text[colon:stmt.end]) if colon >= 0 else \
            (text[stmt.pos:first.pos].rstrip(), " " + text[first.pos:stmt.end])
    else:
        head, suffix = text[stmt.pos:stmt.end], ""
    nodes, arrows, cursor = [], [], stmt.pos
    for e in stmt.edges:
        m = _ARROW.match(text, e.pos)
        nodes.append(text[cursor:e.pos].strip())
        arrows.append(m.group())
        cursor = m.end()
    nodes.append(text[cursor:stmt.pos + len(head)].strip())
    return nodes, arrows, suffix


def _line_bounds(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, (len(text) if end < 0 else end)


def _replace_statement(text: str, stmt: Key, new: list[str]) -> str:
    """``text`` with the statement replaced by the statements ``new`` (its line dropped when empty)."""
    start, end = _line_bounds(text, stmt.pos)
    before, after = text[start:stmt.pos], text[stmt.end:end]
    alone = not before.strip() and (not after.strip() or after.strip().startswith("#"))
    if not new:
        if alone:  # the whole line goes, with its newline
            return text[:start] + text[end + 1:]
        return text[:stmt.pos] + text[stmt.end:]
    if alone:  # the line is rewritten, without a comment that spoke of the removed connection
        return text[:start] + before + ("\n" + before).join(new) + text[end:]
    return text[:stmt.pos] + "; ".join(new) + text[stmt.end:]


_PLAIN_LABEL = re.compile(r"[^\s\"'`#;:{}\[\]|$@&*\\-](?:[^\"`#;:{}\[\]|$@&*\\\n]*[^\s\"`#;:{}\[\]|$@&*\\])?")


def _quote(label: str) -> str:
    """``label`` as a D2 value: as it is when plain text, else double-quoted.

    >>> _quote("on miss"), _quote("a: b"), _quote('say "hi"')
    ('on miss', '"a: b"', '"say \\\\"hi\\\\""')
    """
    if (_PLAIN_LABEL.fullmatch(label) and "->" not in label and "--" not in label
            and label.casefold() not in ("null", "true", "false", "suspend", "unsuspend")):
        return label
    return '"' + label.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text_edit(text: str, links: list[_Link], edit: Edit, keep_nodes: Sequence[str] = ()) -> str:
    if edit.kind == "reverse":
        ln = links[edit.edges[0]]
        arrow = text[ln.arrow_start:ln.arrow_end]
        if arrow.startswith("<") == arrow.endswith(">"):
            raise NotRealisable("an undirected arrow has no direction to reverse")
        flipped = "<" + arrow[:-1] if arrow.endswith(">") else arrow[1:] + ">"
        return text[:ln.arrow_start] + flipped + text[ln.arrow_end:]
    if edit.kind == "remove":
        ln = links[edit.edges[0]]
        nodes, arrows, suffix = _statement_parts(text, ln.stmt)
        k = ln.index
        parts = []
        for lo, hi in ((0, k), (k + 1, len(nodes) - 1)):
            if hi > lo:
                parts.append("".join(f"{nodes[i]} {arrows[i]} " for i in range(lo, hi)) + nodes[hi] + suffix)
        parts += list(keep_nodes)
        return _replace_statement(text, ln.stmt, parts)
    if edit.kind == "add":
        src, dst = edit.ends  # type: ignore[misc]
        return text + ("" if not text or text.endswith("\n") else "\n") + f"{src} -> {dst}\n"
    if edit.kind == "move":
        return _move_text(text, links, *edit.ends)  # type: ignore[misc]
    if edit.kind in ("swap_labels", "relabel"):
        stmts = [links[i].stmt for i in edit.edges]
        spans = [_label_span(text, s) for s in stmts]
        if edit.kind == "swap_labels":
            new = [text[spans[1][0]:spans[1][1]], text[spans[0][0]:spans[0][1]]]
        else:
            new = [_quote(edit.label or "")]
        for (a, b, labelled), label in sorted(zip(spans, new), key=lambda t: -t[0][0]):
            text = text[:a] + (label if labelled else ": " + label) + text[b:]
        return text
    raise ValueError(f"unknown edit kind {edit.kind!r}")


def _key_span(text: str, parts: Sequence[Any]) -> tuple[int, int]:
    """Start and end of a dotted key written plainly (``vpc.web``); NotRealisable for a quoted one."""
    start, last = parts[0].pos, parts[-1]
    end = last.pos + len(last.value)
    if any(p.quoted for p in parts) or text[start:end] != ".".join(p.value for p in parts):
        raise NotRealisable("only a plainly written key is moved")
    return start, end


def _move_text(text: str, links: list[_Link], old: str, new: str) -> str:
    """``text`` with node ``old`` moved to id ``new``: its declaration line dropped and written again
    at the end of the file under the new id (label and style as they were), and every connection
    that names it at the top level renamed; a node named from inside a container's map, or by a key
    of its own (``web.style...``), is not moved."""
    decls: list[Key] = []

    def walk(m: Map, prefix: tuple[str, ...]) -> None:
        for node in m.nodes:
            if not isinstance(node, Key) or node.edges or node.key is None:
                continue
            path = ".".join(prefix + tuple(p.value for p in node.key))
            if path == old:
                decls.append(node)
                continue
            if path.startswith(old + "."):
                raise NotRealisable(f"{old} has a key of its own ({path})")
            if isinstance(node.value, Map):
                walk(node.value, prefix + tuple(p.value for p in node.key))

    walk(parse(text), ())
    if len(decls) > 1:
        raise NotRealisable(f"{old} is declared more than once")
    cuts: list[tuple[int, int, str]] = []   # (start, end, replacement), applied from the end
    for ln in links:
        e = ln.stmt.edges[ln.index]
        for parts, name in ((e.src, ln.src), (e.dst, ln.dst)):
            if name != old:
                continue
            if ".".join(p.value for p in parts) != old:
                raise NotRealisable(f"{old} is named from inside a container's map")
            cuts.append((*_key_span(text, parts), new))
    tail = ""
    if decls:
        stmt = decls[0]
        start, end = _line_bounds(text, stmt.pos)
        after = text[stmt.end:end].strip()
        if text[start:stmt.pos].strip() or (after and not after.startswith("#")):
            raise NotRealisable(f"{old} is declared on a line with other statements")
        tail = new + text[_key_span(text, stmt.key)[1]:stmt.end] + "\n"
        cuts.append((start, min(end + 1, len(text)), ""))
    for a, b, rep in sorted(set(cuts), reverse=True):
        text = text[:a] + rep + text[b:]
    return text + ("" if not text or text.endswith("\n") else "\n") + tail


def _label_span(text: str, stmt: Key) -> tuple[int, int, bool]:
    """(start, end, labelled) of the label of a single connection: ``a -> b: label``, ``a -> b: label
    {class: data}`` (the label before the map), or where a label would go after ``a -> b``."""
    if len(stmt.edges) != 1:
        raise NotRealisable("only a single connection is relabelled")
    if stmt.primary is not None:
        if not isinstance(stmt.value, Map):
            raise NotRealisable("only a plain label is relabelled")
        return stmt.primary.pos, stmt.primary.pos + len(text[stmt.primary.pos:stmt.value.pos].rstrip()), True
    if stmt.value is None:
        return stmt.end, stmt.end, False
    if not hasattr(stmt.value, "kind"):
        raise NotRealisable("a connection with a map and no label is not relabelled")
    return stmt.value.pos, stmt.end, True


def _same_graph(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def nodes(p):
        return sorted((n["id"], n.get("label"), n.get("shape"), n.get("parent")) for n in p["nodes"])

    def edges(p):
        return [(e["src"], e["dst"], e.get("label") or None, e.get("arrow")) for e in p["edges"]]

    return nodes(a) == nodes(b) and edges(a) == edges(b)


def realise(text: str, parsed: dict[str, Any], edit: Edit, filename: str = "<string>") -> str:
    """The D2 ``text`` with ``edit`` made in place; raises :class:`NotRealisable` unless the project's
    parser reads the new text as exactly :func:`apply_edit` of ``parsed``."""
    try:
        links = _links(text)
    except D2SyntaxError as exc:  # pragma: no cover - the diagram parsed before
        raise NotRealisable(str(exc)) from exc
    if [(ln.src, ln.dst) for ln in links] != [(e["src"], e["dst"]) for e in parsed["edges"]]:
        raise NotRealisable("the connections of the text do not line up with the parsed edges")
    want = apply_edit(parsed, edit)
    new = _text_edit(text, links, edit)
    got = _parse_or_none(new, filename)
    if got is not None and edit.kind == "remove":
        missing = sorted({n["id"] for n in want["nodes"]} - {n["id"] for n in got["nodes"]})
        if missing:  # a node that only the removed connection declared: declare it on its own
            nodes, _, _ = _statement_parts(text, links[edit.edges[0]].stmt)
            by_id = {ln_id: t for t, ln_id in _node_texts(links[edit.edges[0]], nodes)}
            if not all(m in by_id for m in missing):
                raise NotRealisable(f"nodes {missing} would vanish")
            new = _text_edit(text, links, edit, keep_nodes=[by_id[m] for m in missing])
            got = _parse_or_none(new, filename)
    if got is None or not _same_graph(got, want):
        raise NotRealisable("the edited text does not give the edited graph")
    return new


def _node_texts(link: _Link, nodes: list[str]) -> list[tuple[str, str]]:
    """(source text, absolute id) of each node of the link's chain (they share the statement's container)."""
    edges = link.stmt.edges
    prefix = link.src.split(".")[:len(link.src.split(".")) - len(edges[link.index].src)]
    keys = [e.src for e in edges] + [edges[-1].dst]
    return [(t, ".".join(prefix + [p.value for p in k])) for t, k in zip(nodes, keys)]


def _parse_or_none(text: str, filename: str) -> dict[str, Any] | None:
    try:
        return parse_text(text, filename=filename)
    except D2SyntaxError:
        return None
