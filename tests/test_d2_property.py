"""Property test: random D2 programs, compiled by the real ``d2`` binary, read back with the
shared ``svg_oracle`` tool, must give the parser's node ids, edge multiset, labels and
drawing order.

The generator covers nested containers, dotted paths, connection chains with all four
arrows and long hyphen runs, labels (primary value, ``label:``, edge maps, random quoted
text with escapes), quoted keys with special characters, escaped dots, mixed-case references
to one object, ``_`` / ``_._`` parent references, repeated edges, edge references
``(a -> b)[0].key``, shapes (``sql_table`` / ``class`` children become columns), classes,
``${vars}``, spread substitutions ``...${m}`` (maps into containers and the board, arrays into
class lists), escaped glob characters in keys (``T\\*``), connection references followed by
a key path (``(a -> b).style.stroke``, ``.class``, ``.label``), sequence diagrams with spans and
groups, quoted keywords, ``;`` and comments;
each program then uses either ``null`` deletion or lazy globs (``* -> *``, ``*.label``,
``** -> x``) with suspend / unsuspend. A second property perturbs the real corpus files
(lines deleted, duplicated, swapped) and compares wherever d2 still compiles them.
Skipped when the d2 binary or the shared oracle tool is missing.

Derandomized by default (hypothesis profile ``ci``, tests/conftest.py); every disagreement
found so far is an ``@example`` and a regular case below. ``HYPOTHESIS_PROFILE=explore``
(``HYPOTHESIS_EXAMPLES=N``, ``--hypothesis-seed=S``) draws fresh random programs.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchmark.d2 import parse_text

ORACLE = Path(os.environ.get("DIAGQA_SHARED") or Path(__file__).resolve().parents[1].parent / "shared") / "d2-conformance" / "tools" / "svg_oracle.py"


def _d2_binary() -> str | None:
    local = Path(sys.executable).parent / "d2"
    if local.exists():
        return str(local)
    return shutil.which("d2")


D2 = _d2_binary()
if D2 is None or not ORACLE.exists():
    pytest.skip("d2 binary or shared svg_oracle tool not available", allow_module_level=True)


def _load_oracle():
    spec = importlib.util.spec_from_file_location("svg_oracle", ORACLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


svg_oracle = _load_oracle()

# Spellings of a few objects; entries of one tuple name the same object (d2 ids ignore case).
NAMES = [("a", "A"), ("b",), ("srv", "SRV", "Srv"), ("web app", "Web App"),
         ('"x.y"',), ("my-node",), (r"k\.v",), ('"q:1"',), ("n1",), ("'it''s'",),
         ("null", "NULL"), ('" pad"',), ("p(q)",), ("1.5",),
         # escaped glob characters are plain characters (the same object as the quoted name)
         (r"T\*", '"T*"'), (r"b\*c", '"b*c"')]
ARROWS = ["->", "<-", "<->", "--", "--->", "<--", "----", "<-->"]
WORDS = ["hi", "reads", "REST call", "uses it", "2"]
LABEL_CHARS = "ab Z09 -_/.,:;()[]{}!?&<>'\"#$|*@\\\tüé你👉"


@st.composite
def names(draw):
    group = draw(st.sampled_from(NAMES))
    return draw(st.sampled_from(group))


@st.composite
def label(draw):
    if draw(st.booleans()):
        return ""
    return ": " + draw(st.sampled_from(WORDS))


@st.composite
def path(draw):
    return ".".join(draw(st.lists(names(), min_size=1, max_size=3)))


COMMON_KINDS = ["node", "edge", "edge", "chain", "container", "labelkw", "dotted", "edge_ref",
                "shape", "comment", "class", "var", "seq", "qlabel", "edge_map", "quoted_keyword",
                "edge_ref_path", "spread"]
# A program either uses globs (and suspend) or deletes with null, not both: how d2 replays
# globs over keys deleted and made again is not modelled (see README, D2 parser).
GLOB_KINDS = ["glob", "suspend"]
NULL_KINDS = ["null"]


@st.composite
def statement(draw, depth: int, inside: bool, globs: bool = False):
    kind = draw(st.sampled_from(COMMON_KINDS + (GLOB_KINDS if globs else NULL_KINDS)
                                + (["parent_edge"] if inside else [])
                                + (["grand_parent_edge"] if depth >= 2 else [])))
    if kind == "edge_ref_path":
        # a connection reference followed by a key path: `(a -> b).style.stroke: red` makes a
        # connection and sets that key (never its label, unless the key is `label` or a class)
        key = draw(st.sampled_from([".style.stroke: red", ".label: changed", ".class: k",
                                    ".class: e2", "[0].class: k", "[0].style.opacity: 0.5"]))
        a, arrow, b = draw(names()), draw(st.sampled_from(ARROWS[:4])), draw(names())
        head = f"{a} {arrow} {b}\n" if key.startswith("[") else ""
        return f"{head}({a} {arrow} {b}){key}"
    if kind == "spread":
        # spread substitutions: a map variable copied into a container or the board, an array
        # variable spliced into a class list
        var = draw(st.sampled_from(["m", "e"]))
        return draw(st.sampled_from([f"{draw(names())}: {{...${{{var}}}}}", f"...${{{var}}}",
                                     f"{draw(names())}: {{a; ...${{{var}}}; b}}",
                                     f"{draw(names())}.class: [...${{cl}}]"]))
    if kind == "edge_map":
        return (f"{draw(names())} {draw(st.sampled_from(ARROWS))} {draw(names())}: "
                f"{{label: {draw(st.sampled_from(WORDS))}; style.stroke-dash: 3}}")
    if kind == "grand_parent_edge":
        return f"_._.{draw(names())} -> {draw(names())}{draw(label())}"
    if kind == "quoted_keyword":
        return f'"{draw(st.sampled_from(["label", "shape", "style"]))}" -> {draw(names())}'
    if kind == "qlabel":
        text = draw(st.text(alphabet=LABEL_CHARS, min_size=1, max_size=12))
        escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
        return f'{draw(names())}: "{escaped}"'
    if kind == "class":
        return f"{draw(names())}.class: {draw(st.sampled_from(['k', 'e2', '[k; e2]']))}"
    if kind == "var":
        return f"{draw(names())}: ${{v}}-{draw(st.sampled_from(WORDS))}"
    if kind == "seq" and depth == 0:
        actors = draw(st.lists(names(), min_size=2, max_size=3))
        body = ["shape: sequence_diagram", "; ".join(actors)]
        for _ in range(draw(st.integers(1, 3))):
            body.append(f"{draw(st.sampled_from(actors))} -> {draw(names())}{draw(label())}")
        group = [f"{draw(st.sampled_from(actors))}{draw(st.sampled_from(['', '.span']))} -> "
                 f"{draw(names())}{draw(label())}" for _ in range(draw(st.integers(1, 2)))]
        body.append(draw(st.sampled_from(WORDS[:3])) + ": {\n" + "\n".join(group) + "\n}")
        return draw(names()) + ": {\n" + "\n".join(body) + "\n}"
    if kind == "suspend":
        return draw(st.sampled_from(["**: suspend", "(** -> **)[*]: suspend",
                                     f"{draw(names())}: suspend", f"{draw(names())}: unsuspend",
                                     "(** -> **)[*]: unsuspend"]))
    if kind == "glob":
        return draw(st.sampled_from(["* -> *", "*.label: g", "** -> n1", "*p*.shape: oval"]))
    if kind == "dotted":
        return f"{draw(path())} {draw(st.sampled_from(ARROWS))} {draw(path())}{draw(label())}"
    if kind == "null":
        return draw(path()) + ": null"
    if kind == "edge_ref":
        value = draw(st.sampled_from([".label: changed", ".style.stroke: red"]
                                     + ([] if globs else [": null"])))
        a, arrow, b = draw(names()), draw(st.sampled_from(ARROWS[:4])), draw(names())
        return f"{a} {arrow} {b}\n({a} {arrow} {b})[0]{value}"
    if kind == "shape":
        shape = draw(st.sampled_from(["circle", "diamond", "cylinder", "sql_table", "class"]))
        return f"{draw(names())}.shape: {shape}"
    if kind == "comment":
        return draw(names()) + "; # a comment"
    if kind == "node":
        return draw(names()) + draw(label())
    if kind == "labelkw":
        return draw(names()) + ".label: " + draw(st.sampled_from(WORDS))
    if kind == "edge":
        return f"{draw(names())} {draw(st.sampled_from(ARROWS))} {draw(names())}{draw(label())}"
    if kind == "parent_edge":
        return f"_.{draw(names())} {draw(st.sampled_from(ARROWS))} {draw(names())}{draw(label())}"
    if kind == "chain":
        n = draw(st.integers(2, 3))
        parts = [draw(names())]
        for _ in range(n):
            parts += [draw(st.sampled_from(ARROWS)), draw(names())]
        return " ".join(parts) + draw(label())
    if depth >= 2:
        return draw(names())
    body = draw(st.lists(statement(depth + 1, True, globs), min_size=1, max_size=4))
    head = draw(names())
    if draw(st.booleans()):
        return head + ": {\n" + "\n".join("  " + line for s in body for line in s.split("\n")) + "\n}"
    return head + " {" + "; ".join(s.replace("\n", "; ") for s in body if "{" not in s) + "}" \
        if all("{" not in s and "#" not in s for s in body) else head + ": {\n" + "\n".join(body) + "\n}"


PREAMBLE = ("vars: {v: Val; m: {note; w: {shape: circle}; note.label: N}; e: {p -> q: lab}; "
            "cl: [e2; k]}\n"
            "classes: {k: {label: K; shape: oval}; e2: {style.fill: red}}\n")

programs = st.booleans().flatmap(
    lambda globs: st.lists(statement(0, False, globs), min_size=1, max_size=7)).map(
    lambda stmts: PREAMBLE + "\n".join(stmts))


def examples(ci: int) -> int:
    """``ci`` examples in the default profile; the profile's count when exploring
    (``HYPOTHESIS_PROFILE=explore``, see tests/conftest.py)."""
    return settings.default.max_examples if os.environ.get("HYPOTHESIS_PROFILE") == "explore" else ci


def oracle_graph(text: str, tmp: Path) -> dict | None:
    src, svg = tmp / "in.d2", tmp / "out.svg"
    src.write_text(text, encoding="utf-8")
    if svg.exists():
        svg.unlink()
    proc = subprocess.run([D2, "--bundle=false", "--omit-version", "--target=", str(src), str(svg)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "D2_LAYOUT": "dagre"})
    if proc.returncode != 0 or not svg.exists():
        return None
    return svg_oracle.extract(str(svg))


def rendered(label: str | None) -> str | None:
    """The oracle's label with d2's rendering of a blank line (one space) undone."""
    if label is None or "\n" not in label:
        return label
    return "\n".join("" if line == " " else line for line in label.split("\n"))


def drawing_order(nodes: list[dict]) -> list[str]:
    """Ids stably sorted by depth: the order d2 draws objects in (outside sequence diagrams)."""
    depth: dict = {}
    for n in nodes:
        depth[n["id"]] = 0 if n["parent"] is None else depth[n["parent"]] + 1
    return [n["id"] for n in sorted(nodes, key=lambda n: depth[n["id"]])]


def compare(text: str, oracle: dict) -> None:
    got = parse_text(text)
    assert sorted(n["id"] for n in got["nodes"]) == sorted(n["id"] for n in oracle["nodes"]), text
    # the order in which d2 draws the objects a spread substitution copies is not modelled
    # (see README, D2 parser): ids, connections and labels are still compared
    if "sequence_diagram" not in text and "...$" not in text:
        assert drawing_order(got["nodes"]) == [n["id"] for n in oracle["nodes"]], text
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    want = Counter((by_path[tuple(e["src"])], by_path[tuple(e["dst"])], e["arrow"])
                   for e in oracle["edges"])
    assert Counter((e["src"], e["dst"], e["arrow"]) for e in got["edges"]) == want, text
    labels = {n["id"]: n["label"] for n in got["nodes"]}
    for n in oracle["nodes"]:
        if n["label"] is not None:
            assert labels[n["id"]] == rendered(n["label"]), (n["id"], text)
    got_edge_labels = Counter((e["src"], e["dst"], e["arrow"], e["label"] or None)
                              for e in got["edges"])
    want_edge_labels = Counter((by_path[tuple(e["src"])], by_path[tuple(e["dst"])], e["arrow"],
                                e["label"]) for e in oracle["edges"])
    assert got_edge_labels == want_edge_labels, text


# Connections a glob such as `** -> n1` makes to a key it names, which is then suspended (or
# deleted): those its statement makes, and those of the first point where d2 applies the glob
# again (after the next plain key path, connection, or statement that made something), go
# with the key; later ones stay and bring it back. Each case: the program, then the
# connections d2 draws.
SUSPENDED_GLOB_ENDS = [
    ("** -> n1\n**: suspend\na\nb: hi", [("b", "->", "n1")]),
    ("** -> n1\n**: suspend\na\nb\nc", [("b", "->", "n1"), ("c", "->", "n1")]),
    ("srv\nn1: suspend\n** -> n1\na\nb", [("b", "->", "n1")]),
    ("n1: suspend\n** -> n1\na\nsrv", [("srv", "->", "n1")]),
    # naming the key (or any plain key path) is that first point: nothing goes
    ("** -> n1\nn1: suspend\na\nb", [("a", "->", "n1"), ("b", "->", "n1")]),
    ("** -> n1\nn1.label: q\n**: suspend\na\nb", [("a", "->", "n1"), ("b", "->", "n1")]),
    # a glob statement is one only when it makes something
    ("** -> n1\n**: unsuspend\n**: suspend\na\nb", [("b", "->", "n1")]),
    ("** -> n1\n**: suspend\n*.label: g\na\nb", [("a", "->", "n1"), ("b", "->", "n1")]),
    # each end of a connection, and the container of a path, is a point of its own
    ("** -> n1\n**: suspend\np -> q", [("q", "->", "n1"), ("p", "->", "q")]),
    ("** -> n1\n**: suspend\nx: {a}\nb", [("x.a", "->", "n1"), ("b", "->", "n1")]),
    ("** -> n1\n**: suspend\nx.a\nb", [("b", "->", "n1")]),
    ("x: {** -> n1; n1: suspend; a; b}", [("x.a", "->", "x.n1"), ("x.b", "->", "x.n1")]),
    # `null` removes the key the same way
    ("** -> n1\na\nb\nn1: null", [("b", "->", "n1")]),
    # a reference `(a -> b)[0]` names the connection (here one `* -> *` made) and its ends
    ("b: suspend\n* -> *\na -> b\n(a -> b)[0].label: changed", [("b", "->", "a")]),
    ("b: suspend\n* -> *\na -> b", [("b", "->", "a"), ("a", "->", "b")]),
]

# Unsuspending connections unsuspends their ends then and there: a later suspend wins, and a
# suspended container goes with all it holds. Each case: the program, then d2's object ids
# (sorted).
UNSUSPEND_ORDER = [
    ("a -> b\n(** -> **)[*]: unsuspend\nb: suspend", ["a"]),
    ('"label" -> b\n(** -> **)[*]: unsuspend\nb: suspend', ["label"]),
    ("(a -> b).style.stroke: red\n(** -> **)[*]: unsuspend\nb: suspend\n* -> *", ["a", "b"]),
    ("x.a -> x.b\n(** -> **)[*]: unsuspend\nx: suspend", []),
    ("x.a -> x.b\nx: suspend\n(** -> **)[*]: unsuspend", ["x", "x.a", "x.b"]),
    ("x.a\nx: suspend\nx.a: unsuspend", []),
    ("x.a -> y\n**: suspend\nx.a: unsuspend", []),
    # `(** -> **)[*]` does not find connections inside a key with a `*` in its name
    ("T\\*: {\nshape: sequence_diagram\na -> a\n}\n(** -> **)[*]: suspend", ['"T*"', '"T*".a']),
    ('x: {"T*": {a -> b}}\n(** -> **)[*]: suspend', ["x", 'x."T*"', 'x."T*".a', 'x."T*".b']),
]


@pytest.mark.slow
@example(text=PREAMBLE + SUSPENDED_GLOB_ENDS[0][0])
@example(text=PREAMBLE + SUSPENDED_GLOB_ENDS[2][0])
@example(text=PREAMBLE + SUSPENDED_GLOB_ENDS[3][0])
@example(text=PREAMBLE + SUSPENDED_GLOB_ENDS[8][0])
@example(text=PREAMBLE + 'b: "0"\nb: "0"\na: hi\nb: {a; ...${m}; b}\n** -> n1')
@example(text=PREAMBLE + SUSPENDED_GLOB_ENDS[13][0])
@example(text=PREAMBLE + UNSUSPEND_ORDER[7][0])
@example(text=PREAMBLE + UNSUSPEND_ORDER[1][0])
@example(text=PREAMBLE + UNSUSPEND_ORDER[2][0])
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=programs)
def test_random_programs_agree_with_d2(text, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("d2prop")
    oracle = oracle_graph(text, tmp)
    if oracle is None:
        # d2 rejects the program (e.g. a connection from a container to its own child):
        # the parser may accept it, but must not crash with anything but its own errors.
        try:
            parse_text(text)
        except Exception as exc:  # noqa: BLE001 - checked just below
            from benchmark.d2 import D2SyntaxError
            assert isinstance(exc, D2SyntaxError)
        return
    compare(text, oracle)


@pytest.mark.slow
@pytest.mark.parametrize("text", [
    "a -> b -> c: shared\na -> b\nA -> B",
    'x: {\n  "y.z" -> _.q: up\n  k\\.v <-> w\n}\nq -- x.w',
    "a: {b: {c -> _._.d}}\nd ---> a.b.c",
    "s: {shape: sequence_diagram; p -> q; g: {p -> q: in group}}",
    # constructs met in real-world files
    "a -> T\\*\nb\\*c: x\n* -> z",
    "classes: {chemin: {style.stroke: red}}\na -> b\n(a -> b).style.stroke: red\n(a -> b).class: chemin",
    "vars: {d: {p -> q: lab; label: L}}\nx: {...${d}}\n...${d}\ny: {a; ...${d}; b}",
    "a -> b\rc -> d\r\ne: hello\rworld",
    "vars: {d: {n}}\nq\n* -> z\n...${d}\nx: {...${d}}\nx: {*.label: G}",
    "vars: {d: {n}}\nx: {q}\n*.*.label: G\n** -> z\nx: {...${d}}\ny: {r; * -> *}\ny: {...${d}}",
    "s: {shape: sequence_diagram; a -> b; g: {shape: sequence_diagram; a -> b}}",
    # the connection globs in reach of a spread's copies: those of the map's last block
    "vars: {m: {note; w}}\nb: {a; ...${m}; c}\n** -> n1",
    "vars: {m: {note; w}}\nb: {a; ...${m}; c}\nb.* -> n1",
    "vars: {m: {note; w}}\nb: {a; ...${m}; c}\nb: {* -> n1}",
])
def test_fixed_programs_agree_with_d2(text, tmp_path):
    oracle = oracle_graph(text, tmp_path)
    assert oracle is not None, "d2 rejected a program it should accept"
    compare(text, oracle)


@pytest.mark.parametrize("text, want", SUSPENDED_GLOB_ENDS)
def test_glob_connections_to_a_suspended_key_agree_with_d2(text, want, tmp_path):
    oracle = oracle_graph(text, tmp_path)
    assert oracle is not None, "d2 rejected a program it should accept"
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    drawn = [(by_path[tuple(e["src"])], e["arrow"], by_path[tuple(e["dst"])])
             for e in oracle["edges"]]
    assert sorted(drawn) == sorted(want), "d2 no longer draws what this case pins"
    compare(text, oracle)


@pytest.mark.parametrize("text, want", UNSUSPEND_ORDER)
def test_unsuspended_connections_and_later_suspends_agree_with_d2(text, want, tmp_path):
    oracle = oracle_graph(text, tmp_path)
    assert oracle is not None, "d2 rejected a program it should accept"
    assert sorted(n["id"] for n in oracle["nodes"]) == want, "d2 no longer draws this case"
    if "T*" in text:
        assert oracle["edges"], "d2 now suspends connections inside a key named with a `*`"
    compare(text, oracle)


@pytest.mark.parametrize("text, d2_keeps, parser_keeps", [
    ("a\nb\nc\nn1: suspend\n** -> n1", [("b", "n1")], []),
    ("a\nb\nc\nd\nn1: suspend\n** -> n1", [("b", "n1")], []),
    ("b -> c\n** -> n1\nn1: suspend\nd: suspend", [("b", "c"), ("c", "n1"), ("d", "n1")],
     [("b", "c"), ("d", "n1")]),
    ("x: suspend\na\n** -> n1\nn1: suspend\nb", [("a", "n1"), ("b", "n1")], [("b", "n1")]),
])
def test_known_disagreement_several_glob_connections_to_a_suspended_key(
        text, d2_keeps, parser_keeps, tmp_path):
    """README, D2 parser, "Known disagreement": d2 keeps some of the connections a glob
    statement made to a key it names that is then suspended (stepping over them while it
    removes the others); the parser removes them all. Fails once either side changes."""
    oracle = oracle_graph(text, tmp_path)
    assert oracle is not None
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    assert sorted((by_path[tuple(e["src"])], by_path[tuple(e["dst"])])
                  for e in oracle["edges"]) == d2_keeps
    assert sorted((e["src"], e["dst"]) for e in parse_text(text)["edges"]) == parser_keeps


CORPUS = ORACLE.parents[1]
# Once lines move, the suspend globs of the c4 file reach keys at other depths, where d2's
# filter matching is not modelled (see README, D2 parser); it stays in the conformance test.
CORPUS_FILES = sorted(p for p in CORPUS.glob("*.d2")
                      if "suspend" not in p.read_text(encoding="utf-8").split())


@st.composite
def corpus_mutation(draw):
    """A corpus file with a few whole lines deleted, duplicated or swapped."""
    lines = draw(st.sampled_from(CORPUS_FILES)).read_text(encoding="utf-8").split("\n")
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["delete", "duplicate", "swap"]))
        i = draw(st.integers(0, len(lines) - 1))
        j = draw(st.integers(0, len(lines) - 1))
        if op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(j, lines[i])
        else:
            lines[i], lines[j] = lines[j], lines[i]
    return "\n".join(lines)


@pytest.mark.slow
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=corpus_mutation())
def test_mutated_corpus_files_agree_with_d2(text, tmp_path_factory):
    """Real files, perturbed: where d2 still compiles them, the graphs must agree."""
    tmp = tmp_path_factory.mktemp("d2mut")
    oracle = oracle_graph(text, tmp)
    if oracle is None:
        try:
            parse_text(text)
        except Exception as exc:  # noqa: BLE001 - checked just below
            from benchmark.d2 import D2SyntaxError
            assert isinstance(exc, D2SyntaxError)
        return
    got = parse_text(text)
    assert sorted(n["id"] for n in got["nodes"]) == sorted(n["id"] for n in oracle["nodes"])
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    want = Counter((by_path[tuple(e["src"])], by_path[tuple(e["dst"])], e["arrow"])
                   for e in oracle["edges"])
    assert Counter((e["src"], e["dst"], e["arrow"]) for e in got["edges"]) == want
