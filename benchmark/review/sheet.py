"""Review sheets: writing the CSV and the HTML form, reading reviewers' labels back.

The sheet shows what the answerer was shown and what it said -- diagram, question, context,
answer -- and never the gold answer, the answerer's name or an automatic label, so a reviewer
judges blind. Three labels are asked, each ``yes`` / ``no`` or left blank (not judged):

* ``correct``  -- the answer is right for the diagram;
* ``grounded`` -- it is right *and* the context given determines it;
* ``faithful`` -- every edge or relation the answer cites is in the context.

The HTML form is one self-contained file (each diagram embedded once, downscaled, as base64 PNG;
no network) whose "Download CSV" button saves the filled sheet in the CSV's own format.
"""
from __future__ import annotations

import base64
import csv
import html
import io
import json
from pathlib import Path
from typing import Any, Sequence

from benchmark.errors import InputError

LABELS = ("correct", "grounded", "faithful")
COLUMNS = ("review_id", "sample_id", "diagram_id", "question", "context", "answer", "explanation", "evidence",
           *LABELS, "notes")
YES = {"yes", "y", "true", "t", "1"}
NO = {"no", "n", "false", "f", "0"}
#: the widest a diagram is embedded, in pixels
IMAGE_WIDTH = 900


def sheet_rows(samples: Sequence[dict[str, Any]]) -> list[dict[str, str]]:
    """One sheet row per sample, labels blank."""
    rows = []
    for i, r in enumerate(samples, 1):
        ans = r.get("answer") or {}
        ev = "; ".join(f"{e[0]} -> {e[1]}" for e in ans.get("evidence") or [] if isinstance(e, (list, tuple)) and len(e) >= 2)
        rows.append({"review_id": str(i), "sample_id": str(r.get("sample_id")), "diagram_id": str(r.get("diagram_id")),
                     "question": str((r.get("question") or {}).get("text") or ""),
                     "context": str((r.get("context") or {}).get("text") or ""),
                     "answer": str(ans.get("raw") or ""), "explanation": str(ans.get("explanation") or ""),
                     "evidence": ev, **{k: "" for k in LABELS}, "notes": ""})
    return rows


def write_csv(path: Path, rows: Sequence[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)


def diagram_png(png: Path, width: int = IMAGE_WIDTH) -> bytes | None:
    """The diagram as a small PNG (downscaled to ``width``, 64 colours); None when there is no image."""
    if not png.exists():
        return None
    from PIL import Image

    with Image.open(png) as im:
        im = im.convert("RGB")
        if im.width > width:
            im = im.resize((width, max(1, round(im.height * width / im.width))), Image.LANCZOS)
        im = im.quantize(colors=64)
        buf = io.BytesIO()
        im.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;max-width:1000px;color:#222}
.s{border:1px solid #ccc;border-radius:6px;padding:1em;margin:1em 0}
img{max-width:100%;border:1px solid #eee}pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;max-height:18em;overflow:auto}
fieldset{display:inline-block;border:1px solid #ddd;margin:.2em}textarea{width:100%}
button{font-size:1em;padding:.4em 1em}"""

_JS = """const IMG = JSON.parse(document.getElementById('img').textContent);
document.querySelectorAll('img[data-d]').forEach(e => { const s = IMG[e.dataset.d]; if (s) e.src = 'data:image/png;base64,' + s; else e.alt = 'no image'; });
const ROWS = JSON.parse(document.getElementById('rows').textContent);
const COLS = JSON.parse(document.getElementById('cols').textContent);
function q(v){ v = String(v); return /[",\\n\\r]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v; }
function download(){
  const out = [COLS.join(',')];
  ROWS.forEach(r => {
    ['correct','grounded','faithful'].forEach(k => { const c = document.querySelector(`input[name="${k}-${r.review_id}"]:checked`); r[k] = c ? c.value : ''; });
    r.notes = document.getElementById('notes-' + r.review_id).value;
    out.push(COLS.map(k => q(r[k])).join(','));
  });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([out.join('\\n') + '\\n'], {type: 'text/csv'}));
  a.download = 'review-' + (document.getElementById('who').value || 'reviewer') + '.csv'; a.click();
}"""


def write_html(path: Path, rows: Sequence[dict[str, str]], images: dict[str, bytes | None], title: str) -> None:
    """The self-contained review form."""
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{e(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             "<p>For each answer, judge from the diagram: <b>correct</b> (the answer is right for the diagram), "
             "<b>grounded</b> (right, and the context shown determines it), <b>faithful</b> (every edge or relation "
             "it cites is in the context). Leave a label blank if you cannot judge. Then press "
             "<b>Download CSV</b> and send the file.</p>",
             "<p>Reviewer: <input id='who' placeholder='your name'> <button onclick='download()'>Download CSV</button></p>"]
    for r in rows:
        rid = e(r["review_id"])
        radios = "".join(
            f"<fieldset><legend>{k}</legend>" + "".join(
                f"<label><input type='radio' name='{k}-{rid}' value='{v}'> {v}</label> " for v in ("yes", "no"))
            + "</fieldset>" for k in LABELS)
        parts.append(
            f"<div class='s' id='s{rid}'><h3>#{rid} <small>{e(r['diagram_id'])}</small></h3>"
            f"<img data-d='{e(r['diagram_id'])}' alt='diagram {e(r['diagram_id'])}'>"
            f"<p><b>Question:</b> {e(r['question'])}</p><p><b>Context given to the answerer:</b></p>"
            f"<pre>{e(r['context']) or '(empty)'}</pre><p><b>Answer:</b> {e(r['answer'])}</p>"
            + (f"<p><b>Explanation:</b> {e(r['explanation'])}</p>" if r["explanation"] else "")
            + (f"<p><b>Cited:</b> {e(r['evidence'])}</p>" if r["evidence"] else "")
            + f"{radios}<p><textarea id='notes-{rid}' rows='2' placeholder='notes'></textarea></p></div>")
    imgs = {k: base64.b64encode(v).decode() for k, v in sorted(images.items()) if v}

    def script(id_: str, obj: Any) -> str:
        body = json.dumps(obj).replace("</", "<\\/")   # no "</script>" inside the data
        return f"<script type='application/json' id='{id_}'>{body}</script>"

    parts += [script("img", imgs), script("rows", list(rows)), script("cols", list(COLUMNS)),
              f"<script>{_JS}</script></body></html>"]
    path.write_text("".join(parts), encoding="utf-8")


def parse_label(value: str, where: str, line: int, column: str) -> bool | None:
    """A reviewer's label: yes/no (and their usual spellings) or blank.

    >>> parse_label(" Yes ", "f", 2, "correct"), parse_label("0", "f", 2, "correct"), parse_label("", "f", 2, "correct")
    (True, False, None)
    >>> parse_label("maybe", "sheet.csv", 7, "grounded")
    Traceback (most recent call last):
    ...
    benchmark.errors.InputError: sheet.csv:7: column 'grounded' must be yes, no or blank, got 'maybe'
    """
    v = (value or "").strip().casefold()
    if not v:
        return None
    if v in YES:
        return True
    if v in NO:
        return False
    raise InputError(f"column {column!r} must be yes, no or blank, got {value.strip()!r}", file=where, line=line)


def read_labels(path: Path) -> dict[str, dict[str, bool | None]]:
    """``{sample_id: {label: True/False/None}}`` of a filled sheet; bad values name file and line."""
    where = str(path)
    try:
        fh = open(path, encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise InputError(f"cannot read the review sheet ({exc.strerror})", file=where) from None
    with fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("sample_id", *LABELS) if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"missing column(s) {', '.join(missing)}", file=where, line=1)
        out: dict[str, dict[str, bool | None]] = {}
        start = reader.line_num + 1   # the line a row starts on (a quoted field may span lines)
        for row in reader:
            line, start = start, reader.line_num + 1
            sid = (row.get("sample_id") or "").strip()
            if not sid:
                raise InputError("a row without sample_id", file=where, line=line)
            if sid in out:
                raise InputError(f"sample {sid!r} appears twice", file=where, line=line)
            out[sid] = {k: parse_label(row.get(k) or "", where, line, k) for k in LABELS}
    return out
