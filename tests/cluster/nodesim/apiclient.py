"""A small non-blocking JSON client for the apiserver (Tornado), with streaming watches."""

import json
import urllib.parse

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

MERGE_PATCH = "application/merge-patch+json"


class ApiError(Exception):
    def __init__(self, code, body):
        super().__init__("apiserver answered %s: %s" % (code, _message(body)))
        self.code = code
        self.body = body


def _message(body):
    if isinstance(body, dict):
        return body.get("message") or body.get("reason") or ""
    return str(body)[:200]


class ApiClient:
    def __init__(self, base_url, ca_file, token, user_agent, max_clients=32):
        self._base = base_url.rstrip("/")
        self._ca_file = ca_file
        self._token = token
        self._user_agent = user_agent  # the apiserver names field managers after it
        self._http = AsyncHTTPClient(force_instance=True, max_clients=max_clients)

    def close(self):
        self._http.close()

    def _request(self, method, path, params, body, content_type, timeout, **extra):
        url = self._base + path
        if params:
            url += "?" + urllib.parse.urlencode(params, doseq=True)
        headers = {"Authorization": "Bearer " + self._token, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        return HTTPRequest(url, method=method, headers=headers, body=data, ca_certs=self._ca_file,
                           user_agent=self._user_agent, connect_timeout=5, request_timeout=timeout,
                           allow_nonstandard_methods=True, **extra)

    async def _fetch(self, req):
        """Transport failures (refused, reset, timed out) all come out as ConnectionError."""
        try:
            resp = await self._http.fetch(req, raise_error=False)
        except (OSError, HTTPClientError) as e:
            raise ConnectionError(str(e)) from e
        return resp

    async def call(self, method, path, body=None, params=None, content_type="application/json",
                   timeout=15):
        """Returns the decoded JSON body; raises ApiError on a non-2xx answer."""
        req = self._request(method, path, params, body, content_type, timeout)
        resp = await self._fetch(req)
        decoded = _decode(resp.body)
        if not 200 <= resp.code < 300:
            raise ApiError(resp.code, decoded)
        return decoded

    async def watch(self, path, params, on_event, timeout):
        """Streams watch events (dicts) to on_event until the server ends the watch.
        An ERROR event (the server ends the watch after it) comes out as ApiError."""
        pending = bytearray()
        status, failure = [], []

        def on_header(line):
            if not status and line.startswith("HTTP/"):
                status.append(line.split(" ", 2)[1])

        def on_chunk(chunk):
            pending.extend(chunk)
            while status == ["200"] and not failure:
                end = pending.find(b"\n")
                if end < 0:
                    return
                line = bytes(pending[:end])
                del pending[:end + 1]
                if not line.strip():
                    continue
                event = json.loads(line)
                if event.get("type") == "ERROR":
                    failure.append(event.get("object") or {})
                else:
                    on_event(event)

        req = self._request("GET", path, dict(params, watch="1"), None, None, timeout,
                            header_callback=on_header, streaming_callback=on_chunk)
        resp = await self._fetch(req)
        if resp.code != 200:
            raise ApiError(resp.code, _decode(bytes(pending)))
        if failure:
            raise ApiError(failure[0].get("code"), failure[0])


def _decode(body):
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")
