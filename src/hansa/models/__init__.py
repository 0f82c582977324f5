"""The LLM layer: one Model protocol, several providers, selected by "provider:model"."""
