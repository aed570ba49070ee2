"""Sub-commands of ``diagqa``; each module is one command (see :mod:`benchmark.cli`)."""
