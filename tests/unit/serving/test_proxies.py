"""--trusted-proxies: which client address a decision may rely on."""

from tornado.httputil import HTTPHeaders

from dashboard_api.serving import proxies


def headers(*lines):
    h = HTTPHeaders()
    for name, value in lines:
        h.add(name, value)
    return h


def test_without_trusted_proxies_the_peer_is_the_client():
    forwarded = headers(("X-Forwarded-For", "1.2.3.4"), ("X-Real-Ip", "5.6.7.8"))
    assert proxies.NONE.client(forwarded, "10.0.0.1") == "10.0.0.1"


def test_a_trusted_peer_gives_the_last_untrusted_forwarded_address():
    trusted = proxies.TrustedProxies(proxies.parse("10.0.0.0/8, 192.168.1.1"))
    # The client's own (forged) entry on the left; the proxies append on the right.
    chain = headers(("X-Forwarded-For", "6.6.6.6, 203.0.113.9, 10.1.1.1"))
    assert trusted.client(chain, "192.168.1.1") == "203.0.113.9"
    # Repeated header lines are one list.
    split = headers(("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "203.0.113.9"))
    assert trusted.client(split, "10.0.0.2") == "203.0.113.9"
    # X-Original-Forwarded-For (ingress-nginx) first, then X-Real-Ip; ports and v4-in-v6.
    assert trusted.client(headers(("X-Original-Forwarded-For", "198.51.100.1:4242"),
                                  ("X-Forwarded-For", "1.1.1.1")), "10.0.0.2") == "198.51.100.1"
    assert trusted.client(headers(("X-Real-Ip", "198.51.100.2")), "10.0.0.2") == "198.51.100.2"
    assert trusted.client(headers(), "::ffff:10.0.0.2") == "::ffff:10.0.0.2"
    assert trusted.trusted("::ffff:10.0.0.2")
    # Only proxies in the chain: the first of them; garbage: the peer.
    assert trusted.client(headers(("X-Forwarded-For", "10.9.9.9, 10.1.1.1")),
                          "10.0.0.2") == "10.9.9.9"
    assert trusted.client(headers(("X-Forwarded-For", "not-an-address")),
                          "10.0.0.2") == "10.0.0.2"


def test_an_untrusted_peer_forwarding_headers_is_the_client_itself():
    trusted = proxies.TrustedProxies(proxies.parse("127.0.0.1"))
    assert trusted.client(headers(("X-Forwarded-For", "203.0.113.9")),
                          "127.0.0.2") == "127.0.0.2"
