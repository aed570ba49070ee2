"""Answer normalisation per kind and correctness against the gold answer."""
import pytest

from benchmark.graph import Subgraph, build_graph
from benchmark.metrics.accuracy import is_correct, normalise_answer, normalise_with_reason
from benchmark.questions import Question

G = build_graph({
    "nodes": [{"id": "user", "label": "User"}, {"id": "auth", "label": "Auth Service"},
              {"id": "cache", "label": "Cache"}, {"id": "db", "label": "Orders DB"},
              {"id": "check", "label": "Approved?", "shape": "diamond"}, {"id": "ship", "label": "Ship order"},
              {"id": "ru.db", "label": "База данных"}],
    "edges": [{"src": "user", "dst": "auth"}, {"src": "auth", "dst": "db", "label": "reads"},
              {"src": "user", "dst": "cache"}, {"src": "cache", "dst": "db"},
              {"src": "check", "dst": "ship", "label": "yes"}],
})


def q(qtype, answer, language="en", **args):
    return Question("q", "d", "text", qtype, tuple(args.items()), answer, Subgraph(), language=language)


@pytest.mark.parametrize("raw,expected", [
    ("Yes.", True), ("yes, via the cache", True), ("Да", True), ("нет", False), ("No", False),
    (True, True), (False, False), ("NO - there is no such edge", False), ("It is true.", True),
    ("Ответ: да.", True),
])
def test_yes_no_in_english_and_russian(raw, expected):
    assert normalise_answer("bool", raw, G, "en") is expected


@pytest.mark.parametrize("raw", ["maybe", "", "it depends: yes or no", 3])
def test_unreadable_yes_no_is_none_with_reason(raw):
    value, reason = normalise_with_reason("bool", raw, G)
    assert value is None and reason


@pytest.mark.parametrize("raw,expected", [
    (3, 3), ("3", 3), ("three", 3), ("три", 3), ("There are 2 successors.", 2), ("две", 2), ("zero", 0),
])
def test_integers_from_digits_and_number_words(raw, expected):
    assert normalise_answer("int", raw, G) == expected


def test_int_rejects_bool_and_text_without_number():
    assert normalise_answer("int", True, G) is None
    assert normalise_answer("int", "several", G) is None


def test_node_answers_match_ids_through_labels():
    assert normalise_answer("node", "ship order", G) == "ship"
    assert normalise_answer("node", "  Ship   Order ", G) == "ship"
    assert normalise_answer("node", "ship", G) == "ship"
    assert normalise_answer("node", "Shp order", G) == "ship"          # fuzzy, one best match
    assert normalise_answer("node", "The flow goes to Ship order.", G) == "ship"
    assert normalise_answer("node", ["Ship order"], G) == "ship"
    assert normalise_answer("node", "Firewall", G) is None
    value, reason = normalise_with_reason("node", "User then Cache", G)
    assert value is None and "several" in reason


def test_sets_compared_as_sets():
    expected = frozenset({"auth", "cache"})
    assert normalise_answer("nodes", ["Cache", "auth service"], G) == expected
    assert normalise_answer("nodes", "Auth Service, Cache", G) == expected
    assert normalise_answer("nodes", "Cache and Auth Service", G) == expected
    assert normalise_answer("nodes", "none", G) == frozenset()
    assert is_correct(q("successors", expected, node="user"), "Cache; Auth Service", G)
    assert not is_correct(q("successors", expected, node="user"), "Cache", G)
    assert not is_correct(q("successors", expected, node="user"), "Cache, Auth Service, Firewall", G)


def test_labels_case_and_space_insensitive():
    question = q("edge_label", "reads", source="auth", target="db")
    assert is_correct(question, " READS ", G)
    assert is_correct(question, '"reads"', G)
    assert not is_correct(question, "writes", G)


def test_paths_any_shortest_path_counts():
    question = q("path", ("user", "auth", "db"), source="user", target="db")
    assert is_correct(question, ["User", "Auth Service", "Orders DB"], G)
    assert is_correct(question, "User -> Cache -> Orders DB", G)          # the other shortest path
    assert is_correct(question, "User → Cache → Orders DB", G)
    assert not is_correct(question, "User -> Orders DB", G)               # not an edge
    assert not is_correct(question, "Orders DB -> Cache -> User", G)      # wrong direction


def test_bool_and_node_and_int_correctness():
    assert is_correct(q("reachable", True, source="user", target="db"), "yes, via the cache", G)
    assert not is_correct(q("reachable", False, source="db", target="user"), "Yes", G)
    assert is_correct(q("reachable", False, "ru", source="db", target="user"), "Нет", G)
    assert is_correct(q("decision_outcome", "ship", node="check", branch="yes"), "Ship order", G)
    assert is_correct(q("count_out", 2, node="user"), "two", G)
    assert not is_correct(q("count_out", 2, node="user"), None, G)


def test_russian_label_with_inflection_matches_fuzzily():
    assert normalise_answer("node", "База данных", G, "ru") == "ru.db"
    assert normalise_answer("node", "базы данных", G, "ru") == "ru.db"


def test_labels_holding_and_or_commas_are_not_split():
    g = build_graph({"nodes": [{"id": "bt", "label": "Build and test"}, {"id": "dep", "label": "Deploy, then notify"},
                               {"id": "src", "label": "Source"}],
                     "edges": [{"src": "src", "dst": "bt"}, {"src": "bt", "dst": "dep"}]})
    assert normalise_answer("nodes", "Build and test and Deploy, then notify", g) == frozenset({"bt", "dep"})
    assert normalise_answer("path", "Source -> Build and test -> Deploy, then notify", g) == ("src", "bt", "dep")
    assert normalise_answer("nodes", "Source, Firewall", g) == frozenset({"src", "Firewall"})
