"""Progress of long steps: a callback ``(step, done, total)`` and the bars that draw it.

A function that works through many items for a while takes ``progress: Progress | None`` and calls it
with the step's name, how many items are done and how many there are. :class:`Bars` draws one tqdm bar
per step on stderr; a run's setup (loading and checking the dataset, ranking its questions) goes through
it, so a large dataset does not keep the terminal silent for minutes before the first sample.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Iterable, Iterator, Mapping, TextIO, TypeVar

#: (step, done, total): ``done`` of ``total`` items of ``step`` are finished
Progress = Callable[[str, int, int], None]

T = TypeVar("T")


def counted(items: Iterable[T], total: int, progress: Progress | None, step: str) -> Iterator[T]:
    """``items`` (``total`` of them) in order, ``progress`` told as ``step`` how many are finished: as each is
    asked for, and all ``total`` once the last is.

    >>> seen = []
    >>> list(counted("ab", 2, lambda *a: seen.append(a), "reading")), seen
    (['a', 'b'], [('reading', 0, 2), ('reading', 1, 2), ('reading', 2, 2)])
    """
    for i, item in enumerate(items):
        if progress is not None:
            progress(step, i, total)
        yield item
    if progress is not None:
        progress(step, total, total)


class Bars:
    """A :data:`Progress` drawing one bar per step, the step's name as its label.

    A bar is opened when its step is first reported, closed when it reaches its total or when another
    step is reported, and only moves forward (a step reported with less done than before keeps its bar
    where it was). ``units`` names what a step counts (step -> unit; ``"it"`` for any other).
    ``enabled`` False draws nothing.

    >>> import io
    >>> out = io.StringIO()
    >>> with Bars(file=out, units={"checking questions": "diagram"}) as bars:
    ...     for i in range(1, 4):
    ...         bars("checking questions", i, 3)
    ...     bars("reading", 2, 5); bars("reading", 1, 5)    # left at 2 of 5 by the next step
    ...     bars("ranking", 2, 2)
    >>> left = [line.split("\\r")[-1].split(" [")[0] for line in out.getvalue().split("\\n")[:-1]]   # each bar as left
    >>> [line.split("|")[0] + line.split("|")[-1] for line in left]
    ['checking questions: 100% 3/3', 'reading:  40% 2/5', 'ranking: 100% 2/2']
    """

    def __init__(self, enabled: bool = True, file: TextIO | None = None,
                 units: Mapping[str, str] | None = None) -> None:
        self.enabled, self.file, self.units = enabled, file, dict(units or {})
        self._step: str | None = None
        self._bar: Any = None

    def __call__(self, step: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        if step != self._step:
            self.close()
            from tqdm import tqdm

            self._step = step
            self._bar = tqdm(total=total, desc=step, unit=self.units.get(step, "it"), file=self.file or sys.stderr,
                             dynamic_ncols=True, leave=True)
        bar = self._bar
        if done > bar.n:
            bar.update(done - bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar = self._step = None

    def __enter__(self) -> "Bars":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
