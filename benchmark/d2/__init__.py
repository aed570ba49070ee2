"""D2 -> graph parser that agrees with the official ``d2`` compiler (v0.9.0).

``parse_file(path)`` and ``parse_text(text, filename="<string>", base_dir=None)`` return
``{"nodes": [{"id", "label", "shape", "parent"}], "edges": [{"src", "dst", "label",
"directed", "arrow"}]}`` for the root board: node ids are d2's absolute ids in d2's order,
edges keep source-text order with the arrow normalised to ``->``, ``<-``, ``<->`` or ``--``.

Supported: ids as d2 forms them (container paths, ``_`` parent references, case-insensitive
identity keeping the first spelling, quoted and escaped keys, quoted keywords as names);
labels (primary value, ``label:``, later overrides, classes, ``${vars}``, block strings kept
raw); spread substitutions ``...${var}`` (maps into maps, arrays into arrays); shapes; any number of hyphens in arrows; chains sharing one value; repeated edges; edge
references ``(a -> b)[0].key`` (also mirrored) and ``null`` deletion; reserved keywords;
``classes`` / ``class`` (scalar or array); ``sql_table`` and ``class`` columns; imports
(``...@file``, ``x: @file``) relative to the file; lazy globs (``*``, ``**``, ``* -> *``,
``(** -> **)[*]``) with ``&src`` / ``&dst`` / ``&shape`` / ``&label`` / ``&near`` / ``&icon``
/ ``&class`` filters; ``suspend`` / ``unsuspend``; sequence diagrams (actors, spans, groups and
notes are nodes; lifelines are not edges); comments, block comments, ``;`` separators.
``layers`` / ``scenarios`` / ``steps`` are skipped. A line ends only at ``\n`` (a bare
``\r`` is whitespace, as in d2).

Errors: :class:`D2SyntaxError` (file, line, column, expected) for text d2 rejects, syntax
and d2's semantic checks alike, :class:`D2UnsupportedError` for the valid features not
modelled (key selection in imports ``@file.key``, ``*`` arrowheads, other glob filters,
nesting deeper than 100 levels), and :class:`D2LimitError` for input past a safety limit
(:class:`benchmark.d2.files.Limits`: file sizes, objects and connections made; with
``root=``, imports leaving that folder). No other exception escapes.
"""
from __future__ import annotations

from benchmark.d2.api import parse_file, parse_text
from benchmark.d2.errors import D2LimitError, D2SyntaxError, D2UnsupportedError
from benchmark.d2.files import Limits

__all__ = ["parse_file", "parse_text", "D2SyntaxError", "D2UnsupportedError", "D2LimitError",
           "Limits"]
