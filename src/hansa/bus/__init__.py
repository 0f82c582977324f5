"""Live fan-out of committed events: it only says "conversation X has events up to N"."""
