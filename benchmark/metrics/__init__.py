"""Scoring: pure functions on plain values (DESIGN.md §5).

* :mod:`~benchmark.metrics.overlap`      -- SRR (edges), precision, F1, node SRR; best of several certificates
* :mod:`~benchmark.metrics.accuracy`     -- answer normalisation per kind and correctness
* :mod:`~benchmark.metrics.sufficiency`  -- does the context prove the gold answer (exact)
* :mod:`~benchmark.metrics.claims`       -- the claims an answer rests on
* :mod:`~benchmark.metrics.faithfulness` -- supported / unsupported / fabricated claims
* :mod:`~benchmark.metrics.abstention`   -- abstentions and answerer errors
* :mod:`~benchmark.metrics.guess`        -- guess class, guess rate, accuracy inflation
* :mod:`~benchmark.metrics.stats`        -- means and bootstrap intervals that count ``None``
* :mod:`~benchmark.metrics.paired`       -- paired tests: McNemar, paired and cluster bootstrap, Holm
* :mod:`~benchmark.metrics.sample`       -- :func:`score_sample`, every metric of one sample
"""
from benchmark.metrics.abstention import error_kind, is_abstention
from benchmark.metrics.accuracy import is_correct, normalise_answer
from benchmark.metrics.claims import extract_claims
from benchmark.metrics.faithfulness import Faithfulness, faithfulness
from benchmark.metrics.guess import GUESS_CLASSES, accuracy_inflation, guess_class, guess_rate
from benchmark.metrics.overlap import Overlap, best_overlap, overlap
from benchmark.metrics.sample import score_context, score_sample
from benchmark.metrics.stats import CI, bootstrap_ci, mean
from benchmark.metrics.sufficiency import is_sufficient

__all__ = [
    "CI", "Faithfulness", "GUESS_CLASSES", "Overlap", "accuracy_inflation", "best_overlap", "bootstrap_ci",
    "error_kind", "extract_claims", "faithfulness", "guess_class", "guess_rate", "is_abstention", "is_correct",
    "is_sufficient", "mean", "normalise_answer", "overlap", "score_context", "score_sample",
]
