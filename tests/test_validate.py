"""``diagqa validate`` and ``diagqa propose`` on small datasets broken on purpose.

The base dataset is ``tests/fixtures/broken`` (two twin diagrams); each test copies it to a
temporary folder, renders it with the real d2 binary through ``diagqa render --data``, breaks one
thing and checks that validate fails with a message naming file, line, question and problem.
"""
from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from benchmark.cli import main as cli_main
from benchmark.dataset import DEFAULT_ROOT

FIXTURE = Path(__file__).parent / "fixtures" / "broken"


def run(*argv: str) -> tuple[int, str, str]:
    """Run the diagqa CLI in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli_main(list(argv))
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base") / "ds"
    shutil.copytree(FIXTURE, root)
    rc, out, err = run("render", "--data", str(root))
    assert rc == 0, err
    assert "rendered 2 diagrams" in out
    return root


@pytest.fixture
def ds(rendered, tmp_path) -> Path:
    root = tmp_path / "ds"
    shutil.copytree(rendered, root)
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    path.write_text(text.replace(old, new), encoding="utf-8")


def line_of(path: Path, needle: str) -> int:
    """1-based line of the only line of ``path`` that contains ``needle``."""
    hits = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if needle in line]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def question_block(path: Path, qid: str) -> tuple[int, int]:
    """(first, last) 1-based lines of question ``qid`` in an annotation file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.strip() == f"- id: {qid}")
    end = next((i - 1 for i, line in enumerate(lines, 1) if i > start and line.strip().startswith("- id:")), len(lines))
    return start, end


def set_in_question(path: Path, qid: str, key: str, value: str) -> int:
    """Replace ``key: ...`` inside question ``qid``; returns the line it is on."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start, end = question_block(path, qid)
    for i in range(start - 1, end):
        if lines[i].strip().startswith(f"{key}:") or lines[i].strip().startswith(f"- {key}:"):
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            dash = "- " if lines[i].strip().startswith("- ") else ""
            lines[i] = f"{indent}{dash}{key}: {value}"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return i + 1
    raise AssertionError(f"{key} not in {qid}")


def validate(root: Path) -> tuple[int, list[str], str]:
    """(exit code, error lines, summary line) of ``diagqa validate --data root``."""
    rc, out, err = run("validate", "--data", str(root))
    lines = err.splitlines()
    errors = [ln for ln in lines if ln.startswith("error: ")]
    summary = (out + err).strip().splitlines()[-1]
    return rc, errors, summary


def the_error(root: Path) -> str:
    rc, errors, summary = validate(root)
    assert rc == 1, summary
    assert len(errors) == 1, errors
    return errors[0]


def test_base_fixture_is_valid(ds):
    rc, errors, summary = validate(ds)
    assert (rc, errors) == (0, [])
    assert summary == "validate: ok (2 diagrams, 8 questions)"


def test_validate_reports_its_progress_and_draws_bars_only_on_a_terminal(ds, monkeypatch):
    """``validate_path`` tells its progress of the loading and of each diagram checked, each step to its count,
    and holds one diagram's graph at a time;
    ``diagqa validate`` draws bars of it only when stderr is a terminal (a script reading stderr gets the
    problems alone)."""
    from benchmark.validate import validate_path

    seen: list[tuple[str, int, int]] = []
    loaded, problems = validate_path(ds, check_renders=False, progress=lambda *a: seen.append(a))
    assert problems == []
    assert not any(d.in_memory for d in loaded.diagrams.values()), "a diagram's graph at a time, let go after"
    last = {step: (done, total) for step, done, total in seen}
    assert last == {"loading annotations": (2, 2), "measuring counter-prior": (8, 8), "validating diagrams": (2, 2)}
    assert [step for step, _, _ in seen] == sorted((step for step, _, _ in seen), key=list(last).index)
    assert run("validate", "--data", str(ds))[2] == ""   # (StringIO: not a terminal)

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert cli_main(["validate", "--data", str(ds)]) == 0
    assert "validating diagrams: 100%" in err.getvalue() and "2/2" in err.getvalue()


# -- schema -----------------------------------------------------------------------------------

def test_missing_key(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, end = question_block(path, "mini_a-q2")
    rationale = line_of(path, "rationale: Through the cache.")
    lines = path.read_text(encoding="utf-8").splitlines()
    del lines[rationale - 1]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert the_error(ds) == f"error: {path}:{start} [mini_a-q2]: missing keys ['rationale']"


def test_unknown_type(ds):
    path = ds / "annotations" / "mini_a.yaml"
    line = set_in_question(path, "mini_a-q3", "type", "reachability")
    err = the_error(ds)
    assert err.startswith(f"error: {path}:{line} [mini_a-q3]: unknown type 'reachability'; known: edge_exists")


def test_wrong_args(ds):
    path = ds / "annotations" / "mini_a.yaml"
    line = set_in_question(path, "mini_a-q3", "args", "{source: db, target: cache, avoid: auth}")
    assert the_error(ds) == (f"error: {path}:{line} [mini_a-q3]: type reachable takes args "
                             "['source', 'target'], got ['avoid', 'source', 'target']")


def test_answer_of_wrong_form(ds):
    path = ds / "annotations" / "mini_b.yaml"
    line = set_in_question(path, "mini_b-q2", "answer", "two")
    assert the_error(ds) == f"error: {path}:{line} [mini_b-q2]: answer: expected an integer, got 'two'"


def test_unparsable_yaml_names_the_line_and_keeps_the_other_file(ds):
    path = ds / "annotations" / "mini_b.yaml"
    line = set_in_question(path, "mini_b-q3", "text", "[What is written on the arrow")
    rc, errors, summary = validate(ds)
    assert rc == 1
    assert any(e.startswith(f"error: {path}:") and "not valid YAML" in e for e in errors), errors
    yaml_error = next(e for e in errors if "not valid YAML" in e)
    reported_line = int(yaml_error.split(f"{path}:")[1].split(":")[0])
    assert line <= reported_line <= line + 2
    # mini_a still loads and is checked: its twin is now missing from the dataset
    assert any("mini_a.yaml" in e and "twin diagram 'mini_b' is not in the dataset" in e for e in errors), errors
    assert "in 1 diagrams, 5 questions" in summary


# -- meaning ----------------------------------------------------------------------------------

def test_node_id_not_in_diagram(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q5")
    set_in_question(path, "mini_a-q5", "args", "{node: database}")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q5]: args name nodes that are not in diagram "
                             "mini_a: node='database'")


def test_wrong_answer(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q3")
    set_in_question(path, "mini_a-q3", "answer", "yes")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q3]: annotated answer True but the solver "
                             "computes False on diagram mini_a")


def test_wrong_node_answer(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q4")
    set_in_question(path, "mini_a-q4", "answer", "db")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q4]: annotated answer 'db' but the solver "
                             "computes 'user' on diagram mini_a")


def test_certificate_not_inside_the_diagram(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q2")
    set_in_question(path, "mini_a-q2", "edges", "[[cache, db], [user, cache, read], [db, user]]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q2]: certificate is not inside the diagram: "
                             "edge db -> user is not in the diagram")


def test_certificate_with_a_wrong_label_is_not_inside(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q2")
    set_in_question(path, "mini_a-q2", "edges", "[[cache, db], [user, cache, write]]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q2]: certificate is not inside the diagram: "
                             "edge user -> cache [write] is not in the diagram")


def test_certificate_not_proving(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q1")
    set_in_question(path, "mini_a-q1", "edges", "[[user, cache, read]]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q1]: certificate does not prove the answer "
                             "(the solver on the certificate alone disagrees)")


def test_negative_certificate_not_closed(ds):
    # mini_b-q1 is negative: the closed set, in the diagram without Auth, is the user alone
    path = ds / "annotations" / "mini_b.yaml"
    start, _ = question_block(path, "mini_b-q1")
    set_in_question(path, "mini_b-q1", "nodes", "[]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_b-q1]: certificate is not closed (negative/universal "
                             "questions need every reached node and its out-edges)")


def test_negative_avoiding_certificate_with_the_edge_into_the_avoided_node_is_not_minimal(ds):
    # the closed set is taken in the diagram without Auth (DESIGN.md §4): user -> auth is not part of it
    path = ds / "annotations" / "mini_b.yaml"
    start, _ = question_block(path, "mini_b-q1")
    set_in_question(path, "mini_b-q1", "nodes", "[auth, user]")
    set_in_question(path, "mini_b-q1", "edges", "[[user, auth, login]]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_b-q1]: certificate is not minimal: "
                             "can drop edge user -> auth [login]")


@pytest.mark.parametrize("qid,nodes,edges", [
    ("mini_b-q1", "[]", "[]"),                      # negative: not closed
    ("mini_a-q1", "[cache, user]", "[[user, cache, read]]"),  # positive: does not prove
])
def test_run_and_validate_word_a_certificate_problem_alike(ds, tmp_path, qid, nodes, edges):
    from benchmark.runner import prepare_dataset

    path = ds / "annotations" / f"{qid.split('-')[0]}.yaml"
    set_in_question(path, qid, "nodes", nodes)
    set_in_question(path, qid, "edges", edges)
    validate_line = the_error(ds)
    _, good, problems = prepare_dataset(ds)
    assert qid not in {q.id for q in good}
    assert [f"error: {p}" for p in problems] == [validate_line]


def test_universal_certificate_missing_a_neighbour(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q5")
    set_in_question(path, "mini_a-q5", "nodes", "[cache, db]")
    set_in_question(path, "mini_a-q5", "edges", "[[cache, db]]")
    err = the_error(ds)
    assert err.startswith(f"error: {path}:{start} [mini_a-q5]: certificate ")
    assert "is not closed" in err or "does not prove" in err


def test_certificate_not_minimal(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q4")
    set_in_question(path, "mini_a-q4", "nodes", "[auth, user, valid]")
    set_in_question(path, "mini_a-q4", "edges", "[[valid, user, 'no'], [user, auth, login]]")
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q4]: certificate is not minimal: "
                             "can drop edge user -> auth [login]")


def _redraw(root: Path, old: str, new: str) -> None:
    """Edit mini_a.d2 and render it again with the real d2 binary (the PNG must stay current)."""
    edit(root / "diagrams" / "mini_a.d2", old, new)
    rc, _, err = run("render", "--data", str(root), "mini_a")
    assert rc == 0, err


def test_a_data_feed_is_no_route(ds):
    # the cache's read of the DB becomes a data feed: the flow no longer passes through it
    _redraw(ds, "cache -> db", "classes: {data: {style.stroke-dash: 4}}\ncache -> db {class: data}")
    path = ds / "annotations" / "mini_a.yaml"
    rc, errors, _ = validate(ds)
    assert rc == 1
    q1, _ = question_block(path, "mini_a-q1")
    q2, _ = question_block(path, "mini_a-q2")
    q5, _ = question_block(path, "mini_a-q5")
    assert f"error: {path}:{q1} [mini_a-q1]: annotated answer True but the solver computes False on diagram mini_a" in errors
    assert any(e.startswith(f"error: {path}:{q2} [mini_a-q2]: annotated answer ") for e in errors)
    assert any(e.startswith(f"error: {path}:{q5} [mini_a-q5]: annotated answer ") for e in errors)  # predecessors
    assert len(errors) == 3, errors


def test_a_route_only_through_a_parallel_fork_is_refused(ds):
    # the user logs in and reads the cache at once: the login branch runs through Auth, so
    # "reach the DB without Auth" (mini_a-q1) has no run that shows it
    _redraw(ds, "user -> auth: login", "user -> auth: login {class: parallel}")
    _redraw(ds, "user -> cache: read", "user -> cache: read {class: parallel}")
    path = ds / "annotations" / "mini_a.yaml"
    q1, _ = question_block(path, "mini_a-q1")
    msg = ("every route that avoids the node leaves a parallel fork (class: parallel) whose other branch "
           "reaches it: all branches of a fork run, so no run avoids it; ask where branches are exclusive")
    assert the_error(ds) == f"error: {path}:{q1} [mini_a-q1]: {msg}"


def test_a_path_certificate_is_the_annotated_route(ds):
    path = ds / "annotations" / "mini_a.yaml"
    start, _ = question_block(path, "mini_a-q2")
    set_in_question(path, "mini_a-q2", "answer", "[user, auth, valid, db]")   # a route too, longer
    assert the_error(ds) == (f"error: {path}:{start} [mini_a-q2]: certificate is not the annotated route "
                             "(a path certificate is the answer's nodes and edges)")
    set_in_question(path, "mini_a-q2", "nodes", "[auth, db, user, valid]")
    set_in_question(path, "mini_a-q2", "edges", "[[user, auth, login], [auth, valid], [valid, db, 'yes']]")
    assert validate(ds)[:2] == (0, [])   # any simple path is an answer; its certificate is the route


# -- renders ----------------------------------------------------------------------------------

def test_png_missing(ds):
    (ds / "diagrams" / "mini_a.png").unlink()
    assert the_error(ds) == f"error: {ds / 'diagrams' / 'mini_a.d2'}: mini_a.png is missing (run: diagqa render)"


def test_png_stale_after_the_d2_changed(ds):
    d2 = ds / "diagrams" / "mini_b.d2"
    edit(d2, "db: DB {shape: cylinder}", "db: Orders DB {shape: cylinder}")
    assert the_error(ds) == (f"error: {d2}: mini_b.png is stale: mini_b.d2 changed since it was rendered "
                             "(run: diagqa render)")
    rc, out, _ = run("render", "--data", str(ds))
    assert (rc, out.strip()) == (0, "rendered 1 diagrams: mini_b")
    assert validate(ds)[0] == 0


def test_png_edited_by_hand(ds):
    png = ds / "diagrams" / "mini_a.png"
    png.write_bytes(png.read_bytes() + b"\0")
    assert the_error(ds) == (f"error: {ds / 'diagrams' / 'mini_a.d2'}: mini_a.png does not match the render "
                             "recorded in renders.json (run: diagqa render)")


# -- twins ------------------------------------------------------------------------------------

def test_twins_with_the_same_answer(ds):
    path = ds / "annotations" / "mini_b.yaml"
    start, _ = question_block(path, "mini_b-q1")
    set_in_question(path, "mini_b-q1", "answer", "yes")
    rc, errors, _ = validate(ds)
    assert rc == 1
    a_path = ds / "annotations" / "mini_a.yaml"
    a_start, _ = question_block(a_path, "mini_a-q1")
    assert f"error: {a_path}:{a_start} [mini_a-q1]: twin question mini_b-q1 has the same answer; twins must differ" in errors
    assert f"error: {path}:{start} [mini_b-q1]: twin question mini_a-q1 has the same answer; twins must differ" in errors
    # the solver disagrees with the edited answer too, and that is reported as well
    assert any(e.startswith(f"error: {path}:{start} [mini_b-q1]: annotated answer True") for e in errors)


def test_twin_not_pointing_back(ds):
    path = ds / "annotations" / "mini_b.yaml"
    edit(path, "twin: mini_a\n", "")
    a_path = ds / "annotations" / "mini_a.yaml"
    assert the_error(ds) == f"error: {a_path}:1: twin 'mini_b' does not name 'mini_a' as its twin"


def test_twin_question_with_other_args(ds):
    path = ds / "annotations" / "mini_b.yaml"
    edit(path, "    twin_question: mini_a-q1\n", "    twin_question: mini_a-q3\n")
    start, _ = question_block(path, "mini_b-q1")
    assert the_error(ds) == f"error: {path}:{start} [mini_b-q1]: twin question mini_a-q3 must have the same type and args"


def test_twin_question_of_another_diagram(ds):
    path = ds / "annotations" / "mini_b.yaml"
    edit(path, "    twin_question: mini_a-q1\n", "    twin_question: mini_b-q2\n")
    start, _ = question_block(path, "mini_b-q1")
    assert the_error(ds) == f"error: {path}:{start} [mini_b-q1]: twin_question 'mini_b-q2' is not a question of mini_a"


# -- several problems at once ------------------------------------------------------------------

def test_every_problem_is_reported(ds):
    a = ds / "annotations" / "mini_a.yaml"
    b = ds / "annotations" / "mini_b.yaml"
    set_in_question(a, "mini_a-q3", "answer", "yes")                    # wrong answer
    set_in_question(a, "mini_a-q5", "type", "predecessor")               # unknown type
    set_in_question(b, "mini_b-q2", "answer", "3")                       # wrong count
    edit(b, "id: mini_b-q3", "id: mini_a-q2")                            # duplicate id
    (ds / "diagrams" / "mini_b.png").unlink()                            # missing render
    rc, errors, summary = validate(ds)
    assert rc == 1
    wanted = [
        (a, "mini_a-q3", "annotated answer True but the solver computes False"),
        (a, "mini_a-q5", "unknown type 'predecessor'"),
        (b, "mini_b-q2", "annotated answer 3 but the solver computes 2"),
        (b, "mini_a-q2", "question id is used twice in the dataset"),
    ]
    for path, qid, text in wanted:
        assert any(e.startswith(f"error: {path}:") and f"[{qid}]" in e and text in e for e in errors), (qid, errors)
    assert any("mini_b.png is missing" in e for e in errors)
    assert len(errors) == 5, errors
    # left out: mini_a-q5 (unknown type) and the second mini_a-q2 (in mini_b, after mini_a)
    assert summary == "validate: 5 problem(s) in 2 diagrams, 6 questions"


# -- the bundled dataset ----------------------------------------------------------------------

def test_validate_passes_on_the_bundled_data():
    proc = subprocess.run([sys.executable, "-m", "benchmark.cli", "validate"], capture_output=True, text=True,
                          timeout=600, cwd=DEFAULT_ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("validate: ok (")
    n_diagrams = int(proc.stdout.split("(")[1].split()[0])
    assert n_diagrams >= 25


# -- propose ----------------------------------------------------------------------------------

def propose(root: Path, *argv: str) -> dict:
    rc, out, err = run("propose", "--data", str(root), *argv)
    assert rc == 0, err
    return yaml.safe_load(out)


def test_propose_positive_question():
    got = propose(FIXTURE, "mini_a", "reachable_avoiding", "source=user", "target=db", "avoid=auth")
    assert got == {"type": "reachable_avoiding", "args": {"source": "user", "target": "db", "avoid": "auth"},
                   "answer": True,
                   "certificate": {"nodes": ["cache", "db", "user"], "edges": [["cache", "db"], ["user", "cache", "read"]]}}


def test_propose_negative_question_gives_the_closed_set():
    got = propose(FIXTURE, "mini_b", "reachable_avoiding", "source=user", "target=db", "avoid=auth")
    assert got["answer"] is False
    # the closed set in the diagram without Auth: the user alone (the edge into Auth is not part of it)
    assert got["certificate"] == {"nodes": ["user"], "edges": []}
    got = propose(FIXTURE, "mini_b", "reachable", "source=cache", "target=auth")
    assert got["answer"] is False
    assert got["certificate"] == {"nodes": ["cache", "db"], "edges": [["cache", "db"]]}
    got = propose(FIXTURE, "mini_b", "reachable_avoiding", "source=auth", "target=user", "avoid=valid")
    assert got["answer"] is False
    assert got["certificate"] == {"nodes": ["auth", "cache", "db"], "edges": [["auth", "cache", "read"], ["cache", "db"]]}


def test_propose_output_pastes_into_an_annotation_that_validates(ds):
    got = propose(ds, "mini_b", "successors", "node=auth")
    assert got["answer"] == ["cache", "valid"]
    path = ds / "annotations" / "mini_b.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["questions"].append({
        "id": "mini_b-q4", "text": "What comes right after Auth?", "type": got["type"], "args": got["args"],
        "answer": got["answer"], "certificate": got["certificate"], "counter_prior": False,
        "rationale": "Auth leads to the token check and the cache."})
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    rc, errors, summary = validate(ds)
    assert (rc, errors) == (0, []), errors
    assert summary == "validate: ok (2 diagrams, 9 questions)"


def test_propose_unknown_node_lists_the_nodes():
    rc, _, err = run("propose", "--data", str(FIXTURE), "mini_a", "successors", "node=database")
    assert rc == 2
    assert "not nodes of mini_a.d2: node=database; nodes: auth, cache, db, user, valid" in err


def test_propose_branch_that_does_not_exist():
    rc, _, err = run("propose", "--data", str(FIXTURE), "mini_a", "decision_outcome", "node=valid", "branch=maybe")
    assert rc == 2
    assert "does not determine an answer" in err


def test_propose_says_why_a_route_through_a_parallel_fork_is_no_answer(ds):
    _redraw(ds, "user -> auth: login", "user -> auth: login {class: parallel}")
    _redraw(ds, "user -> cache: read", "user -> cache: read {class: parallel}")
    rc, _, err = run("propose", "--data", str(ds), "mini_a", "reachable_avoiding", "source=user", "target=db", "avoid=auth")
    assert rc == 2
    assert "leaves a parallel fork (class: parallel) whose other branch reaches it" in err
    # the plain reachability question is answered: every branch runs
    assert propose(ds, "mini_a", "reachable", "source=user", "target=db")["answer"] is True
