"""Prior baselines (``diagqa priors``): hand-checked accuracies on a tiny dataset, the text-only llm
baselines through the real ``openai`` client over local HTTP, and invariants on the bundled data."""
from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from llm_server import LLMServer

import benchmark.priors as priors_module
from benchmark.dataset import DEFAULT_ROOT, load_dataset
from benchmark.priors import (COUNTER_PRIOR_KINDS, NO_MODEL_BASELINES, majority_answers, render_summary,
                              run_priors, text_cue)
from benchmark.validate import validate_question
from test_validate import run  # the diagqa CLI in-process: (exit code, stdout, stderr)

D2 = """\
user: User
auth: Auth
ok: Token valid? {shape: diamond}
db: Orders DB {shape: cylinder}
cache: Cache
user -> auth: login
auth -> ok
ok -> db: yes
ok -> user: no
user -> cache
cache -> db
"""

ANNOTATION = """\
diagram: shop
title: Shop
domain: software-architecture
language: en
questions:
  - id: shop-q1
    text: Can the User reach the Orders DB without Auth?
    type: reachable_avoiding
    args: {source: user, target: db, avoid: auth}
    answer: yes
    certificate:
      nodes: [cache, db, user]
      edges: [[cache, db], [user, cache]]
    counter_prior: true
    rationale: Through the cache.
  - id: shop-q2
    text: Can the Orders DB reach the User?
    type: reachable
    args: {source: db, target: user}
    answer: no
    certificate:
      nodes: [db]
      edges: []
    counter_prior: false
    rationale: Nothing leaves the DB.
  - id: shop-q3
    text: Does the User reach the Orders DB both through Auth and the Cache?
    type: reachable
    args: {source: user, target: db}
    answer: yes
    certificate:
      nodes: [cache, db, user]
      edges: [[cache, db], [user, cache]]
    counter_prior: false
    rationale: Through the cache.
  - id: shop-q4
    text: Is there an arrow from the User straight to the Orders DB?
    type: edge_exists
    args: {source: user, target: db}
    answer: no
    certificate:
      nodes: [auth, cache, db, user]
      edges: [[user, auth, login], [user, cache]]
    counter_prior: true
    rationale: The user goes to Auth or the Cache.
  - id: shop-q5
    text: Where does the flow go when the token is not valid?
    type: decision_outcome
    args: {node: ok, branch: 'no'}
    answer: user
    certificate:
      nodes: [ok, user]
      edges: [[ok, user, 'no']]
    counter_prior: false
    rationale: Back to the user.
  - id: shop-q6
    text: How many steps follow Auth?
    type: count_out
    args: {node: auth}
    answer: 1
    certificate:
      nodes: [auth, ok]
      edges: [[auth, ok]]
    counter_prior: true
    rationale: Only the token check.
  - id: shop-q7
    text: Can the Cache reach Auth?
    type: reachable
    args: {source: cache, target: auth}
    answer: no
    certificate:
      nodes: [cache, db]
      edges: [[cache, db]]
    counter_prior: false
    rationale: The cache only reads the DB.
"""



@pytest.fixture
def shop(tmp_path) -> Path:
    root = tmp_path / "shop"
    (root / "diagrams").mkdir(parents=True)
    (root / "annotations").mkdir()
    (root / "diagrams" / "shop.d2").write_text(D2, encoding="utf-8")
    (root / "annotations" / "shop.yaml").write_text(ANNOTATION, encoding="utf-8")
    return root


def test_doctests():
    assert doctest.testmod(priors_module).failed == 0


def test_the_fixture_is_sound(shop):
    ds, problems = load_dataset(shop)
    d = ds.diagrams["shop"]
    assert problems == [] and [validate_question(q, d) for q in d.questions] == [[]] * 7


@pytest.mark.parametrize("text,cue", [
    ("Can the User reach the DB without Auth?", True),
    ("Do both the API and the Worker lead to the Queue?", True),
    ("Может ли клиент попасть в базу без авторизации?", True),
    ("Ведут ли оба шага к оплате?", True),
    ("Does the User reach the DB?", False),
    ("Is the bothersome step skipped?", False),        # whole words only
])
def test_text_cue_rule(text, cue):
    assert text_cue(text) is cue


def test_majority_ties_go_to_the_smallest_answer(shop):
    ds, _ = load_dataset(shop)
    # reachable: no, yes, no -> no; one question each for the other types
    assert majority_answers(ds.questions) == {"reachable_avoiding": True, "reachable": False, "edge_exists": False,
                                              "decision_outcome": "user", "count_out": 1}


def test_hand_checked_table_strongest_and_counter_prior(shop):
    ds, _ = load_dataset(shop)
    res = run_priors(ds)
    assert res.baselines == list(NO_MODEL_BASELINES)
    got = {g: {b: (c.correct, c.measured) for b, c in cells.items()} for g, cells in res.table.items()}
    # majority misses only q3 (reachable yes); text-cue answers q3 from "both" and q1 from "without"
    assert got["all"]["majority"] == (6, 7) and got["all"]["text-cue"] == (7, 7)
    assert got["yes/no"]["majority"] == (4, 5) and got["yes/no"]["text-cue"] == (5, 5)
    # blind says "no" after "without" and "yes" to every other yes/no question: only q3 is right
    assert got["yes/no"]["blind"] == (1, 5)
    # keyword without context: no names to find, so "yes" after a negation cue, else "no"
    assert got["yes/no"]["keyword"] == (4, 5)
    assert got["counter-prior (annotated)"]["majority"] == (3, 3)
    assert got["type reachable"]["majority"] == (2, 3)
    assert res.floor == "text-cue"
    assert res.basis == {"bool": "text-cue", "node": "majority"}
    # the strongest prior gets every yes/no and node item right: nothing is counter-prior by measurement
    assert {q: v for q, v in res.counter_prior.items() if v is not None} == {
        "shop-q1": False, "shop-q2": False, "shop-q3": False, "shop-q4": False, "shop-q5": False, "shop-q7": False}
    assert res.counter_prior["shop-q6"] is None  # a count: outside the definition
    dis = {d["question"]: (d["annotated"], d["measured"]) for d in res.disagreements()}
    assert dis == {"shop-q1": (True, False), "shop-q4": (True, False), "shop-q6": (True, None)}
    data = res.to_json()
    assert data["strongest"] == {"baseline": "text-cue", "accuracy": 1.0}
    assert data["yes/no"] == {"majority": 0.8, "strongest": "text-cue", "strongest_accuracy": 1.0}
    assert data["counter_prior"]["measured"] == 0 and data["counter_prior"]["defined_on"] == 6
    assert data["counter_prior"]["agree"] == 4
    summary = render_summary(res)
    assert "| all | 7 | 85.7 | 100.0 |" in summary
    assert "Strongest prior baseline (the guessability floor): **text-cue**" in summary


def test_counter_prior_is_measured_where_the_strongest_prior_is_wrong(shop):
    ds, _ = load_dataset(shop)
    res = run_priors(ds, names=["majority", "blind"])
    assert res.basis["bool"] == "majority"
    assert res.counter_prior["shop-q3"] is True   # majority says no, the diagram says yes
    assert all(res.counter_prior[q.id] is (not res.predictions["majority"][q.id].correct)
               for q in res.questions if q.kind in COUNTER_PRIOR_KINDS)


def test_llm_baselines_see_the_question_alone_or_the_node_list_without_edges(shop):
    ds, _ = load_dataset(shop)

    def responder(req):
        system = req["messages"][0]["content"]
        answer = "yes" if "Orders DB" in system else "no"  # the node list names the DB; no context does not
        return json.dumps({"answer": answer, "evidence": [], "explanation": ""})

    with LLMServer(script=[{"status": 400}], responder=responder) as server:
        res = run_priors(ds, names=["majority", "llm-question", "llm-nodes"],
                         llm_options={"base_url": server.base_url, "model": "m", "cache_path": None, "max_attempts": 1})
        requests = list(server.requests)
    assert res.baselines == ["majority", "llm-question", "llm-nodes"] and res.unavailable == {}
    assert len(requests) == 14
    contexts = [r["json"]["messages"][0]["content"].split("Context:\n", 1)[1] for r in requests]
    assert all(c == "(empty: nothing was retrieved)" for c in contexts[:7])
    assert contexts[7] == "Auth\nCache\nOrders DB\nToken valid?\nUser"   # labels only, no arrow
    # the first call failed (HTTP 400): unmeasured, not wrong
    first = res.predictions["llm-question"]["shop-q1"]
    assert first.correct is None and "400" in first.error
    yn = res.table["yes/no"]
    # "no" to every yes/no question: right on q2, q4, q7 (q1 failed, q3 is yes)
    assert (yn["llm-question"].correct, yn["llm-question"].measured, yn["llm-question"].n) == (3, 4, 5)
    assert (yn["llm-nodes"].correct, yn["llm-nodes"].measured) == (2, 5)   # yes to q1 and q3


def test_llm_baselines_without_a_model_are_reported_and_left_out(shop, monkeypatch):
    monkeypatch.delenv("DIAGQA_LLM_MODEL", raising=False)
    ds, _ = load_dataset(shop)
    res = run_priors(ds, names=["majority", "llm-question"])
    assert res.baselines == ["majority"]
    assert "no model configured" in res.unavailable["llm-question"]


def test_cli_prints_the_table_and_writes_json(shop, tmp_path, monkeypatch):
    monkeypatch.delenv("DIAGQA_LLM_MODEL", raising=False)
    out = tmp_path / "p" / "priors.json"
    rc, stdout, stderr = run("priors", "--data", str(shop), "--out", str(out))
    assert rc == 0, stderr
    assert "| yes/no | 5 | 80.0 | 100.0 |" in stdout
    assert "llm-question not run: llm: no model configured" in stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["strongest"]["baseline"] == "text-cue" and data["questions"] == 7
    assert data["dataset"]["hash"] == load_dataset(shop)[0].content_hash()
    assert [p["question"] for p in data["per_question"]] == [f"shop-q{i}" for i in range(1, 8)]


def test_cli_leaves_out_a_question_the_validator_rejects(shop, tmp_path):
    path = shop / "annotations" / "shop.yaml"
    path.write_text(ANNOTATION.replace("    answer: 1\n", "    answer: 2\n"), encoding="utf-8")
    rc, stdout, stderr = run("priors", "--data", str(shop), "--out", str(tmp_path / "p.json"), "--baselines", "majority")
    assert rc == 0
    assert f"skipped: {path}:" in stderr and "[shop-q6]: annotated answer 2 but the solver computes 1" in stderr
    assert json.loads((tmp_path / "p.json").read_text())["questions"] == 6


def test_cli_rejects_an_unknown_baseline(shop, tmp_path):
    rc, _, stderr = run("priors", "--data", str(shop), "--out", str(tmp_path / "p.json"), "--baselines", "oracle")
    assert rc == 2 and "unknown prior baselines oracle" in stderr


def test_bundled_dataset_floor_is_the_strongest_prior():
    ds, _ = load_dataset(DEFAULT_ROOT)
    res = run_priors(ds)
    accs = {b: res.accuracy_of(b) for b in res.baselines}
    assert accs[res.floor] == max(accs.values())
    assert accs["blind"] < accs[res.floor]       # blind understates guessability
    for q in res.questions:
        kind_basis = res.basis.get(q.kind)
        if q.kind in COUNTER_PRIOR_KINDS:
            assert res.counter_prior[q.id] is (not res.predictions[kind_basis][q.id].correct)
        else:
            assert res.counter_prior[q.id] is None
    assert run_priors(ds).to_json() == res.to_json()  # deterministic


def test_cue_majority_learns_a_cell_once_it_is_big_enough(shop, monkeypatch):
    ds, _ = load_dataset(shop)
    # cells of 5 or more: none in this fixture, so every question takes its type's majority
    res = run_priors(ds, names=["majority", "cue-majority"])
    assert [p.correct for p in res.predictions["cue-majority"].values()] == \
        [p.correct for p in res.predictions["majority"].values()]
    monkeypatch.setattr(priors_module, "MIN_CELL", 1)
    res = run_priors(ds, names=["majority", "cue-majority"])
    # (reachable, "both") is its own cell now: q3 is answered yes from it
    assert res.predictions["cue-majority"]["shop-q3"].correct is True
    assert res.table["all"]["cue-majority"].correct == 7 and res.floor == "cue-majority"


def test_a_run_reports_the_strongest_prior_as_its_floor_not_blind(shop, tmp_path):
    """A real run records the prior baselines on the questions it ran (run.json -> priors), and its
    report's floor, headline and plot line are the strongest of them, with blind shown as one row."""
    from benchmark.runner import run as run_benchmark
    from benchmark.spec import RunSpec

    spec = RunSpec(data_dir=shop, variants=("oracle+d2+full",), answerers=("solver", "blind"),
                   out_dir=tmp_path / "results", run_id="floor", workers=1)
    result = run_benchmark(spec, progress=False, quiet=True)
    card = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    p = card["priors"]
    assert p["questions"] == 7 and p["floor"] == {"baseline": "text-cue", "accuracy": 1.0}
    assert p["accuracy"]["all"]["blind"] < p["floor"]["accuracy"]   # the weakest is not the floor
    assert p["yes/no"] == {"majority": 0.8, "strongest": "text-cue", "strongest_accuracy": 1.0}
    assert "pairs" not in card                                         # not a generated split
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Guessability floor (strongest prior baseline)" in report
    assert "**`text-cue`, 1.00**" in report
    assert "the strongest prior baseline (`text-cue`) is right on **1.00**" in report
    assert "The `blind` answerer as run" in report
    assert "## Counterfactual pairs" not in report
    assert "cannot tell reading the structure from copying it" in report


def test_bundled_dataset_is_balanced():
    """Yes share 40-60 % in every yes/no type and every (type, cue word) cell of at least MIN_CELL
    questions, and no text-cue rule more than 5 points over the majority baseline."""
    ds, _ = load_dataset(DEFAULT_ROOT)
    b = priors_module.balance(ds.questions)
    assert b.problems() == []
    # every yes/no type is measured, container membership included
    assert set(b.types) == {"edge_exists", "reachable", "reachable_avoiding", "common_downstream", "inside"}


def test_balance_check_fails_on_a_lopsided_dataset(shop):
    ds, _ = load_dataset(shop)
    b = priors_module.balance(ds.questions, min_cell=1)
    # reachable: q2, q7 no, q3 yes -> 33 %; edge_exists: q4 no -> 0 %; text-cue beats majority by 20 points
    assert "type reachable: 1 of 3 yes (33.3 %), outside 40-60 %" in b.problems()
    assert "type edge_exists: 0 of 1 yes (0.0 %), outside 40-60 %" in b.problems()
    assert b.majority == 0.8 and b.cue_rules["text-cue"] == 1.0
    assert b.problems()[-1] == "text cues: text-cue beats the majority baseline by 20.0 points on yes/no (at most 5)"


def test_counter_prior_is_computed_when_the_dataset_loads(shop):
    """The loaded flag is the measurement, not the annotation: the annotation's flag is kept apart and a
    question without one loads too."""
    ds, _ = load_dataset(shop)
    res = run_priors(ds)
    for q in ds.questions:
        assert q.counter_prior is bool(res.counter_prior[q.id])
    by_id = {q.id: q for q in ds.questions}
    assert by_id["shop-q1"].counter_prior_annotated is True and by_id["shop-q1"].counter_prior is False
    assert by_id["shop-q6"].counter_prior is False   # a count: outside the definition, whatever was annotated
    # with majority as the only prior, q3 (reachable yes, majority no) is counter-prior
    path = shop / "annotations" / "shop.yaml"
    text = path.read_text(encoding="utf-8").replace("    counter_prior: false\n", "").replace("    counter_prior: true\n", "")
    path.write_text(text.replace("both through Auth and the Cache", "through Auth and the Cache"), encoding="utf-8")
    ds, problems = load_dataset(shop)
    assert problems == [] and all(q.counter_prior_annotated is None for q in ds.questions)
    assert {q.id for q in ds.questions if q.counter_prior} == {"shop-q3"}


def test_a_run_takes_the_set_free_predictions_made_at_load(shop, monkeypatch):
    """Loading the dataset runs every no-model baseline on every question (to measure counter_prior);
    a run's priors on a subset take the keyword and blind predictions from there instead of making them
    again, and give the same table as made from scratch. The majority answers, which depend on the
    questions run, are made again. The predictions are not pickled (a worker gets none)."""
    import pickle

    from benchmark.answerers.keyword import KeywordAnswerer
    from benchmark.priors import SET_FREE_BASELINES

    ds, _ = load_dataset(shop)
    assert set(ds.prior_predictions) == set(SET_FREE_BASELINES)
    assert set(ds.prior_predictions["keyword"]) == {q.id for q in ds.questions}
    # kept lean (a byte a question, the ids held once for every baseline), each the outcome of the full prediction
    from benchmark.priors import LeanPredictions, Prediction

    lean = ds.prior_predictions
    assert all(isinstance(p, LeanPredictions) for p in lean.values())
    assert len({id(p._ids) for p in lean.values()}) == 1
    full = run_priors(ds, names=SET_FREE_BASELINES)
    assert {b: dict(lean[b]) for b in lean} == {
        b: {qid: Prediction(None, p.correct, p.error) for qid, p in full.predictions[b].items()} for b in lean}
    assert {p.correct for b in lean for p in lean[b].values()} >= {True, False}
    subset = ds.questions[:4]
    fresh = run_priors(ds, questions=subset)
    calls: list[str] = []
    real = KeywordAnswerer.answer
    monkeypatch.setattr(KeywordAnswerer, "answer", lambda self, q, ctx: calls.append(q.id) or real(self, q, ctx))
    reused = run_priors(ds, questions=subset, known=ds.prior_predictions)
    assert calls == []
    assert reused.table == fresh.table and reused.counter_prior == fresh.counter_prior
    assert run_priors(ds, questions=subset, known={"majority": {}}).table == fresh.table and len(calls) == 8
    assert pickle.loads(pickle.dumps(ds)).prior_predictions == {}


def test_question_rows_tell_ids_with_one_digest_apart_and_refuse_an_id_put_out_of_order(monkeypatch):
    from benchmark.priors import QuestionRows

    rows = QuestionRows()
    ids = [f"q{i}" for i in range(50)] + ["вопрос", "q1-b"]
    for r, qid in enumerate(ids):
        rows.put(r, qid)
        rows.put(r, qid)        # the next baseline puts the same question again
    assert [rows.row(q) for q in ids] == list(range(len(ids)))
    assert list(rows) == ids and len(rows) == len(ids)
    # every id given the same digest: each is still found by its own bytes, and an unknown one is not
    monkeypatch.setattr(priors_module, "id_digest", lambda text: 7)
    same = QuestionRows()
    for r, qid in enumerate(ids):
        same.put(r, qid)
    assert [same.row(q) for q in ids] == list(range(len(ids)))
    assert "q50" not in same
    with pytest.raises(KeyError):
        same.row("q50")
    with pytest.raises(ValueError):
        same.put(3, "q3")       # neither the next row nor the last
