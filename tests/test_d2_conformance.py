"""The parser against the official d2 compiler on the shared real-world corpus.

For every ``.d2`` file of ``../shared/d2-conformance/`` with an ``expected/<name>.json``
(what d2 v0.9.0 rendered, read back from its SVG), compare node ids, the multiset of
edges (src, dst, arrow) and the plain-text labels.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from benchmark.d2 import parse_file

CORPUS = Path(os.environ.get("DIAGQA_SHARED") or Path(__file__).resolve().parents[1].parent / "shared") / "d2-conformance"

if not CORPUS.is_dir():
    pytest.skip("d2 conformance corpus not present", allow_module_level=True)

# Files whose graph cannot agree with the oracle, each with the reason (strict xfail).
KNOWN_DIFFERENCES: dict[str, str] = {}


def _cases() -> list[tuple[str, Path, Path]]:
    out = []
    for path in sorted(CORPUS.rglob("*.d2")):
        rel = path.relative_to(CORPUS)
        name = "_".join(rel.with_suffix("").parts)
        expected = CORPUS / "expected" / f"{name}.json"
        if expected.exists():
            out.append((name, path, expected))
    return out


CASES = _cases()


def _params():
    for name, path, expected in CASES:
        marks = []
        if name in KNOWN_DIFFERENCES:
            marks.append(pytest.mark.xfail(reason=KNOWN_DIFFERENCES[name], strict=True))
        yield pytest.param(path, expected, id=name, marks=marks)


def oracle_edges(oracle: dict) -> Counter:
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    return Counter((by_path[tuple(e["src"])], by_path[tuple(e["dst"])], e["arrow"])
                   for e in oracle["edges"])


def comparable(label) -> bool:
    return label is not None and not label.startswith("[rendered]")


def test_corpus_is_complete():
    assert len(CASES) == 35


@pytest.mark.parametrize("path,expected", list(_params()))
def test_file_agrees_with_d2(path: Path, expected: Path):
    oracle = json.loads(expected.read_text(encoding="utf-8"))
    got = parse_file(path)
    assert sorted(n["id"] for n in got["nodes"]) == sorted(n["id"] for n in oracle["nodes"])
    got_edges = Counter((e["src"], e["dst"], e["arrow"]) for e in got["edges"])
    assert got_edges == oracle_edges(oracle)
    labels = {n["id"]: n["label"] for n in got["nodes"]}
    for n in oracle["nodes"]:
        if comparable(n["label"]):
            assert labels[n["id"]] == n["label"], n["id"]
    got_by_key: dict = {}
    for e in got["edges"]:
        got_by_key.setdefault((e["src"], e["dst"], e["arrow"]), []).append(e["label"])
    by_path = {tuple(n["path"]): n["id"] for n in oracle["nodes"]}
    want_by_key: dict = {}
    for e in oracle["edges"]:
        key = (by_path[tuple(e["src"])], by_path[tuple(e["dst"])], e["arrow"])
        want_by_key.setdefault(key, []).append(e["label"])
    for key, want in want_by_key.items():
        have = got_by_key[key]
        assert sorted(map(str, (w for w in want if comparable(w)))) == \
            sorted(map(str, (h for h, w in zip(_order(have, want), want) if comparable(w)))), key


def _order(have: list, want: list) -> list:
    """Pair repeated edges' labels by matching equal labels first."""
    rest = list(have)
    out = []
    for w in want:
        if w in rest:
            rest.remove(w)
            out.append(w)
        else:
            out.append(None)
    for i, v in enumerate(out):
        if v is None and rest:
            out[i] = rest.pop(0)
    return out


@pytest.mark.parametrize("path,expected", [pytest.param(p, e, id=n) for n, p, e in CASES])
def test_node_order_matches_d2(path: Path, expected: Path):
    """d2 draws objects level by level, each level in its object order; so the parser's
    order, stably sorted by depth, must equal the SVG's. Sequence diagrams are drawn in
    layout order (groups after actors) and are skipped."""
    if "sequence_diagram" in path.read_text(encoding="utf-8"):
        pytest.skip("sequence diagrams are drawn in layout order")
    oracle = json.loads(expected.read_text(encoding="utf-8"))
    want = [n["id"] for n in oracle["nodes"]]
    got = parse_file(path)["nodes"]
    depth: dict = {}
    for n in got:
        depth[n["id"]] = 0 if n["parent"] is None else depth[n["parent"]] + 1
    seen = set(want)
    assert [n["id"] for n in sorted(got, key=lambda n: depth[n["id"]]) if n["id"] in seen] == want
