"""Schedules: cron times in a time zone that post a message or start a run.

``cron`` computes firing times (pure), ``service`` stores schedules and queues their
firings, ``fire_job`` fires one (the firing and the next one's job in one transaction).
"""
