"""The claims an answer rests on: its cited evidence edges and the relations its explanation states.

Relations are read from the explanation's sentences: arrows (``A → B``, ``A -> B``, chains
``A -> B -> C``, ``A <- B``), verbs (``A calls B``, ``A sends data to B``, ``A передаёт в B``)
and ``from A to B`` / ``из A в B``. Node texts are matched to the graph's labels (fuzzy,
longest span first); a name the graph lacks is kept when it looks like a name (capitalised or
quoted) so that faithfulness can count it as fabricated.

>>> from benchmark.answers import Answer
>>> from benchmark.graph import build_graph
>>> g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "a", "label": "Auth Service"},
...                            {"id": "d", "label": "DB"}]})
>>> a = Answer("x", "yes", evidence=(("User", "Auth Service"),), explanation="The User calls the Auth Service, then Auth Service -> DB.")
>>> [(c.kind, c.src, c.dst) for c in extract_claims(a, g)]
[('edge', 'User', 'Auth Service'), ('relation', 'User', 'Auth Service'), ('relation', 'Auth Service', 'DB')]
>>> [(c.src, c.dst) for c in extract_claims(Answer("x", "no", explanation="Requests go from User to the Firewall → DB."), g)]
[('User', 'Firewall'), ('Firewall', 'DB')]
"""
from __future__ import annotations

import re

import networkx as nx

from benchmark.answers import Answer, Claim
from benchmark.metrics.names import FUZZY_CUTOFF, find_labels, match_node

_FILL = r"(?:\s+(?!from\b|to\b)[\w-]+){0,3}?"
_VERBS = [
    r"calls", r"invokes", r"queries", r"goes\s+to", r"leads\s+to", r"flows\s+to", r"connects\s+to",
    r"points\s+to", r"feeds(?:\s+into)?", r"is\s+followed\s+by",
    rf"(?:sends|forwards|passes|routes|writes|pushes|publishes|hands){_FILL}\s+(?:to|into)",
    r"переда[её]т(?:\s+\w+)?\s+(?:в|на)", r"отправляет(?:\s+\w+)?\s+(?:в|на)", r"вызывает",
    r"вед[её]т\s+(?:в|к|на)", r"переходит\s+(?:в|к|на)", r"обращается\s+к", r"пишет\s+в",
]
_FORWARD = r"-->|->|→|⟶|=>|⇒|\b(?:" + "|".join(_VERBS) + r")\b"
_BACKWARD = r"<--|<-|←"
_CONNECTIVE = re.compile(rf"\s*({_BACKWARD}|{_FORWARD})\s*", re.IGNORECASE)
_FROM_TO = re.compile(r"\b(?:from|из|от)\s+(.+?)\s+(?:to|в|к|на)\s+(.+)", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+(?!-->|->|→|⟶|=>|⇒|<-|←)|\n+")
_ARTICLES = {"the", "a", "an", "then", "and", "to", "into", "и", "затем", "потом", "в", "на"}
_PUNCT = "\"'`«»“”‘’()[]{}.,;:!?*"
_MAX_SPAN = 8
_MAX_NEW_NAME = 3


def _tokens(text: str) -> list[str]:
    return [t for t in (w.strip(_PUNCT) for w in text.split()) if t]


#: capitalised words that open a sentence rather than name a node
_NOT_NAMES = {"it", "this", "that", "these", "those", "they", "he", "she", "we", "i", "you", "then", "there", "which",
              "each", "every", "all", "yes", "no", "so", "thus", "here", "step", "это", "он", "она", "оно", "они",
              "затем", "там", "да", "нет", "так", "каждый"} | _ARTICLES


def _looks_like_name(words: list[str]) -> bool:
    return bool(words) and all((w[:1].isupper() or any(c.isdigit() or c in "_." for c in w))
                               and w.casefold() not in _NOT_NAMES for w in words)


def _name(piece: str, g: nx.MultiDiGraph, tail: bool) -> str | None:
    """The node name at the end (``tail``) or start of ``piece``: the longest span naming a node
    of ``g``; else a capitalised phrase (a name the graph lacks); else ``None``."""
    piece = re.split(r"[,;:()]", piece)[-1 if tail else 0]
    words = _tokens(piece)
    if not tail:
        while words and words[0].casefold() in _ARTICLES:
            words = words[1:]
    if not words:
        return None
    spans = [" ".join(words[-k:] if tail else words[:k]) for k in range(min(_MAX_SPAN, len(words)), 0, -1)]
    for cutoff in (100.0, FUZZY_CUTOFF):
        for span in spans:
            if match_node(span, g, cutoff) is not None:
                return span
    quoted = re.findall(r"[\"«“'`]([^\"»”'`]+)[\"»”'`]", piece)
    if quoted:
        return (quoted[-1] if tail else quoted[0]).strip()
    caps: list[str] = []
    for w in (reversed(words) if tail else words):
        if not _looks_like_name([w]) or len(caps) == _MAX_NEW_NAME:
            break
        caps.append(w)
    if tail:
        caps.reverse()
    return " ".join(caps) if caps else None


def _mask(text: str, g: nx.MultiDiGraph) -> tuple[str, list[str]]:
    """``text`` with every label mention replaced by a placeholder, so that a label holding a
    connective or a full stop ("Handle calls", "Range empty?") is never split; and the originals."""
    out, originals, pos = [], [], 0
    for start, end, _ in find_labels(text, g):
        out.append(text[pos:start] + f"\ue000{len(originals)}\ue001")
        originals.append(text[start:end])
        pos = end
    return "".join(out) + text[pos:], originals


def _unmask(text: str, originals: list[str]) -> str:
    return re.sub("\ue000(\\d+)\ue001", lambda m: originals[int(m.group(1))], text)


def relations(text: str, g: nx.MultiDiGraph) -> list[tuple[str, str, str]]:
    """(src text, dst text, sentence) for every relation stated in ``text``, in order."""
    found: list[tuple[str, str, str]] = []
    masked, originals = _mask(text or "", g)
    for masked_sentence in (s.strip() for s in _SENTENCE.split(masked)):
        if not masked_sentence:
            continue
        sentence = _unmask(masked_sentence, originals)
        pieces = _CONNECTIVE.split(masked_sentence)
        m = _FROM_TO.search(pieces[0])
        if m:
            src, dst = (_name(_unmask(m.group(i), originals), g, tail=False) for i in (1, 2))
            if src and dst:
                found.append((src, dst, sentence))
        parts = [_unmask(p, originals) for p in pieces]
        for i in range(1, len(parts) - 1, 2):
            src, dst = _name(parts[i - 1], g, tail=True), _name(parts[i + 1], g, tail=False)
            if src and dst:
                if re.fullmatch(_BACKWARD, parts[i].strip()):
                    src, dst = dst, src
                found.append((src, dst, sentence))
    return found


def extract_claims(answer: Answer, graph: nx.MultiDiGraph) -> list[Claim]:
    """Evidence edges (kind ``edge``) then explanation relations (kind ``relation``), without repeats
    of the same kind and pair. ``graph`` (context or diagram) supplies the labels to match."""
    claims: list[Claim] = []
    seen: set[tuple[str, str, str]] = set()
    for src, dst in answer.evidence:
        key = ("edge", str(src).strip(), str(dst).strip())
        if key not in seen and key[1] and key[2]:
            seen.add(key)
            claims.append(Claim("edge", key[1], key[2], f"{key[1]} -> {key[2]}"))
    for src, dst, sentence in relations(answer.explanation, graph):
        key = ("relation", src, dst)
        if key not in seen:
            seen.add(key)
            claims.append(Claim("relation", src, dst, sentence[:200]))
    return claims
