"""Hostile D2 input: files and imports that leave the dataset folder, files without end, globs
that would make millions of connections. Each gives a located :class:`D2LimitError` (an
``InputError``), quickly; none reads without bound or escapes the folder it is confined to.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchmark.d2 import D2SyntaxError, parse_file, parse_text
from benchmark.d2.errors import D2LimitError
from benchmark.d2.files import Limits
from benchmark.errors import InputError
from test_validate import run as cli  # the diagqa CLI in-process: (exit code, stdout, stderr)

FIXTURE = Path(__file__).parent / "fixtures" / "broken"


@pytest.fixture
def tree(tmp_path) -> Path:
    """tmp/ds/diagrams/ (the dataset) beside tmp/secret.d2 (outside it)."""
    (tmp_path / "ds" / "diagrams").mkdir(parents=True)
    (tmp_path / "ds" / "shared").mkdir()
    (tmp_path / "secret.d2").write_text("password -> hunter2\n", encoding="utf-8")
    (tmp_path / "ds" / "shared" / "common.d2").write_text("lb -> app\n", encoding="utf-8")
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("line", ["x: {...@../../secret}", "x: @{secret}", "x: {...@link}"])
def test_imports_leaving_the_root_are_refused_there(tree, line):
    (tree / "ds" / "diagrams" / "link.d2").symlink_to(tree / "secret.d2")
    line = line.replace("{secret}", str(tree / "secret"))
    diagram = write(tree / "ds" / "diagrams" / "a.d2", "a\n" + line + "\n")
    # without a root the import is read as d2 reads it
    assert ("x.password", "x.hunter2") in [(e["src"], e["dst"]) for e in parse_file(diagram)["edges"]]
    with pytest.raises(D2LimitError) as info:
        parse_file(diagram, root=tree / "ds")
    err = info.value
    assert isinstance(err, InputError)
    at = line.index("...@") if "...@" in line else line.index("@")   # where the import starts
    assert (err.file, err.line, err.column) == (str(diagram), 2, at + 1)
    assert "outside" in str(err) and str(tree / "secret.d2") in str(err)


def test_imports_inside_the_root_still_work(tree):
    diagram = write(tree / "ds" / "diagrams" / "a.d2", "net: {...@../shared/common}\n")
    got = parse_file(diagram, root=tree / "ds")
    assert [(e["src"], e["dst"]) for e in got["edges"]] == [("net.lb", "net.app")]


def test_a_diagram_that_links_out_of_the_root_is_refused(tree):
    link = tree / "ds" / "diagrams" / "a.d2"
    link.symlink_to(tree / "secret.d2")
    with pytest.raises(D2LimitError, match="outside"):
        parse_file(link, root=tree / "ds")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_links_to_dev_zero_are_refused_not_read(tmp_path):
    (tmp_path / "zero.d2").symlink_to("/dev/zero")
    with pytest.raises(D2LimitError, match="not a regular file"):
        parse_file(tmp_path / "zero.d2")
    diagram = write(tmp_path / "a.d2", "a\nb: {...@zero}\n")
    with pytest.raises(D2LimitError) as info:
        parse_file(diagram)
    assert (info.value.line, info.value.column) == (2, 5)
    assert "cannot import zero.d2: not a regular file" in str(info.value)


def test_files_over_the_size_limit_are_refused(tmp_path):
    big = tmp_path / "big.d2"
    big.write_bytes(b"# padding\n" * (4 * 1024 * 1024 // 10 + 1))   # just over 4 MiB
    with pytest.raises(D2LimitError, match="larger than the 4 MiB limit"):
        parse_file(big)
    diagram = write(tmp_path / "a.d2", "...@big\n")
    with pytest.raises(D2LimitError, match="cannot import big.d2: larger than"):
        parse_file(diagram)
    small = Limits(max_file_bytes=100)
    with pytest.raises(D2LimitError, match="larger than the 100 bytes limit"):
        parse_file(write(tmp_path / "c.d2", "x\n" * 60), limits=small)


def test_many_imports_of_one_file_pass_the_total_limit(tmp_path):
    write(tmp_path / "part.d2", "# " + "x" * 1000 + "\nn\n")
    diagram = write(tmp_path / "a.d2", "\n".join(f"g{i}: {{...@part}}" for i in range(20)))
    assert len(parse_file(diagram)["nodes"]) == 40
    with pytest.raises(D2LimitError, match="imports pass the limit of 10000 bytes read") as info:
        parse_file(diagram, limits=Limits(max_total_bytes=10_000))
    assert info.value.line == 10


def test_a_glob_over_a_thousand_objects_stops_at_the_connection_limit():
    text = "\n".join(f"n{i}" for i in range(1001)) + "\n* -> *\n"
    with pytest.raises(D2LimitError) as info:
        parse_text(text, filename="g.d2")
    assert str(info.value).startswith("g.d2:1002:1: more than 50000 connections in one diagram")
    # the glob first, the objects after: stops as the objects come
    text = "* -> *\n" + "\n".join(f"n{i}" for i in range(1001))
    with pytest.raises(D2LimitError, match="more than 50000 connections"):
        parse_text(text)
    with pytest.raises(D2LimitError, match="more than 5 connections"):
        parse_text("a; b; c\n* -> *", limits=Limits(max_edges=5))
    assert len(parse_text("a; b; c\n* -> *", limits=Limits(max_edges=6))["edges"]) == 6


def test_objects_past_the_limit_are_refused():
    with pytest.raises(D2LimitError) as info:
        parse_text("\n".join(f"n{i}" for i in range(10_001)), filename="n.d2")
    assert str(info.value).startswith("n.d2:10001:1: more than 10000 objects in one diagram")
    with pytest.raises(D2LimitError, match="more than 3 objects"):
        parse_text("a.b.c.d", limits=Limits(max_nodes=3))
    with pytest.raises(D2LimitError, match="more than 3 objects"):   # copies made by a spread count
        parse_text("vars: {d: {p; q}}\nx: {...${d}}\ny: {...${d}}", limits=Limits(max_nodes=3))


def test_limit_errors_are_syntax_errors_for_callers():
    assert issubclass(D2LimitError, D2SyntaxError) and issubclass(D2LimitError, InputError)


# -- a dataset: validate flags outside imports, a run refuses them unless allowed ----------------


@pytest.fixture
def dataset(tmp_path) -> Path:
    root = tmp_path / "ds"
    shutil.copytree(FIXTURE, root)
    write(tmp_path / "secret.d2", "password\n")
    with (root / "diagrams" / "mini_a.d2").open("a", encoding="utf-8") as fh:
        fh.write("...@../../secret\n")
    return root


def test_validate_flags_an_import_outside_the_dataset(dataset):
    rc, out, err = cli("validate", "--data", str(dataset), "--no-renders")
    assert rc == 1
    line = len((dataset / "diagrams" / "mini_a.d2").read_text(encoding="utf-8").splitlines())
    assert f"{dataset / 'diagrams' / 'mini_a.d2'}:{line}:1: cannot import ../../secret.d2" in err
    rc, out, err = cli("validate", "--data", str(dataset), "--no-renders", "--allow-outside-imports")
    assert rc == 0, err


def test_a_run_skips_the_diagram_unless_outside_imports_are_allowed(dataset, tmp_path):
    from benchmark.runner import prepare_dataset
    from benchmark.spec import build_spec

    ds, questions, problems = prepare_dataset(dataset)
    assert {q.diagram for q in questions} == {"mini_b"}
    assert any("cannot import ../../secret.d2" in str(p) for p in problems)
    ds, questions, problems = prepare_dataset(dataset, allow_outside_imports=True)
    assert {q.diagram for q in questions} == {"mini_a", "mini_b"} and not problems
    assert "password" in ds.diagram("mini_a").graph
    spec = build_spec(data=str(dataset), variants=["oracle+d2+full"], answerers=["solver"])
    allowed = build_spec(data=str(dataset), variants=["oracle+d2+full"], answerers=["solver"],
                         allow_outside_imports=True)
    assert not spec.allow_outside_imports and allowed.allow_outside_imports
    assert "allow_outside_imports" not in spec.identity()
    assert spec.config_hash() != allowed.config_hash()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_dataset_diagram_linked_to_dev_zero_is_one_problem(dataset):
    (dataset / "diagrams" / "mini_b.d2").unlink()
    (dataset / "diagrams" / "mini_b.d2").symlink_to("/dev/zero")
    from benchmark.runner import prepare_dataset

    ds, questions, problems = prepare_dataset(dataset, allow_outside_imports=True)
    assert {q.diagram for q in questions} == {"mini_a"}
    assert any("mini_b.d2: cannot read: not a regular file" in str(p) for p in problems)
    assert "mini_b" not in ds.diagrams  # left out whole: never read, never a finder candidate
    assert len(ds.content_hash()) == 64
