"""Fill the stage registries by importing every stage module.

Stage modules register themselves when imported (:mod:`benchmark.stages`); this module only
imports them -- it does no work of its own at import time. Call :func:`load_all` before
resolving names.
"""
from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

#: packages whose modules are stages
STAGE_PACKAGES = ("retrievers", "benchmark.answerers", "benchmark.finders", "benchmark.sources")

_loaded = False


def _modules(package: str) -> list[str]:
    try:
        pkg = importlib.import_module(package)
    except ModuleNotFoundError as exc:
        if exc.name == package:  # the package does not exist yet: nothing to register
            return []
        raise
    return [f"{package}.{m.name}" for m in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name)
            if not m.name.startswith("_")]


def load_all() -> list[ModuleType]:
    """Import every stage module (once); returns the modules imported."""
    global _loaded
    mods = [importlib.import_module(name) for package in STAGE_PACKAGES for name in _modules(package)]
    _loaded = True
    return mods
