"""The examples in the extraction modules' docstrings run and hold."""
from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["benchmark.extract.raster", "benchmark.extract.ocr", "benchmark.extract.shapes",
           "benchmark.extract.skeleton", "benchmark.extract.labels", "benchmark.extract.align",
           "benchmark.extract.evaluate", "benchmark.extract.image", "benchmark.extract.pipeline",
           "benchmark.extract.generic", "benchmark.extract.strokes", "benchmark.renderers",
           "benchmark.extract.connectors", "benchmark.extract.components", "benchmark.extract.inkcolours",
           "benchmark.sources.ocr"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0, f"{name} has no doctest"
    assert result.failed == 0
