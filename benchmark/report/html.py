"""The report as one self-contained HTML page (``report.html``): inline CSS and JavaScript
(``static/report.css``, ``static/report.js``), plots embedded as base64 PNG, the samples as one
gzip-compressed JSON value; nothing is fetched, so the file can be mailed or opened offline.

Every table can be sorted (click a header) and filtered (type above it); the sample explorer lists
every sample of the run, a page at a time (the page holds the samples as data, not as rows), and a
click on a sample opens its drill-down: question, gold answer, answer, the context the answerer
received, every field of its record, and its diagram with the gold certificate, what of it reached
the answerer and what was missed drawn on it.
"""
from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path
from typing import Any, Iterator

from benchmark.report.document import Plot, Section
from benchmark.report.tables import Table, to_html

STATIC = Path(__file__).resolve().parent / "static"


def asset(name: str) -> str:
    """The text of one of the page's assets under ``static/``."""
    return (STATIC / name).read_text(encoding="utf-8")


def packed(value: Any) -> str:
    """``value`` as the page embeds it: compact JSON, gzip-compressed (no timestamp), base64.

    The JSON is written into the compressor piece by piece (a long list a few thousand items at a time),
    so the explorer's data of a large run is never held as one uncompressed text; :func:`packed_pieces`
    gives the same text in pieces, so that it need not be held whole either.

    >>> import base64, gzip, json
    >>> json.loads(gzip.decompress(base64.b64decode(packed({"a": [1, None]}))))
    {'a': [1, None]}
    >>> big = {"c": {"x": list(range(5000)), "y": ["é"] * 3}, "q": [], "z": None}
    >>> json.loads(gzip.decompress(base64.b64decode(packed(big)))) == big
    True
    """
    return "".join(packed_pieces(value))


def packed_pieces(value: Any) -> Iterator[str]:
    """:func:`packed` of ``value`` in pieces whose concatenation is the same text: each piece the base64 of
    whole groups of three compressed bytes, what is left carried into the next.

    >>> "".join(packed_pieces({"x": list(range(20000))})) == packed({"x": list(range(20000))})
    True
    """
    import zlib

    out = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)  # the gzip format, no file name or time
    left = b""
    for piece in _json_pieces(value):
        left += out.compress(piece)
        cut = len(left) - len(left) % 3
        if cut:
            yield base64.b64encode(left[:cut]).decode("ascii")
            left = left[cut:]
    yield base64.b64encode(left + out.flush()).decode("ascii")


#: items of a list dumped at once
_CHUNK = 4096


def json_bytes(value: Any) -> bytes:
    """Compact JSON of ``value`` as UTF-8 bytes, keys in their order (orjson where installed)."""
    try:
        import orjson

        return orjson.dumps(value, default=str)
    except ImportError:  # pragma: no cover - a declared dependency
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def _json_pieces(value: Any) -> Iterator[bytes]:
    """Compact JSON of ``value`` in pieces: mappings key by key, long lists a chunk at a time."""
    if hasattr(value, "json_pieces"):   # a value kept on disk that writes its own JSON (the explorer's Spool, Column, DrawnMap)
        yield from value.json_pieces()
    elif isinstance(value, dict):
        yield b"{"
        for i, (k, v) in enumerate(value.items()):
            yield (b"," if i else b"") + json_bytes(str(k)) + b":"
            yield from _json_pieces(v)
        yield b"}"
    elif isinstance(value, list) and len(value) > _CHUNK:
        yield b"["
        for start in range(0, len(value), _CHUNK):
            text = json_bytes(value[start:start + _CHUNK])
            yield (b"," if start else b"") + text[1:-1]
        yield b"]"
    else:
        yield json_bytes(value)


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


EXPLORER_INTRO = ("Every sample of the run. Filter by variant, answerer and class or search the text; click a "
                  "header to sort, a row to open the sample: the question, the gold answer, the answer, the "
                  "context as the answerer saw it, every field of its record, and — for the classes drawn — its "
                  "diagram with the gold certificate, what of the diagram reached the answerer and what was "
                  "missed.")


def render_html(sections: list[Section], title: str, plots: dict[str, bytes],
                explorer: dict[str, Any] | None = None) -> str:
    """The page: the report's sections, then (given its data, see :mod:`benchmark.report.explorer`) the
    sample explorer."""
    return "".join(html_pieces(sections, title, plots, explorer))


def write_html(path: Path, sections: list[Section], title: str, plots: dict[str, bytes],
               explorer: dict[str, Any] | None = None) -> None:
    """:func:`render_html` written to ``path`` a piece at a time: the explorer's data of a large run (its
    size grows with the samples) is never held whole, compressed or not."""
    with Path(path).open("w", encoding="utf-8", newline="") as fh:
        for piece in html_pieces(sections, title, plots, explorer):
            fh.write(piece)


def html_pieces(sections: list[Section], title: str, plots: dict[str, bytes],
                explorer: dict[str, Any] | None = None) -> Iterator[str]:
    """The text of :func:`render_html` in pieces, the explorer's data last but the script."""
    nav = " ".join(f'<a href="#s{i}">{html.escape(s.title)}</a>' for i, s in enumerate(sections))
    body = []
    for i, sec in enumerate(sections):
        body.append(f'<section><h2 id="s{i}">{html.escape(sec.title)}</h2>')
        body.extend(_block(b, plots) for b in sec.blocks)
        body.append("</section>")
    if explorer is not None:
        nav += ' <a href="#samples-explorer">Samples</a>'
        body.append(f'<section><h2 id="samples-explorer">Samples</h2><p>{html.escape(EXPLORER_INTRO)}</p>'
                    '<div id="explorer"><p class="loading note">Opening the samples…</p></div></section>')
    dialog = ('<dialog id="drill" aria-label="sample"><button id="drill-close" type="button">close ✕</button>'
              '<div id="drill-body"></div></dialog>')
    yield ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
           '<link rel="icon" href="data:,">'
           f"<title>{html.escape(title)}</title><style>{asset('report.css')}</style></head><body>"
           f"<h1>{html.escape(title)}</h1><nav>{nav}</nav><main>{''.join(body)}</main>{dialog}")
    if explorer is not None:
        yield '<script id="diagqa-data" type="application/octet-stream">'
        yield from packed_pieces(explorer)
        yield "</script>"
    yield f"<script>{asset('report.js')}</script></body></html>\n"
