"""Completion webhooks against the real server: a run's and a turn's end delivered signed
(verified by the ``standardwebhooks`` library, and Hansa's own HMAC recomputed), a failing
target retried with backoff and every attempt in the delivery log, a target outside the
outbound guard refused (422)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import standardwebhooks

from harness import Server, new_conversation, poll_until, running_server, waits


class Receiver:
    """A local webhook target; it answers ``failures`` 500s before it answers 204."""

    def __init__(self, failures: int = 0) -> None:
        self.got: list[tuple[bytes, dict[str, str]]] = []
        self.failures = failures
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.got.append((raw, {k.lower(): v for k, v in self.headers.items()}))
                failing = len(receiver.got) <= receiver.failures
                self.send_response(500 if failing else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def receivers() -> Iterator[dict[str, Receiver]]:
    found = {"ok": Receiver(), "flaky": Receiver(failures=2)}
    yield found
    for r in found.values():
        r.close()


@pytest.fixture(scope="module")
def hooked(
    tmp_path_factory: pytest.TempPathFactory, receivers: dict[str, Receiver]
) -> Iterator[Server]:
    env = {
        "HANSA_OUTBOUND_ALLOW": ",".join(f"127.0.0.1:{r.port}" for r in receivers.values()),
        "HANSA_WEBHOOK_BACKOFF_SECONDS": "0.5",
        "HANSA_WEBHOOK_MAX_ATTEMPTS": "4",
        "HANSA_SECRET_KEY": "uF8QmrqnyzWaTVb3tHJ9ZyE3sWc7kFfqx1SLOTWwDZw=",
    }
    with running_server(tmp_path_factory.mktemp("completion-hooks"), env=env) as server:
        yield server


def _verified(secret: str, raw: bytes, headers: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = standardwebhooks.Webhook(secret).verify(raw.decode(), headers)
    assert body == json.loads(raw)
    expected = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-hansa-signature"], expected)
    assert headers["x-hansa-delivery"] == body["id"] == headers["webhook-id"]
    assert headers["x-hansa-event"] == body["type"]
    return body


def test_a_run_and_a_turn_end_are_delivered_signed(
    hooked: Server, receivers: dict[str, Receiver]
) -> None:
    ok = receivers["ok"]
    with hooked.client() as client:
        body = {"url": ok.url, "events": ["run.completed", "turn.completed", "turn.failed"]}
        created = client.post("/api/webhooks", json=body)
        assert created.status_code == 201, created.text
        hook = created.json()
        secret = hook["secret"]
        assert secret.startswith("whsec_")
        listed = client.get("/api/webhooks").json()
        assert [h["id"] for h in listed] == [hook["id"]] and "secret" not in listed[0]

        cid = new_conversation(client)
        run = client.post(
            "/api/runs", json={"conversationId": cid, "title": "Hooked", "tasks": waits("A")}
        ).json()
        client.post(f"/api/runs/{run['id']}/approve")
        posted = client.post(f"/api/conversations/{cid}/messages", json={"content": "Hello"})
        turn_id = posted.json()["turnId"]

        def arrived(kind: str) -> list[dict[str, Any]]:
            bodies = [_verified(secret, raw, h) for raw, h in ok.got]
            return [b for b in bodies if b["type"] == kind]

        poll_until(client, "/healthz", lambda _: arrived("run.completed"), seconds=30)
        ended = ("turn.completed", "turn.failed")
        poll_until(client, "/healthz", lambda _: any(arrived(k) for k in ended), seconds=30)
        (done,) = arrived("run.completed")
        assert done["data"]["runId"] == run["id"] and done["data"]["status"] == "completed"
        assert set(done) == {"id", "type", "createdAt", "data"}
        turns = arrived("turn.completed") + arrived("turn.failed")
        assert turn_id in [t["data"]["turnId"] for t in turns]
        log = client.get(f"/api/webhooks/{hook['id']}/deliveries").json()
        assert log and all(d["status"] == "succeeded" and d["responseCode"] == 204 for d in log)
        assert client.delete(f"/api/webhooks/{hook['id']}").status_code == 204
        assert client.get(f"/api/webhooks/{hook['id']}/deliveries").status_code == 404


def test_a_failing_target_is_retried_with_backoff_and_each_attempt_logged(
    hooked: Server, receivers: dict[str, Receiver]
) -> None:
    flaky = receivers["flaky"]
    with hooked.client() as client:
        hook = client.post(
            "/api/webhooks", json={"url": flaky.url, "events": ["run.completed"]}
        ).json()
        cid = new_conversation(client)
        run = client.post(
            "/api/runs", json={"conversationId": cid, "title": "Flaky", "tasks": waits("A")}
        ).json()
        client.post(f"/api/runs/{run['id']}/approve")
        path = f"/api/webhooks/{hook['id']}/deliveries"
        log: list[dict[str, Any]] = poll_until(  # type: ignore[assignment]
            client, path, lambda d: any(x["status"] == "succeeded" for x in d), seconds=30
        )
    attempts = sorted(log, key=lambda d: d["attempt"])
    assert [d["attempt"] for d in attempts] == [1, 2, 3]
    for raw, headers in flaky.got:  # every attempt signed anew, each one verifiable
        assert standardwebhooks.Webhook(hook["secret"]).verify(raw.decode(), headers)
    assert [d["status"] for d in attempts] == ["retrying", "retrying", "succeeded"]
    assert [d["responseCode"] for d in attempts] == [500, 500, 204]
    assert attempts[0]["error"] and attempts[0]["nextAttemptAt"]
    assert {h["webhook-id"] for _, h in flaky.got} == {attempts[0]["deliveryId"]}
    assert len({d["deliveryId"] for d in attempts}) == 1
    ids = {h["x-hansa-delivery"] for _, h in flaky.got}
    assert len(flaky.got) == 3 and len(ids) == 1  # the same delivery, three times
    assert all(d["durationMs"] >= 0 for d in attempts)


def test_a_target_outside_the_guard_is_refused(hooked: Server) -> None:
    with hooked.client() as client:
        for url in (
            "http://127.0.0.1:1/hook",  # loopback, not listed
            "http://169.254.169.254/latest",  # the cloud metadata service
            "http://2130706433/hook",  # 127.0.0.1 in disguise
            "ftp://example.com/hook",
            "http://localhost:9/hook",
        ):
            answer = client.post("/api/webhooks", json={"url": url, "events": ["run.completed"]})
            assert answer.status_code == 422, (url, answer.text)
            assert answer.json()["error"]["details"]["field"] == "url"
        bad = client.post("/api/webhooks", json={"url": "http://127.0.0.1:1/", "events": ["x"]})
        assert bad.status_code == 422 and bad.json()["error"]["details"]["field"] == "events"


def test_a_tampered_or_stale_delivery_fails_standard_verification(
    hooked: Server, receivers: dict[str, Receiver]
) -> None:
    """The library refuses what a receiver must refuse: another body, another id, another
    secret, a timestamp outside its tolerance."""
    ok = receivers["ok"]
    with hooked.client() as client:
        hook = client.post("/api/webhooks", json={"url": ok.url, "events": ["run.completed"]})
        secret = hook.json()["secret"]
        cid = new_conversation(client)
        run = client.post(
            "/api/runs", json={"conversationId": cid, "title": "Tampered", "tasks": waits("A")}
        ).json()
        client.post(f"/api/runs/{run['id']}/approve")

        def mine() -> list[tuple[bytes, dict[str, str]]]:
            return [(r, h) for r, h in ok.got if json.loads(r)["data"].get("runId") == run["id"]]

        poll_until(client, "/healthz", lambda _: mine(), seconds=30)
    raw, headers = mine()[0]
    hook_ = standardwebhooks.Webhook(secret)
    assert hook_.verify(raw.decode(), headers)["data"]["runId"] == run["id"]
    changed = raw.decode().replace(run["id"], run["id"][::-1])
    stale = str(int(headers["webhook-timestamp"]) - 3600)
    for body, sent, key in (
        (changed, headers, secret),
        (raw.decode(), {**headers, "webhook-id": "another"}, secret),
        (raw.decode(), {**headers, "webhook-timestamp": stale}, secret),
        (raw.decode(), headers, standardwebhooks_secret()),
    ):
        with pytest.raises(standardwebhooks.WebhookVerificationError):
            standardwebhooks.Webhook(key).verify(body, sent)
    missing = {k: v for k, v in headers.items() if k != "webhook-signature"}
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        hook_.verify(raw.decode(), missing)


def standardwebhooks_secret() -> str:
    """Another valid secret (the shape Hansa generates)."""
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()
