"""Persistence: one schema, SQLite by default, PostgreSQL by URL. Owns all SQL."""
