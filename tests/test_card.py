"""The dataset card: counts on tiny datasets, the ``diagqa card`` command, and the committed card."""
from __future__ import annotations

import doctest
import shutil
from pathlib import Path

import pytest

import benchmark.card as card
from benchmark.card import BEGIN, END, card_stats, current_section, render_markdown, replace_section, targets
from benchmark.dataset import DEFAULT_ROOT, load_dataset
from test_validate import run  # the diagqa CLI in-process: (exit code, stdout, stderr)

FIXTURE = Path(__file__).parent / "fixtures" / "broken"

RU_DIAGRAM = """\
office: Офис {
  web: Веб-сервер
  db: База {shape: cylinder}
}
check: Доступ есть? {shape: diamond}
office.web -> check
check -> office.db: да
check -> office.web: нет
"""

RU_ANNOTATION = """\
diagram: ru_office
title: Офис
domain: network
language: ru
questions:
  - id: ru_office-q1
    text: Куда ведёт ответ «нет»?
    type: decision_outcome
    args: {node: check, branch: нет}
    answer: office.web
    certificate:
      nodes: [check, office.web]
      edges: [[check, office.web, нет]]
    counter_prior: false
    rationale: Ветка «нет» возвращает к веб-серверу.
"""



@pytest.fixture
def mixed(tmp_path) -> Path:
    """The twin fixture plus one Russian diagram with a container and a labelled decision."""
    root = tmp_path / "ds"
    shutil.copytree(FIXTURE, root)
    (root / "diagrams" / "ru_office.d2").write_text(RU_DIAGRAM, encoding="utf-8")
    (root / "annotations" / "ru_office.yaml").write_text(RU_ANNOTATION, encoding="utf-8")
    return root


def test_doctests():
    assert doctest.testmod(card).failed == 0


def test_stats_of_the_twin_fixture():
    ds, problems = load_dataset(FIXTURE)
    assert problems == []
    s = card_stats(ds)
    assert (s.diagrams, s.questions) == (2, 8)
    assert s.domains == {"software-architecture": (2, 8)}
    assert s.sizes == {"under 6": 2, "6-10": 0, "11-25": 0, "26-40": 0, "41-79": 0, "80-250": 0, "over 250": 0}
    assert (s.min_nodes, s.max_nodes) == (5, 5)
    assert {t: n for t, n in s.types.items() if n} == {
        "reachable_avoiding": 2, "path": 1, "reachable": 1, "decision_outcome": 1, "predecessors": 1,
        "count_out": 1, "edge_label": 1}
    assert sum(s.types.values()) == 8 and s.types["common_downstream"] == 0
    # yes/no: mini_a-q1 yes, mini_a-q3 no, mini_b-q1 no
    assert (s.yes_no, s.yes) == (3, 1)
    assert s.yes_share == pytest.approx(1 / 3)
    # measured: the reachable_avoiding pair ties (yes on mini_a, no on mini_b), the majority takes "no"
    # (ties go to the smallest answer), so mini_a-q1 is the one counter-prior item of the 4 yes/no and node ones
    assert (s.counter_prior, s.counter_prior_defined, s.counter_prior_share) == (1, 4, 1 / 4)
    # closed-set proofs: the two negative answers, predecessors and count_out
    assert s.closed_set == 4
    assert s.languages == {"en": (2, 8)}
    assert (s.twin_pairs, s.twin_questions) == (1, 2)
    assert (s.container_diagrams, s.decision_diagrams) == (0, 2)


def test_stats_count_containers_languages_and_unmeasured_shares(mixed):
    ds, _ = load_dataset(mixed)
    s = card_stats(ds)
    assert s.languages == {"en": (2, 8), "ru": (1, 1)}
    assert s.container_diagrams == 1
    assert s.decision_diagrams == 3
    assert s.domains == {"network": (1, 1), "software-architecture": (2, 8)}

    (mixed / "annotations" / "mini_a.yaml").unlink()
    (mixed / "annotations" / "mini_b.yaml").unlink()
    only_ru = card_stats(load_dataset(mixed)[0])
    assert only_ru.yes_no == 0 and only_ru.yes_share is None
    assert only_ru.twin_pairs == 0
    text = render_markdown(only_ru)
    assert "| yes share of yes/no answers | 40-60 % | n/a | **no** |" in text
    assert "nan" not in text.lower()


def test_targets_report_what_is_missing():
    s = card_stats(load_dataset(FIXTURE)[0])
    met = {t.name: t for t in targets(s)}
    assert met["questions"].actual == "8" and not met["questions"].met
    assert met["questions per type"].actual.startswith("min 0 (") and not met["questions per type"].met
    assert met["yes share of yes/no answers"].actual == "33.3 %" and not met["yes share of yes/no answers"].met
    assert met["twin pairs"].actual == "1" and not met["twin pairs"].met
    assert met["diagrams with labelled decisions"].actual == "2"


def test_markdown_tables():
    text = render_markdown(card_stats(load_dataset(FIXTURE)[0]))
    assert text.startswith("2 diagrams, 8 questions")
    assert "| software-architecture | 2 | 8 |" in text
    assert "| reachable_avoiding | bool | 2 |" in text
    assert "| yes/no questions answered yes | 1 of 3 | 33.3 % |" in text
    assert "| twin pairs | 1 pairs (2 diagrams, 2 twin questions) |" in text
    assert text == render_markdown(card_stats(load_dataset(FIXTURE)[0]))


def test_replace_section_needs_both_markers():
    with pytest.raises(ValueError, match="card:begin"):
        replace_section("no markers here", "x\n")
    with pytest.raises(ValueError):
        replace_section(f"{END}\n{BEGIN}\n", "x\n")
    text = f"head\n{BEGIN}\nold\n{END}\ntail\n"
    new = replace_section(text, "new\n")
    assert new == f"head\n{BEGIN}\nnew\n{END}\ntail\n"
    assert current_section(new) == "new\n"


def test_card_command_prints_and_writes(mixed):
    rc, out, _ = run("card", "--data", str(mixed))
    assert rc == 0
    assert out == render_markdown(card_stats(load_dataset(mixed)[0]))

    readme = mixed / "annotations" / "README.md"
    readme.write_text(f"# Card\n\nintro\n\n{BEGIN}\nstale\n{END}\n\nend\n", encoding="utf-8")
    rc, out, _ = run("card", "--data", str(mixed), "--write")
    assert (rc, out.strip()) == (0, f"{readme}: card updated")
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("# Card\n\nintro\n\n") and text.endswith(f"{END}\n\nend\n")
    assert current_section(text) == render_markdown(card_stats(load_dataset(mixed)[0]))
    rc, out, _ = run("card", "--data", str(mixed), "--write")
    assert (rc, out.strip()) == (0, f"{readme}: card is up to date")


def test_card_command_without_markers_names_the_file(mixed):
    readme = mixed / "annotations" / "README.md"
    readme.write_text("# Card without markers\n", encoding="utf-8")
    rc, _, err = run("card", "--data", str(mixed), "--write")
    assert rc == 2
    assert f"{readme}: the card needs the markers" in err
    assert readme.read_text(encoding="utf-8") == "# Card without markers\n"


def test_committed_card_is_current():
    readme = DEFAULT_ROOT / "annotations" / "README.md"
    committed = current_section(readme.read_text(encoding="utf-8"))
    generated = render_markdown(card_stats(load_dataset(DEFAULT_ROOT)[0]))
    assert committed == generated, "the dataset card is stale: run `diagqa card --write`"


def test_card_reports_the_prior_floor_as_diagqa_priors_measures_it():
    from dataclasses import replace

    from benchmark.card import PriorFloor
    from benchmark.priors import run_priors

    ds = load_dataset(FIXTURE)[0]
    s = card_stats(ds)
    res = run_priors(ds)
    assert s.priors.strongest == res.floor
    assert s.priors.accuracy["yes/no"] == {b: c.accuracy for b, c in res.table["yes/no"].items()}
    assert s.priors.counter_prior_defined == sum(1 for q in ds.questions if q.kind in ("bool", "node"))
    text = render_markdown(s)
    assert f"Strongest prior baseline (the guessability floor): {res.floor}," in text
    # a text-cue rule 10 points over the majority on yes/no misses the target
    gap = PriorFloor({"all": {"majority": 0.5, "text-cue": 0.6}, "yes/no": {"majority": 0.6, "text-cue": 0.7}},
                     "text-cue", "text-cue", 1, 2, 1)
    assert gap.yes_no_gap == pytest.approx(0.1)
    assert "+10.0 points over the majority baseline (target: at most +5; **not met**)" in render_markdown(replace(s, priors=gap))


def test_card_states_the_edge_convention_and_counts_edges_by_kind(tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(FIXTURE, root)
    d2 = root / "diagrams" / "mini_a.d2"
    d2.write_text(d2.read_text(encoding="utf-8").replace("cache -> db", "classes: {data: {style.stroke-dash: 4}}\ncache -> db {class: data}"),
                  encoding="utf-8")
    ds, _ = load_dataset(root, strict=False)
    s = card_stats(ds)
    assert s.edge_kinds == {"flow": 11, "data": 1, "association": 0, "parallel": 0}
    text = render_markdown(s)
    assert card.EDGE_CONVENTION in text
    assert "| flow | 11 |" in text and "| data | 1 |" in text


ABSENT = """\
  - id: ru_office-q2
    text: Куда ведёт стрелка из почтового сервера?
    type: absent
    args: {entity: почтовый сервер, form: node}
    answer: abstain
    certificate:
      nodes: [check, office, office.db, office.web]
      edges: []
    counter_prior: false
    rationale: Почтового сервера на схеме нет.
"""


def test_counterfactual_pair_share_and_the_types_left_without(mixed):
    """Every question of the fixtures has an edit that flips it (the decision by its branch labels);
    an absent question has none, and the card names its type."""
    s = card_stats(load_dataset(mixed)[0])
    assert (s.pairs, s.pairless, s.questions) == (9, {}, 9)
    with (mixed / "annotations" / "ru_office.yaml").open("a", encoding="utf-8") as f:
        f.write(ABSENT)
    s = card_stats(load_dataset(mixed)[0])
    assert (s.pairs, s.pairless, s.questions) == (9, {"absent": 1}, 10)
    met = {t.name: t for t in targets(s)}["questions with a counterfactual pair (`diagqa perturb`)"]
    assert (met.actual, met.met) == ("90.0 %", True)
    text = render_markdown(s)
    assert "| questions with a counterfactual pair (absent: 1 without) | 9 of 10 | 90.0 % |" in text
