"""The regression gate: ``diagqa baseline record RUN`` and ``diagqa compare --baseline BASE RUN``.

The example a project would put in its own CI is :func:`test_a_regressed_run_fails_the_gate_and_names_the_flips`:
record a baseline of a run, make a change, run again, gate. Here the regressed run is the baseline's own
run with the solver's answers on the full context turned wrong (as a model that got worse would answer).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark import baseline as bl
from benchmark.runner import run
from benchmark.spec import RunSpec
from test_validate import run as cli  # the diagqa CLI in-process: (exit code, stdout, stderr)

CHAIN = "abcdefghijk"


def dataset(root: Path) -> Path:
    """One diagram a -> b -> ... -> k and 10 questions "can a reach x?" (gold yes)."""
    (root / "diagrams").mkdir(parents=True)
    (root / "annotations").mkdir()
    edges = [f"{x} -> {y}" for x, y in zip(CHAIN, CHAIN[1:]) ]
    (root / "diagrams" / "d1.d2").write_text("\n".join([*(f"{x}: Step {x.upper()}" for x in CHAIN), *edges]) + "\n",
                                             encoding="utf-8")
    qs = []
    for i, x in enumerate(CHAIN[1:], 1):
        path = CHAIN[:CHAIN.index(x) + 1]
        qs.append(f"""  - id: d1-q{i}
    text: Can the flow get from Step A to Step {x.upper()}?
    type: reachable
    args: {{source: a, target: {x}}}
    answer: yes
    certificate:
      nodes: [{', '.join(path)}]
      edges: [{', '.join(f'[{p}, {q}]' for p, q in zip(path, path[1:]))}]
    counter_prior: false
    rationale: The steps follow one another.
""")
    (root / "annotations" / "d1.yaml").write_text(
        "diagram: d1\ntitle: t\ndomain: algorithm\nlanguage: en\nquestions:\n" + "".join(qs), encoding="utf-8")
    return root


def run_of(root: Path, out: Path, run_id: str) -> Path:
    result = run(RunSpec(data_dir=root, variants=("oracle+d2+full", "oracle+d2+none"), answerers=("solver", "blind"),
                         out_dir=out, run_id=run_id, workers=1), progress=False, quiet=True, report=False)
    return result.run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gate")
    good = run_of(dataset(tmp / "good"), tmp / "out", "good")
    bad = tmp / "out" / "bad"
    bad.mkdir()
    lines = []
    for ln in (good / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(ln)
        if (s["variant"], s["answerer"]) == ("oracle+d2+full", "solver"):
            s["metrics"].update(correct=False, guess_class="misread")
        lines.append(json.dumps(s))
    (bad / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rc, out, err = cli("baseline", "record", str(good), "--out", str(tmp / "base.json"))
    assert rc == 0, err
    return tmp / "base.json", good, bad


def test_the_baseline_is_small_and_holds_each_question(runs):
    base, good, _ = runs
    doc = bl.load_baseline(base)
    groups = {(g["variant"], g["answerer"]): g for g in doc["groups"]}
    assert set(groups) == {(v, a) for v in ("oracle+d2+full", "oracle+d2+none") for a in ("solver", "blind")}
    solver = groups["oracle+d2+full", "solver"]
    assert solver["summary"]["accuracy"] == 1.0 and solver["summary"]["questions"] == 10
    assert solver["questions"]["d1-q1"] == [1, 1, 1.0]          # right, grounded, every claim supported
    assert doc["diagrams"]["d1-q10"] == "d1" and doc["dataset_hash"]
    assert base.stat().st_size < 5000


def test_the_same_run_passes(runs):
    base, good, _ = runs
    rc, out, _ = cli("compare", "--baseline", str(base), str(good))
    assert rc == 0 and out.strip().endswith("gate: PASSED")


def test_a_regressed_run_fails_the_gate_and_names_the_flips(runs, tmp_path):
    base, _, bad = runs
    rc, out, _ = cli("compare", "--baseline", str(base), str(bad), "--json", str(tmp_path / "gate.json"))
    assert rc == 1 and "gate: FAILED" in out
    regressions = [ln for ln in out.splitlines() if ln.startswith("REGRESSION: oracle+d2+full x solver accuracy")]
    assert len(regressions) == 1 and "10 questions got worse: d1-q1, d1-q10, d1-q2" in regressions[0]
    doc = json.loads((tmp_path / "gate.json").read_text())
    failed = {(f["variant"], f["answerer"], f["metric"]) for f in doc["findings"] if f["regressed"]}
    assert failed == {("oracle+d2+full", "solver", "accuracy"), ("oracle+d2+full", "solver", "grounded_accuracy")}
    assert doc["passed"] is False


def test_a_drop_within_max_drop_or_without_evidence_passes(runs):
    base, _, bad = runs
    rc, out, _ = cli("compare", "--baseline", str(base), str(bad), "--max-drop", "1")
    assert rc == 0, out
    doc = bl.load_baseline(base)
    for g in doc["groups"]:                      # the baseline had only 2 of the 10 questions: 2 flips prove nothing
        g["questions"] = {q: v for q, v in g["questions"].items() if q in ("d1-q1", "d1-q2")}
    result = bl.check(doc, bl.outcomes(json.loads(ln) for ln in (bad / "samples.jsonl").read_text().splitlines()))
    acc = next(f for f in result.findings if (f.variant, f.answerer, f.metric) == ("oracle+d2+full", "solver", "accuracy"))
    assert acc.drop == 1.0 and acc.p_holm >= 0.5 and not acc.regressed and result.passed
    assert "drop not significant" in bl.render(result, "b", "r")


def test_a_group_missing_from_the_run_or_an_outage_is_not_a_pass(runs, tmp_path):
    base, good, _ = runs
    samples = [json.loads(ln) for ln in (good / "samples.jsonl").read_text().splitlines()]
    without_blind = bl.outcomes(s for s in samples if s["answerer"] != "blind")
    result = bl.check(bl.load_baseline(base), without_blind)
    assert not result.passed and not result.regressions
    assert {(v, a) for v, a, _ in result.uncovered} == {("oracle+d2+full", "blind"), ("oracle+d2+none", "blind")}
    for s in samples:                            # an outage: every solver answer failed (unmeasured, never wrong)
        if s["answerer"] == "solver":
            s["metrics"] = {**s["metrics"], "correct": None, "guess_class": "error"}
    result = bl.check(bl.load_baseline(base), bl.outcomes(samples))
    assert not result.passed and not result.regressions
    assert any("10 of 10 measured baseline questions are missing or unmeasured" in why for _, _, why in result.uncovered)


@pytest.mark.parametrize("text, says", [
    ("not json", "not a baseline file"),
    ('{"format": "other"}', "not a baseline of format"),
    ('{"format": "diagqa-baseline/1", "groups": [{"variant": "v"}]}', "'groups' must be a list"),
])
def test_a_bad_baseline_file_is_a_clear_error(runs, tmp_path, text, says):
    _, good, _ = runs
    path = tmp_path / "base.json"
    path.write_text(text)
    rc, _, err = cli("compare", "--baseline", str(path), str(good))
    assert rc == 2 and str(path) in err and says in err


def test_gate_options_need_the_baseline_and_one_run(runs):
    base, good, bad = runs
    rc, _, err = cli("compare", str(good), str(bad), "--max-drop", "0.1")
    assert rc == 2 and "only apply with --baseline" in err
    rc, _, err = cli("compare", "--baseline", str(base), str(good), str(bad))
    assert rc == 2 and "one run" in err


def test_the_committed_ci_baseline_covers_the_gate_config_and_the_bundled_questions():
    """CI's gate (`make gate`) compares configs/gate.yaml's run with the committed baseline: the baseline
    must hold every group of that config, and questions the bundled dataset still asks (a baseline
    recorded on other data would leave the gate comparing nothing)."""
    import yaml

    from benchmark.dataset import DEFAULT_ROOT, load_dataset

    root = Path(__file__).resolve().parent.parent
    base = bl.load_baseline(root / "results" / "baselines" / "reference-answerers.json")
    config = yaml.safe_load((root / "configs" / "gate.yaml").read_text(encoding="utf-8"))
    groups = bl.expand(base)
    assert set(groups) == {(v, a) for v in config["variants"] for a in config["answerers"]}
    ds, _ = load_dataset(DEFAULT_ROOT)
    asked = {q.id for q in ds.questions}
    for key, questions in groups.items():
        missing = set(questions) - asked
        assert len(missing) <= bl.MAX_MISSING * len(questions), (key, sorted(missing)[:5])
