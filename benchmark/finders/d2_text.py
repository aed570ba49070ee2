"""The words of a D2 file that name things: labels and identifiers, without D2's own vocabulary.

Style and layout settings (``shape: cylinder``, ``style.fill: "#fff"``, ``direction: right``),
comments and arrows are dropped; identifiers are split at ``camelCase``, ``snake_case`` and
``kebab-case`` boundaries so ``ordersDb`` meets "orders DB".

>>> d2_words('''# infra
... direction: right
... authSvc: Auth Service {shape: hexagon; style.fill: "#eef"}
... orders_db: Orders DB {shape: cylinder}
... authSvc -> orders_db: reads''')
'auth Svc Auth Service orders db Orders DB auth Svc orders db reads'
"""
from __future__ import annotations

import re

#: D2 keys whose values are settings, not content (matched as the last segment of a key path)
SETTING_KEYS = (
    r"style(?:\.[\w-]+)*", r"shape", r"icon", r"near", r"direction", r"width", r"height", r"top", r"left",
    r"tooltip", r"link", r"class", r"classes", r"constraint", r"grid-[\w-]+", r"[\w-]*gap", r"font(?:-[\w-]+)?",
    r"fill(?:-pattern)?", r"stroke(?:-[\w-]+)?", r"opacity", r"border-radius", r"shadow", r"3d", r"multiple",
    r"double-border", r"animated", r"filled", r"bold", r"italic", r"underline", r"text-transform",
    r"source-arrowhead(?:\.[\w-]+)*", r"target-arrowhead(?:\.[\w-]+)*", r"vars", r"d2-config", r"layout-engine",
    r"theme-id", r"dark-theme-id", r"pad", r"center", r"sketch",
)
_SETTING = re.compile(r"(?<![\w-])(?:[\w-]+\.)*(?:" + "|".join(SETTING_KEYS) + r")\s*:\s*(?:\"[^\"\n]*\"|'[^'\n]*'|[^;\n{}]*)")
_COMMENT = re.compile(r"(?:^|(?<=\s))#.*$", re.MULTILINE)
_BLOCK_COMMENT = re.compile(r'"""[\s\S]*?"""')
_LABEL_KEY = re.compile(r"(?<![\w-])label\s*:")
_CAMEL = re.compile(r"(?<=[a-zа-яё])(?=[A-ZА-ЯЁ])")
_WORDS = re.compile(r"[^\W_]+")


def d2_words(source: str) -> str:
    """Labels and identifiers of the D2 ``source`` as one space-separated string (source order)."""
    text = _BLOCK_COMMENT.sub(" ", source)
    text = _COMMENT.sub(" ", text)
    text = _SETTING.sub(" ", text)
    text = _LABEL_KEY.sub(" ", text)
    text = _CAMEL.sub(" ", text)
    return " ".join(_WORDS.findall(text))
