"""Connectors: the outside systems task types talk to, each behind a small ABC."""
