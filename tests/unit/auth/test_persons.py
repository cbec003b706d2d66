"""Who a verified ID token names (auth/persons.py): the API server's naming with the prefixes,
system: names never impersonated, tokens of others left alone, refused tokens a 401, and the
verified persons remembered per token until it expires."""

import asyncio
import time

import pytest

from dashboard_api.auth.oidc.flow import Flows
from dashboard_api.auth.oidc.idtoken import TokenError
from dashboard_api.auth.oidc.provider import Provider
from dashboard_api.auth.oidc.refreshcookie import RefreshCookies
from dashboard_api.auth import oidc as oidc_mod
from dashboard_api.auth.oidc.relyingparty import RelyingParty, Settings
from dashboard_api.auth.persons import Naming, Person, Persons, names_issuer
from dashboard_api.serving.errors import ApiError
from tests.support import oidc

KEY = oidc.RsaKey("k1")
FORGER = oidc.RsaKey("k1")   # the same kid, another key


def test_naming_follows_the_api_servers_defaults():
    by_sub = Naming(oidc.ISSUER)
    assert by_sub.username({"sub": "alice"}) == oidc.ISSUER + "#alice"
    by_email = Naming(oidc.ISSUER, username_claim="email")
    assert by_email.username({"email": "a@x.test"}) == "a@x.test"
    assert Naming(oidc.ISSUER, username_prefix="-").username({"sub": "alice"}) == "alice"
    prefixed = Naming(oidc.ISSUER, "email", username_prefix="oidc:", groups_prefix="oidc:")
    assert prefixed.username({"email": "a@x.test"}) == "oidc:a@x.test"
    assert prefixed.groups({"groups": ["team-a", "team-b", "team-a"]}) == ("oidc:team-a",
                                                                         "oidc:team-b")
    assert prefixed.groups({"groups": "solo"}) == ("oidc:solo",)
    assert prefixed.groups({}) == () and prefixed.groups({"groups": 3}) == ()


def test_system_names_are_never_impersonated():
    naming = Naming(oidc.ISSUER, "email")
    with pytest.raises(TokenError, match="system:"):
        naming.username({"email": "system:admin"})
    # A provider's group named system:masters would make anyone a cluster administrator.
    assert naming.groups({"groups": ["system:masters", "dev", "system:nodes"]}) == ("dev",)
    # With a prefix, the same groups are harmless names and stay.
    assert Naming(oidc.ISSUER, groups_prefix="idp:").groups({"groups": ["system:masters"]}) \
        == ("idp:system:masters",)


def test_unverified_email_names_nobody():
    naming = Naming(oidc.ISSUER, "email")
    with pytest.raises(TokenError, match="not verified"):
        naming.username({"email": "a@x.test", "email_verified": False})
    assert naming.username({"email": "a@x.test", "email_verified": True}) == "a@x.test"
    with pytest.raises(TokenError):
        naming.username({"sub": "no-email"})


def test_a_person_is_told_to_the_api_server_one_group_a_line():
    person = Person("alice", ("a", "b,c"), "s", 0)
    assert person.impersonation() == (("Impersonate-User", "alice"),
                                      ("Impersonate-Group", "a"), ("Impersonate-Group", "b,c"))


def persons(clock=time.time):
    fake = oidc.FakeProvider([KEY])
    settings = Settings(oidc.ISSUER, oidc.CLIENT, "https://dash.test/oidc/callback")
    rp = RelyingParty(settings, Provider(oidc.ISSUER, fake), clock=clock)
    signin = oidc_mod.SignIn(rp, Flows(b"k" * 32), RefreshCookies(b"k" * 32))
    return fake, Persons(signin, Naming(oidc.ISSUER, "email"), clock=clock)


def run(coro):
    return asyncio.run(coro)


def test_tokens_of_others_are_left_to_the_cluster():
    _fake, found = persons()
    service_account = oidc.token(KEY, oidc.claims(iss="https://kubernetes.default.svc"))
    for token in ("opaque-token", service_account, "a.b.c", ""):
        assert run(found.resolve(token)) is None
    assert not names_issuer("x.y", oidc.ISSUER)


def test_a_verified_person_is_remembered_until_the_token_expires():
    now = [time.time()]
    fake, found = persons(clock=lambda: now[0])
    token = oidc.token(KEY, oidc.claims(groups=["team-a"], iat=int(now[0]),
                                        exp=int(now[0]) + 120))
    first = run(found.resolve(token))
    assert (first.name, first.groups) == ("alice@example.com", ("team-a",))
    assert run(found.resolve(token)) is first and found.verified == 1
    calls = len(fake.calls)
    now[0] += 120 + 61   # past exp and the leeway: checked again, and refused
    with pytest.raises(ApiError) as refused:
        run(found.resolve(token))
    assert refused.value.code == 401 and "expired" in refused.value.message
    assert len(fake.calls) >= calls


@pytest.mark.parametrize("what, token", [
    ("expired", oidc.token(KEY, oidc.claims(iat=int(time.time()) - 900,
                                            exp=int(time.time()) - 600))),
    ("forged", oidc.token(FORGER, oidc.claims())),
    ("foreign audience", oidc.token(KEY, oidc.claims(aud="another-client"))),
    ("unsigned", oidc.unsigned(oidc.claims())),
    ("hs256", oidc.hs256_with_public_key(KEY, oidc.claims())),
])
def test_a_refused_id_token_of_the_provider_is_a_401(what, token):
    _fake, found = persons()
    with pytest.raises(ApiError) as refused:
        run(found.resolve(token))
    assert refused.value.code == 401, what
    assert run(found.resolve_quietly(token)) is None
