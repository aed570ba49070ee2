"""Error types that reach users. Every message names where the problem is."""
from __future__ import annotations


class DiagQAError(Exception):
    """Base of every error the harness reports to a user (the CLI prints it in one line)."""


class InputError(DiagQAError):
    """Bad input data: names the file, and where known the line and the question."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 question: str | None = None) -> None:
        self.file, self.line, self.question, self.detail = file, line, question, message
        where = ""
        if file:
            where = f"{file}:{line}" if line else f"{file}"
        if question:
            where = f"{where} [{question}]" if where else f"[{question}]"
        super().__init__(f"{where}: {message}" if where else message)


class StageUnavailable(DiagQAError):
    """A stage cannot run here (missing weights, binary or package); the run goes on without it."""
