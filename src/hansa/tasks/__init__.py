"""Task types and connectors (see the runs issue)."""
