"""Errors raised by the D2 parser; every one names the file, line and column."""
from __future__ import annotations

from benchmark.errors import InputError


class D2SyntaxError(InputError):
    """A D2 text that cannot be read: ``flow.d2:12:7: expected '}' ...``.

    ``file``, ``line`` (1-based) and ``column`` (1-based, in characters) say where;
    ``expected`` names what the parser was looking for, when that is known.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None, expected: str | None = None) -> None:
        super().__init__(message, file=file, line=line)
        self.column = column
        self.expected = expected
        where = file or "<string>"
        if line:
            where += f":{line}"
            if column:
                where += f":{column}"
        self.args = (f"{where}: {message}",)


class D2UnsupportedError(D2SyntaxError):
    """A valid D2 feature that this parser deliberately does not model.

    Raised instead of producing a graph that could differ from what ``d2`` compiles.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        if "unsupported" not in message:
            message = f"unsupported: {message}"
        super().__init__(message, file=file, line=line, column=column)


class D2LimitError(D2SyntaxError):
    """Input refused because it passes a safety limit (file size, objects or connections
    made, imports leaving the folder they are confined to), not because d2 rejects it."""
