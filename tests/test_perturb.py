"""Counterfactual pairs (``diagqa perturb``): edits that flip the solver's answer, made in the D2 text
and checked with the project's parser and the real d2 binary; the generated split validated like hand
data; pair consistency from a real run over the split."""
from __future__ import annotations

import difflib
import doctest
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import benchmark.perturb as perturb_module
from benchmark.d2 import parse_text
from benchmark.dataset import load_dataset
from benchmark.generated import load_pairs, plan_split
from benchmark.graph import build_graph
from benchmark.metrics.pairs import pair_table
from benchmark.perturb import Edit, NotRealisable, apply_edit, choose_edit, flipping_edits, realise
from benchmark.records import read_samples
from benchmark.render import d2_binary
from benchmark.report.pairs import pairs_markdown
from benchmark.solver import answers_match, solve
from test_validate import run  # the diagqa CLI in-process: (exit code, stdout, stderr)

FIXTURE = Path(__file__).parent / "fixtures" / "broken"



def d2_accepts(text: str, tmp_path: Path) -> bool:
    path = tmp_path / "check.d2"
    path.write_text(text, encoding="utf-8")
    return subprocess.run([d2_binary(), "validate", str(path)], capture_output=True).returncode == 0


def test_doctests():
    assert doctest.testmod(perturb_module).failed == 0


# -- edits in the D2 text -------------------------------------------------------------------------

CHAIN = """\
# a chain and a container
a: Alpha
b: Beta
c: Gamma
box: Box {
  x: Ex
}
a -> b -> c: go
c -> box.x
"""


@pytest.mark.parametrize("edit,expected", [
    (Edit("remove", (0,)), "a: Alpha\nb: Beta\nc: Gamma\nbox: Box {\n  x: Ex\n}\nb -> c: go\nc -> box.x\n"),
    (Edit("remove", (1,)), "a: Alpha\nb: Beta\nc: Gamma\nbox: Box {\n  x: Ex\n}\na -> b: go\nc -> box.x\n"),
    (Edit("remove", (2,)), "a: Alpha\nb: Beta\nc: Gamma\nbox: Box {\n  x: Ex\n}\na -> b -> c: go\n"),
    (Edit("reverse", (1,)), "a: Alpha\nb: Beta\nc: Gamma\nbox: Box {\n  x: Ex\n}\na -> b <- c: go\nc -> box.x\n"),
    (Edit("relabel", (2,), "on: miss"), "a: Alpha\nb: Beta\nc: Gamma\nbox: Box {\n  x: Ex\n}\na -> b -> c: go\n"
                                        "c -> box.x: \"on: miss\"\n"),
])
def test_edits_are_made_in_place_and_give_the_edited_graph(edit, expected, tmp_path):
    parsed = parse_text(CHAIN)
    new = realise(CHAIN, parsed, edit)
    assert new == "# a chain and a container\n" + expected
    got = parse_text(new)
    assert [(e["src"], e["dst"], e["label"], e["arrow"]) for e in got["edges"]] == \
        [(e["src"], e["dst"], e["label"], e["arrow"]) for e in apply_edit(parsed, edit)["edges"]]
    assert d2_accepts(new, tmp_path)


def test_an_edge_with_a_class_and_no_label_is_edited_with_its_class(tmp_path):
    text = "classes: {data: {style.stroke-dash: 4}}\na\na -> b {class: data}\nb -> c {class: data}\nc -> d\n"
    parsed = parse_text(text)
    new = realise(text, parsed, Edit("remove", (1,)))
    assert new == "classes: {data: {style.stroke-dash: 4}}\na\na -> b {class: data}\nc -> d\n"
    assert [e.get("classes") for e in parse_text(new)["edges"]] == [["data"], None]
    assert realise(text, parsed, Edit("reverse", (0,))).splitlines()[2] == "a <- b {class: data}"
    assert d2_accepts(new, tmp_path)


def test_a_labelled_edge_with_a_class_is_relabelled_before_its_map(tmp_path):
    text = "classes: {data: {style.stroke-dash: 4}}\nk <-> store: read and write {class: data}\nk -> ok: next\n"
    parsed = parse_text(text)
    new = realise(text, parsed, Edit("relabel", (0,), "next"))
    assert new.splitlines()[1] == "k <-> store: next {class: data}" and d2_accepts(new, tmp_path)
    assert [(e["label"], e.get("classes")) for e in parse_text(new)["edges"]] == [("next", ["data"]), ("next", None)]


def test_removing_the_only_mention_of_a_node_keeps_the_node(tmp_path):
    text = "a: A\na -> lonely\n"
    parsed = parse_text(text)
    new = realise(text, parsed, Edit("remove", (0,)))
    assert new == "a: A\nlonely\n"
    assert {n["id"] for n in parse_text(new)["nodes"]} == {"a", "lonely"} and d2_accepts(new, tmp_path)


def test_swapping_branch_labels_and_a_comment_after_a_removed_line(tmp_path):
    text = "ok: OK? {shape: diamond}\nok -> yes_path: yes\nok -> no_path: no # the no branch\n"
    parsed = parse_text(text)
    assert realise(text, parsed, Edit("swap_labels", (0, 1))) == \
        "ok: OK? {shape: diamond}\nok -> yes_path: no\nok -> no_path: yes # the no branch\n"
    removed = realise(text, parsed, Edit("remove", (1,)))
    assert removed == "ok: OK? {shape: diamond}\nok -> yes_path: yes\nno_path\n" and d2_accepts(removed, tmp_path)


def test_an_added_arrow_flips_a_no_that_no_removal_can_flip(tmp_path):
    """Reachability 'no' has no edge to remove or reverse that opens the way: the edit is a new arrow,
    appended as one line (container ids written absolute), read back as the edited graph by the
    parser and accepted by the real d2 binary, and the solver's answer flips."""
    from benchmark.graph import Subgraph
    from benchmark.questions import Question

    text = "a: Alpha\nbox: Box {\n  x: Ex\n}\nd: Delta\na -> box.x\nd -> a\n"
    parsed = parse_text(text)
    g = build_graph(parsed)
    q = Question("t-q1", "t", "Can Ex reach Delta?", "reachable", (("source", "box.x"), ("target", "d")), False,
                 Subgraph(frozenset({"box.x"})))
    assert solve("reachable", q.arg, g) is False
    assert flipping_edits(q.type, q.arg, q.answer, parsed) == []      # removing or reversing never helps
    e = choose_edit(q, parsed, g, seed=0)
    assert e is not None and e.kind == "add" and e.ends == ("box.x", "d")
    assert e.describe(parsed) == {"kind": "add", "edges": [["box.x", "d"]]}
    new = realise(text, parsed, e)
    assert new == text + "box.x -> d\n"
    assert d2_accepts(new, tmp_path)
    g2 = build_graph(parse_text(new))
    assert solve("reachable", q.arg, g2) is True and set(g2.nodes) == set(g.nodes)
    # an arrow that exists already is never proposed again
    assert all(x.ends != ("a", "box.x") for x in perturb_module.add_edits(
        "reachable", {"source": "a", "target": "box.x"}, parsed, Subgraph(frozenset({"a"}))))


def test_a_glob_edge_style_makes_no_connection_and_does_not_block_edits(tmp_path):
    """``(** -> **)[*].style...`` (the large diagrams' edge-label size) styles the connections made
    elsewhere: the edits go on around it, and it stays in the text."""
    text = "(** -> **)[*].style.font-size: 22\na -> b: go\nb -> c\n"
    parsed = parse_text(text)
    assert len(parsed["edges"]) == 2
    reversed_ = realise(text, parsed, Edit("reverse", (0,)))
    assert reversed_ == "(** -> **)[*].style.font-size: 22\na <- b: go\nb -> c\n" and d2_accepts(reversed_, tmp_path)
    removed = realise(text, parsed, Edit("remove", (1,)))
    assert removed == "(** -> **)[*].style.font-size: 22\na -> b: go\nc\n" and d2_accepts(removed, tmp_path)


MEMBERS = """\
a: Alpha
vpc: VPC {
  web: Web {shape: hexagon}
  db: DB {shape: cylinder}
}
a -> vpc.web: HTTPS
vpc.web -> vpc.db
"""


def _inside(qid: str, node: str, answer: bool):
    from benchmark.graph import Subgraph
    from benchmark.questions import Question

    return Question(qid, "t", "Is it inside the VPC?", "inside", (("container", "vpc"), ("node", node)), answer,
                    Subgraph(frozenset({node})))


@pytest.mark.parametrize("node, answer, new_id, text", [
    ("vpc.web", True, "web",
     "a: Alpha\nvpc: VPC {\n  db: DB {shape: cylinder}\n}\na -> web: HTTPS\nweb -> vpc.db\nweb: Web {shape: hexagon}\n"),
    ("a", False, "vpc.a",
     "vpc: VPC {\n  web: Web {shape: hexagon}\n  db: DB {shape: cylinder}\n}\nvpc.a -> vpc.web: HTTPS\n"
     "vpc.web -> vpc.db\nvpc.a: Alpha\n"),
])
def test_a_membership_question_flips_by_moving_its_node(node, answer, new_id, text, tmp_path):
    """No edge says where a node is drawn: an ``inside`` question is flipped by moving the node out of
    the container (yes) or into it (no). The node keeps its label and style, its arrows follow it, its
    id is the one of its new place, and the question's args name that id."""
    parsed = parse_text(MEMBERS)
    g = build_graph(parsed)
    q = _inside("t-q1", node, answer)
    assert solve("inside", q.arg, g) is answer
    e = choose_edit(q, parsed, g, seed=0)
    assert e == Edit("move", (), ends=(node, new_id))
    assert e.describe(parsed) == {"kind": "move", "edges": [], "node": [node, new_id]}
    new = realise(MEMBERS, parsed, e)
    assert new == text and d2_accepts(new, tmp_path)
    g2 = build_graph(parse_text(new))
    args = perturb_module.edit_args(e, q.arg)
    assert args == {"container": "vpc", "node": new_id}
    assert solve("inside", args, g2) is (not answer)
    assert g2.nodes[new_id]["label"] == g.nodes[node]["label"] and g2.number_of_edges() == g.number_of_edges()


def test_a_move_the_text_cannot_carry_is_refused_and_absent_questions_get_no_pair():
    from benchmark.graph import Subgraph
    from benchmark.questions import Question

    inner = "vpc: VPC {\n  web: Web\n  db: DB\n  web -> db\n}\n"   # the arrow names web from inside the map
    parsed = parse_text(inner)
    with pytest.raises(NotRealisable):
        realise(inner, parsed, Edit("move", (), ends=("vpc.web", "web")))
    assert choose_edit(_inside("t-q1", "vpc.web", True), parsed, build_graph(parsed), seed=0,
                       usable=lambda e: False) is None
    taken = parse_text("web: Web\nvpc: VPC {\n  web: Web 2\n}\n")    # the new id is taken
    assert perturb_module.move_edit({"container": "vpc", "node": "vpc.web"}, taken) is None
    g = build_graph(parse_text(MEMBERS))
    absent = Question("t-q2", "t", "Where does the Mailer send?", "absent", (("entity", "Mailer"), ("form", "node")),
                      "abstain", Subgraph(frozenset(g.nodes)))
    assert choose_edit(absent, parse_text(MEMBERS), g, seed=0) is None


def test_an_edit_the_text_cannot_carry_is_refused():
    text = "a -> b\n(a -> b)[0].style.stroke: red\n"
    with pytest.raises(NotRealisable):
        realise(text, parse_text(text), Edit("remove", (0,)))
    glob = "a\nb\n* -> c\n"
    with pytest.raises(NotRealisable):
        realise(glob, parse_text(glob), Edit("remove", (0,)))


# -- choosing the edit ----------------------------------------------------------------------------

def test_every_chosen_edit_flips_the_answer_and_is_deterministic():
    ds, _ = load_dataset(FIXTURE)
    for d in ds.diagrams.values():
        for q in d.questions:
            edits = flipping_edits(q.type, q.arg, q.answer, d.parsed)
            e = choose_edit(q, d.parsed, d.graph, seed=0)
            if e is None:
                assert not edits
                continue
            # an edit of an existing edge when one flips the answer, a new arrow only when none does
            assert (e in edits) if edits else e.kind == "add"
            assert choose_edit(q, d.parsed, d.graph, seed=0) == e
            g2 = build_graph(apply_edit(d.parsed, e))
            new = solve(q.type, q.arg, g2)
            assert new is not None and not answers_match(q.type, q.arg, q.answer, new, g2), (q.id, e)


def test_a_decision_flips_by_swapping_its_branch_labels():
    ds, _ = load_dataset(FIXTURE)
    q = next(q for q in ds.questions if q.id == "mini_a-q4")   # where does "no" go from the token check?
    d = ds.diagrams["mini_a"]
    e = choose_edit(q, d.parsed, d.graph, seed=0)
    assert e.kind in ("swap_labels", "remove", "reverse")
    edits = flipping_edits(q.type, q.arg, q.answer, d.parsed)
    swap = [x for x in edits if x.kind == "swap_labels"]
    assert len(swap) == 1
    assert solve(q.type, q.arg, build_graph(apply_edit(d.parsed, swap[0]))) == "db"


def test_the_seed_is_what_picks_among_equal_edits():
    ds, _ = load_dataset(FIXTURE)
    plans = [plan_split(ds, ds.questions, seed=s) for s in range(6)]
    picked = {tuple((p.question.id, p.edit) for p in plan.pairs) for plan in plans}
    assert len(picked) > 1                                   # another seed, another choice somewhere
    again = plan_split(ds, ds.questions, seed=3)
    assert [(p.question.id, p.edit) for p in again.pairs] == [(p.question.id, p.edit) for p in plans[3].pairs]


# -- the generated split ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def split(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src") / "ds"
    shutil.copytree(FIXTURE, src)
    out = tmp_path_factory.mktemp("gen") / "generated"
    rc, stdout, stderr = run("perturb", "--data", str(src), "--out", str(out))
    assert rc == 0, stderr
    assert f"validate {out}: ok" in stdout
    return out


def test_split_is_a_valid_dataset_with_renders(split):
    rc, out, err = run("validate", "--data", str(split))
    assert rc == 0, err
    data = json.loads((split / "pairs.json").read_text(encoding="utf-8"))
    ds, _ = load_dataset(split)
    cf = [d for d in ds.diagrams.values() if "__cf" in d.id]
    assert len(cf) == data["diagrams"] and {"mini_a", "mini_b"} <= set(ds.diagrams)
    assert all(d.png_path.exists() for d in ds.diagrams.values())
    assert data["questions"] == 8 and data["with_pair"] == len(data["pairs"])
    assert data["share_with_pair"] == data["with_pair"] / 8
    by_id = {q.id: q for q in ds.questions}
    for p in data["pairs"]:
        orig, new = by_id[p["question"]], by_id[p["counterfactual"]]
        assert (new.text, new.type, new.args) == (orig.text, orig.type, orig.args)
        assert p["counterfactual_answer"] != p["answer"]
        assert not answers_match(orig.type, orig.arg, orig.answer, new.answer, ds.diagrams[new.diagram].graph)
        # the edited diagram differs from the original in one place only
        a = ds.diagrams[orig.diagram].source.splitlines()
        b = ds.diagrams[new.diagram].source.splitlines()
        diff = [ln[0] for ln in difflib.ndiff(a, b) if ln[:1] in "+-"]
        if p["edit"]["kind"] == "add":  # one line added, nothing else touched
            assert diff == ["+"], (p, diff)
            continue
        limit = 2 if p["edit"]["kind"] == "swap_labels" else 1
        assert 1 <= diff.count("-") <= limit and diff.count("+") <= limit, (p, diff)


def test_split_is_deterministic(split, tmp_path):
    again = tmp_path / "again"
    src = Path(json.loads((split / "pairs.json").read_text())["source"]["root"])
    rc, _, err = run("perturb", "--data", str(src), "--out", str(again))
    assert rc == 0, err
    files = sorted(p.relative_to(split) for p in split.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for f in files:
        assert (split / f).read_bytes() == (again / f).read_bytes(), f


def test_perturb_refuses_to_overwrite_a_folder_that_is_not_a_split(tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    rc, _, err = run("perturb", "--data", str(FIXTURE), "--out", str(out), "--no-render")
    assert rc == 2 and "not overwriting" in err and (out / "notes.txt").exists()


def test_pair_consistency_separates_a_reader_from_a_guesser(split, tmp_path):
    """A real run over the split: the solver reads (never the same answer on both sides of a flip),
    the blind answerer does not (the question text is the same on both sides)."""
    from benchmark.runner import run as run_benchmark
    from benchmark.spec import RunSpec

    spec = RunSpec(data_dir=split, variants=("oracle+d2+full",), answerers=("solver", "blind"),
                   out_dir=tmp_path / "results", run_id="pairs", workers=1)
    result = run_benchmark(spec, progress=False, quiet=True)
    records = read_samples(result.run_dir / "samples.jsonl")
    pairs = load_pairs(split)
    rows = {r["answerer"]: r for r in pair_table(records, pairs)}
    assert rows["solver"]["pairs"] == len(pairs) == rows["blind"]["pairs"]
    assert rows["solver"]["same_answer_rate"] == 0.0 and rows["solver"]["both_correct_rate"] == 1.0
    assert rows["blind"]["same_answer"] == rows["blind"]["measured"] > 0
    assert rows["blind"]["both_correct_rate"] == 0.0
    md = pairs_markdown(records, pairs)
    assert md.startswith("## Counterfactual pairs")
    assert f"| oracle+d2+full | solver | {len(pairs)} |" in md
    # the run recorded the pairs it ran, and its own report has the section
    card = json.loads((result.run_dir / "run.json").read_text(encoding="utf-8"))
    assert card["pairs"] == dict(sorted(pairs.items()))
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Counterfactual pairs" in report
    assert f"| oracle+d2+full | solver | {len(pairs)} | {len(pairs)} | 0.00 | 1.00 |" in report


def test_pair_metric_doctests_and_unmeasured_sides():
    import benchmark.metrics.pairs as pairs_module

    assert doctest.testmod(pairs_module).failed == 0
    recs = [{"variant": "v", "answerer": "a", "question_id": "q1", "metrics": {"answer_value": True, "correct": True}},
            {"variant": "v", "answerer": "a", "question_id": "q1cf", "metrics": {"answer_value": None, "correct": None},
             "answer": {"raw": None}},
            {"variant": "v", "answerer": "a", "question_id": "q2", "metrics": {"answer_value": ["b", "a"], "correct": False}},
            {"variant": "v", "answerer": "a", "question_id": "q2cf", "metrics": {"answer_value": ["a", "b"], "correct": True}},
            {"variant": "w", "answerer": "a", "question_id": "q3", "metrics": {"answer_value": 1, "correct": True}}]
    [row] = pair_table(recs, {"q1": "q1cf", "q2": "q2cf", "q3": "q3cf"})
    assert (row["variant"], row["pairs"], row["measured"], row["unmeasured"]) == ("v", 2, 1, 1)
    assert row["same_answer_rate"] == 1.0 and row["both_correct_rate"] == 0.0   # a set is the same in any order


def test_no_render_split_of_one_diagram_without_originals(tmp_path):
    out = tmp_path / "gen"
    rc, stdout, stderr = run("perturb", "--data", str(FIXTURE), "--out", str(out), "--diagrams", "mini_a",
                             "--no-render", "--no-originals")
    assert rc == 0, stderr
    files = sorted(p.name for p in (out / "diagrams").iterdir())
    assert files and all(f.startswith("mini_a__cf") and f.endswith(".d2") for f in files)   # no PNG, no original
    data = json.loads((out / "pairs.json").read_text())
    assert data["questions"] == 5 and not data["rendered"] and not data["originals_included"]
    assert {p["diagram"] for p in data["pairs"]} == {"mini_a"}
    rc, _, err = run("validate", "--data", str(out), "--no-renders")
    assert rc == 0, err
    for f in files:   # the real d2 binary compiles every edited file
        assert subprocess.run([d2_binary(), "validate", str(out / "diagrams" / f)], capture_output=True).returncode == 0
    rc, _, err = run("perturb", "--data", str(FIXTURE), "--out", str(out), "--diagrams", "nope", "--no-render")
    assert rc == 2 and "not diagrams of" in err


def test_bundled_diagrams_every_pair_flips_in_the_edited_text():
    from benchmark.dataset import DEFAULT_ROOT

    ds, _ = load_dataset(DEFAULT_ROOT)
    keep = sorted(ds.diagrams)[:10]
    ds.diagrams = {k: ds.diagrams[k] for k in keep}
    plan = plan_split(ds, ds.questions, seed=0)
    assert plan.pairs and len(plan.pairs) + len(plan.without) == plan.questions == len(ds.questions)
    moved = 0
    for p in plan.pairs:
        q = p.question
        g = build_graph(parse_text(plan.texts[p.diagram_id]))
        args = p.args   # the original's args, a moved node named by its new id
        assert answers_match(q.type, args, p.answer, solve(q.type, args, g), g)
        assert not answers_match(q.type, args, q.answer, solve(q.type, args, g), g), q.id
        if p.edit.kind == "move":   # container membership: one node moved, its id with it
            moved += 1
            old, new = p.edit.ends
            assert q.type == "inside" and args == {**q.arg, "node": new}
            assert set(g.nodes) == set(ds.diagrams[q.diagram].graph.nodes) - {old} | {new}
        else:
            assert args == q.arg and set(g.nodes) == set(ds.diagrams[q.diagram].graph.nodes)
    # the first ten diagrams hold membership questions (arch_api_gateway, arch_auth_cache_a/b): all paired
    inside = [q for q in ds.questions if q.type == "inside"]
    assert inside and moved == len(inside)
    assert all(w["type"] != "inside" for w in plan.without)
