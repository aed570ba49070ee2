"""Graph sources: recover a diagram's graph (flow view), registered in :data:`benchmark.stages.SOURCES`.

One module per source; each registers itself by name (``d2``: the D2 parser's graph).
"""
