"""The report as one self-contained HTML page (``report.html``): inline CSS, plots embedded as
base64 PNG, no external assets, so the file can be mailed or opened offline.
"""
from __future__ import annotations

import base64
import html
import re
from typing import Any

from benchmark.report.document import Plot, Section
from benchmark.report.tables import Table, to_html

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1500px;margin:2em auto;padding:0 1.5em;
color:#212121;line-height:1.45}
h1{border-bottom:3px solid #1565c0;padding-bottom:.2em}h2{margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:1em 0;font-size:13px}caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ddd;padding:3px 8px;vertical-align:top}th{background:#eef3fb;position:sticky;top:0}
tr:nth-child(even) td{background:#fafafa}td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.txt{max-width:480px}figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:13px;color:#555}code{background:#f2f2f2;padding:0 3px;border-radius:3px}
nav a{margin-right:1em;font-size:14px}.ci{color:#666;font-size:11px}
"""


def _inline(text: str) -> str:
    """Escape, then the little Markdown the paragraphs use: **bold**, *italic*, `code`."""
    s = html.escape(text)
    s = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", s)
    s = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", s)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", s)


def _block(block: Any, plots: dict[str, bytes]) -> str:
    if isinstance(block, Table):
        return to_html(block) if block.rows else f"<p><em>{html.escape(block.caption)}: no rows</em></p>"
    if isinstance(block, Plot):
        data = plots.get(block.name)
        if data is None:
            return ""
        b64 = base64.b64encode(data).decode("ascii")
        return (f'<figure><img alt="{html.escape(block.caption)}" src="data:image/png;base64,{b64}">'
                f"<figcaption>{html.escape(block.caption)}</figcaption></figure>")
    return f"<p>{_inline(str(block))}</p>"


def render_html(sections: list[Section], title: str, plots: dict[str, bytes]) -> str:
    nav = " ".join(f'<a href="#s{i}">{html.escape(s.title)}</a>' for i, s in enumerate(sections))
    body = []
    for i, sec in enumerate(sections):
        body.append(f'<h2 id="s{i}">{html.escape(sec.title)}</h2>')
        body.extend(_block(b, plots) for b in sec.blocks)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><nav>{nav}</nav>{''.join(body)}</body></html>\n")
