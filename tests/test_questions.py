"""Question types, canonical answers (incl. Russian да/нет) and certificate parsing."""
import doctest

import pytest

import benchmark.questions as questions_module
from benchmark.graph import Edge, Subgraph
from benchmark.questions import (NODE_ARGS, QUESTION_TYPES, Question, answer_to_json, canonical_answer,
                                 certificate_from_json)

ALL_TYPES = ["edge_exists", "reachable", "reachable_avoiding", "path", "successors", "predecessors",
             "count_out", "count_in", "edge_label", "decision_outcome", "common_downstream",
             "scenario", "necessary", "graph_count", "inside", "absent"]


def test_doctests():
    assert doctest.testmod(questions_module).failed == 0


def test_the_sixteen_types_and_their_arguments():
    assert sorted(QUESTION_TYPES) == sorted(ALL_TYPES)
    for t in QUESTION_TYPES.values():
        assert t.kind in {"bool", "node", "nodes", "int", "label", "path", "abstain"}
        assert set(t.args) <= NODE_ARGS | {"branch", "branches", "what", "entity", "form"}, t.name
        assert not (t.always_closed and t.closed_when_false)
    assert QUESTION_TYPES["decision_outcome"].args == ("node", "branch")
    assert "branch" not in NODE_ARGS


@pytest.mark.parametrize("value, expected", [
    ("yes", True), ("Yes", True), (" TRUE ", True), (True, True), ("да", True), ("Да", True), ("ДА", True),
    ("no", False), ("NO", False), ("false", False), (False, False), ("нет", False), ("Нет", False),
])
def test_yes_no_in_english_and_russian(value, expected):
    assert canonical_answer("bool", value) is expected


@pytest.mark.parametrize("value", ["maybe", "", "y", 1, 0, None, ["yes"]])
def test_bad_yes_no_is_rejected(value):
    with pytest.raises(ValueError, match="yes/no"):
        canonical_answer("bool", value)


@pytest.mark.parametrize("value, expected", [(3, 3), ("3", 3), (" 12 ", 12), ("-1", -1), (0, 0)])
def test_integers(value, expected):
    assert canonical_answer("int", value) == expected


@pytest.mark.parametrize("value", [True, False, 2.5, "2.5", "three", None, [], "--3", "1-", "²", "٣"])
def test_bad_integers_are_rejected(value):
    with pytest.raises(ValueError, match="expected an integer"):
        canonical_answer("int", value)


def test_node_and_label_answers_are_strings():
    assert canonical_answer("node", "auth") == "auth"
    assert canonical_answer("label", 429) == "429"
    for kind in ("node", "label"):
        for bad in (True, None, ["a"], {"a": 1}):
            with pytest.raises(ValueError, match="string"):
                canonical_answer(kind, bad)


def test_node_sets_ignore_order_and_duplicates():
    assert canonical_answer("nodes", ["b", "a", "b"]) == frozenset({"a", "b"})
    assert canonical_answer("nodes", []) == frozenset()
    with pytest.raises(ValueError, match="list of node ids"):
        canonical_answer("nodes", "a, b")


def test_paths_keep_order():
    assert canonical_answer("path", ["a", "c", "b"]) == ("a", "c", "b")
    for bad in ([], "a -> b", None):
        with pytest.raises(ValueError, match="source to target"):
            canonical_answer("path", bad)


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError, match="unknown answer kind"):
        canonical_answer("float", 1.0)


def test_answer_to_json_sorts_sets_and_lists_paths():
    assert answer_to_json(frozenset({"b", "a"})) == ["a", "b"]
    assert answer_to_json(("x", "y")) == ["x", "y"]
    assert answer_to_json(True) is True and answer_to_json(3) == 3


def test_certificate_from_json_reads_nodes_edges_and_labels():
    sub = certificate_from_json({"nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c", "yes"], ["c", "d", None]]})
    assert sub.nodes == {"a", "b", "c"}
    assert sub.edges == {Edge("a", "b"), Edge("b", "c", "yes"), Edge("c", "d")}
    assert sub.all_nodes == {"a", "b", "c", "d"}
    assert certificate_from_json(None) == Subgraph()
    assert certificate_from_json({"nodes": [1], "edges": [[1, 2, 3]]}) == \
        Subgraph(frozenset({"1"}), frozenset({Edge("1", "2", "3")}))


@pytest.mark.parametrize("data, message", [
    (["a", "b"], "mapping"),
    ({"nodes": [], "edges": [], "labels": []}, "unknown keys"),
    ({"nodes": "a"}, "nodes must be a list"),
    ({"nodes": [True]}, "nodes must be a list"),
    ({"nodes": [["a"]]}, "nodes must be a list"),
    ({"edges": [["a"]]}, r"\[src, dst\]"),
    ({"edges": [["a", "b", "c", "d"]]}, r"\[src, dst\]"),
    ({"edges": ["a->b"]}, r"\[src, dst\]"),
])
def test_certificate_from_json_says_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message):
        certificate_from_json(data)


def make_question(qtype, answer, **args):
    t = QUESTION_TYPES[qtype]
    return Question(id="d-q1", diagram="d", text="?", type=qtype, args=tuple((k, args[k]) for k in t.args),
                    answer=answer, certificate=Subgraph())


def test_which_answers_need_the_closed_set():
    assert make_question("reachable", False, source="a", target="b").needs_closure()
    assert not make_question("reachable", True, source="a", target="b").needs_closure()
    assert make_question("reachable", True, source="a", target="b").needs_closure(False)
    assert make_question("successors", frozenset({"b"}), node="a").needs_closure()
    assert make_question("count_in", 0, node="a").needs_closure()
    assert not make_question("path", ("a", "b"), source="a", target="b").needs_closure()
    assert not make_question("decision_outcome", "b", node="a", branch="yes").needs_closure()
    assert make_question("common_downstream", False, first="a", second="b", target="c").needs_closure()


def test_question_accessors():
    q = make_question("decision_outcome", "b", node="gate", branch="yes")
    assert q.arg == {"node": "gate", "branch": "yes"}
    assert q.node_args() == ["gate"]
    assert q.kind == "node" and q.qtype is QUESTION_TYPES["decision_outcome"]
