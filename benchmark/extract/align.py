"""Extracted nodes matched to D2 nodes by label: fuzzy, one-to-one, greedy by score.

This is the scorer's view: it reads the D2 labels to say which extracted node is which. The
extractor itself never sees them.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

#: labels less similar than this are not matched
MIN_SIMILARITY = 0.6


def normalise_label(text: str | None) -> str:
    """Case-folded label with runs of whitespace (line breaks too) as one space.

    >>> normalise_label("Is user\\n authenticated?")
    'is user authenticated?'
    """
    t = unicodedata.normalize("NFKC", text or "").casefold().replace("ё", "е")
    return re.sub(r"\s+", " ", t).strip()


_FOLD = str.maketrans({
    **dict(zip("аеорсухкмнтвАЕОРСУХКМНТВјЈ", "aeopcyxkmhtbAEOPCYXKMHTBjJ")),  # Cyrillic look-alikes
    **{c: "l" for c in "IiіІl1|!"},                                         # I, l, 1 and the like
    **{c: "o" for c in "0Oo"},                                               # O and 0
})


def fold_script(text: str) -> str:
    """Letters OCR confuses written as one: Cyrillic look-alikes as Latin, ``I l 1 | !`` as ``l``
    and ``0`` as ``o`` (only for comparing labels, never in what extraction outputs).

    >>> fold_script("QА") == fold_script("QA")
    True
    >>> fold_script("Cl") == fold_script("CI"), fold_script("B00T") == fold_script("BOOT")
    (True, True)
    >>> fold_script("Тор") == fold_script("Top")
    True
    """
    return text.translate(_FOLD)


def similarity(a: str, b: str) -> float:
    """Similarity of two labels in [0, 1] (normalised Levenshtein ratio, look-alike letters folded).

    >>> similarity("Orders DB", "orders db")
    1.0
    >>> round(similarity("Order DB", "Orders DB"), 2)
    0.94
    >>> similarity("", "x")
    0.0
    """
    return _folded_similarity(comparable(a), comparable(b))


def comparable(text: str | None) -> str:
    """A label as :func:`similarity` compares it: normalised, look-alike letters folded."""
    return fold_script(normalise_label(text))


def _folded_similarity(a: str, b: str) -> float:
    """:func:`similarity` of two labels already made :func:`comparable`."""
    from rapidfuzz import fuzz

    if not a or not b:
        return 0.0
    return fuzz.ratio(a, b) / 100.0


def node_label(node: dict[str, Any]) -> str:
    label = node.get("label")
    return label if label is not None else str(node["id"]).split(".")[-1]


def align(extracted: dict[str, Any], reference: dict[str, Any], min_similarity: float = MIN_SIMILARITY) -> dict[str, str]:
    """Extracted node id -> reference node id, one-to-one, best label matches first.

    >>> ext = {"nodes": [{"id": "orders-db", "label": "Orders DB"}, {"id": "api", "label": "AP1 Gateway"}]}
    >>> ref = {"nodes": [{"id": "db", "label": "Orders DB"}, {"id": "gw", "label": "API Gateway"},
    ...                  {"id": "x", "label": "Auth"}]}
    >>> align(ext, ref)
    {'orders-db': 'db', 'api': 'gw'}
    """
    pairs = []
    refs = [(j, str(r["id"]), comparable(node_label(r))) for j, r in enumerate(reference.get("nodes", []))]
    for i, e in enumerate(extracted.get("nodes", [])):
        el = comparable(node_label(e))  # each label made comparable once, not once per pair
        for j, rid, rl in refs:
            s = _folded_similarity(el, rl)
            if s >= min_similarity:
                pairs.append((-s, i, j, str(e["id"]), rid))
    pairs.sort()  # best first; ties go to the earlier node
    out: dict[str, str] = {}
    used: set[str] = set()
    for _, _, _, eid, rid in pairs:
        if eid in out or rid in used:
            continue
        out[eid] = rid
        used.add(rid)
    return {e["id"]: out[e["id"]] for e in extracted.get("nodes", []) if e["id"] in out}
