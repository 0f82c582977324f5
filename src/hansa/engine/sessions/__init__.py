"""Agent sessions (seed 004): long-running agents stepping towards a goal, one job a step."""
