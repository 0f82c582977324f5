"""The masking rule every surface uses, and the merge that keeps write-only secrets."""

from __future__ import annotations

import pytest

from hansa import errors
from hansa.domain import secrets
from hansa.domain.secrets import MASK


@pytest.mark.parametrize(
    "name",
    [
        "appPassword",
        "consumerKey",
        "consumerSecret",
        "Authorization",
        "proxy-authorization",
        "Cookie",
        "X-Api-Key",
        "api_key",
        "access_token",
        "X-Auth-Token",
        "client_secret",
        "sig",
        "X-Amz-Signature",
        "password",
        "key",
    ],
)
def test_credential_names_are_secret(name: str) -> None:
    assert secrets.is_secret_name(name)


@pytest.mark.parametrize(
    "name", ["username", "baseUrl", "url", "Idempotency-Key", "maxTokens", "author", "title"]
)
def test_other_names_are_not(name: str) -> None:
    assert not secrets.is_secret_name(name)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://h.example/p?api_key=abc&page=2", "https://h.example/p?api_key=***&page=2"),
        ("https://h.example/?a=1&token=x%20y#sig=zz", "https://h.example/?a=1&token=***#sig=***"),
        ("https://user:hunter2@h.example/x", "https://***@h.example/x"),
        ("https://h.example/p?Password=p&secret=s", "https://h.example/p?Password=***&secret=***"),
        ("https://h.example/path/only", "https://h.example/path/only"),
    ],
)
def test_urls_keep_their_shape_and_lose_their_credentials(url: str, shown: str) -> None:
    assert secrets.mask_url(url) == shown


def test_free_text_is_masked_where_it_carries_credentials() -> None:
    text = (
        "webhook.call: https://h.example/hook?api_key=K1 failed; "
        "the site said: internal-secret-token=XYZ123 from Authorization: Bearer abcdef123456"
    )
    shown = secrets.mask_text(text)
    for leaked in ("K1", "XYZ123", "abcdef123456"):
        assert leaked not in shown
    assert "https://h.example/hook?api_key=***" in shown
    assert secrets.mask_text("Reset the page title=Home") == "Reset the page title=Home"


def test_mask_walks_configs_and_parameters() -> None:
    config = {
        "wordpress": {"baseUrl": "https://s.example", "username": "ed", "appPassword": "p w"},
        "woocommerce": {"consumerKey": "ck_1", "consumerSecret": "cs_1", "empty": ""},
        "notes": ["see https://x.example/?token=t1"],
        "apiKey": "",
    }
    assert secrets.mask(config) == {
        "wordpress": {"baseUrl": "https://s.example", "username": "ed", "appPassword": MASK},
        "woocommerce": {"consumerKey": MASK, "consumerSecret": MASK, "empty": ""},
        "notes": [f"see https://x.example/?token={MASK}"],
        "apiKey": "",
    }
    params = {
        "url": "https://h.example/?sig=s",
        "headers": {"Authorization": "Basic eA==", "A": "b", "Content-Type": "text/plain"},
    }
    assert secrets.mask(params) == {  # a header is a secret unless it is a plain one
        "url": f"https://h.example/?sig={MASK}",
        "headers": {"Authorization": MASK, "A": MASK, "Content-Type": "text/plain"},
    }
    assert secrets.mask({"credentials": {"user": "u", "n": 3}}) == {
        "credentials": {"user": MASK, "n": MASK}
    }


STORED = {"wordpress": {"baseUrl": "https://s.example", "username": "ed", "appPassword": "old"}}


def test_a_masked_or_omitted_secret_keeps_the_stored_one() -> None:
    masked = {"wordpress": {"baseUrl": "https://s.example", "username": "al", "appPassword": MASK}}
    omitted = {"wordpress": {"baseUrl": "https://s.example", "username": "al"}}
    for new in (masked, omitted):
        kept = secrets.keep_secrets(new, STORED, "config")
        assert kept == {
            "wordpress": {"baseUrl": "https://s.example", "username": "al", "appPassword": "old"}
        }
    sent = {"wordpress": {"baseUrl": "https://s.example", "appPassword": "new"}}
    assert secrets.keep_secrets(sent, STORED, "config")["wordpress"]["appPassword"] == "new"
    assert secrets.keep_secrets({"wordpress": {"appPassword": MASK}}, {}, "config") == {
        "wordpress": {}
    }, "a mask with nothing stored is not stored as a password"
    assert secrets.keep_secrets({}, STORED, "config") == {}, "a removed section takes its secret"


def test_a_stored_secret_never_follows_a_new_address() -> None:
    moved = {"wordpress": {"baseUrl": "https://evil.example", "appPassword": MASK}}
    with pytest.raises(errors.InvalidInput, match="appPassword must be sent again"):
        secrets.keep_secrets(moved, STORED, "config")
    with pytest.raises(errors.InvalidInput, match="baseUrl changed"):
        secrets.keep_secrets({"wordpress": {"baseUrl": "https://evil.example"}}, STORED, "config")
    resent = {"wordpress": {"baseUrl": "https://new.example", "appPassword": "again"}}
    assert secrets.keep_secrets(resent, STORED, "config") == resent


def test_a_partial_edit_keeps_what_it_leaves_out_unless_the_address_moves() -> None:
    stored = {"url": "https://h.example/a", "method": "POST", "headers": {"Authorization": "s"}}
    kept = secrets.keep_secrets({"method": "PUT"}, stored, "parameters", partial=True)
    assert kept == {**stored, "method": "PUT"}
    masked = {"headers": {"Authorization": MASK, "X": "1"}}
    assert secrets.keep_secrets(masked, stored, "parameters", partial=True)["headers"] == {
        "Authorization": "s",
        "X": "1",
    }
    with pytest.raises(errors.InvalidInput, match="parameters.headers must be sent again"):
        secrets.keep_secrets({"url": "https://evil.example/"}, stored, "parameters", partial=True)
    with pytest.raises(errors.InvalidInput, match="Authorization must be sent again"):
        secrets.keep_secrets(
            {"url": "https://evil.example/", "headers": {"Authorization": MASK}},
            stored,
            "parameters",
            partial=True,
        )


def test_a_name_value_pair_named_for_a_secret_is_masked() -> None:
    headers = [{"name": "Authorization", "value": "Bearer t0ken123"}, {"name": "A", "value": "b"}]
    requirement = {"name": "apiKey", "label": "API key", "value": "k-1", "source": "user"}
    assert secrets.mask(headers) == [
        {"name": "Authorization", "value": MASK},
        {"name": "A", "value": "b"},
    ]
    assert secrets.mask(requirement)["value"] == MASK
    assert secrets.mask({"name": "title", "value": "Home"}) == {"name": "title", "value": "Home"}


def test_credential_headers_and_query_names_of_the_review_are_secrets() -> None:
    # security review 2026-11-27, L1: each was shown and stored in clear
    headers = {
        "X-Auth-Key": "c1",
        "Ocp-Apim-Subscription-Key": "c2",
        "X-Functions-Key": "c3",
        "Authentication": "c4",
        "X-Session": "c5",
        "Accept": "application/json",
        "User-Agent": "hansa",
    }
    shown = secrets.mask({"url": "https://f.example/api?code=c6&page=2", "headers": headers})
    assert shown["url"] == f"https://f.example/api?code={MASK}&page=2"
    assert shown["headers"] == {
        **{name: MASK for name in list(headers)[:5]},
        "Accept": "application/json",
        "User-Agent": "hansa",
    }
    listed = secrets.mask({"headers": [{"name": "X-Auth-Key", "value": "c7"}]})
    assert listed == {"headers": [{"name": "X-Auth-Key", "value": MASK}]}
    sealed = secrets.map_secrets({"headers": headers}, lambda v: "sealed")["headers"]
    assert [name for name, v in sealed.items() if v == "sealed"] == list(headers)[:5]
    assert secrets.is_secret_name("X-Auth-Key") and not secrets.is_secret_name("code")
    kept = secrets.keep_secrets(
        {"headers": {"X-Session": MASK}}, {"headers": {"X-Session": "c5"}}, "parameters"
    )
    assert kept == {"headers": {"X-Session": "c5"}}, "a masked header sent back keeps its value"
