"""The LLM judge, the citation check and the self-check over a finished run (``diagqa judge``).

* :mod:`.prompt`     -- what the judge is asked (NLI-style labels for listed claims) and the strict parser
* :mod:`.llm_judge`  -- :class:`~benchmark.judge.llm_judge.LLMJudge`, the ``llm`` answerer's endpoint machinery
* :mod:`.agreement`  -- kappa and confusion of the judge against the structural faithfulness check
* :mod:`.selfcheck`  -- k sampled repeats per question: consistency, unstable right answers
* :mod:`.apply`      -- the pass over a run directory (``judge.jsonl``, ``selfcheck.jsonl``, ``judge.json``)
* :mod:`.section`    -- the report section
"""
