"""The provider as discovery describes it, and its signing keys, cached.

Discovery (``<issuer>/.well-known/openid-configuration``) is read once and kept for
``DISCOVERY_TTL`` (and longer while reading it again fails); its ``issuer`` must be the configured one exactly (OpenID Connect Discovery
4.3), so a document served for another issuer is refused. The JWKS is kept until a token names
a key it does not hold: then it is read again, at most once per ``REFETCH_INTERVAL`` (a flood
of tokens with made-up key ids cannot make us hammer the provider), and the token is refused
when the key is still unknown. Concurrent fetches of one document are one fetch.
"""

import time

from dashboard_api.auth.oidc import idtoken, jwks
from dashboard_api.auth.oidc.http import ProviderError
from dashboard_api.serving.singleflight import SingleFlight

DISCOVERY_TTL = 3600.0
REFETCH_INTERVAL = 30.0
ENDPOINTS = ("authorization_endpoint", "token_endpoint", "jwks_uri")


class Provider:
    def __init__(self, issuer, http, clock=time.monotonic, refetch_interval=REFETCH_INTERVAL):
        self.issuer = issuer
        self.http = http
        self._clock = clock
        self.refetch_interval = refetch_interval
        self._discovery = None
        self._discovered_at = None
        self._keys = None
        self._keys_at = None
        self._flights = SingleFlight()

    async def discovery(self):
        """The discovery document (a dict with https endpoints); ProviderError otherwise."""
        now = self._clock()
        if self._discovery is None or now - self._discovered_at >= DISCOVERY_TTL:
            try:
                self._discovery = await self._flights.run("discovery", self._discover)
            except ProviderError:
                if self._discovery is None:
                    raise
                # A provider that is down for a moment: the document it gave stays in use.
            self._discovered_at = now
        return self._discovery

    async def _discover(self):
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        status, doc = await self.http.fetch(url)
        if status != 200 or doc is None:
            raise ProviderError("discovery answered %d without a JSON document" % status)
        if doc.get("issuer") != self.issuer:
            raise ProviderError("discovery names another issuer than --oidc-issuer-url")
        for name in ENDPOINTS:
            if not isinstance(doc.get(name), str) or not doc[name].startswith("https://"):
                raise ProviderError("discovery has no HTTPS %s" % name)
        return doc

    async def endpoint(self, name):
        """An endpoint of the discovery document, or None when the provider has none."""
        value = (await self.discovery()).get(name)
        return value if isinstance(value, str) and value.startswith("https://") else None

    async def _fetch_keys(self):
        status, doc = await self.http.fetch(await self.endpoint("jwks_uri"))
        if status != 200 or doc is None:
            raise ProviderError("its JWKS answered %d without a JSON document" % status)
        try:
            return jwks.parse(doc)
        except ValueError as exc:
            raise ProviderError(str(exc))

    async def keys(self, refresh=False):
        """The signing keys; with ``refresh``, read again unless they were read less than
        ``refetch_interval`` ago."""
        now = self._clock()
        if self._keys is None or refresh and now - self._keys_at >= self.refetch_interval:
            self._keys_at = now
            self._keys = await self._flights.run("jwks", self._fetch_keys)
        return self._keys

    async def verify(self, token, client_id, allowed, now, nonce=None, leeway=idtoken.LEEWAY):
        """The claims of an ID token of this provider for ``client_id``; TokenError when it
        must be refused."""
        parsed = idtoken.Parsed(token)
        try:
            return idtoken.verify(parsed, await self.keys(), self.issuer, client_id, now,
                                  allowed, nonce, leeway)
        except idtoken.UnknownKey:
            return idtoken.verify(parsed, await self.keys(refresh=True), self.issuer,
                                  client_id, now, allowed, nonce, leeway)
