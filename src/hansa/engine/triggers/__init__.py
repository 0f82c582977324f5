"""Where rules fire and what their actions do.

``engine/rules`` evaluates (pure); this package reads a tenant's rules when a trigger
happens, records the evaluation (``rule_evaluated``) and applies the matched rules'
actions in the trigger's own transaction: a ``route`` says who answers, and a rule's
other actions are one chain of graph nodes (decision 0023) whose first conversation
changes take effect at once and whose rest is a graph run that starts at once (an
irreversible node still waits for the user's confirmation: decision 0012).
"""
