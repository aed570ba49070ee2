"""``blind``: no context -- answers from the question alone by fixed priors (the guessability floor).

Priors: yes/no is "yes" for reachability and common-downstream questions and "no" when the
question asks about avoiding, bypassing or going "without" something (security intuition);
counts are 1; node answers are the last name the question mentions; edge labels are "yes".
Names are read from the question text only (quoted or capitalised phrases). Its explanation
states relations from common sense ("User → Auth Service → DB"), which faithfulness finds
unsupported or fabricated: it was given nothing.

>>> from benchmark.questions import Question
>>> q = Question("q", "x", "Can the User reach the Orders DB without passing Auth Service?", "reachable_avoiding",
...              (("source", "u"), ("target", "d"), ("avoid", "a")), None, None)
>>> a = BlindAnswerer().answer(q, None)
>>> a.raw, a.explanation
('no', 'In a typical system every request passes through Auth Service: User → Auth Service → Orders DB.')
"""
from __future__ import annotations

import re
import time
from typing import Any

from benchmark.answers import Answer
from benchmark.questions import Question
from benchmark.stages import ANSWERERS

NEGATION_CUES = re.compile(r"\b(without|avoid\w*|bypass\w*|skip\w*|not (?:via|through|passing)|except|"
                           r"без|минуя|обход\w*|избега\w*|кроме|не (?:через|проходя))\b", re.IGNORECASE)
#: capitalised words that open a question rather than name something
QUESTION_WORDS = set("""
is are does do did can could which what where who whom how when will would should if from the a an after
starting in on through without via and or both there name list give count tell
есть может можно какие какой какая каким куда что сколько через из от ли ведёт ведет если при в на без
кто где как когда и после назовите перечислите верно правда а
""".split())
_QUOTED = re.compile(r"[\"«“']([^\"»”']{1,60})[\"»”']")
_TOKEN = re.compile(r"[\w][\w.\-/]*", re.UNICODE)
YES_NO = {"en": ("yes", "no"), "ru": ("да", "нет")}


def names_in(text: str) -> list[str]:
    """Names a question mentions, in order: quoted phrases, else runs of capitalised words.

    >>> names_in("Does the API Gateway call Billing, and then Orders DB?")
    ['API Gateway', 'Billing', 'Orders DB']
    >>> names_in('Where does "approve order" lead?')
    ['approve order']
    """
    quoted = [q.strip() for q in _QUOTED.findall(text) if q.strip()]
    if quoted:
        return quoted
    names: list[str] = []
    run: list[str] = []
    for m in _TOKEN.finditer(text):
        word = m.group()
        capital = (word[:1].isupper() or any(c.isdigit() for c in word)) and word.casefold() not in QUESTION_WORDS
        gap = text[m.start() - 1] if m.start() > 0 else " "
        if run and (not capital or gap in ",;:?!"):
            names.append(" ".join(run))
            run = []
        if capital:
            run.append(word)
    if run:
        names.append(" ".join(run))
    return names


@ANSWERERS.register("blind")
class BlindAnswerer:
    """No context: fixed priors from the question text and type."""

    name = "blind"
    #: it is given no context (the run passes ``None`` and records the empty context it received)
    reads_context = False
    #: its result depends on its inputs alone: the run makes it once for samples that give it the same inputs
    deterministic = True

    def __init__(self) -> None:
        self.config: dict[str, Any] = {}

    def answer(self, question: Question, context: Any) -> Answer:
        start = time.perf_counter()
        raw, explanation = self._prior(question, names_in(question.text))
        return Answer(self.name, raw, explanation=explanation,
                      meta={"latency_s": round(time.perf_counter() - start, 6)})

    @staticmethod
    def _prior(question: Question, names: list[str]) -> tuple[Any, str]:
        kind, text = question.surface_kind, question.text  # an absent-entity question reads as its form
        first, last = (names[0], names[-1]) if names else ("", "")
        chain = " → ".join(names) if len(names) >= 2 else ""
        if kind == "bool":
            yes, no = YES_NO.get(question.language, YES_NO["en"])
            cue = NEGATION_CUES.search(text)
            if cue or question.type == "reachable_avoiding":
                after = names_in(text[cue.end():]) if cue else []
                avoided = after[0] if after else "Auth Service"
                ends = [n for n in names if n != avoided] or [first]
                source, target = ends[0], ends[-1]
                return no, f"In a typical system every request passes through {avoided}: {source} → {avoided} → {target}."
            return yes, f"In a typical system {chain}." if chain else ""
        if kind == "int":
            return 1, f"{last} usually has a single next step." if last else ""
        if kind == "label":
            return "yes", ""
        if kind in ("node", "nodes"):
            step = f"Usually {first} → {last}." if first and last and first != last else ""
            return (last or None) if kind == "node" else ([last] if last else []), step
        if kind == "path":
            return ([first, last] if first != last else [first]) if names else [], f"Usually {chain}." if chain else ""
        raise ValueError(f"unknown answer kind {kind!r}")
