"""report.md: data in tables (question text, labels, answers, file names) is shown as written,
never read as HTML or Markdown, and never breaks a table. Checked by rendering report.md with a
CommonMark renderer (markdown-it-py, tables on, raw HTML allowed as a Markdown viewer allows it)."""
from __future__ import annotations

import doctest
import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from benchmark.report import markdown
from benchmark.report.document import Section
from benchmark.report.tables import Table

HOSTILE = [
    "<script>alert(1)</script>",
    "</td></tr></table><h3>owned</h3>",
    '<img src=x onerror="alert(1)">',
    "a | b || c",
    "back\\slash before \\| a pipe",
    "[click](javascript:alert(1)) ![img](x.png) <https://example.com>",
    "*not bold* _not em_ `not code` &amp; &lt;",
]


def rendered_cells(md: str) -> list[list[str]]:
    """The text of every body cell of every table in the HTML that ``md`` renders to."""
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    assert page.count("<table>") == page.count("</table>")
    rows = []
    for body in re.findall(r"<tbody>(.*?)</tbody>", page, flags=re.S):
        for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S):
            rows.append([html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)])
    return rows


def report(cells: list[str], caption: str = "caption") -> str:
    table = Table(caption, ["question", "label"], [[c, c] for c in cells])
    return markdown.render_markdown([Section("Lucky guesses", [table])], "t")


def test_hostile_text_is_shown_as_written():
    md = report(HOSTILE, caption="<b>caption</b> *x*")
    for tag in ("<script", "<img", "<h3", "</td></tr></table>", "<a "):
        assert tag not in MarkdownIt("commonmark", {"html": True}).enable("table").render(md), tag
    assert rendered_cells(md) == [[c, c] for c in HOSTILE]
    assert "**&lt;b&gt;caption&lt;/b&gt; \\*x\\***" in md


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="<>&|\\`*_[]!()#=\"'/ab :;-", min_size=1, max_size=24), min_size=1, max_size=4))
def test_any_cell_text_round_trips(cells):
    cells = [" ".join(c.split()) for c in cells]  # a cell's outer and repeated spaces are not content
    assert rendered_cells(report(cells)) == [[c, c] for c in cells]


def test_doctests():
    result = doctest.testmod(markdown)
    assert result.failed == 0 and result.attempted > 0
