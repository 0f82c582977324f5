"""The planning protocol (seed 000 §16): triage, playbooks, requirements, questions, plans."""
