"""The report as Markdown (``report.md``): plots are linked from ``plots/``.

Table cells, headers and captions hold data (question text, labels, answers, file names): they are
escaped, so that no character of theirs is read as HTML or as Markdown markup. Text blocks are
written by the report itself and are Markdown already.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from benchmark.report.document import Plot, Section
from benchmark.report.tables import Table, to_markdown

_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
#: characters that start Markdown markup inside a line (emphasis, code, links and images, escapes)
_MARKUP = re.compile(r"([\\`*_\[\]])")


def escape(text: Any) -> str:
    """``text`` as literal Markdown: HTML characters as entities, markup characters backslash-escaped.

    (``|`` and line breaks in table cells are handled by :func:`benchmark.report.tables.to_markdown`.)

    >>> escape('<img src=x onerror="alert(1)"> & </table>')
    '&lt;img src=x onerror="alert(1)"&gt; &amp; &lt;/table&gt;'
    >>> escape("[click](javascript:x) *bold* `code` a\\\\b")
    '\\\\[click\\\\](javascript:x) \\\\*bold\\\\* \\\\`code\\\\` a\\\\\\\\b'
    """
    text = _MARKUP.sub(r"\\\1", str(text))
    return "".join(_ENTITIES.get(c, c) for c in text)


def render_markdown(sections: list[Section], title: str) -> str:
    lines = [f"# {escape(title)}", ""]
    for sec in sections:
        lines += [f"## {sec.title}", ""]
        for block in sec.blocks:
            lines += [_block(block), ""]
    return "\n".join(lines).rstrip() + "\n"


def _block(block: Any) -> str:
    if isinstance(block, Table):
        out = f"**{escape(block.caption)}**\n\n" if block.caption else ""
        cells = replace(block, headers=[escape(h) for h in block.headers],
                        rows=[[escape(c) for c in row] for row in block.rows])
        out += to_markdown(cells) if block.rows else "_(no rows)_"
        return out + (f"\n\n{block.note}" if block.note else "")
    if isinstance(block, Plot):
        return f"![{escape(block.caption)}](plots/{block.name})\n\n_{escape(block.caption)}_"
    return str(block)
