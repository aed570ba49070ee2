"""Answerers (DESIGN.md §6): each registered in :data:`benchmark.stages.ANSWERERS` by its module.

* ``solver``  -- exact graph reasoning over the context only (what a perfect reader would say)
* ``keyword`` -- a bag-of-words guesser over the question and the context text, blind to structure
* ``blind``   -- no context: fixed priors from the question alone (the guessability floor)
* ``llm``     -- any OpenAI-compatible chat endpoint, cached and retried

Every answerer states the claims its answer rests on (evidence edges and an explanation), so
that faithfulness separates a reader from a guesser without a network. None of them reads a
question's gold answer or certificate.
"""
