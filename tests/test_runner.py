"""The benchmark run end to end on a tiny dataset of two twin diagrams, with numbers checked by hand.

auth_a:  User -> Auth Service -> Orders DB [reads];  User -> Cache -> Orders DB
auth_b:  the same without Cache -> Orders DB (so no way to the DB avoids Auth)
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmark.errors import StageUnavailable
from benchmark.graph import Subgraph
from benchmark.runner import run
from benchmark.spec import RunSpec
from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

D2_A = """user: User
auth: Auth Service
cache: Cache
db: Orders DB
user -> auth
auth -> db: reads
user -> cache
cache -> db
"""
D2_B = D2_A.replace("cache -> db\n", "")

YAML_A = """diagram: auth_a
title: Auth with a cache
domain: architecture
language: en
twin: auth_b
questions:
  - id: a-q1
    text: Can the User reach the Orders DB without going through the Auth Service?
    type: reachable_avoiding
    args: {source: user, target: db, avoid: auth}
    answer: yes
    certificate:
      nodes: [cache, db, user]
      edges: [[cache, db], [user, cache]]
    counter_prior: true
    rationale: The cache reads the DB directly.
    twin_question: b-q1
  - id: a-q2
    text: Is there an arrow from Auth Service to Orders DB?
    type: edge_exists
    args: {source: auth, target: db}
    answer: yes
    certificate:
      nodes: [auth, db]
      edges: [[auth, db, reads]]
    counter_prior: false
    rationale: Auth reads the DB.
"""
YAML_B = """diagram: auth_b
title: Auth without a cache path
domain: architecture
language: en
twin: auth_a
questions:
  - id: b-q1
    text: Can the User reach the Orders DB without going through the Auth Service?
    type: reachable_avoiding
    args: {source: user, target: db, avoid: auth}
    answer: no
    certificate:
      nodes: [cache, user]
      edges: [[user, cache]]
    counter_prior: false
    rationale: Every way to the DB passes Auth.
    twin_question: a-q1
  - id: b-q2
    text: How many nodes come directly after User?
    type: count_out
    args: {node: user}
    answer: 2
    certificate:
      nodes: [auth, cache, user]
      edges: [[user, auth], [user, cache]]
    counter_prior: false
    rationale: Auth and Cache.
"""

VARIANTS = ("oracle+d2+none", "oracle+d2+full", "oracle+d2+oracle")


def copy_bundled(root: Path, names: list[str]) -> Path:
    """A dataset at ``root`` holding the bundled diagrams ``names`` (D2, PNG and annotations)."""
    import shutil

    from benchmark.dataset import DEFAULT_ROOT

    (root / "diagrams").mkdir(parents=True)
    (root / "annotations").mkdir()
    for n in names:
        for ext in ("d2", "png"):
            shutil.copy(DEFAULT_ROOT / "diagrams" / f"{n}.{ext}", root / "diagrams" / f"{n}.{ext}")
        shutil.copy(DEFAULT_ROOT / "annotations" / f"{n}.yaml", root / "annotations" / f"{n}.yaml")
    return root


def make_dataset(root: Path, yaml_a: str = YAML_A) -> Path:
    """Write the two-diagram fixture dataset under ``root``."""
    (root / "diagrams").mkdir(parents=True)
    (root / "annotations").mkdir()
    (root / "diagrams" / "auth_a.d2").write_text(D2_A, encoding="utf-8")
    (root / "diagrams" / "auth_b.d2").write_text(D2_B, encoding="utf-8")
    (root / "annotations" / "auth_a.yaml").write_text(yaml_a, encoding="utf-8")
    (root / "annotations" / "auth_b.yaml").write_text(YAML_B, encoding="utf-8")
    return root


def tiny_spec(tmp_path: Path, **kw) -> RunSpec:
    """A run of the fixture dataset into ``tmp_path/results/r1`` (one worker)."""
    args = dict(data_dir=tmp_path / "data" if (tmp_path / "data").exists() else make_dataset(tmp_path / "data"),
                variants=VARIANTS, answerers=("solver", "blind"), out_dir=tmp_path / "results", run_id="r1",
                workers=1)
    args.update(kw)
    return RunSpec(**args)


def by_id(records) -> dict[tuple[str, str, str], dict]:
    return {(r.question_id, r.variant, r.answerer): r for r in records}


def samples_without_timings(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        d.pop("timings")
        if d.get("answer"):
            d["answer"]["meta"].pop("latency_s", None)
        out.append(d)
    return out


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tiny")
    return run(tiny_spec(tmp), progress=False, quiet=True)


def test_run_writes_every_output(tiny_run):
    d = tiny_run.run_dir
    for name in ("samples.jsonl", "summary.csv", "report.md", "report.html", "run.json", "graphs.json"):
        assert (d / name).is_file(), name
    assert (d.parent / "LATEST").read_text().strip() == "r1"
    assert len(tiny_run.records) == 4 * 3 * 2
    card = json.loads((d / "run.json").read_text())
    assert card["dataset"]["questions_run"] == 4 and card["dataset"]["diagrams"] == 2
    assert len(card["dataset"]["hash"]) == 64 and card["seed"] == 0
    full = card["components"]["selector full"]
    assert full["name"] == "full" and full["class"].startswith("retrievers.")
    assert card["packages"]["networkx"] and card["d2_version"]
    assert set(card["wall_s"]) >= {"load", "samples", "report", "total"}


def test_hand_checked_samples(tiny_run):
    rec = by_id(tiny_run.records)
    # full context of auth_a: 4 edges; a-q1's certificate is 2 edges (3 nodes), both in it
    m = rec[("a-q1", "oracle+d2+full", "solver")].metrics
    assert m["srr"] == 1.0 and m["precision"] == pytest.approx(2 / 4) and m["guess_class"] == "grounded"
    assert m["node_srr"] == 1.0 and m["f1"] == pytest.approx(2 / 3)
    assert rec[("a-q2", "oracle+d2+full", "solver")].metrics["precision"] == pytest.approx(1 / 4)
    # auth_b has 3 edges; b-q1's closed set is the one edge user -> cache (the edge into Auth is not part of it)
    assert rec[("b-q1", "oracle+d2+full", "solver")].metrics["precision"] == pytest.approx(1 / 3)
    # no context: the solver finds no way avoiding Auth -- wrong on auth_a, right (by luck) on auth_b
    assert rec[("a-q1", "oracle+d2+none", "solver")].metrics["guess_class"] == "retrieval_miss"
    lucky = rec[("b-q1", "oracle+d2+none", "solver")]
    assert lucky.metrics["correct"] is True and lucky.metrics["sufficient"] is False
    assert lucky.metrics["guess_class"] == "lucky_guess" and lucky.metrics["srr"] == 0.0
    assert lucky.metrics["f1"] == 0.0 and lucky.metrics["precision"] is None
    assert lucky.metrics["precision_reason"] == "empty context"
    assert lucky.context["text"] == "" and lucky.answer["raw"] == "no"
    # the oracle context is the certificate itself
    assert rec[("b-q2", "oracle+d2+oracle", "solver")].metrics["precision"] == 1.0
    # each record carries hashes of its question, context and answer
    assert set(lucky.hashes) == {"question", "context", "answer"}
    assert lucky.hashes["question"] == rec[("b-q1", "oracle+d2+full", "blind")].hashes["question"]
    # blind receives nothing whatever was selected: its record stores the empty context, never grounded
    blind = rec[("a-q2", "oracle+d2+full", "blind")]
    assert blind.context["text"] == "" and blind.context["edges"] == [] and blind.retrieved["edges"]
    assert blind.metrics["correct"] is True and blind.metrics["sufficient"] is False
    assert blind.metrics["guess_class"] == "lucky_guess" and blind.metrics["srr"] == 0.0
    assert blind.hashes["context"] == lucky.hashes["context"] != rec[("a-q2", "oracle+d2+full", "solver")].hashes["context"]
    assert not any(r.metrics["guess_class"] == "grounded" for r in tiny_run.records if r.answerer == "blind")
    # the solver abstains where the empty context does not determine a path: not an error
    assert all(r.metrics["error"] is None for r in tiny_run.records)


def _summary(run_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    import csv

    with (run_dir / "summary.csv").open() as fh:
        return {(r["variant"], r["answerer"]): r for r in csv.DictReader(fh)}


def test_hand_checked_summary(tiny_run):
    s = _summary(tiny_run.run_dir)
    none = s[("oracle+d2+none", "solver")]
    # one of four right (b-q1, lucky), none grounded
    assert float(none["accuracy"]) == 0.25 and float(none["grounded_accuracy"]) == 0.0
    assert float(none["guess_rate"]) == 1.0 and float(none["accuracy_inflation"]) == 0.25
    assert float(none["sufficiency"]) == 0.0 and float(none["srr"]) == 0.0
    assert none["precision"] == "" and none["precision_missing"] == "4"  # nothing retrieved: unmeasured
    assert float(none["f1"]) == 0.0 and none["f1_missing"] == "0"         # ... and F1 is 0, not unmeasured
    assert none["errors"] == "0" and none["abstained"] == "0" and float(none["coverage"]) == 1.0
    full = s[("oracle+d2+full", "solver")]
    assert float(full["accuracy"]) == 1.0 and float(full["guess_rate"]) == 0.0
    # precision (edges): (2/4 + 1/4 + 1/3 + 2/3) / 4 = 7/16; node SRR 1 everywhere
    assert float(full["precision"]) == pytest.approx(7 / 16) and float(full["node_srr"]) == 1.0
    assert float(full["accuracy_attempted"]) == 1.0 and full["control"] == "True"
    # blind: right on b-q1 ("no") and a-q2 ("yes") under every variant, never grounded
    blind = s[("oracle+d2+full", "blind")]
    assert float(blind["accuracy"]) == 0.5 and float(blind["grounded_accuracy"]) == 0.0
    assert float(blind["sufficiency"]) == 0.0 and float(blind["srr"]) == 0.0
    assert float(full["accuracy_low"]) == 1.0 and float(full["accuracy_high"]) == 1.0
    assert int(full["grounded"]) == 4 and int(full["lucky_guess"]) == 0


def test_report_has_every_section_and_no_nan(tiny_run):
    md = (tiny_run.run_dir / "report.md").read_text()
    for heading in ("How to read this", "Headline", "Accuracy against grounded accuracy", "Guessability floor", "Guess tables",
                    "Lucky guesses", "By question type", "Faithfulness", "Accuracy vs SRR", "The claim under test",
                    "Choosing a retriever: paired ranking of the candidates", "Unmeasured values and why"):
        assert f"## {heading}" in md
    assert "b-q1" in md.split("## Lucky guesses")[1]  # the lucky guess is listed with its question
    # right answers: solver 4 (full) + 4 (oracle) grounded + 1 lucky (none); blind 2 lucky per variant, 6 in all
    assert "7 of 15 right answers (0.47) were lucky guesses" in md.split("## Headline")[1]
    # only controls ran: nothing is ranked and the headline names no variant as best
    assert "only controls" in md.split("## Choosing a retriever")[1].split("##")[0]
    assert "best grounded" not in md.split("## Headline")[1].split("##")[0]
    assert "Controls (none, full, oracle selectors)" in md
    page = (tiny_run.run_dir / "report.html").read_text()
    assert not re.search(r"""(src|href)=["'](?!data:|#)""", page) and not re.search(r"<script[^>]*\ssrc=", page)
    assert page.count('src="data:image/png;base64,') == len(list((tiny_run.run_dir / "plots").glob("*.png"))) >= 4
    for name in ("report.md", "report.html", "summary.csv"):
        text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", (tiny_run.run_dir / name).read_text())
        text = re.sub(r'<script id="diagqa-data"[^>]*>[^<]*</script>', "", text)  # the samples, compressed
        assert not re.search(r"\bnan\b", text, re.IGNORECASE), name


class ExplodingSelector:
    """Raises on one question, works on the others."""

    name = "test-explode"

    def select(self, question, graph, diagram):
        if question.id == "a-q2":
            raise RuntimeError("boom on a-q2")
        return Subgraph(frozenset(question.node_args()[:1]))


class UnavailableSelector:
    """Never available."""

    def __init__(self):
        raise StageUnavailable("test weights are not installed")


class BrokenSelector:
    """Cannot even be built."""

    def __init__(self):
        raise OSError("index file is corrupt")


class TwinFinder:
    """Always puts the question's twin diagram first: the wrong diagram with the same node ids."""

    name = "test-twin"

    def fit(self, dataset):
        self.twins = {d.id: d.twin for d in dataset.diagrams.values()}

    def rank(self, question):
        return [(self.twins[question.diagram], 1.0), (question.diagram, 0.5)]


class LateUnavailableSelector:
    """Finds out only when asked that it cannot run."""

    def select(self, question, graph, diagram):
        raise StageUnavailable("test index is missing")


class OwnFinder:
    """Puts the question's own diagram first, as ``oracle`` does, under another name."""

    name = "test-own"

    def fit(self, dataset):
        self.ids = sorted(dataset.diagrams)

    def rank(self, question):
        return [(question.diagram, 1.0)] + [(d, 0.0) for d in self.ids if d != question.diagram]


class DiGraphSource:
    """Gives a plain DiGraph, not the MultiDiGraph every graph source gives."""

    name = "test-digraph"

    def load(self, diagram):
        import networkx as nx

        return nx.DiGraph(diagram.graph)


#: calls made to the counting stages below: (stage name, question id, what it was given)
CALLS: list[tuple[str, str, str]] = []


class CountedSelector:
    """The whole graph, counting its calls; deterministic."""

    name = "test-counted"
    deterministic = True

    def select(self, question, graph, diagram):
        from benchmark.graph import whole

        CALLS.append((self.name, question.id, diagram.id))
        return whole(graph)


class CountedVaryingSelector(CountedSelector):
    """The same, but not declared deterministic: called for every variant."""

    name = "test-counted-varying"
    deterministic = False


class PreparedSelector(CountedSelector):
    """The whole graph; its ``prepare`` keeps what it was given (diagram id, node count) in PREPARED."""

    name = "test-prepared"

    def prepare(self, graphs):
        for diagram, graph in graphs:
            PREPARED.append((self.name, diagram.id, graph.number_of_nodes()))
        return len(PREPARED)


class FailingPrepareSelector(CountedSelector):
    """The whole graph; its ``prepare`` fails."""

    name = "test-prepare-fails"

    def prepare(self, graphs):
        raise RuntimeError("no room for the vectors")


class ImageSource:
    """The D2 graph, as if read from the image (``reads_image``): not handed to ``prepare``."""

    name = "test-image"
    reads_image = True

    def load(self, diagram):
        return diagram.graph


PREPARED: list[tuple[str, str, int]] = []


class CountedAnswerer:
    """Says how many lines its context has, counting its calls; deterministic."""

    name = "test-lines"
    deterministic = True

    def answer(self, question, context):
        from benchmark.answers import Answer

        CALLS.append((self.name, question.id, context.text))
        return Answer(self.name, str(len(context.text.splitlines())), meta={"latency_s": 0.0})


class CountedVaryingAnswerer(CountedAnswerer):
    name = "test-lines-varying"
    deterministic = False

    def answer(self, question, context):
        from benchmark.answers import Answer

        CALLS.append((self.name, question.id, context.text))
        return Answer(self.name, str(len(context.text.splitlines())), meta={"latency_s": 0.0})


#: stages that exist only while this module's tests run (the registries are shared by the session)
TEST_STAGES = [(SELECTORS, "test-explode", ExplodingSelector), (SELECTORS, "test-unavailable", UnavailableSelector),
               (SELECTORS, "test-broken", BrokenSelector), (FINDERS, "test-twin", TwinFinder),
               (SELECTORS, "test-unavailable-late", LateUnavailableSelector), (FINDERS, "test-own", OwnFinder),
               (SELECTORS, "test-counted", CountedSelector), (SELECTORS, "test-counted-varying", CountedVaryingSelector),
               (ANSWERERS, "test-lines", CountedAnswerer), (ANSWERERS, "test-lines-varying", CountedVaryingAnswerer),
               (SOURCES, "test-digraph", DiGraphSource), (SELECTORS, "test-prepared", PreparedSelector),
               (SELECTORS, "test-prepare-fails", FailingPrepareSelector), (SOURCES, "test-image", ImageSource)]


@pytest.fixture(autouse=True, scope="module")
def _test_stages():
    for reg, name, cls in TEST_STAGES:
        reg.register(name)(cls)
    yield
    for reg, name, _ in TEST_STAGES:
        reg._entries.pop(name, None)


def test_exploding_stage_is_recorded_and_the_run_completes(tmp_path):
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+test-explode", "oracle+d2+full")), progress=False, quiet=True)
    rec = by_id(result.records)
    bad = rec[("a-q2", "oracle+d2+test-explode", "solver")]
    assert bad.error["stage"] == "select" and bad.error["type"] == "RuntimeError" and "boom" in bad.error["message"]
    assert bad.metrics is None and bad.answer is None
    assert rec[("a-q1", "oracle+d2+test-explode", "solver")].error is None
    assert len(result.records) == 16 and result.card["sample_errors"] == 2
    s = _summary(result.run_dir)[("oracle+d2+test-explode", "solver")]
    assert s["n"] == "4" and s["stage_errors"] == "1" and s["errors"] == "0"
    assert "select" in (result.run_dir / "report.md").read_text().split("## Errors and skipped stages")[1]


def test_unavailable_stage_is_skipped_in_one_line(tmp_path, capsys):
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+full", "oracle+d2+test-unavailable")), progress=False)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "test-unavailable" in line]
    assert len(lines) == 1 and "test weights are not installed" in lines[0]
    assert {r.variant for r in result.records} == {"oracle+d2+full"}
    skipped = result.card["skipped"]
    assert skipped == [{"variant": "oracle+d2+test-unavailable", "component": "selector test-unavailable",
                        "reason": "test weights are not installed"}]
    assert "test weights are not installed" in (result.run_dir / "report.html").read_text()


def test_a_stage_that_fails_to_start_is_skipped_with_its_error(tmp_path):
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+test-broken", "oracle+d2+none")), progress=False, quiet=True)
    assert result.skipped[0]["reason"] == "failed to start: OSError: index file is corrupt"
    assert {r.variant for r in result.records} == {"oracle+d2+none"}


def test_stage_unavailable_while_running_is_reported_once(tmp_path, capsys):
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+full", "oracle+d2+test-unavailable-late")), progress=False)
    lines = [line for line in capsys.readouterr().err.splitlines() if "test-unavailable-late" in line]
    assert len(lines) == 1 and "test index is missing" in lines[0] and "8 samples" in lines[0]
    late = [s for s in result.card["skipped"] if s.get("during_run")]
    assert late == [{"component": "selector test-unavailable-late", "reason": "test index is missing", "samples": 8,
                     "during_run": True}]
    errs = [r for r in result.records if r.error]
    assert len(errs) == 8 and all(r.error["unavailable"] and r.error["stage"] == "select" for r in errs)


def test_schema_error_names_file_line_question_and_the_run_goes_on(tmp_path, capsys):
    from benchmark.cli import main

    bad = YAML_A + """  - id: a-bad
    text: A question of a type nobody knows
    type: teleports
    args: {source: user}
    answer: yes
    certificate: {nodes: [user], edges: []}
    counter_prior: false
    rationale: broken on purpose
"""
    data = make_dataset(tmp_path / "data", yaml_a=bad)
    rc = main(["run", "--data", str(data), "--variants", "oracle+d2+full", "--answerers", "solver", "--workers", "1",
               "--out", str(tmp_path / "results"), "--run-id", "cli", "--no-progress"])
    captured = capsys.readouterr()
    assert rc == 0
    line = next(l for l in captured.err.splitlines() if "a-bad" in l)
    assert "auth_a.yaml:30" in line  # the line of its bad `type:`
    assert "[a-bad]" in line and "teleports" in line
    samples = (tmp_path / "results" / "cli" / "samples.jsonl").read_text().splitlines()
    assert len(samples) == 4  # the four good questions ran
    card = json.loads((tmp_path / "results" / "cli" / "run.json").read_text())
    assert card["dataset"]["problems"][0]["question"] == "a-bad" and card["dataset"]["problems"][0]["line"] == 30
    assert captured.out.strip().endswith("report.html")


def test_a_bad_answer_in_the_annotation_is_left_out(tmp_path):
    wrong = YAML_A.replace("    answer: yes\n    certificate:\n      nodes: [auth, db]", "    answer: no\n    certificate:\n      nodes: [auth, db]")
    result = run(tiny_spec(tmp_path, data_dir=make_dataset(tmp_path / "data", yaml_a=wrong)), progress=False, quiet=True)
    assert {r.question_id for r in result.records} == {"a-q1", "b-q1", "b-q2"}
    assert [p.question for p in result.problems] == ["a-q2"]


def test_unknown_names_fail_before_running(tmp_path):
    from benchmark.errors import DiagQAError

    with pytest.raises(DiagQAError, match="unknown selector 'khopp2'"):
        run(tiny_spec(tmp_path, variants=("oracle+d2+khopp2",)), progress=False, quiet=True)


def test_two_runs_are_identical_apart_from_timings_also_across_worker_counts(tmp_path):
    spec = tiny_spec(tmp_path, variants=("oracle+d2+none", "oracle+d2+khop1", "oracle+d2+bm25-3"),
                     answerers=("solver", "keyword", "blind"))
    one = run(spec, progress=False, quiet=True)
    two = run(tiny_spec(tmp_path, variants=spec.variants, answerers=spec.answerers, run_id="r2", workers=2),
              progress=False, quiet=True)
    assert two.card["workers"] == 2
    assert samples_without_timings(one.run_dir / "samples.jsonl") == samples_without_timings(two.run_dir / "samples.jsonl")
    assert (one.run_dir / "summary.csv").read_bytes() == (two.run_dir / "summary.csv").read_bytes()
    assert (tmp_path / "results" / "LATEST").read_text().strip() == "r2"


def test_deterministic_stages_run_once_per_question_for_the_same_inputs(tmp_path, monkeypatch):
    """A deterministic selector selects once per question for variants that give it the same graph, and a
    deterministic answerer answers once per question and context; stages not declared deterministic run for
    every sample. The samples are those of a run that reuses nothing, timings aside, and a reused selection
    or answer records the seconds it took when it was made."""
    from benchmark import runner

    variants = ("oracle+d2+test-counted", "test-own+d2+test-counted", "oracle+d2+full",
                "oracle+d2+test-counted-varying", "test-twin+d2+test-counted")
    answerers = ("test-lines", "test-lines-varying", "blind")
    CALLS.clear()
    reused = run(tiny_spec(tmp_path, variants=variants, answerers=answerers), progress=False, quiet=True)
    calls, n_questions = list(CALLS), 4
    select = [c for c in calls if c[0] == "test-counted"]
    # once per question for its own diagram (two variants share it), once more for the twin's
    assert sorted(select) == sorted([("test-counted", q, d) for q, d in
                                     [("a-q1", "auth_a"), ("a-q2", "auth_a"), ("b-q1", "auth_b"), ("b-q2", "auth_b"),
                                      ("a-q1", "auth_b"), ("a-q2", "auth_b"), ("b-q1", "auth_a"), ("b-q2", "auth_a")]])
    assert len([c for c in calls if c[0] == "test-counted-varying"]) == n_questions
    # the whole graph of the question's diagram, reached by four variants (test-counted twice, full,
    # test-counted-varying): one answer per question; the twin's graph is another context
    lines = [c for c in calls if c[0] == "test-lines"]
    assert len(lines) == len(set(lines)) == 2 * n_questions
    assert len([c for c in calls if c[0] == "test-lines-varying"]) == len(variants) * n_questions

    rec = by_id(reused.records)
    for q in ("a-q1", "b-q2"):
        first = rec[(q, "oracle+d2+test-counted", "test-lines")]
        again = rec[(q, "test-own+d2+test-counted", "test-lines")]
        assert again.timings["select_s"] == first.timings["select_s"]
        assert again.timings["answer_s"] == first.timings["answer_s"]
        assert rec[(q, "oracle+d2+full", "test-lines")].timings["answer_s"] == first.timings["answer_s"]

    CALLS.clear()
    monkeypatch.setattr(runner, "deterministic", lambda stage: False)
    fresh = run(tiny_spec(tmp_path, variants=variants, answerers=answerers, run_id="r2"), progress=False, quiet=True)
    assert len([c for c in CALLS if c[0] == "test-counted"]) == 3 * n_questions
    assert len([c for c in CALLS if c[0] == "test-lines"]) == len(variants) * n_questions
    assert samples_without_timings(reused.run_dir / "samples.jsonl") == \
        samples_without_timings(fresh.run_dir / "samples.jsonl")


def test_a_source_that_gives_another_kind_of_graph_is_a_source_error_naming_it(tmp_path):
    result = run(tiny_spec(tmp_path, variants=("oracle+test-digraph+full", "oracle+d2+full"), answerers=("solver",)),
                 progress=False, quiet=True)
    rec = by_id(result.records)
    bad = rec[("a-q1", "oracle+test-digraph+full", "solver")]
    assert bad.error["stage"] == "source" and bad.error["type"] == "TypeError"
    assert "'test-digraph' gave a DiGraph for auth_a, not a networkx MultiDiGraph" in bad.error["message"]
    assert rec[("a-q1", "oracle+d2+full", "solver")].error is None and result.card["sample_errors"] == 4


def test_limit_and_default_run_id(tmp_path):
    result = run(tiny_spec(tmp_path, run_id=None, limit=2, answerers=("blind",)), progress=False, quiet=True)
    assert {r.question_id for r in result.records} == {"a-q1", "a-q2"}
    stamp, digest = result.run_id.split("-")
    assert len(stamp) == 16 and stamp.endswith("Z") and len(digest) == 8


def test_a_diagram_that_does_not_parse_is_reported_and_left_out(tmp_path, capsys):
    data = make_dataset(tmp_path / "data")
    (data / "diagrams" / "auth_b.d2").write_text(D2_B + "broken: {\n", encoding="utf-8")
    result = run(tiny_spec(tmp_path), progress=False)
    assert {r.diagram_id for r in result.records} == {"auth_a"}
    line = next(l for l in capsys.readouterr().err.splitlines() if "auth_b.d2" in l)
    assert line.startswith("skipped: ") and "auth_b.d2:" in line
    assert any(p["file"].endswith("auth_b.d2") for p in result.card["dataset"]["problems"])


def _bars_left(err: str) -> list[str]:
    """Each progress bar of ``err`` as it was left (its last state), without the drawn bar and the rate."""
    left = [line.split("\r")[-1].split(" [")[0] for line in err.split("\n") if "%|" in line]
    return [line.split("|")[0] + line.split("|")[-1] for line in left]


def test_the_setup_shows_a_bar_for_each_step_before_the_first_sample(tmp_path, capsys):
    """A run's setup (loading the annotations, measuring the counter-prior, checking the questions, ranking them
    and planning each diagram's work, the prior baselines for the card) shows a bar per step, each filled to its
    count, before the samples' bar; a quiet run or one without progress shows none."""
    wrong = YAML_A.replace("    answer: yes\n    certificate:\n      nodes: [auth, db]",
                           "    answer: no\n    certificate:\n      nodes: [auth, db]")
    make_dataset(tmp_path / "data", wrong)   # a-q2's answer disagrees with the diagram: loaded, then left out
    run(tiny_spec(tmp_path), progress=True, quiet=False)
    err = capsys.readouterr().err
    assert _bars_left(err) == [
        "loading annotations: 100% 2/2",          # two annotation files
        "measuring counter-prior: 100% 4/4",      # every question loaded (a-q2 too)
        "checking questions: 100% 2/2",           # two diagrams
        "ranking and planning: 100% 2/2",         # the diagrams with a question to run
        "prior baselines: 100% 3/3",              # the questions run
        "diagqa run r1: 100% 18/18"], err          # 3 questions x 3 variants x 2 answerers
    assert err.index("checking questions: 100%") < err.index("skipped: ") < err.index("ranking and planning"), \
        "a question left out is reported after the checking's bar, not inside it"
    run(tiny_spec(tmp_path, run_id="r2"), progress=True, quiet=True)
    run(tiny_spec(tmp_path, run_id="r3"), progress=False, quiet=False)
    assert _bars_left(capsys.readouterr().err) == []


def test_doctests_of_the_progress_bars():
    import doctest

    import benchmark.progress

    result = doctest.testmod(benchmark.progress)
    assert result.attempted >= 4 and result.failed == 0


def test_a_context_from_the_wrong_diagram_never_counts_as_gold(tmp_path):
    from benchmark.rescore import rescore

    result = run(tiny_spec(tmp_path, variants=("test-twin+d2+full", "oracle+d2+full"), answerers=("solver",)),
                 progress=False, quiet=True)
    rec = by_id(result.records)
    wrong = rec[("a-q1", "test-twin+d2+full", "solver")]
    assert wrong.found_diagram == "auth_b" and wrong.finder_rank == 2
    assert wrong.context["diagram"] == "auth_b" and "Cache -> Orders DB" not in wrong.context["text"]
    # same node ids as the gold certificate, but from the twin: no overlap, not sufficient, and the
    # solver reading auth_b says "no" where auth_a's answer is "yes"
    m = wrong.metrics
    assert m["srr"] == 0.0 and m["precision"] == 0.0 and m["sufficient"] is False
    assert m["correct"] is False and m["guess_class"] == "retrieval_miss"
    # on auth_b's own question the twin's context (auth_a) gives the wrong answer, still scored as foreign
    assert rec[("b-q1", "test-twin+d2+full", "solver")].metrics["srr"] == 0.0
    assert rec[("a-q1", "oracle+d2+full", "solver")].metrics["srr"] == 1.0
    md = (result.run_dir / "report.md").read_text()
    assert "| test-twin+d2+full | 4 | 0.00 | 1.00 | 0.50 | 0 |" in md.split("## Finding the diagram")[1]
    summary = (result.run_dir / "summary.csv").read_bytes()
    rescore(result.run_dir)
    assert (result.run_dir / "summary.csv").read_bytes() == summary


def test_a_worker_gets_one_diagrams_task_with_only_the_diagrams_it_reads(tmp_path, monkeypatch):
    """Each diagram goes to a worker as its own task: the diagram and those its finders returned for its
    questions, never the whole dataset; a worker keeps nothing of a task once it is done, and the samples
    are those of a run that works on the whole dataset in one process."""
    from benchmark import runner
    from benchmark.spill import unpack

    names = ["algo_login_lockout_a", "algo_login_lockout_b", "arch_auth_cache_a", "arch_auth_cache_b"]
    data = copy_bundled(tmp_path / "data", names)
    tasks: list = []
    make_task = runner._Work.task
    monkeypatch.setattr(runner._Work, "task", lambda self, did: tasks.append(make_task(self, did)) or tasks[-1])
    spec = tiny_spec(tmp_path, data_dir=data, variants=("test-twin+d2+khop1", "oracle+d2+none"),
                     answerers=("solver", "blind"), limit=None)
    one = run(spec, progress=False, quiet=True)
    twin = {n: n[:-1] + ("b" if n.endswith("a") else "a") for n in names}
    assert [t.diagram_id for t in tasks] == names
    for t in tasks:
        assert sorted(t.diagrams) == sorted({t.diagram_id, twin[t.diagram_id]})
        assert {q.diagram for q in t.questions} == {t.diagram_id}
        assert set(t.found) == {"oracle", "test-twin"}
        assert all(set(per) == {q.id for q in t.questions} for per in t.found.values())
        found = {r.found_diagram for r in one.records if r.diagram_id == t.diagram_id}
        assert found == set(t.diagrams)

    # a worker's own set-up holds no diagram, before and after working on a task
    import signal

    handler = signal.getsignal(signal.SIGINT)
    runner._init_worker(list(spec.variants), list(spec.answerers), {}, True)
    try:
        assert runner._WORKER.dataset.diagrams == {} and runner._WORKER.questions == {}
        lines = [line for t in tasks for line, _, _ in unpack(runner._worker_run(t))]
        assert runner._WORKER.dataset.diagrams == {} and runner._WORKER._graphs == {}
        assert runner._WORKER.gold_graphs == {} and runner._WORKER.found == {}
    finally:
        runner._WORKER = None
        signal.signal(signal.SIGINT, handler)
    worked = (tmp_path / "worked.jsonl")
    worked.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert samples_without_timings(worked) == samples_without_timings(one.run_dir / "samples.jsonl")


def test_while_samples_are_made_the_run_holds_only_the_questions_of_the_diagram_worked_on(tmp_path, monkeypatch):
    """The run keeps each diagram's questions and their finders' results packed until the diagram's task is
    made (a run ten times as large has ten times as many): while a diagram is worked on, the questions alive
    as objects are that diagram's, the dataset's diagrams hold none, and the samples are the same."""
    import gc

    from benchmark import runner
    from benchmark.questions import Question

    names = ["algo_login_lockout_a", "algo_login_lockout_b", "arch_auth_cache_a", "arch_auth_cache_b"]
    data = copy_bundled(tmp_path / "data", names)
    spec = tiny_spec(tmp_path, data_dir=data, variants=("test-twin+d2+khop1", "oracle+d2+none"),
                     answerers=("solver", "blind"), limit=None)
    before = run(spec, progress=False, quiet=True)
    seen = []
    real = runner.iter_diagram

    def watching(work, diagram_id):
        for batch in real(work, diagram_id):
            gc.collect()
            # (this run's questions and diagrams: those of its data folder; other tests' may still be alive)
            alive = [o for o in gc.get_objects() if type(o) is Question and str(data) in (o.file or "")]
            held = [q for o in gc.get_objects() if type(o) is runner.Diagram and str(data) in str(o.d2_path)
                    for q in o.questions]
            seen.append((diagram_id, {q.diagram for q in alive}, len(held)))
            yield batch

    monkeypatch.setattr(runner, "iter_diagram", watching)
    after = run(tiny_spec(tmp_path, data_dir=data, variants=("test-twin+d2+khop1", "oracle+d2+none"),
                          answerers=("solver", "blind"), limit=None, run_id="r2"), progress=False, quiet=True)
    assert [d for d, _, _ in seen] and {d for d, _, _ in seen} == set(names)
    assert all(diagrams == {d} and held == 0 for d, diagrams, held in seen), seen
    assert samples_without_timings(after.run_dir / "samples.jsonl") == \
        samples_without_timings(before.run_dir / "samples.jsonl")


def test_while_the_run_loads_and_plans_it_holds_the_questions_of_a_few_diagrams_at_a_time(tmp_path, monkeypatch):
    """Loading keeps each diagram's questions packed, the prior baselines read them a diagram at a time, and
    the finders rank them a chunk at a time, each diagram shelved once its questions are ranked: the
    questions alive as objects are never the whole dataset's. The finders are given the same chunks (the
    first ``RANK_CHUNK`` questions, the next, ...) as over one list of every question, and the samples are
    those of a run that ranks in chunks of the default size."""
    import gc

    import benchmark.finders.ranking as ranking
    import benchmark.priors as priors
    from benchmark import runner
    from benchmark.dataset import PackedQuestions, load_dataset
    from benchmark.questions import Question

    names = ["algo_login_lockout_a", "algo_login_lockout_b", "arch_auth_cache_a", "arch_auth_cache_b"]
    data = copy_bundled(tmp_path / "data", names)
    ds, _ = load_dataset(data)
    sizes = [len(ds.diagrams[n].questions) for n in names]
    assert all(isinstance(d.questions, PackedQuestions) for d in ds.diagrams.values())
    spec = dict(data_dir=data, variants=("test-twin+d2+khop1", "oracle+d2+none"), answerers=("solver", "blind"),
                limit=None)
    before = run(tiny_spec(tmp_path, **spec), progress=False, quiet=True)

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is Question and str(data) in (o.file or ""))

    seen: dict[str, list] = {"rank": [], "priors": []}
    real_rank, real_released = ranking.rank_each, priors.released

    def rank_each(finder, questions, chunk=ranking.RANK_CHUNK):
        seen["rank"].append((len(questions), alive()))
        return real_rank(finder, questions, chunk)

    def released(diagrams):
        seen["priors"].append(alive())
        return real_released(diagrams)

    monkeypatch.setattr(ranking, "RANK_CHUNK", 4)
    monkeypatch.setattr(ranking, "rank_each", rank_each)
    monkeypatch.setattr(priors, "released", released)
    after = run(tiny_spec(tmp_path, run_id="r2", **spec), progress=False, quiet=True)
    total, largest = sum(sizes), max(sizes)
    # two finders, each given 4 questions at a time and the rest last, as one list of every question would be
    chunks = [4] * (total // 4) + ([total % 4] if total % 4 else [])
    assert [n for n, _ in seen["rank"]] == [n for n in chunks for _ in range(2)]
    # held: the diagrams not all ranked yet (at most 3 questions, and the one just read), the chunk asked
    # (redacted copies) and the diagram shelved last
    assert max(n for _, n in seen["rank"]) <= 3 + largest + 4 + largest < total, seen["rank"]
    # the priors at load and for the run card: a diagram at a time (and what is left of the one before)
    assert len(seen["priors"]) == 2 * len(names) and max(seen["priors"]) <= 2 * largest + 1 < total, seen["priors"]
    assert samples_without_timings(after.run_dir / "samples.jsonl") == \
        samples_without_timings(before.run_dir / "samples.jsonl")
    card = json.loads((after.run_dir / "run.json").read_text())
    assert card["priors"] == json.loads((before.run_dir / "run.json").read_text())["priors"]
    assert card["dataset"]["questions_loaded"] == card["dataset"]["questions_run"] == total


def test_a_run_prepared_a_diagram_at_a_time_runs_the_questions_prepare_dataset_gives(tmp_path):
    """prepare_run holds the questions to run packed per diagram; in order they are prepare_dataset's, with a
    limit (cut inside a diagram) and with a stratified sample, and every problem is reported past the limit."""
    from benchmark.runner import prepare_dataset, prepare_run

    names = ["algo_login_lockout_a", "algo_login_lockout_b", "arch_auth_cache_a", "arch_auth_cache_b"]
    data = copy_bundled(tmp_path / "data", names)
    bad = data / "annotations" / "arch_auth_cache_b.yaml"
    bad.write_text(bad.read_text().replace("answer: yes", "answer: no", 1))
    for limit, sample in [(None, None), (5, None), (0, None), (None, 7), (3, 7)]:
        ds, listed, problems = prepare_dataset(data, limit, sample, seed=3)
        held, packed, packed_problems = prepare_run(data, limit, sample, seed=3)
        assert [q for qs in packed.values() for q in qs] == listed
        assert list(packed) == sorted({q.diagram for q in listed}) and all(packed.values())
        assert [str(p) for p in packed_problems] == [str(p) for p in problems] and problems
        # a diagram whose every question runs shares the dataset's packed questions; one cut holds its own
        for did, qs in packed.items():
            assert (qs is held.diagrams[did].questions) == (len(qs) == len(held.diagrams[did].questions))
        if limit is None and sample is None:
            assert [d for d, qs in packed.items() if qs is held.diagrams[d].questions] == names[:3]
    assert len(listed) == 3


def test_a_diagrams_shelved_work_shares_its_packed_questions(tmp_path):
    """A diagram's work waits for its task with the packed questions it was given (the dataset's, not a copy)
    and its finders' results packed; questions given as a list are packed."""
    from benchmark.dataset import PackedQuestions
    from benchmark.runner import _shelved, prepare_run
    from benchmark.spill import unpack

    names = ["algo_login_lockout_a", "algo_login_lockout_b"]
    _, packed, _ = prepare_run(copy_bundled(tmp_path / "data", names))
    qs = packed[names[0]]
    found = {"oracle": {q.id: {"diagram": names[1] if i == 0 else names[0], "rank": 1, "error": None, "time": 0.0}
                        for i, q in enumerate(qs)}}
    shelved = _shelved(names[0], qs, found, ["s1", "s2"], {"s2"})
    assert shelved.questions is qs and unpack(shelved.found_packed) == found
    assert shelved.read == tuple(names) and shelved.done == frozenset({"s2"})
    listed = _shelved(names[0], list(qs), found, [], frozenset())
    assert isinstance(listed.questions, PackedQuestions) and listed.questions == list(qs) and listed.done == frozenset()


def test_a_workers_samples_come_back_packed_and_are_read_back_a_piece_at_a_time():
    """A diagram's finished samples leave a worker packed (``_worker_run`` -> ``spill.pack``), well under their
    pickle's size, and the run reads them back as a stream: beside the samples it makes, it never holds the
    whole pickle inflated at once (which, freed after every diagram, left glibc's heap fragmented)."""
    import pickle
    import random
    import tracemalloc

    from benchmark.spill import pack, unpack

    rng = random.Random(7)
    words = ["start", "validate", "order", "payment", "retry", "queue", "worker", "cache", "миграция", "ok", "no"]
    batch = [(json.dumps({"sample_id": f"q{i}::v::a", "context": {"nodes": [" ".join(rng.choices(words, k=4))
                                                                          for _ in range(40)]}, "score": rng.random()}),
              (i, rng.random(), f"q{i}"), ("a", i % 7 == 0, None, None, False)) for i in range(600)]
    whole = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
    assert len(whole) > 1_000_000
    packed = pack(batch)
    assert len(packed) < len(whole) / 3
    tracemalloc.start()
    try:
        got = unpack(packed)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == batch
    assert peak - held < len(whole) / 4, (peak - held, len(whole))


def test_a_pool_worker_gives_its_math_libraries_its_share_of_the_cores():
    """The local pool's processes share the cores: torch (embedding texts for the dense stages) gets the
    worker's share, not one thread per core in every worker; a value the user set is kept."""
    import os
    import subprocess
    import sys

    code = ("import os, benchmark.runner as r\n"
            "r._init_pool_worker(1, ['oracle+d2+full'], ['blind'], {}, False)\n"
            "import torch\n"
            "print(os.environ['OMP_NUM_THREADS'], torch.get_num_threads())\n")
    pytest.importorskip("torch")
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT")}
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "1"]
    env["OMP_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "2"]


def test_a_pool_worker_ended_by_the_pool_leaves_no_semaphore_behind():
    """A pool worker that made a tqdm bar (hidden, as a stage's bars are in a worker) and is then
    terminated with the pool: its tqdm lock must not be a named semaphore that the run's resource
    tracker reports leaked when the run exits (it was, after every cold run, when the embedding library
    of the time made a bar per batch). A library a worker loads can make the default start method one
    whose semaphores are named (joblib's loky did), as the spawn start method here does."""
    import os
    import subprocess
    import sys

    code = ("import multiprocessing as mp, sys, time\n"
            "from multiprocessing import resource_tracker\n"
            "import benchmark.runner as r\n"
            "def work(init, conn):\n"
            "    mp.set_start_method('spawn', force=True)\n"
            "    if init:\n"
            "        r._init_pool_worker(1, ['oracle+d2+full'], ['blind'], {}, False)\n"
            "    from tqdm import trange\n"
            "    for _ in trange(2, disable=True):\n"
            "        pass\n"
            "    conn.send('ready')\n"
            "    time.sleep(60)\n"
            "if __name__ == '__main__':\n"
            "    resource_tracker.ensure_running()\n"
            "    ctx = mp.get_context('fork')\n"
            "    here, there = ctx.Pipe()\n"
            "    p = ctx.Process(target=work, args=(sys.argv[1] == '1', there))\n"
            "    p.start(); here.recv(); p.terminate(); p.join()\n")
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_THREAD_LIMIT")}

    def stderr(init: str) -> str:
        return subprocess.run([sys.executable, "-c", code, init], cwd=root, env=env, capture_output=True,
                              text=True, check=True, timeout=120).stderr

    assert "leaked semaphore" in stderr("0")       # a worker without it: the symptom this guards against
    assert "leaked semaphore" not in stderr("1")


def test_selectors_are_prepared_once_with_every_diagram_s_graph_of_the_sources_that_read_no_image(tmp_path, capsys):
    """A selector with ``prepare`` is given, in the run's own process and before any sample, every diagram's graph
    from each source it is paired with that reads no image (once, however many variants pair them); a source that
    reads the image is left out, and the seconds go into the run card. A selector whose preparation fails is left
    to do its work in its selections: the run and its samples are the same."""
    from benchmark.dataset import load_dataset

    PREPARED.clear()
    result = run(tiny_spec(tmp_path, variants=("oracle+d2+test-prepared", "d2-bm25+d2+test-prepared",
                                                "oracle+test-image+test-prepared", "oracle+d2+test-prepare-fails")),
                 progress=False)
    dataset, _ = load_dataset(tmp_path / "data")
    assert sorted(PREPARED) == sorted(("test-prepared", did, d.graph.number_of_nodes())
                                      for did, d in dataset.diagrams.items())
    card = result.card["selectors_prepared"]
    assert list(card) == ["test-prepared"] and card["test-prepared"]["sources"] == ["d2"]
    assert card["test-prepared"]["diagrams"] == len(dataset.diagrams) and card["test-prepared"]["seconds"] >= 0
    err = capsys.readouterr().err
    assert "selector test-prepare-fails: not prepared (RuntimeError: no room for the vectors)" in err
    assert "selector test-prepared: prepared" in err
    assert result.card["sample_errors"] == 0
    assert {r.variant for r in result.records} == {"oracle+d2+test-prepared", "d2-bm25+d2+test-prepared",
                                                   "oracle+test-image+test-prepared", "oracle+d2+test-prepare-fails"}
