"""Hypothesis profiles.

``ci`` (the default, used by ``make test``): derandomized, so every run draws the same
examples and a failure is reproducible; failing examples print a blob for
``@reproduce_failure``.

``explore``: random examples (a new seed each run unless ``--hypothesis-seed=N``), more of
them (``HYPOTHESIS_EXAMPLES``, default 500), for hunting new disagreements, e.g.
``HYPOTHESIS_PROFILE=explore DIAGQA_SHARED=../shared pytest tests/test_d2_property.py``.
"""
from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True,
                          max_examples=int(os.environ.get("HYPOTHESIS_EXAMPLES", "500")))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
