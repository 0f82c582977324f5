"""Prompt graphs (seed 001) run on the run scheduler: one task per node (``start``)."""
