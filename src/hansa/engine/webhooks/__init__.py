"""Completion webhooks: events that end a run, a turn or a session, POSTed signed.

``signing`` signs a body (HMAC-SHA256), ``targets`` checks a URL with the outbound guard's
rules before it is stored, ``service`` stores webhooks, ``delivery`` runs one attempt (a job)
and queues the next one after a backoff. Deliveries are queued by ``store/webhooks.py`` in
the transaction that wrote the ending event.
"""
