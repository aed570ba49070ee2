"""The bundled 50-diagram dataset loads, validates and meets the targets the harness relies on."""
from __future__ import annotations

import re
from collections import Counter

import pytest

from benchmark.dataset import DEFAULT_ROOT, load_dataset
from benchmark.graph import node_label
from benchmark.questions import QUESTION_TYPES
from benchmark.validate import validate_dataset

DOMAINS = {"software-architecture", "ci-cd", "etl", "business-process", "incident-runbook", "state-machine",
           "algorithm", "network"}
CYRILLIC = re.compile("[а-яА-ЯёЁ]")


@pytest.fixture(scope="module")
def loaded():
    return load_dataset(DEFAULT_ROOT, strict=False)


@pytest.fixture(scope="module")
def ds(loaded):
    return loaded[0]


def test_loads_without_schema_problems(loaded):
    ds, problems = loaded
    assert [str(p) for p in problems] == []
    assert len(ds.diagrams) == 50


def test_validates(ds):
    problems = validate_dataset(ds, check_renders=True)
    assert [str(p) for p in problems] == []


def test_every_diagram_file_is_annotated(ds):
    stems = {p.stem for p in (DEFAULT_ROOT / "diagrams").glob("*.d2")}
    assert stems == set(ds.diagrams)


def test_question_ids_are_unique_and_named_after_their_diagram(ds):
    ids = [q.id for q in ds.questions]
    assert len(ids) == len(set(ids))
    for q in ds.questions:
        assert re.fullmatch(rf"{re.escape(q.diagram)}-q\d+", q.id), q.id


def test_every_diagram_has_at_least_six_questions(ds):
    short = {d.id: len(d.questions) for d in ds.diagrams.values() if len(d.questions) < 6}
    assert short == {}


def test_diagram_sizes_and_metadata(ds):
    for d in ds.diagrams.values():
        assert 6 <= d.graph.number_of_nodes() <= 250, d.id  # system maps go up to 250 nodes
        assert d.domain in DOMAINS, d.id
        assert d.language in ("en", "ru"), d.id
        assert d.title, d.id


def test_big_diagrams_have_containers_with_arrows_in_and_out(ds):
    """A diagram of 80 nodes or more is one where retrieval matters: it has containers that arrows
    go into and come out of, as a whole."""
    big = [d for d in ds.diagrams.values() if d.graph.number_of_nodes() >= 80]
    assert len(big) >= 5
    for d in big:
        g = d.graph
        containers = {n for n in g.nodes if any(m.startswith(n + ".") for m in g.nodes)}
        assert any(g.in_degree(c) and g.out_degree(c) for c in containers), d.id


def test_pngs_stay_within_the_image_readers_limit():
    from benchmark.extract.image import MAX_PIXELS
    from benchmark.image_input import png_size
    from benchmark.render import MAX_PNG_PIXELS

    assert MAX_PNG_PIXELS == MAX_PIXELS
    over = {p.stem: png_size(p) for p in (DEFAULT_ROOT / "diagrams").glob("*.png")
            if png_size(p)[0] * png_size(p)[1] > MAX_PNG_PIXELS}
    assert over == {}


def test_labels_are_unique_within_each_diagram(ds):
    """Answers are matched to node ids through labels, so two nodes may not share one."""
    for d in ds.diagrams.values():
        labels = Counter(node_label(d.graph, n).casefold() for n in d.graph.nodes)
        assert [lab for lab, n in labels.items() if n > 1] == [], d.id


def test_every_type_is_asked_often_enough(ds):
    counts = Counter(q.type for q in ds.questions)
    assert set(counts) == set(QUESTION_TYPES)
    assert min(counts.values()) >= 15, counts


def test_yes_no_balance_and_counter_prior_share(ds):
    yes_no = [q.answer for q in ds.questions if q.kind == "bool"]
    assert 0.4 <= sum(yes_no) / len(yes_no) <= 0.6
    # counter-prior is measured at load, on yes/no and node answers only
    defined = [q for q in ds.questions if q.kind in ("bool", "node")]
    assert sum(q.counter_prior for q in defined) >= len(defined) / 3
    assert not any(q.counter_prior for q in ds.questions if q.kind not in ("bool", "node"))


def test_twin_pairs_are_named_a_and_b_and_ask_one_question_both_ways(ds):
    twins = {d.id: d.twin for d in ds.diagrams.values() if d.twin}
    assert len(twins) >= 6
    by_id = {q.id: q for q in ds.questions}
    for did, other in twins.items():
        assert twins.get(other) == did
        assert did[:-2] == other[:-2] and {did[-2:], other[-2:]} == {"_a", "_b"}
        paired = [q for q in ds.diagrams[did].questions if dict(q.extra).get("twin_question")]
        assert paired, did
        for q in paired:
            mate = by_id[dict(q.extra)["twin_question"]]
            assert (mate.type, mate.args) == (q.type, q.args) and mate.answer != q.answer


def test_russian_diagrams_have_russian_labels_and_questions(ds):
    russian = [d for d in ds.diagrams.values() if d.language == "ru"]
    assert len(russian) >= 4
    for d in russian:
        assert all(CYRILLIC.search(q.text) for q in d.questions), d.id
        assert sum(bool(CYRILLIC.search(node_label(d.graph, n))) for n in d.graph.nodes) >= d.graph.number_of_nodes() / 2


def test_questions_name_nodes_by_label_not_by_id(ds):
    for q in ds.questions:
        for node in q.node_args():
            if "_" in node or "." in node:
                assert node not in q.text, f"{q.id} mentions the id {node!r}"


def test_no_trivial_question_is_left(ds):
    """Questions the wording answers are retired: reachability 'no' from a node with no way out, a
    decision branch whose label names the node it leads to, a label named in the question itself."""
    import re

    from benchmark.graph import out_edges

    # prepositions and articles name nothing ("боль в груди" -> "ЭКГ в 12 отведениях" shares only "в")
    function_words = {"a", "an", "the", "to", "of", "in", "on", "at", "by", "or", "and",
                      "в", "во", "и", "на", "с", "к", "по", "из", "о", "от", "для"}

    def words(text):
        return set(re.findall(r"\w+", str(text).casefold())) - function_words

    trivial = []
    for q in ds.questions:
        g, a = ds.diagrams[q.diagram].graph, q.arg
        if q.type in ("reachable", "reachable_avoiding") and q.answer is False \
                and not any(True for _ in out_edges(g, a["source"])):
            trivial.append(q.id)
        if q.type == "decision_outcome" and words(a["branch"]) & words(g.nodes[q.answer].get("label", "")):
            trivial.append(q.id)
        if q.type == "edge_label" and words(q.answer) and words(q.answer) <= words(q.text):
            trivial.append(q.id)
    assert trivial == []


CONNECTION_GLOB = re.compile(r"^\(\*\*? (?:->|<-|--|<->) \*\*?\)")
CONNECTION = re.compile(r"^[^#(]\S* (?:->|<-|--|<->) \S")


def test_connection_globs_follow_the_connections():
    """A connection glob such as ``(** -> **)[*].style.font-size: 22`` gives the same drawing before or
    after the connections, but d2 v0.9.0 takes about 10 s to apply it from the top of a diagram of 100
    objects (0.2 s from the bottom), in every render of it: the report's drill-down, the other d2
    styles, ``validate``'s render check. The bundled diagrams keep such globs after their connections."""
    late = []
    for path in sorted((DEFAULT_ROOT / "diagrams").glob("*.d2")):
        lines = path.read_text(encoding="utf-8").splitlines()
        globs = [i for i, line in enumerate(lines) if CONNECTION_GLOB.match(line)]
        conns = [i for i, line in enumerate(lines) if CONNECTION.match(line)]
        late += [f"{path.name}:{i + 1}" for i in globs if conns and i < max(conns)]
    assert late == []
