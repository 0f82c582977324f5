"""Where rules fire and what their actions do.

``engine/rules`` evaluates (pure); this package reads a tenant's rules when a trigger
happens, records the evaluation (``rule_evaluated``) and applies the matched rules'
actions in the trigger's own transaction: light actions change the conversation, a
task type becomes a run that starts at once (an irreversible step still waits for
the user's confirmation: decision 0012).
"""
