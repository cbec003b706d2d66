"""CSRF token maths: binding to the action, one use, expiry, key loading."""

import base64

import pytest

from dashboard_api.auth.csrf import (CsrfError, CsrfGuard, CsrfKeyError, CsrfTokens, decode_key,
                                     load_key)
from dashboard_api.serving.errors import ApiError

KEY = bytes(range(64))


class Clock:
    def __init__(self, now=1_700_000_000.0):
        self.now = now

    def __call__(self):
        return self.now


def tokens(clock=None, ttl=600, **kw):
    return CsrfTokens(KEY, ttl, clock=clock or Clock(), **kw)


def reason_of(fn):
    with pytest.raises(CsrfError) as info:
        fn()
    return info.value.reason


def test_token_round_trip_and_shape():
    t = tokens()
    token = t.issue("login")
    body, _, stamp = token.rpartition(":")
    assert stamp == "1700000000000"
    assert len(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))) == 48
    t.check("login", token)


def test_each_token_is_distinct():
    t = tokens()
    assert len({t.issue("namespace") for _ in range(100)}) == 100


def test_wrong_action_is_refused_and_does_not_spend_the_token():
    t = tokens()
    token = t.issue("namespace")
    assert reason_of(lambda: t.check("secret", token)) == "Invalid"
    t.check("namespace", token)


def test_reuse_is_refused():
    t = tokens()
    token = t.issue("namespace")
    t.check("namespace", token)
    assert reason_of(lambda: t.check("namespace", token)) == "Reused"


def test_expiry_at_exactly_the_ttl():
    clock = Clock()
    t = tokens(clock, ttl=10)
    early, late = t.issue("a"), t.issue("a")
    clock.now += 9.999
    t.check("a", early)
    clock.now += 0.001
    assert reason_of(lambda: t.check("a", late)) == "Expired"


def test_future_tokens_beyond_one_minute_are_refused():
    clock = Clock()
    t = tokens(clock)
    clock.now += 61
    future = t.issue("a")
    clock.now -= 61
    assert reason_of(lambda: t.check("a", future)) == "Invalid"
    clock.now += 30
    near = t.issue("a")
    clock.now -= 30
    t.check("a", near)


@pytest.mark.parametrize("bad", ["", None])
def test_missing(bad):
    assert reason_of(lambda: tokens().check("a", bad)) == "Missing"


@pytest.mark.parametrize("bad", ["x", "abc:def", "!!!!:123", "abc:", ":123"])
def test_malformed(bad):
    assert reason_of(lambda: tokens().check("a", bad)) == "Malformed"


def test_tampered_timestamp_is_refused():
    clock = Clock()
    t = tokens(clock)
    token = t.issue("a")
    body, _, stamp = token.rpartition(":")
    assert reason_of(lambda: t.check("a", "%s:%d" % (body, int(stamp) + 1))) == "Invalid"


def test_colons_in_actions_do_not_collide():
    t = tokens()
    assert reason_of(lambda: t.check("a", t.issue("a:"))) == "Invalid"
    assert reason_of(lambda: t.check("a::b", t.issue("a:b"))) == "Invalid"


def test_replicas_sharing_a_key_accept_each_others_tokens():
    clock = Clock()
    one, two = tokens(clock), tokens(clock)
    two.check("login", one.issue("login"))
    other = CsrfTokens(bytes(64), 600, clock=clock)
    assert reason_of(lambda: other.check("login", one.issue("login"))) == "Invalid"


def test_spent_nonces_are_forgotten_after_expiry():
    clock = Clock()
    t = tokens(clock, ttl=10)
    for _ in range(5):
        t.check("a", t.issue("a"))
    assert len(t._spent) == 5
    clock.now += 11
    t.check("a", t.issue("a"))
    assert len(t._spent) == 1


def test_full_spent_store_forgets_expired_then_oldest_and_never_refuses_fresh_tokens():
    clock = Clock()
    t = tokens(clock, ttl=10, max_spent=3)
    first = t.issue("a")
    t.check("a", first)
    clock.now += 5
    second = t.issue("a")
    t.check("a", second)
    clock.now += 1
    third = t.issue("a")
    t.check("a", third)
    clock.now += 5  # `first` has expired, the other two have not
    fourth = t.issue("login")
    t.check("login", fourth)
    assert len(t._spent) == 3
    assert reason_of(lambda: t.check("a", second)) == "Reused"
    assert reason_of(lambda: t.check("a", third)) == "Reused"
    # Full of live nonces: a fresh token is still accepted; the one closest to expiry goes.
    fifth = t.issue("login")
    t.check("login", fifth)
    assert len(t._spent) == 3
    for spent, action in ((third, "a"), (fourth, "login"), (fifth, "login")):
        assert reason_of(lambda: t.check(action, spent)) == "Reused"


def test_flooding_the_spent_store_does_not_block_sign_in():
    t = tokens(Clock(), max_spent=50)
    for _ in range(200):
        t.check("can-i", t.issue("can-i"))
    t.check("login", t.issue("login"))
    assert len(t._spent) == 50


def test_guard_maps_refusals_to_401_with_the_cause():
    guard = CsrfGuard(tokens())
    with pytest.raises(ApiError) as info:
        guard.validate("namespace", None)
    body = info.value.body()
    assert body["code"] == 401 and body["status"] == "Failure"
    assert body["details"]["causes"][0]["reason"] == "Missing"


def test_disabled_guard_accepts_anything_and_still_issues():
    guard = CsrfGuard(tokens(), enabled=False)
    guard.validate("namespace", None)
    guard.validate("namespace", "junk")
    assert guard.issue("login")


def test_key_precedence(tmp_path):
    flag = base64.b64encode(b"f" * 32).decode()
    path = tmp_path / "key"
    path.write_text(base64.b64encode(b"k" * 40).decode() + "\n")
    env = {"CSRF_KEY": base64.b64encode(b"e" * 256).decode()}
    assert load_key(flag, str(path), env) == (b"f" * 32, "--csrf-key")
    assert load_key(None, str(path), env) == (b"k" * 40, "--csrf-key-file")
    assert load_key(None, None, env) == (b"e" * 256, "$CSRF_KEY")
    key, source = load_key(None, None, {})
    assert source == "random" and len(key) == 256


def test_bad_keys_are_refused(tmp_path):
    with pytest.raises(CsrfKeyError, match="base64"):
        decode_key("not base64!")
    with pytest.raises(CsrfKeyError, match="at least 32"):
        decode_key(base64.b64encode(b"short").decode())
    with pytest.raises(CsrfKeyError, match="cannot read"):
        load_key(None, str(tmp_path / "missing"), {})
