"""Calls to the identity provider: each with a deadline, each answer bounded in size.

Tornado's own client does the I/O on the event loop without blocking it; answers longer than
``MAX_ANSWER`` are refused without being kept, and JSON is decoded by the project's bounded parser
(off the loop when large). The provider's CA comes from ``--oidc-ca-file`` (else the system's).
"""

import urllib.parse

import tornado.httpclient
import tornado.simple_httpclient

from dashboard_api.serving import bounded
from dashboard_api.serving.errors import ApiError

# A discovery document or a JWKS is a few kilobytes; a token answer too.
MAX_ANSWER = 256 * 1024
TIMEOUT = 10.0
# Past this many times MAX_ANSWER the client stops reading (unreachable); between the two the
# answer is read, not kept, and refused as too long.
CUT_OFF = 4


class ProviderError(ApiError):
    """The provider could not be reached or answered something unusable: a 503 whose message
    says what (never a token)."""

    def __init__(self, message):
        super().__init__(503, "the identity provider: " + message, "ServiceUnavailable")


class Http:
    """``fetch(url, form=None, basic=None)`` -> (status, decoded JSON object or None)."""

    def __init__(self, ca_file=None, timeout=TIMEOUT, max_answer=MAX_ANSWER):
        self.ca_file = ca_file
        self.timeout = timeout
        self.max_answer = max_answer
        self._client = tornado.simple_httpclient.SimpleAsyncHTTPClient(
            force_instance=True, max_body_size=CUT_OFF * max_answer)

    async def fetch(self, url, form=None, basic=None):
        if not url.startswith("https://"):
            raise ProviderError("refusing a non-HTTPS endpoint")
        headers = {"Accept": "application/json"}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        chunks, size = [], [0]

        def received(chunk):
            size[0] += len(chunk)
            if size[0] <= self.max_answer:
                chunks.append(chunk)

        request = tornado.httpclient.HTTPRequest(
            url, method="POST" if form is not None else "GET", body=body, headers=headers,
            auth_username=basic[0] if basic else None, auth_password=basic[1] if basic else None,
            connect_timeout=self.timeout, request_timeout=self.timeout,
            ca_certs=self.ca_file, follow_redirects=False, decompress_response=False,
            streaming_callback=received)
        try:
            response = await self._client.fetch(request, raise_error=False)
            error = response.error if response.code == 599 else None
        except (OSError, tornado.httpclient.HTTPClientError) as exc:
            error = exc
        if size[0] > self.max_answer:
            raise ProviderError("an answer longer than %d bytes" % self.max_answer)
        if isinstance(error, tornado.simple_httpclient.HTTPTimeoutError):
            raise ProviderError("no answer within %gs" % self.timeout)
        if error is not None:
            raise ProviderError("unreachable (%s)" % type(error).__name__)
        data = b"".join(chunks)
        try:
            value = await bounded.run(bounded.json_loads, data) \
                if len(data) > bounded.OFF_LOOP_BYTES else bounded.json_loads(data)
        except bounded.InputError:
            value = None
        return response.code, value if isinstance(value, dict) else None

    def close(self):
        self._client.close()
