"""The rule engine (seed 001): conditions evaluated over facts, actions by priority.

``evaluate`` is pure: rules and facts in, firings out, with the one condition evaluator
(``domain/conditions.py``) that prompt graphs' ``condition`` nodes use too (decision 0022).
Routing rules from the config compile into rules (``compile_routing``). ``check`` refuses a
rule that cannot work, its actions checked as the chain of graph nodes they run as
(decision 0023).
"""
