"""The guess class of a sample -- the harness's headline (DESIGN.md §5).

==========  ==================  ======================
            sufficient context  insufficient context
==========  ==================  ======================
correct     grounded            lucky_guess
wrong       misread             retrieval_miss
==========  ==================  ======================

>>> [guess_class(c, s) for c in (True, False) for s in (True, False)]
['grounded', 'lucky_guess', 'misread', 'retrieval_miss']
>>> guess_class(None, True) is None
True
"""
from __future__ import annotations

GUESS_CLASSES = ("grounded", "lucky_guess", "misread", "retrieval_miss")


def guess_class(correct: bool | None, sufficient: bool | None) -> str | None:
    """The cell of the table above; ``None`` when either input is unmeasured."""
    if correct is None or sufficient is None:
        return None
    if correct:
        return "grounded" if sufficient else "lucky_guess"
    return "misread" if sufficient else "retrieval_miss"


def guess_rate(classes: list[str | None]) -> float | None:
    """Share of the correct answers that were lucky guesses; ``None`` when nothing is correct.

    >>> guess_rate(["grounded", "lucky_guess", "lucky_guess", "misread", None])
    0.6666666666666666
    >>> guess_rate(["misread", "retrieval_miss"]) is None
    True
    """
    correct = [c for c in classes if c in ("grounded", "lucky_guess")]
    return correct.count("lucky_guess") / len(correct) if correct else None


def accuracy_inflation(classes: list[str | None]) -> float | None:
    """accuracy − grounded accuracy over the measured samples (= lucky guesses / samples);
    ``None`` when no sample is measured.

    >>> accuracy_inflation(["grounded", "lucky_guess", "misread", "retrieval_miss", None])
    0.25
    """
    measured = [c for c in classes if c is not None]
    if not measured:
        return None
    accuracy = sum(c in ("grounded", "lucky_guess") for c in measured) / len(measured)
    grounded = measured.count("grounded") / len(measured)
    return accuracy - grounded
