"""The rule engine (seed 001): conditions evaluated over facts, actions by priority.

``evaluate`` is pure: rules and facts in, firings out. Routing rules from the config
compile into rules (``compile_routing``), so there is one condition evaluator.
"""
