"""One generic name -> factory registry, used by every pipeline stage.

Each stage (finder, graph source, selector, answerer) owns one :class:`Registry`.
A stage implementation registers itself with a decorator::

    SELECTORS = Registry("selector")

    @SELECTORS.register("full")
    class FullSelector: ...

Names may carry a numeric parameter (``khop2``, ``bm25k5``): a factory registered
with ``pattern=r"khop(?P<k>\\d+)"`` receives the named groups as keyword arguments.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar

T = TypeVar("T")


def pattern_form(pattern: str) -> str:
    """A name pattern as a reader writes it: each named number as ``<name>``, an optional part in brackets.

    >>> pattern_form(r"d2chunks-(?P<k>\\d+)(?:-w(?P<window>\\d+)s(?P<stride>\\d+))?")
    'd2chunks-<k>[-w<window>s<stride>]'
    """
    text = re.sub(r"\(\?P<(\w+)>[^()]*\)", r"<\1>", pattern)
    text = re.sub(r"\(\?:([^()]*)\)\?", r"[\1]", text)
    return text.replace("\\", "")


class UnknownNameError(KeyError):
    """A name that no registered factory answers to."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0])


@dataclass(frozen=True)
class _Entry(Generic[T]):
    name: str
    factory: Callable[..., T]
    pattern: re.Pattern[str] | None
    doc: str


class Registry(Generic[T]):
    """Factories of one stage, found by name."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, _Entry[T]] = {}

    def register(self, name: str, *, pattern: str | None = None, doc: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator: register ``factory`` under ``name`` (and an optional parametrised ``pattern``)."""

        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            compiled = re.compile(pattern + r"\Z") if pattern else None
            text = doc or (factory.__doc__ or "").strip().splitlines()[0:1]
            self._entries[name] = _Entry(name, factory, compiled, text if isinstance(text, str) else "".join(text))
            return factory

        return deco

    def names(self) -> list[str]:
        """Registered names (parametrised ones as their base name)."""
        return sorted(self._entries)

    def describe(self) -> dict[str, str]:
        return {n: e.doc for n, e in sorted(self._entries.items())}

    def forms(self) -> dict[str, str]:
        """Each registered name as it is written in a variant: ``khop<k>``, ``bm25-<k>``, or the plain name.

        >>> r = Registry("selector")
        >>> _ = r.register("bm25", pattern=r"bm25-(?P<k>\\d+)")(lambda k=8: k)
        >>> _ = r.register("full")(lambda: None)
        >>> r.forms()
        {'bm25': 'bm25-<k>', 'full': 'full'}
        """
        return {n: pattern_form(e.pattern.pattern[:-2]) if e.pattern is not None else n
                for n, e in sorted(self._entries.items())}

    def example(self, name: str) -> str | None:
        """A written form of the parametrised ``name`` with its factory's default parameters
        (``bm25-8``), or ``None`` when ``name`` takes none or its defaults do not fit the pattern."""
        entry = self._entries.get(name)
        if entry is None or entry.pattern is None:
            return None
        import inspect

        try:
            params = inspect.signature(entry.factory).parameters
        except (TypeError, ValueError):
            return None
        text = re.sub(r"\[[^\]]*\]", "", pattern_form(entry.pattern.pattern[:-2]))  # optional parts left out
        for group in re.findall(r"<(\w+)>", text):
            default = params[group].default if group in params else inspect.Parameter.empty
            if default is inspect.Parameter.empty or default is None:
                return None
            text = text.replace(f"<{group}>", str(default))
        return text if entry.pattern.match(text) else None

    def resolve(self, name: str) -> tuple[Callable[..., T], dict[str, Any]]:
        """Factory and keyword arguments for ``name``."""
        if name in self._entries and self._entries[name].pattern is None:
            return self._entries[name].factory, {}
        if name in self._entries:  # a parametrised name written without its parameter
            example = self.example(name)
            form = self.forms()[name]
            raise UnknownNameError(f"{self.kind} {name} needs a size, e.g. {example} (written {form})" if example
                                   else f"{self.kind} {name} needs its parameter, written {form}")
        for entry in self._entries.values():
            if entry.pattern is not None:
                m = entry.pattern.match(name)
                if m:
                    kwargs = {k: int(v) if v is not None and v.isdigit() else v for k, v in m.groupdict().items()}
                    return entry.factory, kwargs
        raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.forms().values())}")

    def create(self, name: str, **overrides: Any) -> T:
        """Instantiate the implementation registered for ``name``."""
        factory, kwargs = self.resolve(name)
        kwargs.update(overrides)
        return factory(**kwargs)

    def __contains__(self, name: str) -> bool:
        try:
            self.resolve(name)
        except UnknownNameError:
            return False
        return True
