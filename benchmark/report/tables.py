"""Tables as plain strings: formatting of values (``None`` shown as ``–``, never NaN) and the
one :class:`Table` value that both the Markdown and the HTML writers render.

>>> fmt(None), fmt(0.66666), fmt(3), fmt(True)
('–', '0.67', '3', 'yes')
>>> fmt_ci({"a": 0.5, "a_low": 0.4, "a_high": 0.61, "a_missing": 2}, "a")
'0.50 [0.40, 0.61] (2 unmeasured)'
>>> print(to_markdown(Table("t", ["x", "y"], [["1", "a|b"]])))
| x | y |
|---|---|
| 1 | a\\|b |
"""
from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Table:
    """A captioned table of preformatted cells; ``align`` per column (``l`` or ``r``)."""

    caption: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""
    align: list[str] = field(default_factory=list)


def fmt(value: Any, digits: int = 2) -> str:
    """One cell: ``–`` for unmeasured, fixed decimals for floats, yes/no for booleans."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_ci(row: Any, name: str, digits: int = 2) -> str:
    """``value [low, high]``, plus how many samples were unmeasured when any were."""
    get = row.get if hasattr(row, "get") else row.__getitem__
    value = get(name)
    if value is None:
        text = "–"
    else:
        low, high = get(f"{name}_low"), get(f"{name}_high")
        text = fmt(value, digits) + (f" [{fmt(low, digits)}, {fmt(high, digits)}]" if low is not None else "")
    missing = get(f"{name}_missing") or 0
    return f"{text} ({missing} unmeasured)" if missing else text


def short(text: Any, limit: int = 120) -> str:
    """One line of at most ``limit`` characters."""
    s = " ".join(str(text if text is not None else "–").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def to_markdown(table: Table) -> str:
    def cell(s: str) -> str:
        return str(s).replace("|", "\\|").replace("\n", "<br>")

    align = table.align or ["l"] * len(table.headers)
    lines = ["| " + " | ".join(cell(h) for h in table.headers) + " |",
             "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


_CI = re.compile(r"^(\S+) (\[[^\]]*\])?\s*(.*)$")


def _html_cell(text: str, numeric: bool) -> str:
    """A cell; in numeric columns an interval and unmeasured count go on a second, smaller line."""
    m = _CI.match(text) if numeric else None
    if m and (m.group(2) or m.group(3)):
        rest = " ".join(x for x in (m.group(2), m.group(3)) if x)
        return f'{html.escape(m.group(1))}<br><span class="ci">{html.escape(rest)}</span>'
    return html.escape(text).replace("\n", "<br>")


def to_html(table: Table) -> str:
    """The table as HTML (cells escaped).

    >>> to_html(Table("", ["a"], [["0.50 [0.40, 0.61] (2 unmeasured)"]], align=["r"]))
    '<table><thead><tr><th>a</th></tr></thead><tbody><tr><td class="num">0.50<br><span class="ci">[0.40, 0.61] (2 unmeasured)</span></td></tr></tbody></table>'
    """
    align = table.align or ["l"] * len(table.headers)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in table.headers)
    body = []
    for row in table.rows:
        cells = "".join(f'<td class="{"num" if a == "r" else "txt"}">{_html_cell(str(c), a == "r")}</td>'
                        for c, a in zip(row, align))
        body.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{html.escape(table.caption)}</caption>" if table.caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
