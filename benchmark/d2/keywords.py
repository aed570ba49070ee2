"""D2 reserved keywords: names that are attributes, never objects."""
from __future__ import annotations

BOARD_KEYWORDS = frozenset({"layers", "scenarios", "steps"})

STYLE_KEYWORDS = frozenset({
    "opacity", "stroke", "fill", "fill-pattern", "stroke-width", "stroke-dash",
    "border-radius", "font", "font-size", "font-color", "bold", "italic", "underline",
    "shadow", "multiple", "3d", "animated", "filled", "text-transform", "double-border",
})

RESERVED_KEYWORDS = frozenset({
    "label", "shape", "icon", "constraint", "tooltip", "link", "near", "width", "height",
    "direction", "top", "left", "grid-rows", "grid-columns", "grid-gap", "vertical-gap",
    "horizontal-gap", "class", "classes", "vars", "style", "source-arrowhead",
    "target-arrowhead",
}) | BOARD_KEYWORDS | STYLE_KEYWORDS

SHAPES = frozenset({
    "rectangle", "square", "page", "parallelogram", "document", "cylinder", "queue",
    "package", "step", "callout", "stored_data", "person", "c4-person", "diamond", "oval",
    "circle", "hexagon", "cloud", "text", "code", "class", "sql_table", "image",
    "sequence_diagram", "hierarchy",
})

TEXT_LANGUAGES = frozenset({"md", "markdown", "latex", "tex"})


def is_reserved(name: str) -> bool:
    """True when ``name`` (any case) is a D2 keyword rather than an object name."""
    return name.lower() in RESERVED_KEYWORDS
