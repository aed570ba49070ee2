"""Human review of a run's answers: a stratified sheet out, reviewers' labels back in.

* :mod:`.sampling`  -- the stratified, seeded sample
* :mod:`.sheet`     -- the CSV and the self-contained HTML form; reading filled sheets
* :mod:`.agreement` -- Cohen's kappa with a bootstrap interval (pure)
* :mod:`.report`    -- reviewers against the automatic labels and against each other
"""
