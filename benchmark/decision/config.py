"""Thresholds of the decision layer, with the documented defaults; loaded from ``configs/decision.yaml``.

Every key is optional; an unknown key or a value outside [0, 1] is an error naming the file and key.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

from benchmark.errors import InputError

#: the bundled configuration
DEFAULT_PATH = Path(__file__).resolve().parent.parent.parent / "configs" / "decision.yaml"


@dataclass(frozen=True)
class DecisionConfig:
    """Thresholds of the text rules (in their order) and of the graph rules."""

    #: rules 1-2: attribution below this is a likely hallucination; vague -> REVIEW, specific -> REJECT
    attribution_hallucination: float = 0.35
    #: an answer is *vague* when its specificity is below this (rule 1), else *specific* (rule 2)
    vague_below: float = 0.50
    #: rule 3: attribution below ``attribution_weak`` and specificity above ``specific_above`` -> REJECT
    attribution_weak: float = 0.45
    specific_above: float = 0.60
    #: rule 4: context quality below this -> REVIEW (retrieve more)
    context_quality_low: float = 0.40
    #: rule 5: attribution below ``attribution_low`` and context quality below ``context_quality_weak`` -> REJECT
    attribution_low: float = 0.55
    context_quality_weak: float = 0.50
    #: rule 6: attribution below ``attribution_low`` alone -> REVIEW
    #: rule 7: relevance below this -> REVIEW (off-topic)
    relevance_low: float = 0.30
    #: rule 8: disagreement above this -> REVIEW
    disagreement_high: float = 0.12
    #: rule 9: composite below this -> REVIEW; else ACCEPT
    composite_accept: float = 0.65
    #: the window of composite where the heuristics are uncertain (marked ``uncertain`` on the decision);
    #: a text decision inside it is the only kind an LLM judge is consulted on (``benchmark.decision.judge``)
    uncertain_low: float = 0.45
    uncertain_high: float = 0.65
    #: consult the LLM judge (when one is given) on uncertain text decisions; its decisions' confidence
    use_judge: bool = True
    judge_confidence: float = 0.80
    #: graph rules: let exact graph signals decide before the text rules (see rules.py for the order)
    use_graph: bool = True
    #: confidence given to a decision from an exact graph signal
    graph_confidence: float = 0.95

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]


def load_config(path: Path | str | None = None) -> DecisionConfig:
    """The configuration in ``path`` (default: ``configs/decision.yaml``; the built-in defaults when
    that file is absent)."""
    p = Path(path) if path is not None else DEFAULT_PATH
    if not p.exists():
        if path is None:
            return DecisionConfig()
        raise InputError("no such decision config", file=str(p))
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {exc}", file=str(p), line=mark.line + 1 if mark else None) from None
    if not isinstance(raw, dict):
        raise InputError("a decision config is a mapping of threshold names to values", file=str(p))
    return config_from_mapping(raw, where=str(p))


def config_from_mapping(raw: dict[str, Any], where: str = "<config>") -> DecisionConfig:
    """A :class:`DecisionConfig` from a mapping; unknown keys and bad values are errors.

    >>> config_from_mapping({"composite_accept": 0.7}).composite_accept
    0.7
    >>> config_from_mapping({"compsite": 0.7})
    Traceback (most recent call last):
    ...
    benchmark.errors.InputError: <config>: unknown key 'compsite'; known: attribution_hallucination, ...
    """
    known = DecisionConfig.keys()
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            raise InputError(f"unknown key {key!r}; known: {', '.join(known[:1])}, ...", file=where)
        default = getattr(DecisionConfig(), key)
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise InputError(f"{key} must be true or false, got {value!r}", file=where)
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise InputError(f"{key} must be a number in [0, 1], got {value!r}", file=where)
        values[key] = float(value) if not isinstance(default, bool) else value
    cfg = replace(DecisionConfig(), **values)
    if cfg.uncertain_low > cfg.uncertain_high:
        raise InputError("uncertain_low must not exceed uncertain_high", file=where)
    return cfg
