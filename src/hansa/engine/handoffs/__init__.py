"""Human handoff, round trip (seed 001): a person takes a conversation over, and gives it
back or resolves it. ``service`` is the public face."""
