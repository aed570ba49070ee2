"""Malformed D2: a D2SyntaxError naming file, line and column; nothing else ever escapes.

Also the ``diagqa parse`` command: JSON output, and exit code 2 with a one-line message on
bad input.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmark.cli import main as cli_main
from benchmark.d2 import D2SyntaxError, D2UnsupportedError, parse_file, parse_text
from benchmark.errors import DiagQAError, InputError

CORPUS = Path(os.environ.get("DIAGQA_SHARED") or Path(__file__).resolve().parents[1].parent / "shared") / "d2-conformance"


D3_MESSAGE = 'key "3d" can only be applied to squares, rectangles, and hexagons'

# (text, line, column, words in the message); positions agree with the d2 binary
# except where noted.
MALFORMED = [
    ("a: {\n  b -> c\n", 3, 1, "expected '}' to close the map opened at 1:4"),
    ("a -> \n", 1, 1, "connection missing destination"),
    ("x -> y -> : c", 1, 6, "connection missing destination"),
    ('x: "abc\ny', 1, 4, "expected '\"'"),
    ("x: 'abc", 1, 4, "expected \"'\""),
    ("a: b }", 1, 6, "unexpected '}'"),
    ("}", 1, 1, "unexpected '}'"),
    ("x -> y: {\n  label: hi\n}}", 3, 2, "unexpected '}'"),
    ("a: b c {}\nd: {} e", 2, 7, "unexpected text after map"),     # d2: 2:6, the map's end
    ("(a -> b)[x]: 1", 1, 10, "expected a number or '*'"),        # d2: 1:9, the '['
    ("a: |md\n  hi\n", 1, 4, "expected '|' to close the block string"),
    ("x: \n", 1, 2, "missing value after colon"),
    ("a.b: $foo", 1, 6, "expected '{' after '$'"),
    (": x", 1, 1, "map value without key"),
    ("(a): x", 1, 1, "map value without key"),
    ('"""\nunterminated', 1, 1, 'block comment'),
    ("a: [1; 2", 1, 9, "expected ']' to close the array opened at 1:4"),
    ("@x", 1, 1, "not a valid import"),
    ("a -> b\n(a -> c)[0].label: x", 2, 1, "no connection"),
    ("x: ${missing}", 1, 4, 'could not resolve variable "missing"'),
    ("y: {classes: {c: {label: C}}}", 1, 5, "classes must be declared at a board root scope"),
    ("x\nfill: red", 2, 1, "fill must be style.fill"),
    ("x: {source-arrowhead: 1}", 1, 5, '"source-arrowhead" can only be used on connections'),
    ("shape: 1", 1, 8, 'unknown shape "1"'),
    ("a: {shape: image}", 1, 5, 'image shape must include an "icon" field'),
    ("a -> b: {c -> d}", 1, 10, "cannot create edge inside edge"),
    ("a.style.foo: 1", 1, 9, 'invalid style keyword: "foo"'),
    ("a: {&shape: circle}", 1, 5, "glob filters cannot be used outside globs"),
    ("x: {style: {}}", 1, 5, '"style" expected to be set to a map of key-values'),
    ("vars: {d2-config: {x}}", 1, 20, '"x" needs a value'),
    ("classes: {a -> b}", 1, 11, "classes cannot contain an edge"),
    ("shape: image\nx", 2, 1, "image shapes cannot have children"),
    ("a -> b: {style.bar: 1}", 1, 16, 'invalid style keyword: "bar"'),
    ("classes: {c: {class: d}}", 1, 15, '"class" cannot appear within "classes"'),
    ("classes: {c: {s3: x}}", 1, 15, "s3 is an invalid class field, must be reserved keyword"),
    ("a: |md   |", 1, 4, "block string cannot be empty"),                 # d2: 1:1, the key
    ("a -> b: {foo: bar}", 1, 10, "edge map keys must be reserved keywords"),
    ("a -> b: {source-arrowhead: {foo: 1}}", 1, 29, "arrowhead map keys must be reserved"),
    ("x: {scenarios: {s: {a}}}", 1, 5, "scenarios must be declared at a board root scope"),
    ("x: {constraint: primary_key}", 1, 5, '"constraint" keyword can only be used in "sql_table"'),
    ("a: {shape: image; icon: https://x/y.png}\na.b -> c", 2, 3, "image shapes cannot have children"),
    ("a.style -> b", 1, 3, "reserved keywords are prohibited in edges"),
    ("a -> b.label", 1, 8, "reserved keywords are prohibited in edges"),
    ("a.shape: blob", 1, 10, 'unknown shape "blob"'),
    ("t: {shape: sql_table; a: int {x}}", 1, 31, "sql_table columns cannot have children"),
    ("t: {shape: class; a}\nt.a.q -> b", 2, 5, "class fields cannot have children"),
    ("_.a", 1, 1, "'_'"),
    # spread substitutions, style.3d and nested sequence diagrams: checked against d2 below
    ("...${x}", 1, 1, 'could not resolve variable "x"'),
    ("x: {...${nope}}", 1, 4, 'could not resolve variable "nope"'),
    ("vars: {d: hello}\nx: {...${d}}", 2, 5, "cannot spread non-composite"),
    ("vars: {arr: {q}}\nx.class: [...${arr}]", 2, 11, "cannot spread non-array into array"),
    ("vars: {arr: q}\nx.class: [...${arr}]", 2, 11, "cannot spread non-composite"),
    ("a.shape: circle\na.style.3d: true", 2, 1, D3_MESSAGE),
    ("a: {shape: circle; style.3d: false}", 1, 20, D3_MESSAGE),
    ("a.style.3d: true\na.shape: oval", 1, 1, D3_MESSAGE),
    ("s: {shape: sequence_diagram\nt: {shape: sequence_diagram; p -> q}\nx -> t\n}", None, None,
     "actors in sequence diagrams cannot themselves be sequence diagrams: t"),
    ("s: {shape: sequence_diagram; a -> b; g: {shape: sequence_diagram}}", None, None,
     "actors in sequence diagrams cannot themselves be sequence diagrams: g"),
]


@pytest.mark.parametrize("text,line,column,words", MALFORMED)
def test_malformed_input_names_file_line_and_column(text, line, column, words):
    with pytest.raises(D2SyntaxError) as info:
        parse_text(text, filename="flow.d2")
    err = info.value
    assert isinstance(err, InputError) and isinstance(err, DiagQAError)
    assert err.file == "flow.d2"
    assert words in str(err)
    if line is not None:
        assert (err.line, err.column) == (line, column)
        assert str(err).startswith(f"flow.d2:{line}:{column}: ")


def _d2_binary() -> str | None:
    local = Path(sys.executable).parent / "d2"
    return str(local) if local.exists() else shutil.which("d2")


# the cases added for d2's own later checks, compared with what the binary says
D2_CHECKED = [c for c in MALFORMED if "...$" in c[0] or "3d" in c[0] or "actors in sequence" in c[3]]


@pytest.mark.slow
@pytest.mark.parametrize("text,line,column,words", D2_CHECKED)
def test_d2_rejects_them_with_the_same_message(text, line, column, words, tmp_path):
    d2 = _d2_binary()
    if d2 is None:
        pytest.skip("d2 binary not available")
    src = tmp_path / "flow.d2"
    src.write_text(text, encoding="utf-8")
    proc = subprocess.run([d2, "--bundle=false", "--omit-version", str(src), str(tmp_path / "o.svg")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "D2_LAYOUT": "dagre"})
    assert proc.returncode != 0
    assert words in proc.stderr
    if line is not None:
        assert f"flow.d2:{line}:{column}: {words}" in proc.stderr


def test_unclosed_map_message_format():
    text = "a\nb\nc: {\n  d\n" + "e\n" * 7 + "  f; g"
    with pytest.raises(D2SyntaxError) as info:
        parse_text(text, filename="flow.d2")
    assert str(info.value) == "flow.d2:12:7: expected '}' to close the map opened at 3:4"
    assert info.value.expected == "}"


@pytest.mark.parametrize("text,where", [
    ("a <-> b -* c", "1:9"),
    ("x: @file.key", "1:4"),
    ("*: {&width: 3; style.fill: red}\na", "1:5"),
])
def test_unsupported_features_say_so(text, where):
    with pytest.raises(D2UnsupportedError) as info:
        parse_text(text, filename="f.d2")
    msg = str(info.value)
    assert "unsupported" in msg and msg.startswith(f"f.d2:{where}: ")
    assert isinstance(info.value, D2SyntaxError)


def test_missing_import_and_import_cycle(tmp_path):
    (tmp_path / "a.d2").write_text("...@b\n", encoding="utf-8")
    (tmp_path / "b.d2").write_text("...@a\n", encoding="utf-8")
    with pytest.raises(D2SyntaxError, match="import cycle"):
        parse_file(tmp_path / "a.d2")
    (tmp_path / "c.d2").write_text("x\n...@nothere\n", encoding="utf-8")
    with pytest.raises(D2SyntaxError) as info:
        parse_file(tmp_path / "c.d2")
    assert "cannot import nothere.d2" in str(info.value) and info.value.line == 2


def test_unreadable_file(tmp_path):
    with pytest.raises(D2SyntaxError, match="cannot read"):
        parse_file(tmp_path / "absent.d2")
    bad = tmp_path / "bad.d2"
    bad.write_bytes(b"a -> \xff\xfe")
    with pytest.raises(D2SyntaxError):
        parse_file(bad)


def _only_parser_errors(text: str) -> None:
    try:
        parse_text(text, filename="fuzz.d2")
    except D2SyntaxError as exc:
        assert exc.file == "fuzz.d2"


D2_ALPHABET = st.sampled_from(list("ab_ .:;{}[]()<>-*&!@$#|\"'\\\n\t") + ["->", "<-", "...@",
                              "${", '"""', "|md", "null", "suspend", "**", "(a -> b)[0]",
                              "shape: ", "label", "_.", "vars", "classes", "style.", "é"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_fuzz_random_text(text):
    _only_parser_errors(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_fuzz_decoded_bytes(data):
    _only_parser_errors(data.decode("utf-8", errors="replace"))


@settings(max_examples=300, deadline=None)
@given(st.lists(D2_ALPHABET, max_size=40).map("".join))
def test_fuzz_d2_tokens(text):
    _only_parser_errors(text)


def _corpus_texts() -> list[str]:
    if not CORPUS.is_dir():
        return ["a -> b: x\nc: {d; e -> _.a}\n"]
    return [p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.d2"))]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_fuzz_corpus_mutations(data):
    texts = _corpus_texts()
    text = data.draw(st.sampled_from(texts))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        j = data.draw(st.integers(i, min(len(text), i + 12)))
        op = data.draw(st.sampled_from(["delete", "insert", "replace"]))
        piece = data.draw(st.lists(D2_ALPHABET, max_size=3).map("".join))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        else:
            text = text[:i] + piece + text[j:]
    _only_parser_errors(text)


def test_deep_nesting_is_an_error_not_a_crash():
    for text in ("a: {" * 5000, "a." * 5000 + "b", "a: " + "[" * 3000):
        with pytest.raises(D2UnsupportedError, match="unsupported"):
            parse_text(text)
    assert len(parse_text("a: {" * 60 + "}" * 60)["nodes"]) == 60


# -- diagqa parse ---------------------------------------------------------------------

def test_cli_prints_graph_json(tmp_path, capsys):
    f = tmp_path / "g.d2"
    f.write_text("a -> b: uses\nb: {shape: cylinder}\n", encoding="utf-8")
    assert cli_main(["parse", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "nodes": [{"id": "a", "label": "a", "shape": "rectangle", "parent": None},
                  {"id": "b", "label": "b", "shape": "cylinder", "parent": None}],
        "edges": [{"src": "a", "dst": "b", "label": "uses", "directed": True, "arrow": "->"}],
    }


def test_cli_text_format(tmp_path, capsys):
    f = tmp_path / "g.d2"
    f.write_text("c: {a <- b}\n", encoding="utf-8")
    assert cli_main(["parse", str(f), "--format", "text"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        'node c [rectangle] "c"', 'node c.a [rectangle] "a" in c',
        'node c.b [rectangle] "b" in c', "edge c.a <- c.b"]


def test_cli_bad_input_exits_2_with_one_line(tmp_path, capsys):
    f = tmp_path / "bad.d2"
    f.write_text("a: {\n  b\n", encoding="utf-8")
    assert cli_main(["parse", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"bad.d2:3:1: expected '}}' to close the map opened at 1:4" in err


def test_cli_subprocess(tmp_path):
    good, bad = tmp_path / "good.d2", tmp_path / "bad.d2"
    good.write_text("x -> y\n", encoding="utf-8")
    bad.write_text("x -> \n", encoding="utf-8")
    root = Path(__file__).resolve().parents[1]
    ok = subprocess.run([sys.executable, "-m", "benchmark.cli", "parse", str(good)],
                        capture_output=True, text=True, timeout=60, cwd=root)
    assert ok.returncode == 0, ok.stderr
    assert [e["dst"] for e in json.loads(ok.stdout)["edges"]] == ["y"]
    fail = subprocess.run([sys.executable, "-m", "benchmark.cli", "parse", str(bad)],
                          capture_output=True, text=True, timeout=60, cwd=root)
    assert fail.returncode == 2
    assert fail.stderr.strip().count("\n") == 0
    assert "bad.d2:1:1: connection missing destination" in fail.stderr
