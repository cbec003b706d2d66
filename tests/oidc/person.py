"""A person signing in at the tests' provider over plain HTTP, as a browser would (cookies,
redirects, the provider's development sign-in and consent forms), without a browser: the
API-level tests of the fleet (test_fleet.py) need people, not pages."""

import re
import urllib.parse

import requests

FORM_ACTION = re.compile(r'<form[^>]*action="([^"]+)"')


class Person:
    """``session`` (a requests.Session holding the browser's cookies); ``sign_in(start)``
    follows the whole sign-in from a gateway URL; ``cookie(name, path)`` reads a cookie as
    the browser would send it to ``path``."""

    def __init__(self, provider, login):
        self.provider = provider
        self.login = login
        self.session = requests.Session()
        self.session.trust_env = False   # $REQUESTS_CA_BUNDLE would win over verify=

    def get(self, url, **kw):
        # The provider's certificate is of the tests' CA.
        return self.session.get(url, timeout=15, verify=self.provider.ca_file, **kw)

    def post(self, url, **kw):
        return self.session.post(url, timeout=15, verify=self.provider.ca_file, **kw)

    def _submit(self, page, fields):
        action = FORM_ACTION.search(page.text)
        assert action, "no form on the provider's page %s:\n%s" % (page.url, page.text[:500])
        return self.post(urllib.parse.urljoin(page.url, action.group(1)), data=fields)

    def sign_in(self, start):
        """Opens ``start`` (a gateway URL that sends a person to the provider), signs in and
        consents there; returns the last answer (back at the gateway)."""
        page = self.get(start)
        assert page.url.startswith(self.provider.issuer + "/interaction/"), page.url
        page = self._submit(page, {"prompt": "login", "login": self.login,
                                   "password": "any password"})
        if page.url.startswith(self.provider.issuer + "/interaction/"):
            page = self._submit(page, {"prompt": "consent"})
        assert not page.url.startswith(self.provider.issuer), (page.url, page.text[:500])
        return page

    def cookie(self, name, url):
        """The value of cookie ``name`` the browser would send to ``url``, or None."""
        request = requests.Request("GET", url).prepare()
        header = requests.cookies.get_cookie_header(self.session.cookies, request) or ""
        for part in header.split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None
