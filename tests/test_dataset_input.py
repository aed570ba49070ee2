"""Hostile and malformed dataset input: every case is one located problem among the others, what a
problem is reported for is really left out (of ``validate`` counts and of a run's samples), and
nothing crashes, hangs or reads outside the dataset.

Each test writes a tiny dataset (diagram ``d1``: ``a -> b``, one question) and breaks one thing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark.dataset import load_dataset
from benchmark.errors import InputError
from benchmark.runner import run
from benchmark.spec import RunSpec
from test_validate import run as cli  # the diagqa CLI in-process: (exit code, stdout, stderr)

D2 = "a: A\nb: B\na -> b\n"


def annotation(did: str = "d1", qid: str | None = None, **top: str) -> str:
    """An annotation file for diagram ``did`` with one sound question; ``top`` replaces top-level lines."""
    head = {"diagram": did, "title": "t", "domain": "algorithm", "language": "en", **top}
    lines = [f"{k}: {v}" for k, v in head.items() if v is not None]
    return "\n".join(lines) + f"""
questions:
  - id: {qid or did + '-q1'}
    text: Is there an arrow from A to B?
    type: edge_exists
    args: {{source: a, target: b}}
    answer: yes
    certificate:
      nodes: [a, b]
      edges: [[a, b]]
    counter_prior: false
    rationale: A points at B.
"""


def dataset(root: Path, files: dict[str, str] | None = None, diagrams: tuple[str, ...] = ("d1", "d2")) -> Path:
    """``root`` with ``diagrams/<id>.d2`` for ``diagrams`` and the given annotation files
    (default: a sound one per diagram)."""
    (root / "diagrams").mkdir(parents=True)
    (root / "annotations").mkdir()
    for did in diagrams:
        (root / "diagrams" / f"{did}.d2").write_text(D2, encoding="utf-8")
    for name, text in (files if files is not None else {f"{d}.yaml": annotation(d) for d in diagrams}).items():
        (root / "annotations" / name).write_text(text, encoding="utf-8")
    return root



def validate(root: Path, renders: bool = False) -> tuple[int, list[str], str]:
    """(exit code, error lines, last line) of ``diagqa validate --data root`` (``--no-renders`` unless ``renders``)."""
    rc, out, err = cli("validate", "--data", str(root), *(() if renders else ("--no-renders",)))
    return rc, [ln for ln in err.splitlines() if ln.startswith("error: ")], (out + err).strip().splitlines()[-1]


def line_of(path: Path, needle: str, first: bool = False) -> int:
    """1-based line of the only (or with ``first``, the first) line of ``path`` holding ``needle``."""
    hits = [i for i, ln in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in ln]
    assert hits and (first or len(hits) == 1), (needle, hits)
    return hits[0]


def sample_ids(root: Path, tmp_path: Path) -> list[str]:
    """Sample ids of a real run of ``root`` (the reference solver on the oracle context)."""
    result = run(RunSpec(data_dir=root, variants=("oracle+d2+full",), answerers=("solver",), out_dir=tmp_path / "out",
                         run_id="r", workers=1), progress=False, quiet=True, report=False)
    lines = (result.run_dir / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["sample_id"] for line in lines]


def test_the_base_dataset_is_sound(tmp_path):
    root = dataset(tmp_path / "ds")
    assert validate(root) == (0, [], "validate: ok (2 diagrams, 2 questions)")


# -- YAML itself ------------------------------------------------------------------------------

BOMB = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9 if i else ['lol'] * 9)}]\n" for i in range(10))


def test_an_alias_bomb_is_refused_at_the_alias_before_expanding(tmp_path):
    text = annotation("d1").replace("    answer: yes\n", "    answer: *l9\n")
    path = tmp_path / "ds" / "annotations" / "d1.yaml"
    root = dataset(tmp_path / "ds", {"d1.yaml": BOMB + text, "d2.yaml": annotation("d2")})
    rc, errors, summary = validate(root)
    # the first alias is on line 2 (l1: &l1 [*l0, ...]); the file is left out, d2 still loads
    assert errors == [f"error: {path}:2: YAML aliases are not allowed in annotation files (*l0); write the value out"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")


def test_a_single_alias_is_refused_too(tmp_path):
    text = annotation("d1").replace("      nodes: [a, b]\n", "      nodes: &n [a, b]\n").replace(
        "    rationale: A points at B.\n", "    rationale: *n\n")
    path = tmp_path / "ds" / "annotations" / "d1.yaml"
    root = dataset(tmp_path / "ds", {"d1.yaml": text}, diagrams=("d1",))
    rc, errors, _ = validate(root)
    assert errors == [f"error: {path}:{line_of(path, 'rationale: *n')}: YAML aliases are not allowed in annotation "
                      f"files (*n); write the value out"]


def test_an_asterisk_in_text_is_not_an_alias(tmp_path):
    text = annotation("d1").replace("Is there an arrow from A to B?", "'Is there an arrow from A to B (*)?'")
    root = dataset(tmp_path / "ds", {"d1.yaml": text}, diagrams=("d1",))
    assert validate(root) == (0, [], "validate: ok (1 diagrams, 1 questions)")


@pytest.mark.parametrize("where, old, new, key", [
    ("question", "    answer: yes\n", "    answer: yes\n    answer: no\n", "answer"),
    ("top", "title: t\n", "title: t\ntitle: u\n", "title"),
    ("flow mapping", "{source: a, target: b}", "{source: a, target: b, source: b}", "source"),
])
def test_a_repeated_key_is_refused_where_it_repeats(tmp_path, where, old, new, key):
    text = annotation("d1")
    assert text.count(old) == 1
    root = dataset(tmp_path / "ds", {"d1.yaml": text.replace(old, new), "d2.yaml": annotation("d2")})
    path = root / "annotations" / "d1.yaml"
    lines = path.read_text(encoding="utf-8").splitlines()
    repeat = [i for i, ln in enumerate(lines, 1) if f"{key}:" in ln][-1]
    first = [i for i, ln in enumerate(lines, 1) if f"{key}:" in ln][0]
    rc, errors, summary = validate(root)
    assert len(errors) == 1 and errors[0].startswith(f"error: {path}:{repeat}: not valid YAML: "), errors
    assert f"duplicate key '{key}' (first at line {first})" in errors[0]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")


def test_a_files_equal_strings_are_one_object_and_other_files_keep_their_own(tmp_path):
    # a node id written in many questions' args and certificates is held once per file: the dataset
    # keeps every question, and at 500 diagrams the copies were a tenth of the loaded dataset
    def named(text: str) -> str:   # ids longer than one letter (Python shares one-letter strings anyway)
        for a, b in (("source: a, target: b", "source: auth, target: billing"), ("[a, b]", "[auth, billing]")):
            text = text.replace(a, b)
        return text

    second = named(annotation("d1")).split("questions:\n", 1)[1].replace("d1-q1", "d1-q2")
    root = dataset(tmp_path / "ds", {"d1.yaml": named(annotation("d1")) + second, "d2.yaml": named(annotation("d2"))})
    for did in ("d1", "d2"):
        (root / "diagrams" / f"{did}.d2").write_text("auth: A\nbilling: B\nauth -> billing\n", encoding="utf-8")
    ds, problems = load_dataset(root)
    assert problems == []
    q1, q2 = ds.diagrams["d1"].questions
    (e1,), (e2,) = q1.certificate.edges, q2.certificate.edges
    assert (e1.src, e1.dst) == (e2.src, e2.dst) == ("auth", "billing")
    assert e1.src is e2.src and dict(q1.args)["source"] is dict(q2.args)["source"] is e1.src
    assert q1.text is q2.text and q1.text == "Is there an arrow from A to B?"
    (other,) = ds.diagrams["d2"].questions
    assert dict(other.args)["source"] == "auth" and dict(other.args)["source"] is not e1.src



def test_a_loaded_dataset_holds_no_graph_and_makes_each_again_from_what_it_read(tmp_path):
    # a run's process holds every diagram while it samples: their graphs were half of it (a quarter
    # of a GB at 5 000 diagrams), so loading, checking and the priors let each go once used
    from benchmark.d2 import parse_file
    from benchmark.graph import build_graph
    from benchmark.priors import run_priors
    from benchmark.records import graph_to_json
    from benchmark.runner import prepare_dataset

    root = dataset(tmp_path / "ds")
    (root / "diagrams" / "d2.d2").write_text("a: A\nb: B\nc: C\na -> b: go\nb -> c\n", encoding="utf-8")
    ds, questions, problems = prepare_dataset(root)
    assert problems == [] and [q.id for q in questions] == ["d1-q1", "d2-q1"]
    assert not any(d.in_memory for d in ds.diagrams.values())
    expected = graph_to_json(build_graph(parse_file(root / "diagrams" / "d2.d2")))
    # edited after loading: the run reads the diagram it checked, not the file as it is now
    (root / "diagrams" / "d2.d2").write_text("x -> y\n", encoding="utf-8")
    d1, d2 = ds.diagrams["d1"], ds.diagrams["d2"]
    assert graph_to_json(d2.graph) == expected and d2.in_memory
    held = d2.graph
    res = run_priors(ds, questions=questions)     # every baseline, a diagram at a time
    assert set(res.predictions["blind"]) == {"d1-q1", "d2-q1"}
    assert d2.graph is held and not d1.in_memory  # what was held before stays held, the rest is let go
    d2.release()
    assert not d2.in_memory and graph_to_json(d2.graph) == expected


def test_a_loaded_datasets_packed_questions_and_parsed_forms_are_kept_on_disk(tmp_path):
    """What a dataset holds for each diagram from loading to the end of a run (its questions packed, its parsed
    form once released) lies in the dataset's spill file, not in memory; read back, it is what was packed, and a
    diagram pickled to a worker carries the bytes themselves."""
    import pickle

    from benchmark.dataset import load_dataset
    from benchmark.records import graph_to_json
    from benchmark.spill import Blob

    root = dataset(tmp_path / "ds")
    (root / "diagrams" / "d2.d2").write_text("a: A\nb: B\nc: C\na -> b: go\nb -> c\n", encoding="utf-8")
    ds, problems = load_dataset(root, strict=False)
    d2 = ds.diagrams["d2"]
    assert problems == [] and type(d2.questions._data) is Blob and d2._spill is ds.spill
    expected = graph_to_json(d2.graph)
    d2.release()
    assert type(d2._parsed_packed) is Blob and not d2.in_memory
    assert ds.spill.size >= len(d2.questions._data) + len(d2._parsed_packed)
    assert graph_to_json(d2.graph) == expected and [q.id for q in d2.questions] == ["d2-q1"]
    sent = pickle.loads(pickle.dumps(d2))       # as a task carries it to a worker
    assert type(sent.questions._data) is bytes and type(sent._parsed_packed) is bytes
    assert sent._spill is not ds.spill and sent._spill.size == 0
    assert graph_to_json(sent.graph) == expected and sent.questions == d2.questions


# -- wrong types: one located problem each, among the others ------------------------------------

@pytest.mark.parametrize("old, new, key, message", [
    ("      edges: [[a, b]]\n", "      edges: 5\n", "certificate:", "certificate edges must be a list"),
    ("      edges: [[a, b]]\n", "      edges: [[a, {x: 1}]]\n", "certificate:",
     "must be [src, dst] or [src, dst, label]"),
    ("- id: d1-q1\n", "- id: [1, 2]\n", "id: [1, 2]", "id must be a name"),
    ("    rationale: A points at B.\n", "    rationale: {a: 1}\n", "rationale:", "rationale must be a string"),
    ("    type: edge_exists\n", "    type: [edge_exists]\n", "type:", "unknown type ['edge_exists']"),
])
def test_a_question_field_of_the_wrong_type(tmp_path, old, new, key, message):
    bad = annotation("d1").replace(old, new)
    bad += annotation("d1", qid="d1-q2").split("questions:\n")[1]  # a second, sound question
    bad_q = "question #1" if "id:" in key else "d1-q1"
    root = dataset(tmp_path / "ds", {"d1.yaml": bad, "d2.yaml": annotation("d2").replace("answer: yes", "answer: no")})
    path = root / "annotations" / "d1.yaml"
    rc, errors, summary = validate(root)
    assert rc == 1
    mine = [e for e in errors if e.startswith(f"error: {path}:{line_of(path, key, first=True)} [{bad_q}]: ")]
    assert len(mine) == 1 and message in mine[0], errors
    # the other problem (d2's wrong answer) is still reported, and d1-q2 still loads
    assert any("[d2-q1]: annotated answer False but the solver computes True" in e for e in errors), errors
    assert len(errors) == 2 and summary == "validate: 2 problem(s) in 2 diagrams, 2 questions"


@pytest.mark.parametrize("key, value, message", [
    ("twin", "[x]", "twin must be the id of the other diagram, got ['x']"),
    ("language", "klingon", "unknown language 'klingon'; known: en, ru"),
    ("title", "{a: 1}", "title must be a string"),
    ("diagram", "[d1]", "'diagram' (the diagram id) is required"),
])
def test_a_file_field_of_the_wrong_type_leaves_the_file_out(tmp_path, key, value, message):
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1", **{key: value}), "d2.yaml": annotation("d2")})
    path = root / "annotations" / "d1.yaml"
    rc, errors, summary = validate(root)
    assert errors == [f"error: {path}:{line_of(path, f'{key}: {value}')}: {message}"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")


def test_wrong_types_never_crash_a_run(tmp_path):
    files = {
        "d1.yaml": annotation("d1").replace("      edges: [[a, b]]\n", "      edges: 5\n"),
        "d2.yaml": annotation("d2", twin="[x]"),
        "d3.yaml": annotation("d3", language="klingon"),
        "d4.yaml": annotation("d4").replace("- id: d4-q1\n", "- id: [1, 2]\n"),
        "d5.yaml": annotation("d5"),
    }
    root = dataset(tmp_path / "ds", files, diagrams=("d1", "d2", "d3", "d4", "d5"))
    assert sample_ids(root, tmp_path) == ["d5-q1|oracle+d2+full|solver"]


# -- renders.json ------------------------------------------------------------------------------

@pytest.mark.parametrize("manifest, message, line", [
    ("[]\n", "render manifest must be a JSON object (diagram id -> render), not list", 1),
    ('{"d1": {\n', "render manifest is not valid JSON: Expecting property name enclosed in double quotes", 2),
    ('{"d1": [1]}\n', "render manifest entry 'd1' must be an object with d2_sha256, png_sha256, d2_version", None),
])
def test_a_broken_render_manifest_is_one_problem_among_the_others(tmp_path, manifest, message, line):
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1").replace("answer: yes", "answer: no"),
                                     "d2.yaml": annotation("d2")})
    path = root / "diagrams" / "renders.json"
    path.write_text(manifest, encoding="utf-8")
    rc, errors, summary = validate(root, renders=True)
    where = f"{path}:{line}" if line else f"{path}"
    assert f"error: {where}: {message}" in errors, errors
    assert any("[d1-q1]: annotated answer False but the solver computes True" in e for e in errors), errors
    assert len(errors) == 2 and rc == 1
    rc, out, err = cli("render", "--data", str(root))
    assert rc == 2 and err == f"diagqa render: error: {where}: {message}\n"


# -- ids are names, never paths ----------------------------------------------------------------

@pytest.mark.parametrize("did", ["../../outside/stolen", "ABSOLUTE", "..", "sub/d1"])
def test_a_diagram_id_that_is_a_path_is_refused_and_nothing_outside_is_read(tmp_path, did):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "stolen.d2").write_text("secret_a -> secret_b\n", encoding="utf-8")
    (outside / "stolen.yaml").write_text("", encoding="utf-8")
    if did == "ABSOLUTE":
        did = str(outside / "stolen")
    text = annotation(did, qid="stolen-q1").replace("source: a, target: b", "source: secret_a, target: secret_b")
    root = dataset(tmp_path / "ds", {"stolen.yaml": text, "d1.yaml": annotation("d1")}, diagrams=("d1",))
    path = root / "annotations" / "stolen.yaml"
    rc, errors, summary = validate(root)
    assert errors == [f"error: {path}:1: diagram id {did!r} is not a name (letters, digits, '_', '-', '.'; "
                      f"never a path)"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")
    ds, problems = load_dataset(root, strict=False)
    assert list(ds.diagrams) == ["d1"] and [q.id for q in ds.questions] == ["d1-q1"]
    assert sample_ids(root, tmp_path) == ["d1-q1|oracle+d2+full|solver"]


# -- skipped means skipped ---------------------------------------------------------------------

def test_a_repeated_question_id_is_reported_and_left_out(tmp_path):
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1"), "d2.yaml": annotation("d2", qid="d1-q1")})
    path = root / "annotations" / "d2.yaml"
    first = root / "annotations" / "d1.yaml"
    rc, errors, summary = validate(root)
    assert errors == [f"error: {path}:{line_of(path, '- id: d1-q1')} [d1-q1]: question id is used twice in the "
                      f"dataset (first at {first}:{line_of(first, '- id: d1-q1')})"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 2 diagrams, 1 questions")
    assert sample_ids(root, tmp_path) == ["d1-q1|oracle+d2+full|solver"]


def test_a_question_id_repeated_in_one_file_keeps_the_first(tmp_path):
    text = annotation("d1") + annotation("d1").split("questions:\n")[1].replace("answer: yes", "answer: no")
    root = dataset(tmp_path / "ds", {"d1.yaml": text}, diagrams=("d1",))
    ds, problems = load_dataset(root, strict=False)
    assert [str(p.detail).split(" (")[0] for p in problems] == ["question id is used twice in the dataset"]
    assert [(q.id, q.answer) for q in ds.questions] == [("d1-q1", True)]
    assert sample_ids(root, tmp_path) == ["d1-q1|oracle+d2+full|solver"]


def test_two_annotation_files_naming_one_diagram(tmp_path):
    # zz.yaml comes after d1.yaml: it must not replace d1's questions
    impostor = annotation("d1", qid="zz-q1").replace("answer: yes", "answer: no")
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1"), "zz.yaml": impostor}, diagrams=("d1",))
    path = root / "annotations" / "zz.yaml"
    rc, errors, summary = validate(root)
    assert errors == [f"error: {path}:1: diagram id 'd1' does not match the file name 'zz'"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")
    ds, _ = load_dataset(root, strict=False)
    assert ds.diagrams["d1"].annotation_path == root / "annotations" / "d1.yaml"
    assert sample_ids(root, tmp_path) == ["d1-q1|oracle+d2+full|solver"]


def test_an_unknown_top_level_key_leaves_the_file_out(tmp_path):
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1", colour="red"), "d2.yaml": annotation("d2")})
    rc, errors, summary = validate(root)
    assert len(errors) == 1 and "unknown keys ['colour']" in errors[0]
    assert sample_ids(root, tmp_path) == ["d2-q1|oracle+d2+full|solver"]


# -- an empty dataset --------------------------------------------------------------------------

def test_an_empty_dataset_is_an_error(tmp_path):
    root = dataset(tmp_path / "ds", {})
    rc, out, err = cli("validate", "--data", str(root), "--no-renders")
    assert rc == 2 and out == ""
    assert err == f"diagqa validate: error: {root / 'annotations'}: the dataset is empty: no annotation files " \
                  f"(annotations/*.yaml)\n"
    with pytest.raises(InputError, match="the dataset is empty"):
        sample_ids(root, tmp_path)


def test_a_dataset_whose_every_question_is_left_out_does_not_run(tmp_path):
    root = dataset(tmp_path / "ds", {"d1.yaml": annotation("d1", language="klingon")}, diagrams=("d1",))
    with pytest.raises(InputError, match=r"no question to run: 1 dataset problem\(s\) left every question out"):
        sample_ids(root, tmp_path)


def test_doctests():
    import doctest

    import benchmark.dataset

    result = doctest.testmod(benchmark.dataset)
    assert result.failed == 0 and result.attempted > 0


def test_an_annotation_file_without_end_is_read_only_up_to_the_size_limit(tmp_path):
    root = dataset(tmp_path / "ds", {"d2.yaml": annotation("d2")})
    (root / "annotations" / "d1.yaml").symlink_to("/dev/zero")
    rc, errors, summary = validate(root)
    assert errors == [f"error: {root / 'annotations' / 'd1.yaml'}: annotation file is larger than 4 MiB"]
    assert (rc, summary) == (1, "validate: 1 problem(s) in 1 diagrams, 1 questions")


RETIRED = """
  - id: d1-q2
    retired: the gold followed a data arrow
    text: whatever it said
"""


def test_a_retired_question_is_left_out_and_its_id_stays_reserved(tmp_path):
    root = dataset(tmp_path / "data", {"d1.yaml": annotation("d1") + RETIRED,
                                       "d2.yaml": annotation("d2", qid="d1-q2")})
    ds, problems = load_dataset(root, strict=False)
    assert [q.id for q in ds.questions] == ["d1-q1"]            # neither the retired one nor its reuse
    assert ds.diagram("d1").retired == {"d1-q2": "the gold followed a data arrow"}
    assert len(problems) == 1 and "retired" in str(problems[0]) and problems[0].question == "d1-q2"
    assert problems[0].file.endswith("d2.yaml")


def test_a_retired_question_must_say_why(tmp_path):
    root = dataset(tmp_path / "data", {"d1.yaml": annotation("d1") + RETIRED.replace("the gold followed a data arrow", "''"),
                                       "d2.yaml": annotation("d2")})
    rc, errors, _ = validate(root)
    assert rc != 0 and len(errors) == 1 and "retired must say why" in errors[0]
    assert f":{line_of(root / 'annotations' / 'd1.yaml', 'retired:')}" in errors[0]


def test_a_released_diagrams_graph_is_freed_at_once_not_left_to_the_cycle_collector():
    """A graph whose edges were read holds networkx's cached views, each of which holds the graph: a cycle.
    Released, a diagram's graph is freed there and then (a run releases one per diagram), and made again
    from what the diagram kept when next used."""
    import gc
    import weakref

    from benchmark.dataset import Diagram

    d = Diagram(id="x", d2_path=Path("x.d2"), png_path=Path("x.png"))
    d.__dict__["parsed"] = {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"src": "a", "dst": "b", "label": "go"}]}
    g = d.graph
    assert [(u, v, e["label"]) for u, v, e in g.edges(data=True)] == [("a", "b", "go")] and "a" in g.nodes
    gone = weakref.ref(g)
    del g
    gc.disable()   # only reference counting may free it
    try:
        d.release()
        assert gone() is None
    finally:
        gc.enable()
    assert not d.in_memory and [(u, v) for u, v in d.graph.edges()] == [("a", "b")]


def test_repeated_and_retired_ids_are_found_alike_when_every_ids_digest_is_the_same(tmp_path, monkeypatch):
    # ids are compared by a 64-bit digest first and only the diagrams sharing one are read again: with every
    # digest the same, every diagram is read again, and what is reported and kept must not change
    import benchmark.dataset as dataset_module

    files = {"d1.yaml": annotation("d1"), "d2.yaml": annotation("d2", qid="d1-q1"),
             "d3.yaml": annotation("d3") + RETIRED.replace("d1-q2", "d3-q2"), "d4.yaml": annotation("d4", qid="d3-q2")}
    root = dataset(tmp_path / "ds", files, diagrams=("d1", "d2", "d3", "d4"))
    ds, problems = load_dataset(root, strict=False)
    assert [str(p.detail).split(" (")[0].split(";")[0] for p in problems] == [
        "question id is used twice in the dataset", "question id is retired in " + str(root / "annotations" / "d3.yaml")]
    monkeypatch.setattr(dataset_module, "id_digest", lambda text: 0)
    alike, again = load_dataset(root, strict=False)
    assert [str(p) for p in again] == [str(p) for p in problems]
    assert [q.id for q in alike.questions] == [q.id for q in ds.questions] == ["d1-q1", "d3-q1"]
