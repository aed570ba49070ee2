"""The guess class of a sample -- the harness's headline (DESIGN.md §5).

==========  ==================  ======================
            sufficient context  insufficient context
==========  ==================  ======================
correct     grounded            lucky_guess
wrong       misread             retrieval_miss / extraction_error
abstained   abstained_miss      abstained_appropriate
failed      error               error
==========  ==================  ======================

Sufficiency is judged on the context as the answerer received it. A wrong answer on a context
that is insufficient only because extraction misread the image (it proves the answer once aligned
to the D2 graph) is an ``extraction_error``, not the answerer's misread. An abstention ("the
context does not determine the answer") is its own outcome: the right behaviour on an insufficient
context, a miss on a sufficient one. On a question about something the diagram does not show
(``absent``) abstaining is the right answer: it is classed as a correct answer (grounded when the
context holds every node, so that it shows the thing is absent; a lucky guess otherwise), and any
other answer as a wrong one. A failed call is an ``error``: unmeasured, never wrong.

>>> [guess_class(c, s) for c in (True, False) for s in (True, False)]
['grounded', 'lucky_guess', 'misread', 'retrieval_miss']
>>> guess_class(False, False, extraction=True), guess_class(False, False, abstained=True), guess_class(False, True, abstained=True)
('extraction_error', 'abstained_appropriate', 'abstained_miss')
>>> guess_class(True, True, abstained=True), guess_class(True, False, abstained=True)   # absent: abstaining is right
('grounded', 'lucky_guess')
>>> guess_class(None, True, error="timeout"), guess_class(None, True) is None
('error', True)
"""
from __future__ import annotations

GUESS_CLASSES = ("grounded", "lucky_guess", "misread", "retrieval_miss", "extraction_error",
                 "abstained_appropriate", "abstained_miss", "error")
#: the classes of a correct answer
CORRECT_CLASSES = ("grounded", "lucky_guess")
#: the classes of an abstention
ABSTAINED_CLASSES = ("abstained_appropriate", "abstained_miss")


def guess_class(correct: bool | None, sufficient: bool | None, abstained: bool = False, error: str | None = None,
                extraction: bool = False) -> str | None:
    """The cell of the table above; ``None`` when an input it needs is unmeasured.

    ``extraction``: the context proves the answer once aligned to the diagram (see
    :func:`benchmark.metrics.sample.score_context`)."""
    if error:
        return "error"
    if sufficient is None:
        return None
    if abstained and not correct:  # an abstention that is the right answer (absent) is classed as correct
        return "abstained_miss" if sufficient else "abstained_appropriate"
    if correct is None:
        return None
    if correct:
        return "grounded" if sufficient else "lucky_guess"
    if sufficient:
        return "misread"
    return "extraction_error" if extraction else "retrieval_miss"


def guess_rate(classes: list[str | None]) -> float | None:
    """Share of the correct answers that were lucky guesses; ``None`` when nothing is correct.

    >>> guess_rate(["grounded", "lucky_guess", "lucky_guess", "misread", None, "error"])
    0.6666666666666666
    >>> guess_rate(["misread", "retrieval_miss"]) is None
    True
    """
    correct = [c for c in classes if c in CORRECT_CLASSES]
    return correct.count("lucky_guess") / len(correct) if correct else None


def accuracy_inflation(classes: list[str | None]) -> float | None:
    """accuracy − grounded accuracy over the measured samples (= lucky guesses / samples);
    ``None`` when no sample is measured. Errors are unmeasured; abstentions are measured (not correct).

    >>> accuracy_inflation(["grounded", "lucky_guess", "misread", "abstained_appropriate", None, "error"])
    0.25
    """
    measured = [c for c in classes if c is not None and c != "error"]
    if not measured:
        return None
    accuracy = sum(c in CORRECT_CLASSES for c in measured) / len(measured)
    grounded = measured.count("grounded") / len(measured)
    return accuracy - grounded
