"""Diagram finders: rank the dataset's diagrams for a question, registered in :data:`benchmark.stages.FINDERS`."""
