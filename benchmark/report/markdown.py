"""The report as Markdown (``report.md``): plots are linked from ``plots/``."""
from __future__ import annotations

from typing import Any

from benchmark.report.document import Plot, Section
from benchmark.report.tables import Table, to_markdown


def render_markdown(sections: list[Section], title: str) -> str:
    lines = [f"# {title}", ""]
    for sec in sections:
        lines += [f"## {sec.title}", ""]
        for block in sec.blocks:
            lines += [_block(block), ""]
    return "\n".join(lines).rstrip() + "\n"


def _block(block: Any) -> str:
    if isinstance(block, Table):
        out = f"**{block.caption}**\n\n" if block.caption else ""
        out += to_markdown(block) if block.rows else "_(no rows)_"
        return out + (f"\n\n{block.note}" if block.note else "")
    if isinstance(block, Plot):
        return f"![{block.caption}](plots/{block.name})\n\n_{block.caption}_"
    return str(block)
