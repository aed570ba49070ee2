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

    def resolve(self, name: str) -> tuple[Callable[..., T], dict[str, Any]]:
        """Factory and keyword arguments for ``name``."""
        if name in self._entries and self._entries[name].pattern is None:
            return self._entries[name].factory, {}
        for entry in self._entries.values():
            if entry.pattern is not None:
                m = entry.pattern.match(name)
                if m:
                    kwargs = {k: int(v) if v is not None and v.isdigit() else v for k, v in m.groupdict().items()}
                    return entry.factory, kwargs
        raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")

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
