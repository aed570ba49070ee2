"""Feature by feature: tiny D2 texts and the exact graph the parser gives.

Expected graphs were checked against the d2 v0.9.0 binary (ids, edges, labels).
"""
from __future__ import annotations

import pytest

from benchmark.d2 import D2SyntaxError, D2UnsupportedError, parse_file, parse_text


def nodes(text: str, **kw) -> list[tuple]:
    return [(n["id"], n["label"], n["shape"], n["parent"]) for n in parse_text(text, **kw)["nodes"]]


def ids(text: str) -> list[str]:
    return [n["id"] for n in parse_text(text)["nodes"]]


def edges(text: str) -> list[tuple]:
    return [(e["src"], e["arrow"], e["dst"], e["label"]) for e in parse_text(text)["edges"]]


def labels(text: str) -> dict:
    return {n["id"]: n["label"] for n in parse_text(text)["nodes"]}


def test_node_defaults_and_public_form():
    assert parse_text("a -> b: x") == {
        "nodes": [{"id": "a", "label": "a", "shape": "rectangle", "parent": None},
                  {"id": "b", "label": "b", "shape": "rectangle", "parent": None}],
        "edges": [{"src": "a", "dst": "b", "label": "x", "directed": True, "arrow": "->"}],
    }


def test_containers_and_dotted_paths():
    assert nodes("a.b.c\nd: {e}") == [
        ("a", "a", "rectangle", None), ("a.b", "b", "rectangle", "a"),
        ("a.b.c", "c", "rectangle", "a.b"), ("d", "d", "rectangle", None),
        ("d.e", "e", "rectangle", "d")]


def test_map_without_colon_and_semicolons():
    assert ids("k8s{\n  a; b; c\n}\nx; y") == ["k8s", "k8s.a", "k8s.b", "k8s.c", "x", "y"]


def test_underscore_parent_references():
    text = "web: {br}\nsrv: {\n  tr: {\n    _._.web.br -> httpf\n    _.so -> httpf\n  }\n}"
    assert edges(text) == [("web.br", "->", "srv.tr.httpf", None),
                           ("srv.so", "->", "srv.tr.httpf", None)]


def test_case_insensitive_ids_keep_first_spelling():
    assert nodes("Giovanni -> slack\ngiovanni.label: G\nSLACK: S") == [
        ("Giovanni", "G", "rectangle", None), ("slack", "S", "rectangle", None)]
    assert edges("Giovanni -> slack\ngiovanni -> SLACK") == [
        ("Giovanni", "->", "slack", None), ("Giovanni", "->", "slack", None)]


@pytest.mark.parametrize("key,ident", [
    ('"x.y"', '"x.y"'), (r"EndpointScanner\.github", '"EndpointScanner.github"'),
    ('"q:1"', '"q:1"'), ("'it''s'", '"it\'s"'), ("web app", "web app"),
    ("my-node", "my-node"), ('"a--b"', '"a--b"'), ('"ends-"', '"ends-"'),
    ("'say \"hi\"'", "'say \"hi\"'"), ('""', '""'), ("a(paren)", '"a(paren)"'),
    ("2007", "2007"), ("a/b", "a/b"), ("null", "'null'"),
])
def test_quoted_and_escaped_keys(key, ident):
    assert ids(f"{key}: label") == [ident]


def test_empty_key_as_container():
    assert ids('K8s Cluster: {\n  "": {NATS}\n}') == ["K8s Cluster", 'K8s Cluster.""',
                                                      'K8s Cluster."".NATS']


def test_labels_primary_keyword_and_overrides():
    assert labels("a: A\na: B") == {"a": "B"}
    assert labels("a.label: X\na: Y") == {"a": "X"}          # the map's label wins
    assert labels("a: {label: X}\na: Y") == {"a": "X"}
    assert labels("a: P\na.label: Q") == {"a": "Q"}
    assert labels('a: ""') == {"a": ""}
    assert labels("a: 12") == {"a": "12"}


def test_label_escapes_and_comments():
    assert labels(r"esc: a\nb \# c # comment") == {"esc": "a\nb # c"}
    assert labels('q: "say \\"hi\\"\\tx"') == {"q": 'say "hi"\tx'}
    assert labels("s: 'it''s \\n raw'") == {"s": "it's \\n raw"}
    assert labels("h: foo#bar") == {"h": "foo"}


def test_vars_substitution():
    text = ("vars: {\n  name: Cat\n  d2-config: {theme-id: 4}\n  nested: {k: deep}\n}\n"
            "s1: ${name}-1\ns2: \"${name} quoted\"\ns3: '${name} literal'\ns4: ${nested.k}\n"
            "c: {\n  vars: {name: Dog}\n  x: ${name}\n}")
    assert labels(text) == {"s1": "Cat-1", "s2": "Cat quoted", "s3": "${name} literal",
                            "s4": "deep", "c": "c", "c.x": "Dog"}


def test_shapes():
    got = nodes("a.shape: circle\nb: {shape: Cylinder}\nc: |md\n  # T\n|\n"
                "d: |json\n  {}\n|\ne: |md x| {shape: rectangle}")
    assert [(n[0], n[2]) for n in got] == [("a", "circle"), ("b", "cylinder"), ("c", "text"),
                                          ("d", "code"), ("e", "rectangle")]


def test_block_strings_keep_raw_text():
    assert labels("a: |md\n  # Title\n  body\n|") == {"a": "# Title\nbody"}
    assert labels("a: |||md\n  has | and || inside\n|||") == {"a": "has | and || inside"}
    assert labels("b: {\n  c: |`md\n    x\n  `|\n}") == {"b": "b", "b.c": "x"}


@pytest.mark.parametrize("arrow,norm,directed", [
    ("->", "->", True), ("<-", "<-", True), ("<->", "<->", False), ("--", "--", False),
    ("--->", "->", True), ("<--", "<-", True), ("<---->", "<->", False), ("-----", "--", False),
])
def test_arrows(arrow, norm, directed):
    e = parse_text(f"a {arrow} b")["edges"]
    assert [(x["src"], x["dst"], x["arrow"], x["directed"]) for x in e] == [("a", "b", norm, directed)]


def test_chains_share_one_label_and_map():
    assert edges("a -> b <- c -- d: L") == [("a", "->", "b", "L"), ("b", "<-", "c", "L"),
                                            ("c", "--", "d", "L")]
    assert edges("a -> b -> c: {label: M; style.stroke: red}") == [
        ("a", "->", "b", "M"), ("b", "->", "c", "M")]


def test_empty_edge_label_is_none():
    assert edges('a -> b: ""\na -> b: {label: ""}') == [("a", "->", "b", None), ("a", "->", "b", None)]


def test_repeated_edges_stay_apart():
    assert edges("a -> b: one\na -> b: two\na -> b") == [
        ("a", "->", "b", "one"), ("a", "->", "b", "two"), ("a", "->", "b", None)]


def test_edge_references():
    text = "a -> b\na -> b\n(a -> b)[1].label: second\n(a -> b)[0].style.stroke: red"
    assert edges(text) == [("a", "->", "b", None), ("a", "->", "b", "second")]
    assert edges("c <- d\n(d -> c)[0].label: Y") == [("c", "<-", "d", "Y")]   # mirrored
    assert edges("x: {a -> b}\nx.(a -> b)[0]: relabelled") == [("x.a", "->", "x.b", "relabelled")]


def test_null_deletes_objects_and_edges():
    assert edges("a -> b\na -> b\n(a -> b)[0]: null") == [("a", "->", "b", None)]
    got = parse_text("c -> b\nx.y -> z\nc: null\nx.y: null")
    assert [n["id"] for n in got["nodes"]] == ["b", "x", "z"]
    assert got["edges"] == []


def test_null_on_a_connection_statement_deletes_the_first_one():
    assert edges("a -> b: x\na -> b: y\na -> b: null") == [("a", "->", "b", "y")]
    assert edges("a -> b: x\nb <- a: null") == []
    assert ids("a -> b: null\nc") == ["c"]


def test_suspend_needs_a_reference_for_connections():
    assert edges("a -- b: suspend") == [("a", "--", "b", None)]
    assert edges("a -- b\n(a -- b)[0]: suspend") == []


def test_keys_with_outer_whitespace_are_quoted():
    assert ids('" a"\n"b "\n"a\tb"') == ['" a"', '"b "', "a\tb"]


def test_reserved_keywords_never_become_nodes():
    text = ("direction: right\nvars: {v: 1}\nclasses: {k: {shape: oval}}\n"
            "a: {\n  style.fill: red\n  style: {stroke: blue}\n  shape: person\n  icon: x.svg\n"
            "  near: top-center\n  tooltip: t\n  link: https://x\n  width: 10\n  height: 5\n"
            "  label.near: bottom-left\n  class: k\n  grid-rows: 2\n  grid-columns: 2\n"
            "  grid-gap: 4\n  Direction: down\n}\n"
            "a -> b: {source-arrowhead: 1; target-arrowhead: {shape: diamond}}\n"
            "layers: {l: {ghost}}\nscenarios: {s: {ghost2}}\nsteps: {1: {ghost3}}")
    # the class sets oval first, the object's own shape: person wins
    assert nodes(text) == [("a", "a", "person", None), ("b", "b", "rectangle", None)]


def test_quoted_keywords_are_names():
    assert ids('"label": x\n"shape" -> b') == ["label", "shape", "b"]


def test_classes():
    text = ("classes: {\n  lb: {label: load\\nbalancer; shape: hexagon}\n  red: {style.fill: red}\n"
            "  e: {label: via class}\n}\n"
            "web lb.class: lb\napi: P {class: [red; lb]}\nx -> y: {class: e}")
    assert nodes(text)[:2] == [("web lb", "load\nbalancer", "hexagon", None),
                               ("api", "load\nbalancer", "hexagon", None)]
    assert edges(text) == [("x", "->", "y", "via class")]


def test_table_and_class_children_are_columns():
    text = ("t: {shape: sql_table; id: int {constraint: primary_key}; name: string}\n"
            "u: {shape: sql_table; id: int}\nt.id -> u.id\n"
            "c: {shape: class; +field: int; \"m(a int)\": void}")
    assert ids(text) == ["t", "u", "c"]
    assert edges(text) == [("t", "->", "u", None)]


def test_globs():
    assert edges("a; b\nc: {d}\n* -> *") == [("a", "->", "b", None), ("a", "->", "c", None),
                                             ("b", "->", "a", None), ("b", "->", "c", None),
                                             ("c", "->", "a", None), ("c", "->", "b", None)]
    # lazy: reaches objects declared later; reserved keywords are not matched
    assert labels("direction: right\n*.label: L\na\nb: {c}") == {"a": "L", "b": "L", "b.c": "c"}
    # ** in a connection matches leaf objects at any depth
    assert edges("a: {b; c}\nx\n** -> x: hi") == [("a.b", "->", "x", "hi"),
                                                  ("a.c", "->", "x", "hi")]
    assert edges("p*: Q\npa -> qq\n(** -> **)[*].label: all") == [("pa", "->", "qq", "all")]
    assert labels("p*: Q\npa; pb; qa") == {"pa": "Q", "pb": "Q", "qa": "qa"}


def test_globs_are_lazy_only_within_their_written_map():
    assert edges("A {n1; ** -> n1; x}\nA {y}") == [("A.x", "->", "A.n1", None)]
    assert labels("A: {*.label: L; x}\nA.z") == {"A": "A", "A.x": "L", "A.z": "z"}
    assert labels("*.label: L\nA {y}\nB") == {"A": "L", "A.y": "y", "B": "L"}


def test_suspend_and_unsuspend():
    text = ("s.a -> s.b\ns.c <-> s.b\ns.e <- s.b\nx\n**: suspend\n(** -> **)[*]: suspend\n"
            "(** -> **)[*]: unsuspend {\n  &dst: s.b\n}")
    assert ids(text) == ["s", "s.a", "s.b", "s.e"]
    assert edges(text) == [("s.a", "->", "s.b", None), ("s.e", "<-", "s.b", None)]
    assert ids("a -> b\n**: suspend\na: unsuspend") == ["a"]
    # a suspended container hides what is inside it, unless that is unsuspended
    assert ids("x: {a -> b}\nx: suspend\ny") == ["y"]
    # suspend globs reach only what exists when they are read
    assert ids("a\n**: suspend\nb") == ["b"]
    assert edges("a -> b\n(** -> **)[*]: suspend\nc -> d") == [("c", "->", "d", None)]


def test_unsuspended_connection_then_suspended_end():
    # an unsuspended connection unsuspends its ends when it is read: a later suspend wins
    assert ids("a -> b\n(** -> **)[*]: unsuspend\nb: suspend") == ["a"]
    # a suspended container goes with all it holds, even what was unsuspended inside
    assert ids("x.a -> x.b\n(** -> **)[*]: unsuspend\nx: suspend") == []
    assert ids("x.a\nx: suspend\nx.a: unsuspend") == []
    assert ids("x.a -> x.b\nx: suspend\n(** -> **)[*]: unsuspend") == ["x", "x.a", "x.b"]


def test_double_glob_references_skip_keys_named_with_a_star():
    assert edges('x: {"T*": {a -> b}}\n(** -> **)[*]: suspend') == [
        ('x."T*".a', "->", 'x."T*".b', None)]
    assert edges('x: {"Tq": {a -> b}}\n(** -> **)[*]: suspend') == []


def test_glob_key_before_a_connection_reference_is_unsupported():
    with pytest.raises(D2UnsupportedError, match="glob in the key before connections"):
        parse_text('x: {a -> b}\n*.(a -> b)[0]: suspend')


def test_glob_connections_to_a_suspended_key():
    # what `** -> n1` makes by its statement and at the first point d2 applies it again goes
    # with the suspended key; later connections stay and bring the key back (as the binary)
    assert edges("** -> n1\n**: suspend\na\nb\nc") == [("b", "->", "n1", None),
                                                         ("c", "->", "n1", None)]
    assert edges("srv\nn1: suspend\n** -> n1\na\nb") == [("b", "->", "n1", None)]
    # naming the key is that first point
    assert edges("** -> n1\nn1: suspend\na") == [("a", "->", "n1", None)]
    # each end of a connection is a point of its own
    assert edges("** -> n1\n**: suspend\np -> q") == [("q", "->", "n1", None),
                                                       ("p", "->", "q", None)]


def test_comments_and_block_comments():
    text = '# top\na # trailing\n"""\nb -> c\n"""\nd; # e\n'
    assert ids(text) == ["a", "d"]


def test_sequence_diagram_groups_reuse_actors():
    text = ("shape: sequence_diagram\na; b\ng: {\n  a -> b: hi\n  c -> d\n  a.s -> b\n"
            "  inner: {b -> e}\n}")
    assert ids(text) == ["a", "b", "g", "g.c", "g.d", "a.s", "g.inner", "g.inner.e"]
    assert sorted(edges(text)) == sorted([("a", "->", "b", "hi"), ("g.c", "->", "g.d", None),
                                          ("a.s", "->", "b", None), ("b", "->", "g.inner.e", None)])


def test_sequence_diagram_shape_declared_last():
    assert ids("a; b\ng: {\n  a -> b\n  a.t\n}\nshape: sequence_diagram") == ["a", "b", "g", "a.t"]


def test_imports(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "part.d2").write_text("p -> q: from file\nvars: {v: VV}\n", encoding="utf-8")
    main = tmp_path / "main.d2"
    main.write_text("...@sub/part\nx: @sub/part.d2\nc: ${v}\n", encoding="utf-8")
    got = parse_file(main)
    assert [n["id"] for n in got["nodes"]] == ["p", "q", "x", "x.p", "x.q", "c"]
    assert [(e["src"], e["dst"]) for e in got["edges"]] == [("p", "q"), ("x.p", "x.q")]
    assert got["nodes"][-1]["label"] == "VV"
    text = "...@sub/part\n"
    assert len(parse_text(text, base_dir=str(tmp_path))["edges"]) == 1


def test_primary_value_then_map_and_edge_labels_in_maps():
    assert nodes("k: Label\\n(x) {shape: diamond}") == [("k", "Label\n(x)", "diamond", None)]
    assert edges("a -> b: {label: inside}") == [("a", "->", "b", "inside")]


def test_order_is_first_appearance_in_the_text():
    assert ids("b -> a\nc: {z}\na.y") == ["b", "a", "c", "c.z", "a.y"]
    # a map's own connections and those of maps inside it, in text order
    assert edges("x: {\n  a -> b\n  g: {p -> q}\n  b -> a\n}") == [
        ("x.a", "->", "x.b", None), ("x.g.p", "->", "x.g.q", None), ("x.b", "->", "x.a", None)]


def test_bad_text_types():
    with pytest.raises(D2SyntaxError):
        parse_text("a\x00b")


# -- constructs met in real-world files (each graph checked against the d2 v0.9.0 binary) ------

def test_escaped_star_in_a_key_is_a_plain_character_not_a_glob():
    text = "a -> T\\*\nb\\*c: x"
    assert nodes(text) == [("a", "a", "rectangle", None), ('"T*"', "T*", "rectangle", None),
                           ('"b*c"', "x", "rectangle", None)]
    assert edges(text) == [("a", "->", '"T*"', None)]
    # an unescaped star in the same file still globs
    assert edges("a\nb\\*\n* -> z") == [("a", "->", "z", None), ('"b*"', "->", "z", None)]


def test_connection_reference_with_a_key_path_sets_that_key_not_the_label():
    assert edges("a -> b\n(a -> b).style.stroke: red") == [("a", "->", "b", None), ("a", "->", "b", None)]
    assert edges("classes: {chemin: {style.stroke: red}}\na -> b\n(a -> b).class: chemin") == [
        ("a", "->", "b", None), ("a", "->", "b", None)]
    assert edges("a -> b\n(a -> b).label: hi") == [("a", "->", "b", None), ("a", "->", "b", "hi")]
    assert edges("a; b\n(* -> *).label: hi") == [("a", "->", "b", "hi"), ("b", "->", "a", "hi")]
    assert edges("a; b\n(* -> *).style.stroke: red") == [("a", "->", "b", None), ("b", "->", "a", None)]


def test_classes_and_layers_imported_into_a_container_are_accepted(tmp_path):
    (tmp_path / "inc.d2").write_text("classes: {c: {label: C}}\n", encoding="utf-8")
    (tmp_path / "lay.d2").write_text("layers: {l1: {q -> r}}\nm\n", encoding="utf-8")
    main = tmp_path / "main.d2"

    def graph(text):
        main.write_text(text, encoding="utf-8")
        return [(n["id"], n["label"]) for n in parse_file(main)["nodes"]]

    # an imported file is compiled as a board of its own; its classes do not apply here
    assert graph("env: {...@inc\nx.class: c}\n") == [("env", "env"), ("env.x", "x")]
    assert graph("classes: {c: {label: ROOT}}\nenv: {...@inc\nx.class: c}\n") == [
        ("env", "env"), ("env.x", "ROOT")]
    assert graph("env: @lay\n") == [("env", "env"), ("env.m", "m")]
    assert graph("...@inc\nx.class: c\n") == [("x", "C")]
    # written in the container itself they are refused, as d2 does
    for text in ("env: {classes: {c: {label: C}}}", "env: {layers: {l: {q}}}"):
        with pytest.raises(D2SyntaxError, match="must be declared at a board root scope"):
            parse_text(text)


def test_spread_substitutions_copy_a_map_variable_into_place():
    assert ids("vars: {d: {note}}\nx: {...${d}}") == ["x", "x.note"]
    text = "vars: {d: {p -> q: lab; p.shape: circle; label: L}}\nx: {...${d}}\n...${d}"
    assert labels(text) == {"x": "L", "x.p": "p", "x.q": "q", "p": "p", "q": "q"}
    assert edges(text) == [("x.p", "->", "x.q", "lab"), ("p", "->", "q", "lab")]
    assert nodes(text)[1] == ("x.p", "p", "circle", "x")
    assert ids("vars: {g: {d: {n1; n2}}}\nx: {...${g.d}}") == ["x", "x.n1", "x.n2"]
    assert labels("vars: {d: {note: ${e}}; e: E}\nx: {...${d}}") == {"x": "x", "x.note": "E"}
    # resolved once the board is read: the innermost vars win, even when declared later
    assert ids("vars: {d: {n}}\nx: {...${d}; vars: {d: {m}}}") == ["x", "x.m"]
    # the copies take the spread's place; a field already there is overlaid
    assert ids("vars: {d: {n; m}}\na\n...${d}\nb") == ["a", "n", "m", "b"]
    assert nodes("vars: {d: {n: {shape: circle}}}\nn: N\n...${d}") == [("n", "N", "circle", None)]
    # in an array (class lists) the items of an array variable are spliced in
    assert labels("vars: {arr: [a; b]}\nclasses: {a: {label: A}; b: {shape: circle}}\n"
                  "x.class: [...${arr}]") == {"x": "A"}
    assert edges("vars: {d: {label: hi}}\na -> b: {...${d}}") == [("a", "->", "b", "hi")]


def test_bare_carriage_returns_are_spaces_as_in_d2(tmp_path):
    """d2 ends lines only at \\n: a bare \\r is whitespace, kept inside an unquoted string."""
    path = tmp_path / "cr.d2"

    def graph(data: bytes):
        path.write_bytes(data)
        g = parse_file(path)
        return ([(n["id"], n["label"]) for n in g["nodes"]],
                [(e["src"], e["dst"], e["label"]) for e in g["edges"]])

    assert graph(b"a -> b\rc -> d\r") == ([("a", "a"), ("b\rc", "b\rc"), ("d", "d")],
                                          [("a", "b\rc", None), ("b\rc", "d", None)])
    assert graph(b"a: hello\rworld\nq\n") == ([("a", "hello\rworld"), ("q", "q")], [])
    assert graph(b"a\r-> b\n") == ([("a", "a"), ("b", "b")], [("a", "b", None)])
    assert graph(b'"a\rb" -> c\n') == ([("a\rb", "a\rb"), ("c", "c")], [("a\rb", "c", None)])
    assert graph(b"x: {\r  a -> b\r}\r") == ([("x", "x"), ("x.a", "a"), ("x.b", "b")],
                                             [("x.a", "x.b", None)])
    # \r\n line ends work, block strings included
    assert graph(b"a -> b: l\r\nc\r\n") == ([("a", "a"), ("b", "b"), ("c", "c")], [("a", "b", "l")])
    assert graph(b"a: |md\r\n  # hi\r\n  there\r\n|\r\n") == ([("a", "# hi\nthere")], [])


def test_globs_reach_fields_copied_by_a_spread_as_in_d2():
    spread = "vars: {d: {n}}\n"
    # the glob of the same map (any block of it), and ** or connection globs around it, reach them
    assert edges(spread + "q\n* -> z\n...${d}") == [("q", "->", "z", None), ("n", "->", "z", None)]
    assert labels(spread + "x: {*.label: G; ...${d}}")["x.n"] == "G"
    assert labels(spread + "x: {...${d}}\nx: {*.label: G}")["x.n"] == "G"
    assert labels(spread + "x: {q}\n*.*.label: G\nx: {...${d}}")["x.n"] == "G"
    assert edges(spread + "x: {q}\n** -> z\nx: {...${d}}") == [
        ("x.q", "->", "z", None), ("x.n", "->", "z", None)]
    # a key glob written through a path, or a connection glob of a block already read, does not
    assert labels(spread + "x: {...${d}}\nx.*.label: G")["x.n"] == "n"
    assert edges(spread + "x: {q; * -> *}\nx: {...${d}}") == []
